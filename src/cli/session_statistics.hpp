// The figures of a session's Statistics and ChannelStatistics properties (issue 14), read from
// a PropertyMap into plain structs. Tolerant: unknown keys are ignored, missing or mistyped
// keys read as 0 (but "events-recorded", which a session that does not count events leaves
// out: unknown), so a newer or older daemon never breaks the CLI.
#pragma once

#include "property_map.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tracectl::cli {

/// The D-Bus property names.
inline constexpr const char* kStatisticsProperty = "Statistics";
inline constexpr const char* kChannelStatisticsProperty = "ChannelStatistics";

/// The counters every statistics dictionary carries (the keys of the a{sv}).
struct Counters {
    /// "events-recorded"; absent when the session does not count events
    /// (created without count-events): unknown, not 0.
    std::optional<std::uint64_t> eventsRecorded = std::nullopt;
    std::uint64_t eventsDiscarded = 0; ///< "events-discarded"
    std::uint64_t packetsLost = 0;     ///< "packets-lost"
    std::uint64_t bytesWritten = 0;    ///< "bytes-written": since the session was created
    std::uint64_t chunkBytes = 0;      ///< "chunk-bytes": bytes of the current trace chunk
    /// "bytes-produced": bytes-written plus what the apps wrote into the ring buffers that is
    /// not read yet, sampled without consuming; absent from a daemon before it (unknown).
    std::optional<std::uint64_t> bytesProduced = std::nullopt;
    /// "apps-refused": apps not traced because the consumer had no fds for their buffers.
    std::uint64_t appsRefused = 0;

    bool operator==(const Counters&) const = default;
};

/// One entry of ChannelStatistics a(ssa{sv}).
struct ChannelCounters {
    std::string domain;  ///< "ust", "kernel", ...
    std::string channel; ///< channel name
    Counters counters;

    bool operator==(const ChannelCounters&) const = default;
};

/// A session's statistics as last announced.
struct SessionStatistics {
    Counters totals;
    std::uint64_t sampledAtUs = 0; ///< "sampled-at": CLOCK_MONOTONIC µs; 0 = never sampled
    std::vector<ChannelCounters> channels;

    bool operator==(const SessionStatistics&) const = default;
};

/// Reads the counters of one statistics dictionary (a JSON object; anything else reads as 0s).
Counters countersFromJson(const nlohmann::json& dictionary);

/// The "sampled-at" of a Statistics dictionary (0 when missing or not a number).
std::uint64_t sampledAtFromJson(const nlohmann::json& dictionary);

/// Reads ChannelStatistics as variant_json gives it (an array of [domain, channel, {...}]) or
/// as the readable form channel_statistics_readable() makes (objects with "domain" and
/// "channel" keys). Malformed entries are skipped.
std::vector<ChannelCounters> channelsFromJson(const nlohmann::json& value);

/// The statistics of a session, or nullopt when its properties have no Statistics at all
/// (a daemon from before issue 14).
std::optional<SessionStatistics> statisticsFromProperties(const PropertyMap& properties);

/// ChannelStatistics turned from [[domain, channel, {k: v}], ...] into
/// [{"domain": d, "channel": c, k: v, ...}, ...], for --json. Entries of any other shape are
/// kept as they are.
nlohmann::json channelStatisticsReadable(const nlohmann::json& value);

/// The loss warning of a session, without the "tracectl: " prefix, or nullopt when nothing
/// was dropped: "warning: session NAME discarded N events and lost M packets; use bigger
/// sub-buffers (tracectl enable-channel --subbuf-size) or more of them (--num-subbuf)".
/// In a snapshot session (`snapshotMode`) the channels overwrite their oldest sub-buffers by
/// design, and the events counted discarded there (a kernel channel's overwritten events,
/// ftrace's overrun) are no drop: only lost packets are warned of, the sub-buffers the tracer
/// overwrote before a snapshot could copy them (as lttng(1) warns of neither in snapshot
/// mode: its stop and destroy, utils.cpp get_session_stats_str).
std::optional<std::string> lossWarning(const std::string& sessionName, const Counters& totals,
                                       bool snapshotMode);

} // namespace tracectl::cli
