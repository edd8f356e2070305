#include "session_statistics.hpp"

#include <utility>

namespace tracectl::cli {
namespace {

std::uint64_t counter(const nlohmann::json& dictionary, const char* key) {
    const auto it = dictionary.find(key);
    if (it == dictionary.end()) {
        return 0;
    }
    if (it->is_number_unsigned()) {
        return it->get<std::uint64_t>();
    }
    if (it->is_number_integer()) {
        const auto value = it->get<std::int64_t>();
        return value > 0 ? static_cast<std::uint64_t>(value) : 0;
    }
    return 0;
}

std::string text(const nlohmann::json& value) {
    return value.is_string() ? value.get<std::string>() : std::string{};
}

std::string counted(std::uint64_t count, const char* one, const char* many) {
    return std::to_string(count) + " " + (count == 1 ? one : many);
}

} // namespace

Counters countersFromJson(const nlohmann::json& dictionary) {
    if (!dictionary.is_object()) {
        return {};
    }
    return Counters{
        .eventsRecorded = dictionary.contains("events-recorded")
                              ? std::optional<std::uint64_t>(counter(dictionary, "events-recorded"))
                              : std::nullopt,
        .eventsDiscarded = counter(dictionary, "events-discarded"),
        .packetsLost = counter(dictionary, "packets-lost"),
        .bytesWritten = counter(dictionary, "bytes-written"),
        .chunkBytes = counter(dictionary, "chunk-bytes"),
        .bytesProduced = dictionary.contains("bytes-produced")
                             ? std::optional<std::uint64_t>(counter(dictionary, "bytes-produced"))
                             : std::nullopt,
        .appsRefused = counter(dictionary, "apps-refused"),
    };
}

std::uint64_t sampledAtFromJson(const nlohmann::json& dictionary) {
    return dictionary.is_object() ? counter(dictionary, "sampled-at") : 0;
}

std::vector<ChannelCounters> channelsFromJson(const nlohmann::json& value) {
    std::vector<ChannelCounters> channels;
    if (!value.is_array()) {
        return channels;
    }
    for (const nlohmann::json& entry : value) {
        if (entry.is_array() && entry.size() == 3 && entry[0].is_string() && entry[1].is_string()) {
            channels.push_back({text(entry[0]), text(entry[1]), countersFromJson(entry[2])});
        } else if (entry.is_object() && entry.contains("channel")) {
            channels.push_back({text(entry.value("domain", nlohmann::json())),
                                text(entry["channel"]), countersFromJson(entry)});
        }
    }
    return channels;
}

std::optional<SessionStatistics> statisticsFromProperties(const PropertyMap& properties) {
    const auto totals = properties.find(kStatisticsProperty);
    if (totals == properties.end()) {
        return std::nullopt;
    }
    SessionStatistics statistics;
    statistics.totals = countersFromJson(totals->second);
    statistics.sampledAtUs = sampledAtFromJson(totals->second);
    if (const auto channels = properties.find(kChannelStatisticsProperty);
        channels != properties.end()) {
        statistics.channels = channelsFromJson(channels->second);
    }
    return statistics;
}

nlohmann::json channelStatisticsReadable(const nlohmann::json& value) {
    if (!value.is_array()) {
        return value;
    }
    auto out = nlohmann::json::array();
    for (const nlohmann::json& entry : value) {
        if (entry.is_array() && entry.size() == 3 && entry[0].is_string() && entry[1].is_string() &&
            entry[2].is_object()) {
            auto object = nlohmann::json::object();
            object["domain"] = entry[0];
            object["channel"] = entry[1];
            for (const auto& [key, figure] : entry[2].items()) {
                if (key != "domain" && key != "channel") {
                    object[key] = figure;
                }
            }
            out.push_back(std::move(object));
        } else {
            out.push_back(entry);
        }
    }
    return out;
}

std::optional<std::string> lossWarning(const std::string& sessionName, const Counters& totals,
                                       bool snapshotMode) {
    const std::string advice = "; use bigger sub-buffers (tracectl enable-channel --subbuf-size) "
                               "or more of them (--num-subbuf)";
    if (snapshotMode) {
        if (totals.packetsLost == 0) {
            return std::nullopt;
        }
        return "warning: session " + sessionName + " lost " +
               counted(totals.packetsLost, "packet", "packets") +
               ": sub-buffers the tracer overwrote before a snapshot could copy them" + advice;
    }
    if (totals.eventsDiscarded == 0 && totals.packetsLost == 0) {
        return std::nullopt;
    }
    std::string what;
    if (totals.eventsDiscarded != 0) {
        what = "discarded " + counted(totals.eventsDiscarded, "event", "events");
    }
    if (totals.packetsLost != 0) {
        what += (what.empty() ? "lost " : " and lost ") +
                counted(totals.packetsLost, "packet", "packets");
    }
    return "warning: session " + sessionName + " " + what + advice;
}

} // namespace tracectl::cli
