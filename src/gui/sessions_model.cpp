#include "sessions_model.hpp"

#include <cli/session_statistics.hpp>
#include <cli/session_view.hpp>
#include <cli/user_names.hpp>
#include <cstdio>
#include <utility>

namespace tracectl::gui {
namespace {

std::string default_owner_name(std::uint32_t uid) {
    return cli::lookup_user_name(uid).value_or(std::to_string(uid));
}

} // namespace

SessionsModel::SessionsModel(OwnerNamer owner_namer)
    : owner_namer_(owner_namer ? std::move(owner_namer) : OwnerNamer(&default_owner_name)) {}

void SessionsModel::update(const std::string& path, const cli::PropertyMap& properties) {
    Session& session = sessions_[path];
    for (const auto& [key, value] : properties) {
        if (key != cli::statistics_property) {
            session.properties[key] = value;
        }
    }
    if (const auto it = properties.find(cli::statistics_property); it != properties.end()) {
        const cli::Counters counters = cli::counters_from_json(it->second);
        const std::uint64_t sampled_at = cli::sampled_at_from_json(it->second);
        session.totals.add(counters, sampled_at);
        session.history.add(counters, sampled_at);
    }
}

void SessionsModel::remove(const std::string& path) {
    sessions_.erase(path);
}

void SessionsModel::clear() {
    sessions_.clear();
}

std::vector<SessionRow> SessionsModel::rows(std::uint64_t now_us) const {
    std::vector<cli::SessionView> views;
    views.reserve(sessions_.size());
    for (const auto& [path, session] : sessions_) {
        views.push_back(cli::session_view_from_properties(path, session.properties));
    }
    cli::sort_by_creation_time(views);
    std::vector<SessionRow> rows;
    rows.reserve(views.size());
    for (const cli::SessionView& view : views) {
        const Session& session = sessions_.at(view.object_path);
        const auto [events, bytes] = session.totals.rates(now_us);
        std::string reason;
        if (const auto it = view.properties.find("ErrorReason");
            it != view.properties.end() && it->second.is_string()) {
            reason = it->second.get<std::string>();
        }
        rows.push_back(SessionRow{
            .path = view.object_path,
            .name = view.name,
            .state = view.state,
            .error_reason = std::move(reason),
            .mode = view.mode,
            .owner = view.properties.contains("Owner") ? owner_namer_(view.owner) : "",
            .output = cli::output_location(view),
            .events_per_second = format_rate(events),
            .megabytes_per_second = format_rate(bytes, 1e6),
            .discarded = std::to_string(session.totals.current().events_discarded),
            .graph = session.history.points(now_us),
            .graph_unit = session.history.unit(),
        });
    }
    return rows;
}

std::string format_rate(const std::optional<double>& rate, double divisor) {
    if (!rate) {
        return unknown_figure;
    }
    const double value = *rate / divisor;
    char text[64];
    const int decimals = value < 10.0 ? 2 : value < 100.0 ? 1 : 0;
    std::snprintf(text, sizeof text, "%.*f", decimals, value);
    return text;
}

} // namespace tracectl::gui
