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
std::optional<double> perSecond(std::uint64_t earlier, std::uint64_t later, double seconds) {
    if (later < earlier) {
        return std::nullopt;
    }
    return static_cast<double>(later - earlier) / seconds;
}

std::string formatRate(const std::optional<double>& rate, double divisor, int decimals) {
    if (!rate) {
        return "-";
    }
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", decimals, *rate / divisor);
    return text;
}

} // namespace

void RateTracker::add(const Counters& counters, std::uint64_t sampledAtUs) {
    if (sampledAtUs == 0 || currentAt_ == 0 || sampledAtUs < currentAt_) {
        // Never sampled, first sample, or the clock of the samples went backwards: the series
        // starts (over) here.
        hasPrevious_ = false;
    } else if (sampledAtUs > currentAt_) {
        previous_ = current_;
        previousAt_ = currentAt_;
        hasPrevious_ = true;
    }
    // sampled_at_us == current_at_: the same sample, announced again; keep the previous one.
    if (!hasPrevious_ || !counters.eventsRecorded ||
        (hasEvents_ && *counters.eventsRecorded < eventsCurrent_)) {
        hasEvents_ = false; // the series starts (over) here
        hasEventsPrevious_ = false;
    }
    if (counters.eventsRecorded) {
        if (!hasEvents_) {
            eventsCurrent_ = *counters.eventsRecorded;
            eventsCurrentAt_ = sampledAtUs;
            hasEvents_ = true;
        } else if (*counters.eventsRecorded != eventsCurrent_ && sampledAtUs > eventsCurrentAt_) {
            eventsPrevious_ = eventsCurrent_;
            eventsPreviousAt_ = eventsCurrentAt_;
            hasEventsPrevious_ = true;
            eventsCurrent_ = *counters.eventsRecorded;
            eventsCurrentAt_ = sampledAtUs;
        }
    }
    current_ = counters;
    currentAt_ = sampledAtUs;
}

std::pair<std::optional<double>, std::optional<double>>
RateTracker::rates(std::uint64_t nowUs) const {
    if (!hasPrevious_ || currentAt_ <= previousAt_) {
        return {std::nullopt, std::nullopt};
    }
    // The bytes the apps produced, sampled live by the consumer; from a daemon that does not
    // report them, the bytes written (which move only as whole sub-buffers complete).
    const bool produced = previous_.bytesProduced && current_.bytesProduced;
    const std::uint64_t bytesBefore = produced ? *previous_.bytesProduced : previous_.bytesWritten;
    const std::uint64_t bytesNow = produced ? *current_.bytesProduced : current_.bytesWritten;
    if (nowUs != 0 && nowUs > currentAt_ && nowUs - currentAt_ > kStaleAfterUs) {
        const bool wentBack =
            current_.eventsRecorded.value_or(0) < previous_.eventsRecorded.value_or(0) ||
            bytesNow < bytesBefore;
        if (!wentBack) {
            return {0.0, 0.0};
        }
    }
    const double seconds = static_cast<double>(currentAt_ - previousAt_) / 1e6;
    // Not counted (the session counts no events), or no sub-buffer read since the first
    // sample: no rate, "-".
    const std::optional<double> events =
        hasEventsPrevious_ && eventsCurrentAt_ > eventsPreviousAt_
            ? perSecond(eventsPrevious_, eventsCurrent_,
                        static_cast<double>(eventsCurrentAt_ - eventsPreviousAt_) / 1e6)
            : std::nullopt;
    return {events, perSecond(bytesBefore, bytesNow, seconds)};
}

void TopModel::update(const std::string& path, const PropertyMap& properties) {
    Session& session = sessions_[path];
    for (const auto& [key, value] : properties) {
        if (key != kStatisticsProperty && key != kChannelStatisticsProperty) {
            session.properties[key] = value;
        }
    }
    if (const auto it = properties.find(kStatisticsProperty); it != properties.end()) {
        session.sampledAtUs = sampledAtFromJson(it->second);
        session.totals.add(countersFromJson(it->second), session.sampledAtUs);
    }
    if (const auto it = properties.find(kChannelStatisticsProperty); it != properties.end()) {
        std::map<std::pair<std::string, std::string>, RateTracker> channels;
        session.channelOrder.clear();
        for (const ChannelCounters& channel : channelsFromJson(it->second)) {
            auto key = std::pair{channel.domain, channel.channel};
            if (channels.contains(key)) {
                continue; // listed twice: the first one counts
            }
            auto node = session.channels.extract(key);
            RateTracker tracker = node.empty() ? RateTracker{} : std::move(node.mapped());
            tracker.add(channel.counters, session.sampledAtUs);
            channels.emplace(key, std::move(tracker));
            session.channelOrder.push_back(std::move(key));
        }
        session.channels = std::move(channels); // channels no longer listed are dropped
    }
}

void TopModel::remove(const std::string& path) {
    sessions_.erase(path);
}

std::vector<TopRow> TopModel::rows(std::uint64_t nowUs) const {
    std::vector<SessionView> views;
    views.reserve(sessions_.size());
    for (const auto& [path, session] : sessions_) {
        views.push_back(sessionViewFromProperties(path, session.properties));
    }
    sortByCreationTime(views);
    std::vector<TopRow> rows;
    for (const SessionView& view : views) {
        const Session& session = sessions_.at(view.objectPath);
        const auto [events, bytes] = session.totals.rates(nowUs);
        rows.push_back(TopRow{false, view.name, view.state, events, bytes,
                              session.totals.current().eventsDiscarded,
                              session.totals.current().packetsLost});
        for (const auto& key : session.channelOrder) {
            const RateTracker& channel = session.channels.at(key);
            const auto [channel_events, channel_bytes] = channel.rates(nowUs);
            rows.push_back(TopRow{true, key.first + "/" + key.second, "", channel_events,
                                  channel_bytes, channel.current().eventsDiscarded,
                                  channel.current().packetsLost});
        }
    }
    return rows;
}

std::vector<std::string> formatTopFrame(const std::vector<TopRow>& rows, std::size_t sessionCount) {
    std::vector<std::string> lines{"tracectl top: " + std::to_string(sessionCount) +
                                       (sessionCount == 1 ? " session" : " sessions") +
                                       ", every second; q to quit",
                                   ""};
    if (rows.empty()) {
        lines.emplace_back("No sessions.");
        return lines;
    }
    std::vector<TableRow> table{{"SESSION", "STATE", "EVENTS/S", "MB/S", "DISCARDED", "LOST"}};
    for (const TopRow& row : rows) {
        table.push_back({(row.isChannel ? "  " : "") + row.name, row.state,
                         formatRate(row.eventsPerS, 1, 0), formatRate(row.bytesPerS, 1e6, 2),
                         std::to_string(row.discarded), std::to_string(row.lost)});
    }
    for (std::string& line : formatTable(table, {2, 3, 4, 5})) {
        lines.push_back(std::move(line));
    }
    return lines;
}

} // namespace tracectl::cli
