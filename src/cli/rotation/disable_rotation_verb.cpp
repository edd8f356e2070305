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
    CLI::Option* nameOption = nullptr;
    CLI::Option* sessionOption = nullptr;
};

} // namespace

void addDisableRotationVerb(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<DisableRotationLine>();
    auto* disableRotation = app.add_subcommand(
        "disable-rotation", "Stop rotating a session on its period and/or its size");
    cl->nameOption = disableRotation->add_option("NAME", cl->name, kCurrentSessionHelp);
    cl->sessionOption =
        disableRotation
            ->add_option("-s,--session", cl->name, "The session, as lttng disable-rotation -s")
            ->excludes(cl->nameOption);
    disableRotation->add_flag("--timer", cl->timer, "Remove the timer trigger");
    disableRotation->add_flag("--size", cl->size, "Remove the size trigger");
    disableRotation->footer(
        "Removes the given triggers of the session's automatic rotations (as lttng\n"
        "disable-rotation), keeping the other; a trigger that is not set is refused\n"
        "(InvalidArgument, exit status 1). Give --timer, --size or both.\n\n"
        "Example:\n  tracectl disable-rotation web-latency --timer");

    verbs.add(
        *disableRotation,
        {.check =
             [cl] {
                 if (!cl->timer && !cl->size) {
                     throw CLI::ValidationError("disable-rotation", "give --timer, --size or both");
                 }
                 checkUtf8Names({&cl->name});
             },
         .run =
             [cl](BusClient& bus) {
                 runDisableRotation(bus,
                                    optionalSession(cl->nameOption, cl->sessionOption, cl->name),
                                    cl->timer, cl->size, std::cout);
                 return ExitStatus::Success;
             }});
}

} // namespace tracectl::cli
