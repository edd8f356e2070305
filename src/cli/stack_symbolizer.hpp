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
//
// The callstack_user context's addresses are named by the trace's
// tracectl_vm_map events (the consumer writes a process's executable file
// mappings before the first event of a stream, in each chunk, with a user
// stack of that process, from /proc/PID/maps at record time) and the ELF
// symbols of the files they name (symbols/stack_names.hpp), read when this
// runs. The event's process is its `pid` context field, else `vpid`, else
// `tid`: a tid of a thread other than its process's main one is that
// process's by the trace's tracectl_thread events (the consumer writes one
// before the first event of a stream, in each chunk, with a user stack of
// such a thread, from ftrace's user_stack entry).
//   ... tracectl_vm_map: { cpu_id = 0 }, { tid = 9, ... }, { start =
//       0x55D0C8A01000, end = 0x55D0C8A02000, pgoff = 0x1000, pid = 9, path =
//       "/usr/bin/app" }
//   ... tracectl_thread: { cpu_id = 1 }, { tid = 12, ... }, { tid = 12, pid = 9 }
// Output: the same line, each address of a callstack_kernel sequence that
// a symbol seen so far holds followed by ` <name+0xOFFSET>` (` <name+0xOFFSET
// [module]>` for a module's), each address of a callstack_user sequence
// that a mapping of the process seen so far holds by ` <name+0xOFFSET
// [file]>` (file: the mapped file's basename), or ` <[file]+0xFILEOFFSET>`
// when no ELF symbol holds it. Anything else passes unchanged.
#pragma once

#include "symbols/stack_names.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

namespace tracectl::cli {

class StackSymbolizer {
public:
    /// The line with its stacks named (see above); learns the symbols a
    /// tracectl_kernel_symbol line gives and the mapping a tracectl_vm_map
    /// line gives, and the thread's process a tracectl_thread line gives.
    std::string process(std::string_view line);

    /// Kernel symbols and user mappings learnt so far.
    std::size_t symbols() const noexcept { return learnt_; }

private:
    void learnSymbol(std::string_view line);
    void learnMapping(std::string_view line);
    void learnThread(std::string_view line);
    /// The line with the addresses of its sequence `field` named by `name`
    /// (an address to "name+0xOFF [object]", or "" to leave it alone).
    template <typename Name>
    std::string nameSequence(std::string_view line, std::string_view field, Name name);

    symbols::StackNames names_;
    std::size_t learnt_ = 0;
    /// The text of each user frame named so far, by (pid, address); emptied when a
    /// mapping or a thread is learnt (it may name them differently).
    std::map<std::pair<std::int32_t, std::uint64_t>, std::string> userTexts_;
};

} // namespace tracectl::cli
