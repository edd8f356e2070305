// D's probes of a process (Dynamic Tracing Guide, "pid Provider" and "User Process
// Tracing"/"Statically Defined Tracing for User Applications"; illumos dtrace(1M) -c/-p):
//
//   pidPID:MODULE:FUNCTION:entry     FUNCTION's entry in process PID: arg0..arg5 its first
//                                    six integer arguments (x86-64 SysV registers)
//   pidPID:MODULE:FUNCTION:return    its return: arg1 the return value (%rax); arg0, the
//                                    return instruction's offset in dtrace, is not recorded
//   PROVIDERPID:MODULE:FUNCTION:NAME the USDT probe PROVIDER:NAME (sys/sdt.h) of process
//                                    PID, arg0.. typed from its note; PID must be $target's
//                                    (-c/-p), so that an LTTng-UST provider whose name ends
//                                    in digits keeps meaning that provider
//
// PID is written as a number or $target (the parser expands macros in probe descriptions
// first). MODULE is empty, "*", "a.out" or the executable's file name (the functions and
// probes of shared libraries are not offered: a -c command has not loaded them when the
// probes are defined). FUNCTION names one function (no wildcards); a USDT description's
// FUNCTION is empty or "*".
//
// Each is recorded by a userspace probe of the kernel domain (tracectl(1)
// --userspace-probe) on the process's executable, named by user_probe_event; the binder
// (binding.hpp) counts only the records of process PID, as dtrace's pid provider fires
// only in the process it was created for. No I/O here.
#pragma once

#include "aggregate/program.hpp"

#include <optional>
#include <string>
#include <vector>

namespace tracectl::aggregate {

/// The probe of a process that the ':'-separated fields `parts` of a description
/// (probe_fields) name, macros already expanded; nullopt when they name no such probe
/// (not four fields, or a provider that is neither pidN nor a name ending in `target`'s
/// digits). Throws ProgramError (at `at`, naming `text`): a pid provider's FUNCTION empty
/// or with wildcards, a NAME other than entry and return (dtrace's instruction offsets are
/// not offered), a USDT description with a FUNCTION or with wildcards in its NAME, a
/// process id of 0 or beyond pid_t.
std::optional<UserProbe> userProbe(const std::vector<std::string>& parts,
                                   std::optional<std::int64_t> target, const std::string& text,
                                   Position at);

/// The name of the event that records `probe`: "pid1234_work_entry",
/// "pid1234_work_return", "myprov1234_tick": letters, digits and '_' only (any other
/// byte of a name becomes '_'), at most 64 bytes (a longer one keeps its first 55 bytes
/// and ends in '_' and 8 hexadecimal digits of a hash of the whole), as a userspace
/// probe's event name must be.
std::string userProbeEvent(const UserProbe& probe);

/// The kernel domain's userspace probe location (common/userspace_probe_location.hpp)
/// that records `probe` in the executable file `executable` (absolute):
/// "elf:EXE:FUNCTION%args", "elf:EXE:FUNCTION%return" or "sdt:EXE:PROVIDER:NAME".
std::string userProbeLocation(const UserProbe& probe, const std::string& executable);

/// What dtrace prints as a firing's FUNCTION:NAME: "work:entry", ":tick".
std::string userProbeLabel(const UserProbe& probe);

} // namespace tracectl::aggregate
