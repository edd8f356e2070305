// Where a session writes: the caller's choice, checked, or LTTng's default
// ~/lttng-traces/<name>-<YYYYmmdd-HHMMSS> (lttng-create(1)).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace tracectl {

/// PATH_MAX: accepted output paths are shorter (it counts the NUL).
inline constexpr std::size_t kMaxOutputPathBytes = 4096;

/// Checks a caller-given output folder and returns it normalized (no "."
/// components, no repeated or trailing '/'). Throws
/// tracectl::Error(InvalidArgument) unless it is absolute, shorter than
/// kMaxOutputPathBytes, free of ".." components, of components longer than
/// NAME_MAX (255) and of control characters, and not "/" itself.
std::string checkedOutputPath(std::string_view path);

/// `<home>/lttng-traces/<name>-<YYYYmmdd-HHMMSS>`, the time in the daemon's
/// local time zone, as lttng-sessiond names default outputs.
std::string defaultOutputPath(std::string_view home, std::string_view sessionName,
                              std::chrono::system_clock::time_point created);

} // namespace tracectl
