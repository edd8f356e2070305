// tracectl disable-event and tracectl disable-channel (disable_options.hpp,
// disable_commands.hpp): two verbs sharing one command line.
#include "cli/disable_commands.hpp"
#include "cli/disable_options.hpp"
#include "event_verbs.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

namespace tracectl::cli {

void add_disable_verbs(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<DisableCommandLine>();
    add_disable_commands(app, *cl);
    const VerbHandler handler{.check = [cl] { finish_disable_commands(*cl); },
                              .run =
                                  [cl](BusClient& bus) {
                                      run_disable_commands(bus, *cl, std::cout);
                                      return ExitStatus::success;
                                  }};
    verbs.add(*cl->disable_event, handler);
    verbs.add(*cl->disable_channel, handler);
}

} // namespace tracectl::cli
