// D's format strings (printf(), printa()): parsing them once, and rendering one
// conversion. Conversions as the Dynamic Tracing Guide's "Output Formatting" chapter lists
// them, less those that need floating point or a live system's symbols:
// `%[flags][width][.precision][length]conversion` with flags of "-+ #0", length modifiers
// h hh l ll L j z t (accepted, ignored: D integers are 64-bit here), conversions
// d i u x X o c s S p and %%; in printa() also `%@d`-style conversions (`%@` followed by
// d i u x X o) for the aggregation's value.
#pragma once

#include "aggregate/program.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace tracectl::aggregate {

/// Parses `text` (the string constant at `at`). `printa`: whether `%@` conversions are
/// allowed. Throws ProgramError naming the conversion for what is not supported (%a %e
/// %f %g %Y, `*` widths) and for malformed ones.
Format parseFormat(const std::string& text, Position at, bool printa);

/// Appends `value` converted by `c` (an integer conversion, c or p) to `out`.
void appendInteger(std::string& out, const Conversion& c, std::int64_t value);

/// Appends `value` converted by `c` (%s, %S) to `out`.
void appendString(std::string& out, const Conversion& c, std::string_view value);

/// Whether `c` takes a string argument (%s, %S) rather than an integer.
inline bool takesString(const Conversion& c) noexcept {
    return c.conversion == 's' || c.conversion == 'S';
}

} // namespace tracectl::aggregate
