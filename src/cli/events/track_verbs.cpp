// tracectl track and tracectl untrack (track_options.hpp, track_commands.hpp): two verbs
// sharing one command line.
#include "cli/track_commands.hpp"
#include "event_verbs.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

namespace tracectl::cli {

void add_track_verbs(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<TrackCommandLine>();
    add_track_commands(app, *cl);
    const VerbHandler handler{.check = [cl] { resolve_track_commands(*cl); },
                              .run =
                                  [cl](BusClient& bus) {
                                      run_track_command(bus, *cl, std::cout);
                                      return ExitStatus::success;
                                  }};
    verbs.add(*cl->track_command, handler);
    verbs.add(*cl->untrack_command, handler);
}

} // namespace tracectl::cli
