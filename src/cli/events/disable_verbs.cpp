// tracectl disable-event and tracectl disable-channel (disable_options.hpp,
// disable_commands.hpp): two verbs sharing one command line.
#include "cli/disable_commands.hpp"
#include "cli/disable_options.hpp"
#include "event_verbs.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

namespace tracectl::cli {

void addDisableVerbs(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<DisableCommandLine>();
    addDisableCommands(app, *cl);
    const VerbHandler handler{.check = [cl] { finishDisableCommands(*cl); },
                              .run =
                                  [cl](BusClient& bus) {
                                      runDisableCommands(bus, *cl, std::cout);
                                      return ExitStatus::Success;
                                  }};
    verbs.add(*cl->disableEvent, handler);
    verbs.add(*cl->disableChannel, handler);
}

} // namespace tracectl::cli
