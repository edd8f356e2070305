// `tracectl track` and `tracectl untrack` (lttng-track(1), lttng-untrack(1)):
// the bus side of the calls track_options.hpp resolves.
#pragma once

#include "bus_client.hpp"
#include "track_options.hpp"

#include <iosfwd>

namespace tracectl::cli {

/// Both subcommands' flags, for their verbs (events/track_verbs.cpp).
struct TrackCommandLine {
    TrackFlags track;
    TrackFlags untrack;
    CLI::App* trackCommand = nullptr;
    CLI::App* untrackCommand = nullptr;
    TrackCall call; ///< once parsed (resolve_track_commands())
};

/// Adds `track` and `untrack` to `app`.
void addTrackCommands(CLI::App& app, TrackCommandLine& line);
/// True if one of them was parsed.
bool trackCommandParsed(const TrackCommandLine& line);
/// Fills line.call if one of them was parsed; throws CLI::ValidationError.
void resolveTrackCommands(TrackCommandLine& line);
/// Makes the call, then says what the tracker holds now. A refusal throws
/// sdbus::Error (org.tracectl.Tracing1.Error.*).
void runTrackCommand(BusClient& bus, const TrackCommandLine& line, std::ostream& out);

} // namespace tracectl::cli
