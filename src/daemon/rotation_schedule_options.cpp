#include "rotation_schedule_options.hpp"

#include "common/error.hpp"
#include "session_name.hpp"

namespace tracectl {

namespace {

uint64_t uint64Option(const std::string& key, const sdbus::Variant& v) {
    if (!v.containsValueOfType<uint64_t>())
        throw Error(ErrorCode::InvalidArgument,
                    "option '" + key + "' must be a uint64 (t), not '" + v.peekValueType() + "'");
    return v.get<uint64_t>();
}

} // namespace

RotationSchedule readRotationSchedule(const std::map<std::string, sdbus::Variant>& options) {
    RotationSchedule s;
    for (const auto& [key, value] : options) {
        if (key == "timer-us")
            s.timerUs = uint64Option(key, value);
        else if (key == "size-bytes")
            s.sizeBytes = uint64Option(key, value);
        else
            throw Error(ErrorCode::InvalidArgument, "unknown option " + quoteForMessage(key) +
                                                        " (known: timer-us, size-bytes)");
    }
    if (s.timerUs != 0 && s.timerUs < kMinRotationTimerUs)
        throw Error(ErrorCode::InvalidArgument,
                    "timer-us " + std::to_string(s.timerUs) + " is below the minimum of " +
                        std::to_string(kMinRotationTimerUs) + " (10 ms)");
    return s;
}

} // namespace tracectl
