// Trace-relative folder names in LTTng 2.13's layout (LTTNG-NOTES.md,
// "Layout and names"). Pure functions of their arguments; no I/O.
#pragma once

#include <cstdint>
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

/// A trace chunk's time stamp as LTTng writes it: ISO 8601 basic format,
/// local time with its UTC offset, "%Y%m%dT%H%M%S%z" (20261130T031700+0000).
std::string chunkStamp(std::time_t t);

/// The folder an archived chunk goes to, relative to the session output:
/// "archives/<begin>-<end>-<index>" (chunkStamp()s).
std::string archiveDir(std::time_t begin, std::time_t end, std::uint64_t index);

/// The folder of chunk `index` while it is being written (index >= 1; chunk
/// 0 is the output folder itself): "<begin>-<index>".
std::string chunkDir(std::time_t begin, std::uint64_t index);

/// What a live session's trace folders get after a restarted daemon took
/// it over at `takeover` (seconds since the Epoch): it streams on into the
/// same relay chunk (a live session never switches chunks under its
/// viewers), so the next daemon's traces go beside the previous one's,
/// "<folder>-restart-<chunkStamp(takeover)>".
std::string restartSuffix(std::time_t takeover);

} // namespace tracectl
