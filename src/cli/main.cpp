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
constexpr AddVerb kVerbTable[] = {
    addCreateVerb,
    addListVerb,
    addVersionVerb,
    addShowVerb,
    addTopVerb,
    addStartVerb,
    addStopVerb,
    addDestroyVerb,
    addSetSessionVerb,
    addStatusVerb,
    addRotateVerb,
    addClearVerb,
    addSaveVerb,
    addLoadVerb,
    addSnapshotVerb,
    addEnableRotationVerb,
    addDisableRotationVerb,
    addEnableEventVerb,
    addEnableChannelVerb,
    addDisableVerbs, // disable-event, disable-channel
    addAddContextVerb,
    addTrackVerbs, // track, untrack
    addListAppsVerb,
    addListTracepointsVerb,
    addViewVerb,
    addDtraceVerb,
    addAggregateVerb,
};

/// The options every verb takes (before or after it), as CLI11 fills them in.
struct GlobalOptions {
    bool systemBus = false; // the default anyway
    bool userBus = false;
    bool interactive = false;
    std::string busAddress;
    CLI::Option* busAddressOption = nullptr;

    /// The bus they choose.
    BusChoice bus() const {
        BusChoice choice;
        if (userBus) {
            choice.kind = BusChoice::Kind::User;
        } else if (busAddressOption->count() > 0) {
            choice = {BusChoice::Kind::Address, busAddress};
        }
        return choice;
    }
};

/// Adds --system, --user, --bus-address and --interactive to `app`.
void addGlobalOptions(CLI::App& app, GlobalOptions& options) {
    auto* systemBus = app.add_flag("--system", options.systemBus,
                                   "Use the system bus (the default; honours "
                                   "DBUS_SYSTEM_BUS_ADDRESS)");
    auto* userBus =
        app.add_flag("--user", options.userBus, "Use your session bus (a `tracectld --user`)");
    options.busAddressOption = app.add_option("--bus-address", options.busAddress,
                                              "Use the bus at ADDR, a D-Bus address such as "
                                              "unix:path=/run/tracectl/bus")
                                   ->type_name("ADDR");
    systemBus->excludes(userBus)->excludes(options.busAddressOption);
    userBus->excludes(options.busAddressOption);
    app.add_flag("--interactive", options.interactive,
                 "Let polkit ask for a password (through your authentication agent) when a "
                 "command needs a right you do not hold yet; without it such a command fails "
                 "with InteractiveAuthorizationRequired");
}

/// The `tracectl --help` hint to put after a usage error.
std::string helpHint(const CLI::App& app) {
    const auto selected = app.get_subcommands();
    return selected.empty() ? "see 'tracectl --help'"
                            : "see 'tracectl " + selected.front()->get_name() + " --help'";
}

ExitStatus run(int argc, char** argv) {
    CLI::App app{"Control tracing sessions of the tracectld daemon over D-Bus.", "tracectl"};
    app.set_version_flag("--version", std::string{"tracectl "} + TRACECTL_VERSION,
                         "Print the version of tracectl and exit");
    app.footer(std::string{kExitStatusHelp});
    app.require_subcommand(1);
    app.fallthrough(); // global options are accepted after the subcommand too
    GlobalOptions global;
    addGlobalOptions(app, global);
    VerbTable verbs;
    for (const AddVerb addVerb : kVerbTable) {
        addVerb(app, verbs);
    }

    const VerbHandler* verb = nullptr;
    try {
        app.parse(argc, argv);
        verb = verbs.parsed(); // never null: CLI11 requires one subcommand
        if (verb->finish) {
            verb->finish();
        }
        if (global.busAddressOption->count() > 0 && global.busAddress.empty()) {
            throw CLI::ValidationError("--bus-address", "needs a D-Bus address");
        }
        if (verb->check) {
            verb->check();
        }
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
            app.exit(e); // --help, --version: print to stdout
            return ExitStatus::Success;
        }
        std::string what = e.what();
        if (app.get_subcommands().empty() && !app.remaining().empty()) {
            // CLI11 checks for the missing subcommand before it reports what
            // it could not place: name that instead.
            const std::string first = app.remaining().front();
            what = first.rfind('-', 0) != 0 ? "unknown command '" + first + "'"
                                            : "unknown option '" + first + "'";
        }
        printErrorLine(std::cerr, what + " (" + helpHint(app) + ")");
        return ExitStatus::Usage;
    }

    if (verb->beforeBus) {
        if (const auto status = verb->beforeBus()) {
            return *status;
        }
    }
    BusClient bus{global.bus()};
    bus.setInteractive(global.interactive);
    const ExitStatus status = verb->run(bus);
    if (status != ExitStatus::Success) {
        std::cout.flush();
        return status;
    }
    if (!std::cout.flush()) {
        printErrorLine(std::cerr, "cannot write to standard output");
        return ExitStatus::DaemonError;
    }
    return ExitStatus::Success;
}

} // namespace

int main(int argc, char** argv) {
    try {
        return static_cast<int>(run(argc, argv));
    } catch (...) {
        return static_cast<int>(reportException(std::current_exception(), std::cerr));
    }
}
