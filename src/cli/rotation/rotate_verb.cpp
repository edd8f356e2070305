// tracectl rotate [NAME] [--wait | -n/--no-wait]
#include "cli/commands.hpp"
#include "cli/verbs/verb_options.hpp"
#include "rotation_verbs.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

namespace tracectl::cli {
namespace {

/// The rotate command line, as CLI11 fills it in.
struct RotateLine {
    std::string name;
    bool wait = false;
    bool noWait = false;
    CLI::Option* nameOption = nullptr;
};

} // namespace

void addRotateVerb(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<RotateLine>();
    auto* rotate = app.add_subcommand("rotate", "Archive the current trace chunk of a session");
    cl->nameOption = rotate->add_option("NAME", cl->name, kCurrentSessionHelp);
    auto* wait = rotate->add_flag("--wait", cl->wait,
                                  "Return once the archive is complete (RotationCompleted), "
                                  "showing progress on standard error meanwhile");
    rotate
        ->add_flag("-n,--no-wait", cl->noWait,
                   "Return once the rotation has begun (the default; as lttng rotate --no-wait)")
        ->excludes(wait);
    rotate->footer("Closes the current trace chunk and goes on in a new one; the closed chunk\n"
                   "becomes a complete trace in OUTPUT/archives/BEGIN-END-INDEX/, whose path is\n"
                   "printed. Allowed once the session has started (active or stopped).\n\n"
                   "Example:\n  tracectl rotate web-latency --wait");

    verbs.add(*rotate, {.check = [cl] { checkUtf8Names({&cl->name}); },
                        .run =
                            [cl](BusClient& bus) {
                                runRotate(bus, optionalName(cl->nameOption, cl->name), cl->wait,
                                          std::cout, std::cerr);
                                return ExitStatus::Success;
                            }});
}

} // namespace tracectl::cli
