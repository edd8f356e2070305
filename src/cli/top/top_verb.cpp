// tracectl top: a live view of the sessions' rates and losses (top_command.hpp).
#include "top_verb.hpp"

#include "cli/top_command.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

namespace tracectl::cli {

void addTopVerb(CLI::App& app, VerbTable& verbs) {
    auto* top = app.add_subcommand("top", "Watch your sessions' event rates and losses live");
    top->footer("A live view, refreshed every second, of the sessions you may see (those of\n"
                "'tracectl list'): per session and per channel, events recorded per second,\n"
                "megabytes (10^6 bytes) written per second, events discarded and packets lost\n"
                "so far, and the session's state. Rates need two samples: '-' until then.\n"
                "Follows the daemon's PropertiesChanged signals; sessions created or destroyed\n"
                "meanwhile come and go. q (or Ctrl-C) quits. Needs a terminal: without one it\n"
                "exits with status 2.\n\n"
                "Example:\n  tracectl top\n  tracectl top --user");

    verbs.add(*top, {.beforeBus = []() -> std::optional<ExitStatus> {
                         if (!checkTerminalForTop(std::cerr)) {
                             return ExitStatus::Usage; // nothing to show it on anyway
                         }
                         return std::nullopt;
                     },
                     .run =
                         [](BusClient& bus) {
                             std::cout.flush();
                             return runTop(bus, std::cerr);
                         }});
}

} // namespace tracectl::cli
