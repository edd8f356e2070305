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
    bool no_wait = false;
    CLI::Option* name_option = nullptr;
};

} // namespace

void add_rotate_verb(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<RotateLine>();
    auto* rotate = app.add_subcommand("rotate", "Archive the current trace chunk of a session");
    cl->name_option = rotate->add_option("NAME", cl->name, current_session_help);
    auto* wait = rotate->add_flag("--wait", cl->wait,
                                  "Return once the archive is complete (RotationCompleted), "
                                  "showing progress on standard error meanwhile");
    rotate
        ->add_flag("-n,--no-wait", cl->no_wait,
                   "Return once the rotation has begun (the default; as lttng rotate --no-wait)")
        ->excludes(wait);
    rotate->footer("Closes the current trace chunk and goes on in a new one; the closed chunk\n"
                   "becomes a complete trace in OUTPUT/archives/BEGIN-END-INDEX/, whose path is\n"
                   "printed. Allowed once the session has started (active or stopped).\n\n"
                   "Example:\n  tracectl rotate web-latency --wait");

    verbs.add(*rotate, {.check = [cl] { check_utf8_names({&cl->name}); },
                        .run =
                            [cl](BusClient& bus) {
                                run_rotate(bus, optional_name(cl->name_option, cl->name), cl->wait,
                                           std::cout, std::cerr);
                                return ExitStatus::success;
                            }});
}

} // namespace tracectl::cli
