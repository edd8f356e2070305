// tracectl version: tracectl's version, then the daemon's.
#include "cli/bus_client.hpp"
#include "config.h"
#include "session_verbs.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

namespace tracectl::cli {

void addVersionVerb(CLI::App& app, VerbTable& verbs) {
    auto* version = app.add_subcommand(
        "version", "Print the versions of tracectl and of the daemon (as lttng version)");
    version->footer("Prints tracectl's version, then the version of the tracectld answering on\n"
                    "the bus (the Manager's Version property); if none answers, says so and\n"
                    "exits with status 3.\n\nExample:\n  tracectl version --user");

    verbs.add(*version, {.beforeBus = []() -> std::optional<ExitStatus> {
                             std::cout << "tracectl " << TRACECTL_VERSION << '\n'
                                       << std::flush; // no bus
                             return std::nullopt;
                         },
                         .run =
                             [](BusClient& bus) {
                                 std::cout << "tracectld " << bus.daemonVersion() << '\n';
                                 return ExitStatus::Success;
                             }});
}

} // namespace tracectl::cli
