#include "sessions_model.hpp"

#include <cli/session_statistics.hpp>
#include <cli/session_view.hpp>
#include <cli/user_names.hpp>
#include <cstdio>
#include <utility>

namespace tracectl::gui {
namespace {

std::string defaultOwnerName(std::uint32_t uid) {
    return cli::lookupUserName(uid).value_or(std::to_string(uid));
}

} // namespace

SessionsModel::SessionsModel(OwnerNamer ownerNamer)
    : ownerNamer_(ownerNamer ? std::move(ownerNamer) : OwnerNamer(&defaultOwnerName)) {}

void SessionsModel::update(const std::string& path, const cli::PropertyMap& properties) {
    Session& session = sessions_[path];
    for (const auto& [key, value] : properties) {
        if (key != cli::kStatisticsProperty) {
            session.properties[key] = value;
        }
    }
    if (const auto it = properties.find(cli::kStatisticsProperty); it != properties.end()) {
        const cli::Counters counters = cli::countersFromJson(it->second);
        const std::uint64_t sampledAt = cli::sampledAtFromJson(it->second);
        session.totals.add(counters, sampledAt);
        session.history.add(counters, sampledAt);
    }
}

std::string SessionsModel::nameOf(const std::string& path) const {
    const auto it = sessions_.find(path);
    if (it == sessions_.end()) {
        return {};
    }
    const auto name = it->second.properties.find("Name");
    return name != it->second.properties.end() && name->second.is_string()
               ? name->second.get<std::string>()
               : std::string();
}

void SessionsModel::remove(const std::string& path) {
    sessions_.erase(path);
}

void SessionsModel::clear() {
    sessions_.clear();
}

std::vector<SessionRow> SessionsModel::rows(std::uint64_t nowUs) const {
    std::vector<cli::SessionView> views;
    views.reserve(sessions_.size());
    for (const auto& [path, session] : sessions_) {
        views.push_back(cli::sessionViewFromProperties(path, session.properties));
    }
    cli::sortByCreationTime(views);
    std::vector<SessionRow> rows;
    rows.reserve(views.size());
    for (const cli::SessionView& view : views) {
        const Session& session = sessions_.at(view.objectPath);
        const auto [events, bytes] = session.totals.rates(nowUs);
        std::string reason;
        if (const auto it = view.properties.find("ErrorReason");
            it != view.properties.end() && it->second.is_string()) {
            reason = it->second.get<std::string>();
        }
        const auto rules = [&](const char* property, std::size_t enabledField) {
            const auto it = view.properties.find(property);
            return it != view.properties.end() ? enabledRules(it->second, enabledField)
                                               : std::map<std::string, std::string>{};
        };
        const auto channels = [&](const char* property) {
            const auto it = view.properties.find(property);
            return it != view.properties.end() ? channelNames(it->second)
                                               : std::vector<std::string>{};
        };
        rows.push_back(SessionRow{
            .path = view.objectPath,
            .name = view.name,
            .state = view.state,
            .errorReason = std::move(reason),
            .mode = view.mode,
            .owner = view.properties.contains("Owner") ? ownerNamer_(view.owner) : "",
            .output = cli::outputLocation(view),
            .eventsPerSecond = formatRate(events),
            .megabytesPerSecond = formatRate(bytes, 1e6),
            .discarded = std::to_string(session.totals.current().eventsDiscarded),
            .graph = session.history.points(nowUs),
            .graphUnit = session.history.unit(),
            .ustRules = rules("Events", 5),
            .kernelRules = rules("KernelEvents", 4),
            .ustChannels = channels("Channels"),
            .kernelChannels = channels("KernelChannels"),
        });
    }
    return rows;
}

std::map<std::string, std::string> enabledRules(const nlohmann::json& events,
                                                std::size_t enabledField) {
    std::map<std::string, std::string> rules;
    if (!events.is_array()) {
        return rules;
    }
    for (const nlohmann::json& rule : events) {
        if (rule.is_array() && rule.size() > enabledField && rule[0].is_string() &&
            rule[1].is_string() && rule[enabledField].is_boolean() &&
            rule[enabledField].get<bool>()) {
            rules.emplace(rule[1].get<std::string>(), rule[0].get<std::string>());
        }
    }
    return rules;
}

std::vector<std::string> channelNames(const nlohmann::json& channels) {
    std::vector<std::string> names;
    if (!channels.is_array()) {
        return names;
    }
    for (const nlohmann::json& channel : channels) {
        if (channel.is_array() && !channel.empty() && channel[0].is_string()) {
            names.push_back(channel[0].get<std::string>());
        }
    }
    return names;
}

std::string formatRate(const std::optional<double>& rate, double divisor) {
    if (!rate) {
        return kUnknownFigure;
    }
    const double value = *rate / divisor;
    char text[64];
    const int decimals = value < 10.0 ? 2 : value < 100.0 ? 1 : 0;
    std::snprintf(text, sizeof text, "%.*f", decimals, value);
    return text;
}

} // namespace tracectl::gui
