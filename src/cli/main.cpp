// tracectl: the command-line client of tracectld. This file only wires: the global options,
// the table of verbs (each verb's file adds its subcommand and its handler), and the run that
// parses, checks, connects to the bus, runs the verb given and turns failures into exit
// statuses.

#include "bus_client.hpp"
#include "config.h"
#include "dtrace/dtrace_verbs.hpp"
#include "error_report.hpp"
#include "events/event_verbs.hpp"
#include "exit_status.hpp"
#include "rotation/rotation_verbs.hpp"
#include "save_load/save_load_verbs.hpp"
#include "sessions/session_verbs.hpp"
#include "top/top_verb.hpp"
#include "verbs/verb.hpp"

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <string>

namespace {

using namespace tracectl::cli;

/// Every verb, in the order `tracectl --help` lists them.
constexpr AddVerb verb_table[] = {
    add_create_verb,
    add_list_verb,
    add_version_verb,
    add_show_verb,
    add_top_verb,
    add_start_verb,
    add_stop_verb,
    add_destroy_verb,
    add_set_session_verb,
    add_status_verb,
    add_rotate_verb,
    add_clear_verb,
    add_save_verb,
    add_load_verb,
    add_snapshot_verb,
    add_enable_rotation_verb,
    add_disable_rotation_verb,
    add_enable_event_verb,
    add_enable_channel_verb,
    add_disable_verbs, // disable-event, disable-channel
    add_add_context_verb,
    add_track_verbs, // track, untrack
    add_list_apps_verb,
    add_list_tracepoints_verb,
    add_view_verb,
    add_dtrace_verb,
    add_aggregate_verb,
};

/// The options every verb takes (before or after it), as CLI11 fills them in.
struct GlobalOptions {
    bool system_bus = false; // the default anyway
    bool user_bus = false;
    bool interactive = false;
    std::string bus_address;
    CLI::Option* bus_address_option = nullptr;

    /// The bus they choose.
    BusChoice bus() const {
        BusChoice choice;
        if (user_bus) {
            choice.kind = BusChoice::Kind::user;
        } else if (bus_address_option->count() > 0) {
            choice = {BusChoice::Kind::address, bus_address};
        }
        return choice;
    }
};

/// Adds --system, --user, --bus-address and --interactive to `app`.
void add_global_options(CLI::App& app, GlobalOptions& options) {
    auto* system_bus = app.add_flag("--system", options.system_bus,
                                    "Use the system bus (the default; honours "
                                    "DBUS_SYSTEM_BUS_ADDRESS)");
    auto* user_bus =
        app.add_flag("--user", options.user_bus, "Use your session bus (a `tracectld --user`)");
    options.bus_address_option = app.add_option("--bus-address", options.bus_address,
                                                "Use the bus at ADDR, a D-Bus address such as "
                                                "unix:path=/run/tracectl/bus")
                                     ->type_name("ADDR");
    system_bus->excludes(user_bus)->excludes(options.bus_address_option);
    user_bus->excludes(options.bus_address_option);
    app.add_flag("--interactive", options.interactive,
                 "Let polkit ask for a password (through your authentication agent) when a "
                 "command needs a right you do not hold yet; without it such a command fails "
                 "with InteractiveAuthorizationRequired");
}

/// The `tracectl --help` hint to put after a usage error.
std::string help_hint(const CLI::App& app) {
    const auto selected = app.get_subcommands();
    return selected.empty() ? "see 'tracectl --help'"
                            : "see 'tracectl " + selected.front()->get_name() + " --help'";
}

ExitStatus run(int argc, char** argv) {
    CLI::App app{"Control tracing sessions of the tracectld daemon over D-Bus.", "tracectl"};
    app.set_version_flag("--version", std::string{"tracectl "} + TRACECTL_VERSION,
                         "Print the version of tracectl and exit");
    app.footer(std::string{exit_status_help});
    app.require_subcommand(1);
    app.fallthrough(); // global options are accepted after the subcommand too
    GlobalOptions global;
    add_global_options(app, global);
    VerbTable verbs;
    for (const AddVerb add_verb : verb_table) {
        add_verb(app, verbs);
    }

    const VerbHandler* verb = nullptr;
    try {
        app.parse(argc, argv);
        verb = verbs.parsed(); // never null: CLI11 requires one subcommand
        if (verb->finish) {
            verb->finish();
        }
        if (global.bus_address_option->count() > 0 && global.bus_address.empty()) {
            throw CLI::ValidationError("--bus-address", "needs a D-Bus address");
        }
        if (verb->check) {
            verb->check();
        }
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
            app.exit(e); // --help, --version: print to stdout
            return ExitStatus::success;
        }
        std::string what = e.what();
        if (app.get_subcommands().empty() && !app.remaining().empty()) {
            // CLI11 checks for the missing subcommand before it reports what
            // it could not place: name that instead.
            const std::string first = app.remaining().front();
            what = first.rfind('-', 0) != 0 ? "unknown command '" + first + "'"
                                            : "unknown option '" + first + "'";
        }
        print_error_line(std::cerr, what + " (" + help_hint(app) + ")");
        return ExitStatus::usage;
    }

    if (verb->before_bus) {
        if (const auto status = verb->before_bus()) {
            return *status;
        }
    }
    BusClient bus{global.bus()};
    bus.set_interactive(global.interactive);
    const ExitStatus status = verb->run(bus);
    if (status != ExitStatus::success) {
        std::cout.flush();
        return status;
    }
    if (!std::cout.flush()) {
        print_error_line(std::cerr, "cannot write to standard output");
        return ExitStatus::daemon_error;
    }
    return ExitStatus::success;
}

} // namespace

int main(int argc, char** argv) {
    try {
        return static_cast<int>(run(argc, argv));
    } catch (...) {
        return static_cast<int>(report_exception(std::current_exception(), std::cerr));
    }
}
