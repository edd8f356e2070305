// LTTng filter expressions (the language of lttng-enable-event(1)
// --filter) for the kernel domain: translated into the tracefs event
// `filter` syntax (the kernel's Documentation/trace/events.rst, "Event
// filtering"), which the kernel evaluates before it records an event.
//
// What translates (the rest is refused, naming the place):
// - `FIELD OP CONSTANT` and `CONSTANT OP FIELD` for OP in == != < <= > >=,
//   with integer constants (any base LTTng reads; a leading '-');
// - `FIELD == "text"` / `!=`; a '*' in the text makes it a glob, which
//   ftrace spells `~` ("abc*", "*abc", "a*c"; ftrace's globs also take ?
//   and [...], so those characters are refused in a literal);
// - `FIELD & CONSTANT` as a condition, and `(FIELD & CONSTANT) != 0` / `== 0`;
// - `&&`, `||`, `!` and parentheses;
// - contexts: `$ctx.tid` and `$ctx.vtid` (ftrace's `common_pid`),
//   `$ctx.procname` (ftrace's `COMM`: the current task's name, even in an
//   event with a `comm` field of its own, which `comm` would be), and
//   `$ctx.cpu_id` (ftrace's `CPU`).
// Not translatable: arithmetic, shifts, | and ^, floating-point constants,
// comparisons of two fields, array indexing, `$app.*` and other contexts.
#pragma once

#include "filter/filter_error.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace tracectl::filter {

/// What the translation needs to know of an event's field.
struct FtraceField {
    std::string name;      ///< ftrace's name for it (e.g. prev_pid for prev_tid)
    /// A string: a char array, a __data_loc char[], or a `char *` /
    /// `const char *` (ftrace's FILTER_PTR_STRING: its filter reads the
    /// string the pointer names, a system call's argument included); else a
    /// number.
    bool isString = false;
    /// A number field ftrace stores unsigned (`signed:0`): the kernel
    /// refuses a negative constant for it ("Illegal integer value").
    bool isUnsigned = false;
};

/// The field named `lttngName` (the name the trace shows) of the event the
/// filter is for, or nullopt if the event has no such field. Without a
/// lookup, every name is taken as it is, of unknown type.
using FieldLookup = std::function<std::optional<FtraceField>(const std::string& lttngName)>;

/// The filter names a field the event does not have (a FilterError): an
/// event a rule's pattern matches but its filter cannot apply to, which
/// LTTng's filters never match.
class NoSuchField : public FilterError {
public:
    using FilterError::FilterError;
};

/// `expression` in tracefs filter syntax. Throws FilterError: a syntax error
/// (parseFilter()), LTTng's own type checks, a construct ftrace cannot
/// evaluate, a string compared with a number field or a number with a
/// string field, a negative constant compared with an unsigned field, with
/// its column; NoSuchField for a field `lookup` does
/// not know.
std::string toFtraceFilter(std::string_view expression, const FieldLookup& lookup = {});

} // namespace tracectl::filter
