#include "top_model.hpp"

#include "session_view.hpp"
#include "text_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

namespace tracectl::cli {
namespace {

/// later - earlier per second of `seconds`, or nullopt when the counter went backwards.
std::optional<double> per_second(std::uint64_t earlier, std::uint64_t later, double seconds) {
    if (later < earlier) {
        return std::nullopt;
    }
    return static_cast<double>(later - earlier) / seconds;
}

std::string format_rate(const std::optional<double>& rate, double divisor, int decimals) {
    if (!rate) {
        return "-";
    }
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", decimals, *rate / divisor);
    return text;
}

} // namespace

void RateTracker::add(const Counters& counters, std::uint64_t sampled_at_us) {
    if (sampled_at_us == 0 || current_at_ == 0 || sampled_at_us < current_at_) {
        // Never sampled, first sample, or the clock of the samples went backwards: the series
        // starts (over) here.
        has_previous_ = false;
    } else if (sampled_at_us > current_at_) {
        previous_ = current_;
        previous_at_ = current_at_;
        has_previous_ = true;
    }
    // sampled_at_us == current_at_: the same sample, announced again; keep the previous one.
    if (!has_previous_ || !counters.events_recorded ||
        (has_events_ && *counters.events_recorded < events_current_)) {
        has_events_ = false; // the series starts (over) here
        has_events_previous_ = false;
    }
    if (counters.events_recorded) {
        if (!has_events_) {
            events_current_ = *counters.events_recorded;
            events_current_at_ = sampled_at_us;
            has_events_ = true;
        } else if (*counters.events_recorded != events_current_ &&
                   sampled_at_us > events_current_at_) {
            events_previous_ = events_current_;
            events_previous_at_ = events_current_at_;
            has_events_previous_ = true;
            events_current_ = *counters.events_recorded;
            events_current_at_ = sampled_at_us;
        }
    }
    current_ = counters;
    current_at_ = sampled_at_us;
}

std::pair<std::optional<double>, std::optional<double>>
RateTracker::rates(std::uint64_t now_us) const {
    if (!has_previous_ || current_at_ <= previous_at_) {
        return {std::nullopt, std::nullopt};
    }
    // The bytes the apps produced, sampled live by the consumer; from a daemon that does not
    // report them, the bytes written (which move only as whole sub-buffers complete).
    const bool produced = previous_.bytes_produced && current_.bytes_produced;
    const std::uint64_t bytes_before =
        produced ? *previous_.bytes_produced : previous_.bytes_written;
    const std::uint64_t bytes_now = produced ? *current_.bytes_produced : current_.bytes_written;
    if (now_us != 0 && now_us > current_at_ && now_us - current_at_ > stale_after_us) {
        const bool went_back =
            current_.events_recorded.value_or(0) < previous_.events_recorded.value_or(0) ||
            bytes_now < bytes_before;
        if (!went_back) {
            return {0.0, 0.0};
        }
    }
    const double seconds = static_cast<double>(current_at_ - previous_at_) / 1e6;
    // Not counted (the session counts no events), or no sub-buffer read since the first
    // sample: no rate, "-".
    const std::optional<double> events =
        has_events_previous_ && events_current_at_ > events_previous_at_
            ? per_second(events_previous_, events_current_,
                         static_cast<double>(events_current_at_ - events_previous_at_) / 1e6)
            : std::nullopt;
    return {events, per_second(bytes_before, bytes_now, seconds)};
}

void TopModel::update(const std::string& path, const PropertyMap& properties) {
    Session& session = sessions_[path];
    for (const auto& [key, value] : properties) {
        if (key != statistics_property && key != channel_statistics_property) {
            session.properties[key] = value;
        }
    }
    if (const auto it = properties.find(statistics_property); it != properties.end()) {
        session.sampled_at_us = sampled_at_from_json(it->second);
        session.totals.add(counters_from_json(it->second), session.sampled_at_us);
    }
    if (const auto it = properties.find(channel_statistics_property); it != properties.end()) {
        std::map<std::pair<std::string, std::string>, RateTracker> channels;
        session.channel_order.clear();
        for (const ChannelCounters& channel : channels_from_json(it->second)) {
            auto key = std::pair{channel.domain, channel.channel};
            if (channels.contains(key)) {
                continue; // listed twice: the first one counts
            }
            auto node = session.channels.extract(key);
            RateTracker tracker = node.empty() ? RateTracker{} : std::move(node.mapped());
            tracker.add(channel.counters, session.sampled_at_us);
            channels.emplace(key, std::move(tracker));
            session.channel_order.push_back(std::move(key));
        }
        session.channels = std::move(channels); // channels no longer listed are dropped
    }
}

void TopModel::remove(const std::string& path) {
    sessions_.erase(path);
}

std::vector<TopRow> TopModel::rows(std::uint64_t now_us) const {
    std::vector<SessionView> views;
    views.reserve(sessions_.size());
    for (const auto& [path, session] : sessions_) {
        views.push_back(session_view_from_properties(path, session.properties));
    }
    sort_by_creation_time(views);
    std::vector<TopRow> rows;
    for (const SessionView& view : views) {
        const Session& session = sessions_.at(view.object_path);
        const auto [events, bytes] = session.totals.rates(now_us);
        rows.push_back(TopRow{false, view.name, view.state, events, bytes,
                              session.totals.current().events_discarded,
                              session.totals.current().packets_lost});
        for (const auto& key : session.channel_order) {
            const RateTracker& channel = session.channels.at(key);
            const auto [channel_events, channel_bytes] = channel.rates(now_us);
            rows.push_back(TopRow{true, key.first + "/" + key.second, "", channel_events,
                                  channel_bytes, channel.current().events_discarded,
                                  channel.current().packets_lost});
        }
    }
    return rows;
}

std::vector<std::string> format_top_frame(const std::vector<TopRow>& rows,
                                          std::size_t session_count) {
    std::vector<std::string> lines{"tracectl top: " + std::to_string(session_count) +
                                       (session_count == 1 ? " session" : " sessions") +
                                       ", every second; q to quit",
                                   ""};
    if (rows.empty()) {
        lines.emplace_back("No sessions.");
        return lines;
    }
    std::vector<TableRow> table{{"SESSION", "STATE", "EVENTS/S", "MB/S", "DISCARDED", "LOST"}};
    for (const TopRow& row : rows) {
        table.push_back({(row.is_channel ? "  " : "") + row.name, row.state,
                         format_rate(row.events_per_s, 1, 0), format_rate(row.bytes_per_s, 1e6, 2),
                         std::to_string(row.discarded), std::to_string(row.lost)});
    }
    for (std::string& line : format_table(table, {2, 3, 4, 5})) {
        lines.push_back(std::move(line));
    }
    return lines;
}

} // namespace tracectl::cli
