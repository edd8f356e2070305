// tracectl clear [NAME | --all]
#include "cli/clear_command.hpp"
#include "cli/verbs/verb_options.hpp"
#include "rotation_verbs.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

namespace tracectl::cli {
namespace {

/// The clear command line, as CLI11 fills it in.
struct ClearLine {
    ClearArgs args;
    std::string name;
    CLI::Option* nameOption = nullptr;
};

} // namespace

void addClearVerb(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<ClearLine>();
    auto* clear = app.add_subcommand(
        "clear", "Delete what a session recorded so far; tracing goes on (as lttng clear)");
    cl->nameOption = clear->add_option("NAME", cl->name, kCurrentSessionHelp);
    auto* all = clear->add_flag("--all", cl->args.all,
                                "Clear every session you own (even as root, only yours)");
    cl->nameOption->excludes(all);
    clear->footer("Deletes the session's current trace chunk (a snapshot session: its buffers'\n"
                  "content) and goes on tracing into a new one; archives of earlier rotations\n"
                  "stay. Without NAME or --all, the current session. Refused while a rotation\n"
                  "is under way. Progress\n"
                  "goes to standard error if it takes more than a second.\n\n"
                  "Example:\n  tracectl clear web-latency\n  tracectl clear --all");

    verbs.add(*clear, {.check =
                           [cl] {
                               checkUtf8Names({&cl->name});
                               cl->args.name = optionalName(cl->nameOption, cl->name);
                           },
                       .run =
                           [cl](BusClient& bus) {
                               runClear(bus, cl->args, std::cout, std::cerr);
                               return ExitStatus::Success;
                           }});
}

} // namespace tracectl::cli
