// The model of `tracectl top`: session properties in (GetAll, InterfacesAdded,
// PropertiesChanged), table rows out, with events/s and bytes/s computed from the last two
// statistics samples. No bus, no terminal: tested in tests/unit/cli_top_model_test.cpp.
#pragma once

#include "property_map.hpp"
#include "session_statistics.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tracectl::cli {

/// One line of the `top` table: a session, or one of its channels (listed under it).
struct TopRow {
    bool isChannel = false;
    std::string name;  ///< the session's name, or "DOMAIN/CHANNEL"
    std::string state; ///< the session's State ("" on channel rows)
    /// Rates over the last two samples; nullopt while there are fewer than two samples, or
    /// when a counter went backwards between them (the consumer restarted its figures).
    std::optional<double> eventsPerS;
    std::optional<double> bytesPerS;
    std::uint64_t discarded = 0; ///< events discarded so far
    std::uint64_t lost = 0;      ///< packets lost so far

    bool operator==(const TopRow&) const = default;
};

/// The rates of one series of counters (a session's totals or one channel's).
class RateTracker {
public:
    /// Takes the counters sampled at `sampled_at_us` (CLOCK_MONOTONIC µs; 0: never sampled).
    /// A later sample moves the current one to "previous"; a sample at the same time replaces
    /// the current one; an earlier one (the daemon restarted) starts the series over.
    void add(const Counters& counters, std::uint64_t sampledAtUs);

    const Counters& current() const noexcept { return current_; }

    /// {events/s, bytes/s}. Bytes/s: between the last two samples, of bytes-produced (the
    /// consumer samples the ring buffers once a second while the apps write) or, from a
    /// daemon without it, bytes-written. Events/s: between the last two samples in which
    /// events-recorded moved (it moves only as the consumer reads whole sub-buffers). Once
    /// `now_us` is more than
    /// `stale_after_us` past the last sample, the rates are 0: the daemon announces only
    /// changes, so silence means nothing was recorded. `now_us` 0 disables that.
    std::pair<std::optional<double>, std::optional<double>> rates(std::uint64_t nowUs) const;

    /// How long after the last sample rates are taken as 0 (three missed announcements).
    static constexpr std::uint64_t kStaleAfterUs = 3'000'000;

private:
    Counters previous_;
    Counters current_;
    std::uint64_t previousAt_ = 0;
    std::uint64_t currentAt_ = 0;
    bool hasPrevious_ = false;
    // The last two samples in which events-recorded changed (the first one: the first sample
    // that had it).
    std::uint64_t eventsPrevious_ = 0;
    std::uint64_t eventsCurrent_ = 0;
    std::uint64_t eventsPreviousAt_ = 0;
    std::uint64_t eventsCurrentAt_ = 0;
    bool hasEvents_ = false;
    bool hasEventsPrevious_ = false;
};

/// The sessions `top` shows.
class TopModel {
public:
    /// Adds the session at `path`, or updates it with `properties` (only the properties given
    /// change: a PropertiesChanged carries only what changed).
    void update(const std::string& path, const PropertyMap& properties);

    /// Forgets the session at `path` (destroyed, or no longer visible). No-op if unknown.
    void remove(const std::string& path);

    bool contains(const std::string& path) const { return sessions_.contains(path); }
    std::size_t size() const noexcept { return sessions_.size(); }

    /// The rows: sessions oldest first (CreationTime, then name), each followed by its
    /// channels in the order of ChannelStatistics. `now_us`: CLOCK_MONOTONIC µs (see
    /// RateTracker::rates()).
    std::vector<TopRow> rows(std::uint64_t nowUs) const;

private:
    struct Session {
        PropertyMap properties; ///< every property but the statistics, merged over updates
        std::uint64_t sampledAtUs = 0;
        RateTracker totals;
        std::vector<std::pair<std::string, std::string>> channelOrder; ///< (domain, channel)
        std::map<std::pair<std::string, std::string>, RateTracker> channels;
    };
    std::map<std::string, Session> sessions_;
};

/// The frame `top` draws, one string per line (no newline), each at most as wide as its
/// content (the screen clips): a title line, a blank line, the header
/// "SESSION  STATE  EVENTS/S  MB/S  DISCARDED  LOST" and the rows (channel rows indented by
/// two spaces; unknown rates "-"; MB = 1,000,000 bytes), or "No sessions." when empty.
std::vector<std::string> formatTopFrame(const std::vector<TopRow>& rows, std::size_t sessionCount);

} // namespace tracectl::cli
