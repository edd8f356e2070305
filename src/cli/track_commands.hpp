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
    CLI::App* track_command = nullptr;
    CLI::App* untrack_command = nullptr;
    TrackCall call; ///< once parsed (resolve_track_commands())
};

/// Adds `track` and `untrack` to `app`.
void add_track_commands(CLI::App& app, TrackCommandLine& line);
/// True if one of them was parsed.
bool track_command_parsed(const TrackCommandLine& line);
/// Fills line.call if one of them was parsed; throws CLI::ValidationError.
void resolve_track_commands(TrackCommandLine& line);
/// Makes the call, then says what the tracker holds now. A refusal throws
/// sdbus::Error (org.tracectl.Tracing1.Error.*).
void run_track_command(BusClient& bus, const TrackCommandLine& line, std::ostream& out);

} // namespace tracectl::cli
