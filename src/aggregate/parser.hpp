// The parser of D programs (grammar in tracectl-dtrace(1)):
//
//   program    := (pragma | clause)+
//   pragma     := '#pragma D option' NAME ['=' VALUE]            (a line of its own)
//   clause     := probe (',' probe)* ['/' expression '/'] '{' [statement (';' statement)*] [';']
//   '}' | probe (',' probe)*        (no body: the default action, as an empty one)
//   statement  := aggregation ['[' expression (',' expression)* ']'] '=' function '(' args ')'
//               | variable ('=' | OP'=') expression | variable ('++' | '--')
//               | action '(' args ')'
//   variable   := NAME ['[' keys ']'] | 'this->' NAME | 'self->' NAME ['[' keys ']']
//   expression := C's operators (?: || ^^ && | ^ & == != < <= > >= << >> + - * / % ! ~
//                 unary-) over integer, character and string literals, identifiers,
//                 args[N]->member, variables, function calls, $macros and parentheses
//
// Speculations, copyin*, destructive actions and the preprocessor are
// refused with the feature's name and position.
//
// Checks what needs no trace: the functions exist and get DTrace's argument counts
// (count(); sum/avg/min/max/stddev/quantize(e); lquantize(e, low, high[, step]) with
// integer constants: step > 0, high > low, at most 65535 levels and 32-bit bounds, as
// DTrace's dt_cc.c requires), each aggregation keeps one function, one lquantize
// layout and one number of keys (DTrace: "aggregation redefined"), stack() and ustack()
// only as aggregation keys and actions (program_checks.hpp).
#pragma once

#include "aggregate/program.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tracectl::aggregate {

/// As the LTTng filter parser (src/daemon/filter): at most this many nested parentheses and
/// unary operators, and expression trees at most max_expression_height nodes high, so that
/// nothing that walks an expression (parser, binding, evaluation) recurses deeper.
inline constexpr int kMaxExpressionNesting = 256;
inline constexpr int kMaxExpressionHeight = 1000;

/// The values of macro variables: $target (dtrace -c/-p), $1.. (arguments after the script).
struct Macros {
    std::optional<std::int64_t> target;
    std::vector<std::string> arguments; ///< $1 is arguments[0]
    bool defaultArgs = false;           ///< option defaultargs: unset $N are 0 / ""
};

/// Parses `source`. Throws ProgramError with the line and column of the first error.
Program parseProgram(std::string_view source, const Macros& macros = {});

/// The CTF event name pattern of a probe description (see ProbeDescription::pattern).
/// Throws ProgramError (at `at`) for 3 parts, more than 4, or a 4-part description whose
/// module or function part is neither empty nor "*".
std::string probePattern(const std::string& text, Position at);

/// The ':'-separated fields of probe description `text` as written, one to
/// four of them ("p:m:f:n", "p:n", "n"; empty ones kept).
std::vector<std::string> probeFields(const std::string& text);

/// The probe description `text`: the dtrace provider's BEGIN, END, ERROR (`BEGIN`,
/// `dtrace:::BEGIN`), timers (`tick-N[unit]`, `profile:::tick-N[unit]`: ns, us, ms, s, m,
/// h, d or hz, hz without a unit), a probe of a process (user_probes.hpp: pidN::f:entry,
/// pidN::f:return, PROVIDER`target`:::NAME; `target` is $target's value, macros already
/// expanded in `text`) or trace events (probe_pattern). Throws ProgramError (at `at`) as
/// probe_pattern and user_probe do, and for profile-N, malformed timers and timers faster
/// than shortest_tick_ns (200 us).
ProbeDescription probeDescription(const std::string& text, Position at,
                                  std::optional<std::int64_t> target = std::nullopt);

} // namespace tracectl::aggregate
