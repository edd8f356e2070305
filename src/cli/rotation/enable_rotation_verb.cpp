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
    std::uint64_t size_bytes = 0;
    CLI::Option* name_option = nullptr;
    CLI::Option* session_option = nullptr;
    CLI::Option* timer_option = nullptr;
    CLI::Option* size_option = nullptr;
    RotationTriggers triggers; ///< after check
};

void check_enable_rotation_line(EnableRotationLine& cl) {
    if (cl.timer_option->count() == 0 && cl.size_option->count() == 0) {
        throw CLI::ValidationError("enable-rotation", "give --timer, --size or both");
    }
    const auto timer = cl.timer_option->count() > 0 ? parse_duration_us(cl.timer) : 0;
    if (!timer) {
        throw CLI::ValidationError("--timer", "'" + cl.timer + "' is not a period (e.g. 10s)");
    }
    if (cl.timer_option->count() > 0) {
        cl.triggers.timer_us = *timer;
    }
    if (cl.size_option->count() > 0) {
        cl.triggers.size_bytes = cl.size_bytes;
    }
    check_utf8_names({&cl.name});
}

} // namespace

void add_enable_rotation_verb(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<EnableRotationLine>();
    auto* enable_rotation =
        app.add_subcommand("enable-rotation", "Rotate a session on a period and/or a size");
    cl->name_option = enable_rotation->add_option("NAME", cl->name, current_session_help);
    cl->session_option =
        enable_rotation
            ->add_option("-s,--session", cl->name, "The session, as lttng enable-rotation -s")
            ->excludes(cl->name_option);
    cl->timer_option = enable_rotation
                           ->add_option("--timer", cl->timer,
                                        "Rotate every PERIOD while active (10s, 500ms, 2m, 1h; "
                                        "at least 10ms); 0 turns it off")
                           ->type_name("PERIOD");
    cl->size_option = enable_rotation->add_option(
        "--size", cl->size_bytes,
        "Rotate once the current chunk holds SIZE bytes (100M, 4K, 1G, 8MiB: K, "
        "M, G and KiB, MiB, GiB are powers of 1024); 0 turns it off");
    accept_size_in_bytes(*cl->size_option);
    cl->size_option->type_name("SIZE");
    enable_rotation->footer(
        "Sets the timer trigger, the size trigger or both of the session's automatic\n"
        "rotations (as lttng enable-rotation: a trigger not given is kept), then prints\n"
        "the schedule in force. Not for snapshot sessions.\n\n"
        "Example:\n  tracectl enable-rotation web-latency --timer 10s --size 100M");

    verbs.add(*enable_rotation,
              {.check = [cl] { check_enable_rotation_line(*cl); },
               .run =
                   [cl](BusClient& bus) {
                       run_enable_rotation(
                           bus, optional_session(cl->name_option, cl->session_option, cl->name),
                           cl->triggers, std::cout);
                       return ExitStatus::success;
                   }});
}

} // namespace tracectl::cli
