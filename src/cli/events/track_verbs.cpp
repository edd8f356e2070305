// tracectl track and tracectl untrack (track_options.hpp, track_commands.hpp): two verbs
// sharing one command line.
#include "cli/track_commands.hpp"
#include "event_verbs.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

namespace tracectl::cli {

void addTrackVerbs(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<TrackCommandLine>();
    addTrackCommands(app, *cl);
    const VerbHandler handler{.check = [cl] { resolveTrackCommands(*cl); },
                              .run =
                                  [cl](BusClient& bus) {
                                      runTrackCommand(bus, *cl, std::cout);
                                      return ExitStatus::Success;
                                  }};
    verbs.add(*cl->trackCommand, handler);
    verbs.add(*cl->untrackCommand, handler);
}

} // namespace tracectl::cli
