#include "rotation_schedule_commands.hpp"

#include "trace_commands.hpp"

#include <ostream>
#include <sdbus-c++/Error.h>
#include <vector>

namespace tracectl::cli {
namespace {

constexpr const char* invalid_argument = "org.tracectl.Tracing1.Error.InvalidArgument";

/// "1.5 s", "250 ms", "40 us": the largest unit that keeps it whole to 3 decimals.
std::string period_text(std::uint64_t us) {
    if (us % 1'000'000 == 0) {
        return std::to_string(us / 1'000'000) + " s";
    }
    if (us % 1'000 == 0) {
        return std::to_string(us / 1'000) + " ms";
    }
    return std::to_string(us) + " us";
}

void print_schedule(BusClient& bus, const std::string& path, std::ostream& out) {
    const auto [timer, size] = bus.rotation_schedule(path);
    out << "Rotation schedule of session " << bus.session_name(path) << ": "
        << describe_rotation_schedule(timer, size) << ".\n";
}

} // namespace

std::string describe_rotation_schedule(std::uint64_t timer_us, std::uint64_t size_bytes) {
    std::vector<std::string> parts;
    if (timer_us != 0) {
        parts.push_back("every " + period_text(timer_us));
    }
    if (size_bytes != 0) {
        parts.push_back("once the chunk holds " + std::to_string(size_bytes) + " bytes");
    }
    if (parts.empty()) {
        return "none";
    }
    return parts.size() == 1 ? parts.front() : parts.front() + ", and " + parts.back();
}

void run_enable_rotation(BusClient& bus, const std::optional<std::string>& name,
                         const RotationTriggers& triggers, std::ostream& out) {
    const std::string path = resolve_session(bus, name);
    auto [timer, size] = bus.rotation_schedule(path);
    timer = triggers.timer_us.value_or(timer);
    size = triggers.size_bytes.value_or(size);
    bus.set_rotation_schedule(path, timer, size);
    print_schedule(bus, path, out);
}

void run_disable_rotation(BusClient& bus, const std::optional<std::string>& name, bool timer,
                          bool size, std::ostream& out) {
    const std::string path = resolve_session(bus, name);
    auto [timer_us, size_bytes] = bus.rotation_schedule(path);
    if (timer && timer_us == 0) {
        throw sdbus::Error(invalid_argument, "session " + bus.session_name(path) +
                                                 " has no timer rotation to disable");
    }
    if (size && size_bytes == 0) {
        throw sdbus::Error(invalid_argument, "session " + bus.session_name(path) +
                                                 " has no size rotation to disable");
    }
    bus.set_rotation_schedule(path, timer ? 0 : timer_us, size ? 0 : size_bytes);
    print_schedule(bus, path, out);
}

} // namespace tracectl::cli
