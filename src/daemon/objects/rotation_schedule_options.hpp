// Session.SetRotationSchedule's a{sv} options, read into a RotationSchedule.
#pragma once

#include "session/session_snapshot.hpp"

#include <map>
#include <sdbus-c++/sdbus-c++.h>
#include <string>

namespace tracectl {

/// Shortest period accepted for "timer-us" (10 ms): shorter would rotate
/// faster than a rotation completes.
inline constexpr uint64_t kMinRotationTimerUs = 10'000;
/// Longest period accepted for "timer-us": 366 days. Longer periods would
/// overflow the monotonic clock arithmetic (nanoseconds in 63 bits) that
/// schedules them, and mean "never" anyway.
inline constexpr uint64_t kMaxRotationTimerUs = 366ULL * 24 * 3600 * 1'000'000;

/// Reads "timer-us" (t, microseconds; 0 = no timer, else between
/// kMinRotationTimerUs and kMaxRotationTimerUs) and "size-bytes" (t, bytes;
/// 0 = no size threshold). Absent keys are 0: {} clears the schedule.
/// Throws Error(InvalidArgument) for an unknown key, a type other than t,
/// or a timer out of range.
RotationSchedule readRotationSchedule(const std::map<std::string, sdbus::Variant>& options);

} // namespace tracectl
