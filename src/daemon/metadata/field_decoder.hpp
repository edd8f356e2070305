// Turns the flattened field list an app sends (an event's payload in
// lttng_ust_ctl_recv_register_event, a channel's context in
// lttng_ust_ctl_recv_register_channel) into validated Fields.
//
// The 2.13 ABI flattens nested types: an entry of a "nestable" type is
// followed by the entries it owns, in order (lttng-ust's ustcomm.c
// serialize_one_type):
//   enum_nestable      -> 1 entry: the container integer
//   array_nestable     -> 1 entry: the element type
//   sequence_nestable  -> 1 entry: the element type (the length is an
//                         earlier field, named by length_name)
//   struct_nestable    -> nr_fields member fields
//   variant_nestable   -> nr_choices choice fields (the tag is an earlier
//                         enum field, named by tag_name)
// Entries that only describe a type (container, element) have an empty name.
// lttng-ust 2.13 sends the variant of a dynamic-typed app context with the
// legacy atype `variant` but the nestable layout; the other legacy atypes
// (enum, array, sequence, struct) are read as lttng-sessiond 2.13 reads them.
//
// Refused (MetadataError): EINVAL for anything malformed or that a CTF 1.8
// reader would reject (unknown atype, a name without its NUL byte, integer
// size outside 1..64, alignment not a power of two, float other than
// binary32/binary64, array or sequence elements other than integers, a
// length that is not an earlier unsigned integer, a tag that is not an
// earlier enum, a choice that is not one of the tag's labels, a list that
// ends inside a type or a type that ends before the list); ENOENT for an
// enum (name, id) the registry does not know; E2BIG past RegistryLimits.
#pragma once

#include "enum_registry.hpp"
#include "field_model.hpp"
#include "limits.hpp"

#include <lttng/ust-ctl.h>
#include <span>
#include <vector>

namespace tracectl::metadata {

/// Decodes `fields` as the members of one struct (an event's `fields`, a
/// stream's `event.context`). Identifiers are "_" + the app's name made
/// TSDL-safe (fieldIdentifier) and made unique in the list by a "_<n>"
/// suffix where two would collide; variant choices keep theirs exactly, as
/// the reader matches them against the tag's labels.
std::vector<Field> decodeFields(std::span<const lttng_ust_ctl_field> fields,
                                const EnumRegistry& enums, const RegistryLimits& limits);

} // namespace tracectl::metadata
