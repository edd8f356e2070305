#include "session_view.hpp"

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>

namespace tracectl::cli {
namespace {

std::string string_property(const PropertyMap& properties, const std::string& key) {
    const auto it = properties.find(key);
    if (it == properties.end() || !it->second.is_string()) {
        return {};
    }
    return it->second.get<std::string>();
}

/// The property as an unsigned integer no larger than `max`, or 0.
std::uint64_t unsigned_property(const PropertyMap& properties, const std::string& key,
                                std::uint64_t max) {
    const auto it = properties.find(key);
    if (it == properties.end()) {
        return 0;
    }
    const nlohmann::json& value = it->second;
    if (value.is_number_unsigned()) {
        const auto number = value.get<std::uint64_t>();
        return number <= max ? number : 0;
    }
    if (value.is_number_integer()) {
        const auto number = value.get<std::int64_t>();
        return number >= 0 && static_cast<std::uint64_t>(number) <= max
                   ? static_cast<std::uint64_t>(number)
                   : 0;
    }
    return 0;
}

} // namespace

SessionView session_view_from_properties(std::string object_path, PropertyMap properties) {
    SessionView view;
    view.object_path = std::move(object_path);
    view.id = string_property(properties, "Id");
    view.name = string_property(properties, "Name");
    view.owner = static_cast<std::uint32_t>(
        unsigned_property(properties, "Owner", std::numeric_limits<std::uint32_t>::max()));
    view.state = string_property(properties, "State");
    view.mode = string_property(properties, "Mode");
    view.output_path = string_property(properties, "OutputPath");
    view.output_url = string_property(properties, "OutputUrl");
    view.live_timer_us =
        unsigned_property(properties, "LiveTimer", std::numeric_limits<std::uint64_t>::max());
    view.buffer_ownership = string_property(properties, "BufferOwnership");
    view.creation_time_us =
        unsigned_property(properties, "CreationTime", std::numeric_limits<std::uint64_t>::max());
    view.properties = std::move(properties);
    return view;
}

const std::string& output_location(const SessionView& session) noexcept {
    return session.output_url.empty() ? session.output_path : session.output_url;
}

std::optional<std::string> remote_trace_note(const SessionView& session) {
    if (session.output_url.empty()) {
        return std::nullopt;
    }
    std::string note = "session " + session.name + " streams to " + session.output_url +
                       ": its trace is written by that lttng-relayd, under its output folder";
    if (session.mode == "live") {
        note += "; read it live with babeltrace2 --input-format=lttng-live "
                "net://RELAY_HOST/host/HOSTNAME/" +
                session.name;
    }
    return note;
}

void sort_by_creation_time(std::vector<SessionView>& sessions) {
    std::sort(sessions.begin(), sessions.end(), [](const SessionView& a, const SessionView& b) {
        return std::tie(a.creation_time_us, a.name, a.object_path) <
               std::tie(b.creation_time_us, b.name, b.object_path);
    });
}

} // namespace tracectl::cli
