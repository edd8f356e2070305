// Where a userspace probe goes: LTTng 2.13's `--userspace-probe` locations
// (lttng-enable-event(1); lttng-tools src/bin/lttng/uprobe.cpp), plus our
// extension for a function's return:
//
//   [elf:]PATH:SYMBOL         the entry of function SYMBOL of ELF file PATH
//   [elf:]PATH:SYMBOL%return  its return, with the return value (ours: the
//                             spelling of perf-probe(1)'s return probes)
//   [elf:]PATH:SYMBOL%args    its entry with the first six integer
//                             arguments, arg0..arg5 (ours, for D's pid
//                             provider: x86-64 SysV's %rdi %rsi %rdx %rcx
//                             %r8 %r9, as 64-bit signed integers)
//   sdt:PATH:PROVIDER:PROBE   the SystemTap/USDT probe PROVIDER:PROBE
//
// A ':' or '%' inside a field is written "\:" / "\%" (LTTng's escape for
// ':'); '\\' is a backslash. The CLI turns PATH into an absolute path (as
// lttng does: relative to its folder, or looked up in $PATH when it has no
// '/'); the daemon takes absolute paths only.
//
// Shared by the CLI and the daemon; no I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tracectl {

struct UserspaceProbeLocation {
    enum class Kind {
        Function,          ///< elf: a function's entry
        FunctionReturn,    ///< elf: ...%return, a function's return (our extension)
        FunctionArguments, ///< elf: ...%args, its entry with arg0..arg5 (our extension)
        Sdt,               ///< sdt: a USDT probe
    };
    Kind kind = Kind::Function;
    std::string path;
    std::string symbol;   ///< Function, FunctionReturn
    std::string provider; ///< Sdt
    std::string probe;    ///< Sdt

    bool operator==(const UserspaceProbeLocation&) const = default;
};

/// Parses `text` in the syntax above. Returns nullopt and sets `why` (a
/// sentence for the user) when it is not such a location: the wrong number
/// of fields, an empty field, an unknown method ("elf"/"sdt"), or a SYMBOL
/// that is an address or SYMBOL+OFFSET (LTTng refuses those too:
/// "not supported").
std::optional<UserspaceProbeLocation> parseUserspaceProbeLocation(std::string_view text,
                                                                  std::string& why);

/// The canonical text of `l` ("elf:PATH:SYMBOL", "elf:PATH:SYMBOL%return",
/// "elf:PATH:SYMBOL%args", "sdt:PATH:PROVIDER:PROBE"), escaped as above: parse(format(l)) == l.
std::string formatUserspaceProbeLocation(const UserspaceProbeLocation& l);

} // namespace tracectl
