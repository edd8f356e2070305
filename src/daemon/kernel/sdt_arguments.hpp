// A USDT probe's argument specification (the stapsdt note's third string,
// e.g. "-4@%edi 8@-16(%rbp) 4@$42"; SystemTap's <sys/sdt.h> writes one
// "SIZE@OPERAND" per argument, a negative SIZE for a signed type, OPERAND
// in the assembler's AT&T syntax) turned into uprobe_events fetch
// arguments (the kernel's Documentation/trace/uprobetracer.rst):
//
//   SIZE   1 2 4 8 / -1 -2 -4 -8  ->  :u8 :u16 :u32 :u64 / :s8 ... :s64
//   %REG   (%rdi %edi %di %dil, %r8 %r8d %r8w %r8b, ...) -> %di / %r8 ...
//   $IMM   an immediate value  -> \IMM
//   OFF(%REG)                   -> +OFF(%reg) / -OFF(%reg) (user memory)
//
// The fields are named arg0, arg1, ... (DTrace's and bpftrace's names;
// lttng-modules records no USDT arguments: this is our extension).
// x86-64 only: the registers are x86-64's.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tracectl::kernel {

/// "arg0=%di:s32 arg1=-16(%bp):u64 ..." for `spec` (empty for ""). Throws
/// std::invalid_argument naming the argument it cannot translate (an
/// operand form it does not know: RIP-relative, indexed, a segment...).
std::string sdtFetchArguments(std::string_view spec);

} // namespace tracectl::kernel
