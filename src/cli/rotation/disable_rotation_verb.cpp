// tracectl disable-rotation [NAME | -s NAME] [--timer] [--size]
#include "cli/rotation_schedule_commands.hpp"
#include "cli/verbs/verb_options.hpp"
#include "rotation_verbs.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

namespace tracectl::cli {
namespace {

/// The disable-rotation command line, as CLI11 fills it in.
struct DisableRotationLine {
    std::string name; ///< NAME or -s/--session
    bool timer = false;
    bool size = false;
    CLI::Option* name_option = nullptr;
    CLI::Option* session_option = nullptr;
};

} // namespace

void add_disable_rotation_verb(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<DisableRotationLine>();
    auto* disable_rotation = app.add_subcommand(
        "disable-rotation", "Stop rotating a session on its period and/or its size");
    cl->name_option = disable_rotation->add_option("NAME", cl->name, current_session_help);
    cl->session_option =
        disable_rotation
            ->add_option("-s,--session", cl->name, "The session, as lttng disable-rotation -s")
            ->excludes(cl->name_option);
    disable_rotation->add_flag("--timer", cl->timer, "Remove the timer trigger");
    disable_rotation->add_flag("--size", cl->size, "Remove the size trigger");
    disable_rotation->footer(
        "Removes the given triggers of the session's automatic rotations (as lttng\n"
        "disable-rotation), keeping the other; a trigger that is not set is refused\n"
        "(InvalidArgument, exit status 1). Give --timer, --size or both.\n\n"
        "Example:\n  tracectl disable-rotation web-latency --timer");

    verbs.add(*disable_rotation,
              {.check =
                   [cl] {
                       if (!cl->timer && !cl->size) {
                           throw CLI::ValidationError("disable-rotation",
                                                      "give --timer, --size or both");
                       }
                       check_utf8_names({&cl->name});
                   },
               .run =
                   [cl](BusClient& bus) {
                       run_disable_rotation(
                           bus, optional_session(cl->name_option, cl->session_option, cl->name),
                           cl->timer, cl->size, std::cout);
                       return ExitStatus::success;
                   }});
}

} // namespace tracectl::cli
