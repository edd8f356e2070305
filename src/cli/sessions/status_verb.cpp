// tracectl status [--json]
#include "cli/commands.hpp"
#include "session_verbs.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

namespace tracectl::cli {

void addStatusVerb(CLI::App& app, VerbTable& verbs) {
    auto json = std::make_shared<bool>(false);
    auto* status = app.add_subcommand("status", "Show the current session (as lttng status)");
    status->add_flag("--json", *json, "Print a JSON object with every property");
    status->footer("Prints the current session's name, then every property and statistic as\n"
                   "'tracectl show' does.\n\n"
                   "Example:\n  tracectl status");

    verbs.add(*status, {.run = [json](BusClient& bus) {
        runStatus(bus, *json, std::cout, std::cerr);
        return ExitStatus::Success;
    }});
}

} // namespace tracectl::cli
