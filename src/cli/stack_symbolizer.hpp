// Names the call stack addresses of babeltrace2's text output (`tracectl
// view`): the callstack_kernel context's addresses by the trace's own
// tracectl_kernel_symbol events (common/kernel_records.hpp: the consumer
// writes each symbol into a stream before the first event that needs it,
// from /proc/kallsyms at record time), so that a trace read on another
// machine or after a reboot is named as recorded.
//
// Input: the lines babeltrace2's sink.text.pretty prints, in order, such
// as
//   ... tracectl_kernel_symbol: { cpu_id = 0 }, { ... }, { address =
//       0xFFFFFFFF81E2C3F0, end = 0xFFFFFFFF81E2CB20, name = "__schedule",
//       module = "" }
//   ... sched_switch: { cpu_id = 0 }, { tid = 7, _callstack_kernel_length =
//       2, callstack_kernel = [ [0] = 0xFFFFFFFF81E2C8A4, [1] = ... ] }, ...
// Output: the same line, each address of a callstack_kernel sequence that
// a symbol seen so far holds followed by ` <name+0xOFFSET>` (` <name+0xOFFSET
// [module]>` for a module's). Anything else passes unchanged.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace tracectl::cli {

class StackSymbolizer {
public:
    /// The line with its kernel stack named (see above); learns the
    /// symbols a tracectl_kernel_symbol line gives.
    std::string process(std::string_view line);

    /// Symbols learnt so far.
    std::size_t symbols() const noexcept { return symbols_.size(); }

private:
    struct Symbol {
        std::uint64_t end = 0;
        std::string name;
        std::string module;
    };
    void learn(std::string_view line);
    /// "name+0xOFF" or "" when no symbol holds `address`.
    std::string nameOf(std::uint64_t address) const;

    std::map<std::uint64_t, Symbol> symbols_; ///< by address
};

} // namespace tracectl::cli
