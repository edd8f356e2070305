// What the sessions view shows, computed from what the daemon announced: each session's
// properties (GetAll, InterfacesAdded, PropertiesChanged) in, one row of text per session out,
// with events/s and MB/s from the last two Statistics samples (cli::RateTracker, shared with
// `tracectl top`). No GTK, no bus: tested in tests/unit/gui_sessions_model_test.cpp.
#pragma once

#include "rate_history.hpp"

#include <cli/property_map.hpp>
#include <cli/top_model.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tracectl::gui {

/// One session as the view shows it; every field is display text.
struct SessionRow {
    std::string path;        ///< object path, /org/tracectl/Tracing1/session/<32 hex digits>
    std::string name;        ///< Name
    std::string state;       ///< State: created|active|stopped|rotating|error
    std::string errorReason; ///< ErrorReason ("" unless state is "error")
    std::string mode;        ///< Mode: normal|snapshot|live
    std::string owner;       ///< the Owner's login name, or the uid in decimal
    std::string output;      ///< OutputUrl when it streams, else OutputPath
    /// Events recorded per second over the last two samples: "—" when unknown (fewer than two
    /// samples, or a session created without count-events, which records no event count).
    std::string eventsPerSecond;
    std::string megabytesPerSecond; ///< bytes-written per second / 1,000,000; "—" unknown
    std::string discarded;          ///< events-discarded so far, decimal
    /// The rate graph of the last minute (RateHistory::points), empty before two samples.
    std::vector<RatePoint> graph;
    std::string graphUnit; ///< what graph measures: "events/s" or "MB/s"
    /// The session's enabled event rules, pattern -> channel: UST ones (Events) and kernel ones
    /// (KernelEvents). Rules turned off by DisableEvents are left out.
    std::map<std::string, std::string> ustRules;
    std::map<std::string, std::string> kernelRules;
    /// The names of the session's UST channels (Channels) and kernel ones (KernelChannels), in
    /// the daemon's order.
    std::vector<std::string> ustChannels;
    std::vector<std::string> kernelChannels;

    bool operator==(const SessionRow&) const = default;
};

/// The text of an unknown figure.
inline constexpr const char* kUnknownFigure = "—";

/// Maps a uid to the name shown in the Owner column (default: the password database, else
/// the number).
using OwnerNamer = std::function<std::string(std::uint32_t uid)>;

class SessionsModel {
public:
    explicit SessionsModel(OwnerNamer ownerNamer = {});

    /// Adds the session at `path` or merges `properties` into it (a PropertiesChanged carries
    /// only what changed). A Statistics value is a new sample for the rates.
    void update(const std::string& path, const cli::PropertyMap& properties);

    /// Forgets the session at `path`; no-op if unknown.
    void remove(const std::string& path);

    /// Forgets every session.
    void clear();

    bool contains(const std::string& path) const { return sessions_.contains(path); }
    /// The Name of the session at `path` ("" if unknown or not announced yet).
    std::string nameOf(const std::string& path) const;
    std::size_t size() const noexcept { return sessions_.size(); }

    /// The rows, oldest session first (CreationTime, then name). `now_us` is CLOCK_MONOTONIC
    /// in microseconds, the clock of Statistics' sampled-at: rates turn to 0 once no sample
    /// came for cli::RateTracker::stale_after_us (the daemon only announces changes).
    std::vector<SessionRow> rows(std::uint64_t nowUs) const;

private:
    struct Session {
        cli::PropertyMap properties; ///< every property but Statistics, merged
        cli::RateTracker totals;
        RateHistory history;
    };
    OwnerNamer ownerNamer_;
    std::map<std::string, Session> sessions_;
};

/// The enabled rules of an Events (a(sssiasbs)) or KernelEvents (a(ssbsb)) value, as JSON
/// (cli::PropertyMap): pattern -> channel. `enabled_field` is the index of the struct's
/// "enabled" member (5 for Events, 4 for KernelEvents). Anything else gives an empty map.
std::map<std::string, std::string> enabledRules(const nlohmann::json& events,
                                                std::size_t enabledField);

/// The names (first members) of a Channels or KernelChannels value (a(sttbuub)), as JSON.
std::vector<std::string> channelNames(const nlohmann::json& channels);

/// A rate for people, after dividing by `divisor`: "—" for nullopt; two decimals below 10,
/// one below 100, none from 100 up (so that a trickle does not read as 0).
std::string formatRate(const std::optional<double>& rate, double divisor = 1.0);

} // namespace tracectl::gui
