// Session.SetRotationSchedule's a{sv} options, read into a RotationSchedule.
#pragma once

#include "tracing/session_snapshot.hpp"

#include <map>
#include <sdbus-c++/sdbus-c++.h>
#include <string>

namespace tracectl {

/// Shortest period accepted for "timer-us" (10 ms): shorter would rotate
/// faster than a rotation completes.
inline constexpr uint64_t kMinRotationTimerUs = 10'000;

/// Reads "timer-us" (t, microseconds; 0 = no timer, else at least
/// kMinRotationTimerUs) and "size-bytes" (t, bytes; 0 = no size threshold).
/// Absent keys are 0: {} clears the schedule. Throws Error(InvalidArgument)
/// for an unknown key, a type other than t, or a timer below the minimum.
RotationSchedule readRotationSchedule(const std::map<std::string, sdbus::Variant>& options);

} // namespace tracectl
