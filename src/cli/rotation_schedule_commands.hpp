// `tracectl enable-rotation` and `tracectl disable-rotation`: a session's
// automatic rotations, as lttng-enable-rotation(1) and
// lttng-disable-rotation(1) set them: each of the timer and the size
// trigger is set or removed on its own, the other kept (read back from the
// session's RotationSchedule property).
#pragma once

#include "bus_client.hpp"

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

namespace tracectl::cli {

/// The triggers a command names: nullopt = leave it as it is.
struct RotationTriggers {
    std::optional<std::uint64_t> timerUs;   ///< microseconds; 0 turns it off
    std::optional<std::uint64_t> sizeBytes; ///< bytes; 0 turns it off
};

/// Sets the given triggers of session `name` (resolve_session()), keeping the
/// other, and prints the schedule now in force. Throws sdbus::Error as the
/// daemon answers (InvalidArgument, WrongState for a snapshot session).
void runEnableRotation(BusClient& bus, const std::optional<std::string>& name,
                       const RotationTriggers& triggers, std::ostream& out);

/// Removes the timer trigger (`timer`) and/or the size trigger (`size`) of
/// session `name`. Throws sdbus::Error(...Error.InvalidArgument) naming the
/// trigger when it is not set, as lttng disable-rotation refuses
/// (LTTNG_ERR_ROTATION_SCHEDULE_NOT_SET), without changing anything.
void runDisableRotation(BusClient& bus, const std::optional<std::string>& name, bool timer,
                        bool size, std::ostream& out);

/// "every 10 s, and once the chunk holds 104857600 bytes" / "none".
std::string describeRotationSchedule(std::uint64_t timerUs, std::uint64_t sizeBytes);

} // namespace tracectl::cli
