// tracectl show NAME [--json]
#include "cli/commands.hpp"
#include "cli/verbs/verb_options.hpp"
#include "session_verbs.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

namespace tracectl::cli {

void addShowVerb(CLI::App& app, VerbTable& verbs) {
    auto args = std::make_shared<ShowArgs>();
    auto* show = app.add_subcommand("show", "Show every property of a session");
    show->add_option("NAME", args->name, "Name of the session")->required();
    show->add_flag("--json", args->json, "Print a JSON object with every property");
    show->footer("Prints every property of the session (D-Bus interface\n"
                 "org.tracectl.Tracing1.Session), one per line, then its statistics: events\n"
                 "recorded and discarded, packets lost, bytes written, in total and per\n"
                 "channel. A session with kernel channels, event rules or contexts gets a\n"
                 "\"Kernel domain\" section listing them (syscall rules as 'syscall NAME').\n"
                 "When events were discarded or packets lost, a warning line follows\n"
                 "on standard error.\n\n"
                 "Example:\n  tracectl show web-latency");

    verbs.add(*show, {.check = [args] { checkUtf8Names({&args->name}); },
                      .run =
                          [args](BusClient& bus) {
                              runShow(bus, *args, std::cout, std::cerr);
                              return ExitStatus::Success;
                          }});
}

} // namespace tracectl::cli
