#include "objects/rotation_schedule_options.hpp"

#include "bus/typed_option.hpp"
#include "common/error.hpp"
#include "session/session_name.hpp"

namespace tracectl {

RotationSchedule readRotationSchedule(const std::map<std::string, sdbus::Variant>& options) {
    RotationSchedule s;
    for (const auto& [key, value] : options) {
        if (key == "timer-us")
            s.timerUs = optionAs<uint64_t>(key, value);
        else if (key == "size-bytes")
            s.sizeBytes = optionAs<uint64_t>(key, value);
        else
            throw Error(ErrorCode::InvalidArgument, "unknown option " + quoteForMessage(key) +
                                                        " (known: timer-us, size-bytes)");
    }
    if (s.timerUs != 0 && s.timerUs < kMinRotationTimerUs)
        throw Error(ErrorCode::InvalidArgument,
                    "timer-us " + std::to_string(s.timerUs) + " is below the minimum of " +
                        std::to_string(kMinRotationTimerUs) + " (10 ms)");
    if (s.timerUs > kMaxRotationTimerUs)
        throw Error(ErrorCode::InvalidArgument,
                    "timer-us " + std::to_string(s.timerUs) + " is above the maximum of " +
                        std::to_string(kMaxRotationTimerUs) + " (366 days)");
    return s;
}

} // namespace tracectl
