// `tracectl dtrace`'s probes of processes (aggregate/user_probes.hpp: pid$target::f:entry,
// PROVIDER$target:::NAME) turned into the kernel domain's userspace probes that record them:
// each process's executable found through /proc/PID/exe, as it is when the probes are
// defined (a -c command is stopped at its first instruction then), and a pid probe's
// function, when the executable lacks it or the module names a library, in the process's
// shared libraries (symbols/process_objects.hpp: mapped, or the executable's DT_NEEDED).
#pragma once

#include "aggregate/program.hpp"

#include <string>
#include <vector>

namespace tracectl::cli {

/// One userspace probe to enable in the kernel domain (Session.EnableEvents' option
/// "userspace-probe"): the event `event` at `location`.
struct UserProbeEnabling {
    std::string event;       ///< aggregate::user_probe_event
    std::string location;    ///< "elf:EXE:FUNCTION%args", "sdt:EXE:PROVIDER:NAME"...
    std::string description; ///< the probe description as written, $target expanded
};

/// The file process `pid` runs: readlink(/proc/PID/exe), an absolute path. Throws
/// aggregate::TraceReadError: "process PID does not exist", a link it may not read
/// ("cannot read /proc/PID/exe: Permission denied"), an executable deleted since.
std::string processExecutable(long pid);

/// The userspace probes of `program`'s probes of processes, one per distinct event, in
/// program order. A pid probe's file: the executable for MODULE "a.out" or its file name,
/// or for an empty MODULE (or "*") when it defines FUNCTION (.symtab, .dynsym) or cannot be
/// read here (the daemon says why); else the first shared library whose .dynsym exports
/// FUNCTION (an empty MODULE) or the one MODULE names (file name, DT_SONAME, or file name
/// up to ".so"). Throws aggregate::TraceReadError as process_executable does; for a
/// function no object has or a MODULE no object is, naming what was searched; for a USDT
/// probe's MODULE that is neither empty, "*", "a.out" nor the executable's file name.
std::vector<UserProbeEnabling> userProbeEnablings(const aggregate::Program& program);

} // namespace tracectl::cli
