// Trace-relative folder names in LTTng 2.13's layout (LTTNG-NOTES.md,
// "Layout and names"). Pure functions of their arguments; no I/O.
#pragma once

#include <ctime>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace tracectl {

/// `procname` made fit for one path component: '/', control characters and
/// a leading '.' become '_', at most 64 bytes; "" becomes "app".
std::string safeProcName(std::string_view procname);

/// The folder of a per-PID trace, relative to the session output:
/// "ust/pid/<procname>-<pid>-<YYYYmmdd-HHMMSS>" with `registered` (seconds
/// since the Epoch, the app's registration) in local time, as
/// lttng-sessiond names it. `procname` goes through safeProcName().
std::string perPidTraceDir(std::string_view procname, pid_t pid, std::time_t registered);

} // namespace tracectl
