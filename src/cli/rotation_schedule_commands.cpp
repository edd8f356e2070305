#include "rotation_schedule_commands.hpp"

#include "trace_commands.hpp"

#include <ostream>
#include <sdbus-c++/Error.h>
#include <vector>

namespace tracectl::cli {
namespace {

constexpr const char* kInvalidArgument = "org.tracectl.Tracing1.Error.InvalidArgument";

/// "1.5 s", "250 ms", "40 us": the largest unit that keeps it whole to 3 decimals.
std::string periodText(std::uint64_t us) {
    if (us % 1'000'000 == 0) {
        return std::to_string(us / 1'000'000) + " s";
    }
    if (us % 1'000 == 0) {
        return std::to_string(us / 1'000) + " ms";
    }
    return std::to_string(us) + " us";
}

void printSchedule(BusClient& bus, const std::string& path, std::ostream& out) {
    const auto [timer, size] = bus.rotationSchedule(path);
    out << "Rotation schedule of session " << bus.sessionName(path) << ": "
        << describeRotationSchedule(timer, size) << ".\n";
}

} // namespace

std::string describeRotationSchedule(std::uint64_t timerUs, std::uint64_t sizeBytes) {
    std::vector<std::string> parts;
    if (timerUs != 0) {
        parts.push_back("every " + periodText(timerUs));
    }
    if (sizeBytes != 0) {
        parts.push_back("once the chunk holds " + std::to_string(sizeBytes) + " bytes");
    }
    if (parts.empty()) {
        return "none";
    }
    return parts.size() == 1 ? parts.front() : parts.front() + ", and " + parts.back();
}

void runEnableRotation(BusClient& bus, const std::optional<std::string>& name,
                       const RotationTriggers& triggers, std::ostream& out) {
    const std::string path = resolveSession(bus, name);
    auto [timer, size] = bus.rotationSchedule(path);
    timer = triggers.timerUs.value_or(timer);
    size = triggers.sizeBytes.value_or(size);
    bus.setRotationSchedule(path, timer, size);
    printSchedule(bus, path, out);
}

void runDisableRotation(BusClient& bus, const std::optional<std::string>& name, bool timer,
                        bool size, std::ostream& out) {
    const std::string path = resolveSession(bus, name);
    auto [timer_us, size_bytes] = bus.rotationSchedule(path);
    if (timer && timer_us == 0) {
        throw sdbus::Error(kInvalidArgument, "session " + bus.sessionName(path) +
                                                 " has no timer rotation to disable");
    }
    if (size && size_bytes == 0) {
        throw sdbus::Error(kInvalidArgument,
                           "session " + bus.sessionName(path) + " has no size rotation to disable");
    }
    bus.setRotationSchedule(path, timer ? 0 : timer_us, size ? 0 : size_bytes);
    printSchedule(bus, path, out);
}

} // namespace tracectl::cli
