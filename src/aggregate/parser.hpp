// The parser of D aggregation programs (grammar in tracectl(1), AGGREGATE):
//
//   program    := clause+
//   clause     := probe (',' probe)* ['/' expression '/'] '{' [statement (';' statement)*] [';']
//   '}' statement  := aggregation ['[' expression (',' expression)* ']'] '=' function '(' args ')'
//   expression := C's operators || && == != < <= > >= + - * / % ! unary- over integer and
//                 string literals, identifiers, args[N]->member and parentheses
//
// Checks what needs no trace: the functions exist and get DTrace's argument counts
// (count(); sum/avg/min/max/stddev/quantize(e); lquantize(e, low, high[, step]) with
// integer constants: step > 0, high > low, at most 65535 levels and 32-bit bounds, as
// DTrace's dt_cc.c requires), each aggregation keeps one function, one lquantize
// layout and one number of keys (DTrace: "aggregation redefined").
#pragma once

#include "aggregate/program.hpp"

#include <string_view>

namespace tracectl::aggregate {

/// As the LTTng filter parser (src/daemon/filter): at most this many nested parentheses and
/// unary operators, and expression trees at most max_expression_height nodes high, so that
/// nothing that walks an expression (parser, binding, evaluation) recurses deeper.
inline constexpr int max_expression_nesting = 256;
inline constexpr int max_expression_height = 1000;

/// Parses `source`. Throws ProgramError with the line and column of the first error.
Program parse_program(std::string_view source);

/// The CTF event name pattern of a probe description (see ProbeDescription::pattern).
/// Throws ProgramError (at `at`) for 3 parts, more than 4, or a 4-part description whose
/// module or function part is neither empty nor "*".
std::string probe_pattern(const std::string& text, Position at);

} // namespace tracectl::aggregate
