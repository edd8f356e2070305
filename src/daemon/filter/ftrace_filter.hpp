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
//   `$ctx.procname` (ftrace's `comm`), `$ctx.cpu_id` (ftrace's `CPU`).
// Not translatable: arithmetic, shifts, | and ^, floating-point constants,
// comparisons of two fields, array indexing, `$app.*` and other contexts.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace tracectl::filter {

/// The ftrace name of an event field named `lttngName` (the name the trace
/// shows, e.g. "prev_tid" for ftrace's "prev_pid"); identity by default.
using FieldRename = std::function<std::string(const std::string& lttngName)>;

/// `expression` in tracefs filter syntax. Throws FilterError: a syntax error
/// (parseFilter()), or a construct ftrace cannot evaluate, with its column.
std::string toFtraceFilter(std::string_view expression, const FieldRename& rename = {});

} // namespace tracectl::filter
