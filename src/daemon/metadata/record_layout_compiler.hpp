// Compiles the registry's fields (field_model.hpp) into record layouts
// (common/record_layout.hpp): the skip programs the consumer walks to count
// the records of each packet (issue 14). A program steps over the fields
// exactly as a CTF reader following tsdl_writer.hpp's TSDL does.
#pragma once

#include "common/record_layout.hpp"
#include "field_model.hpp"
#include "trace_info.hpp"

#include <vector>

namespace tracectl::metadata {

/// The program stepping over `fields` as the members of one struct (an
/// event's `fields`, a stream's `event.context`): aligned on the largest
/// alignment of its members, then each member in order. Fixed-size runs
/// become Skip ops; the integers and enums a later sequence length or
/// variant tag names get a register each; a variant's choices are chosen by
/// the tag enum's ranges labelled like them (in choice order, then entry
/// order; the first holding the tag wins, as babeltrace2 builds them). An
/// empty list is an empty program. Throws record_layout::LayoutError for a
/// reference to no earlier field, or a program past record_layout's limits
/// (kMaxOps, kMaxRanges, kMaxRegisters, kMaxNesting).
record_layout::Program compileFields(const std::vector<Field>& fields);

/// The part of `abi` the consumer's RecordCounter needs: pass it to
/// record_layout::PacketFormat::fromAbi.
record_layout::Abi layoutAbi(const Abi& abi) noexcept;

} // namespace tracectl::metadata
