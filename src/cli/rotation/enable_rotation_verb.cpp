// tracectl enable-rotation [NAME | -s NAME] [--timer PERIOD] [--size SIZE]
#include "cli/quantities.hpp"
#include "cli/rotation_schedule_commands.hpp"
#include "cli/verbs/verb_options.hpp"
#include "rotation_verbs.hpp"

#include <CLI/CLI.hpp>
#include <cstdint>
#include <iostream>
#include <memory>

namespace tracectl::cli {
namespace {

/// The enable-rotation command line, as CLI11 fills it in.
struct EnableRotationLine {
    std::string name; ///< NAME or -s/--session
    std::string timer;
    std::uint64_t sizeBytes = 0;
    CLI::Option* nameOption = nullptr;
    CLI::Option* sessionOption = nullptr;
    CLI::Option* timerOption = nullptr;
    CLI::Option* sizeOption = nullptr;
    RotationTriggers triggers; ///< after check
};

void checkEnableRotationLine(EnableRotationLine& cl) {
    if (cl.timerOption->count() == 0 && cl.sizeOption->count() == 0) {
        throw CLI::ValidationError("enable-rotation", "give --timer, --size or both");
    }
    const auto timer = cl.timerOption->count() > 0 ? parseDurationUs(cl.timer) : 0;
    if (!timer) {
        throw CLI::ValidationError("--timer", "'" + cl.timer + "' is not a period (e.g. 10s)");
    }
    if (cl.timerOption->count() > 0) {
        cl.triggers.timerUs = *timer;
    }
    if (cl.sizeOption->count() > 0) {
        cl.triggers.sizeBytes = cl.sizeBytes;
    }
    checkUtf8Names({&cl.name});
}

} // namespace

void addEnableRotationVerb(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<EnableRotationLine>();
    auto* enableRotation =
        app.add_subcommand("enable-rotation", "Rotate a session on a period and/or a size");
    cl->nameOption = enableRotation->add_option("NAME", cl->name, kCurrentSessionHelp);
    cl->sessionOption =
        enableRotation
            ->add_option("-s,--session", cl->name, "The session, as lttng enable-rotation -s")
            ->excludes(cl->nameOption);
    cl->timerOption = enableRotation
                          ->add_option("--timer", cl->timer,
                                       "Rotate every PERIOD while active (10s, 500ms, 2m, 1h; "
                                       "at least 10ms); 0 turns it off")
                          ->type_name("PERIOD");
    cl->sizeOption = enableRotation->add_option(
        "--size", cl->sizeBytes,
        "Rotate once the current chunk holds SIZE bytes (100M, 4K, 1G, 8MiB: K, "
        "M, G and KiB, MiB, GiB are powers of 1024); 0 turns it off");
    acceptSizeInBytes(*cl->sizeOption);
    cl->sizeOption->type_name("SIZE");
    enableRotation->footer(
        "Sets the timer trigger, the size trigger or both of the session's automatic\n"
        "rotations (as lttng enable-rotation: a trigger not given is kept), then prints\n"
        "the schedule in force. Not for snapshot sessions.\n\n"
        "Example:\n  tracectl enable-rotation web-latency --timer 10s --size 100M");

    verbs.add(*enableRotation,
              {.check = [cl] { checkEnableRotationLine(*cl); },
               .run =
                   [cl](BusClient& bus) {
                       runEnableRotation(
                           bus, optionalSession(cl->nameOption, cl->sessionOption, cl->name),
                           cl->triggers, std::cout);
                       return ExitStatus::Success;
                   }});
}

} // namespace tracectl::cli
