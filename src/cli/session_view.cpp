#include "session_view.hpp"

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>

namespace tracectl::cli {
namespace {

std::string stringProperty(const PropertyMap& properties, const std::string& key) {
    const auto it = properties.find(key);
    if (it == properties.end() || !it->second.is_string()) {
        return {};
    }
    return it->second.get<std::string>();
}

/// The property as an unsigned integer no larger than `max`, or 0.
std::uint64_t unsignedProperty(const PropertyMap& properties, const std::string& key,
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

SessionView sessionViewFromProperties(std::string objectPath, PropertyMap properties) {
    SessionView view;
    view.objectPath = std::move(objectPath);
    view.id = stringProperty(properties, "Id");
    view.name = stringProperty(properties, "Name");
    view.owner = static_cast<std::uint32_t>(
        unsignedProperty(properties, "Owner", std::numeric_limits<std::uint32_t>::max()));
    view.state = stringProperty(properties, "State");
    view.mode = stringProperty(properties, "Mode");
    view.outputPath = stringProperty(properties, "OutputPath");
    view.outputUrl = stringProperty(properties, "OutputUrl");
    view.liveTimerUs =
        unsignedProperty(properties, "LiveTimer", std::numeric_limits<std::uint64_t>::max());
    view.bufferOwnership = stringProperty(properties, "BufferOwnership");
    view.creationTimeUs =
        unsignedProperty(properties, "CreationTime", std::numeric_limits<std::uint64_t>::max());
    view.properties = std::move(properties);
    return view;
}

const std::string& outputLocation(const SessionView& session) noexcept {
    return session.outputUrl.empty() ? session.outputPath : session.outputUrl;
}

std::optional<std::string> remoteTraceNote(const SessionView& session) {
    if (session.outputUrl.empty()) {
        return std::nullopt;
    }
    std::string note = "session " + session.name + " streams to " + session.outputUrl +
                       ": its trace is written by that lttng-relayd, under its output folder";
    if (session.mode == "live") {
        note += "; read it live with babeltrace2 --input-format=lttng-live "
                "net://RELAY_HOST/host/HOSTNAME/" +
                session.name;
    }
    return note;
}

void sortByCreationTime(std::vector<SessionView>& sessions) {
    std::sort(sessions.begin(), sessions.end(), [](const SessionView& a, const SessionView& b) {
        return std::tie(a.creationTimeUs, a.name, a.objectPath) <
               std::tie(b.creationTimeUs, b.name, b.objectPath);
    });
}

} // namespace tracectl::cli
