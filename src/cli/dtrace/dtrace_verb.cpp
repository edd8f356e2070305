// tracectl dtrace and tracectl aggregate (dtrace_options.hpp): D programs on a trace on disk
// (no bus), on a session so far, or live.
#include "cli/aggregate_command.hpp"
#include "cli/dtrace_options.hpp"
#include "cli/error_report.hpp"
#include "dtrace_verbs.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>

namespace tracectl::cli {
namespace {

/// A trace on disk (--trace), or -l without a session, runs without the bus; -c COMMAND that
/// cannot run and -p PID that does not exist are refused before it.
std::optional<ExitStatus> runDtraceWithoutBus(const AggregateArgs& args) {
    if (args.trace || (args.list && !args.session)) {
        const ExitStatus status = runAggregateTrace(args, std::cout, std::cerr);
        if (!std::cout.flush()) {
            printErrorLine(std::cerr, "cannot write to standard output");
            return ExitStatus::DaemonError;
        }
        return status;
    }
    if (!args.session) {
        if (const auto problem = liveTargetProblem(args)) {
            printErrorLine(std::cerr, args.command + ": " + *problem);
            return ExitStatus::DaemonError;
        }
    }
    return std::nullopt;
}

/// Adds the subcommand `name` ("dtrace" or "aggregate") and its handler.
void addDProgramVerb(CLI::App& app, VerbTable& verbs, const std::string& name) {
    auto cl = std::make_shared<DtraceCommandLine>();
    CLI::App* command = addDtraceCommand(app, name, *cl);
    verbs.add(*command, {.finish = [cl] { finishDtraceCommandLine(*cl); },
                         .beforeBus = [cl] { return runDtraceWithoutBus(cl->args); },
                         .run =
                             [cl](BusClient& bus) {
                                 return cl->args.session
                                            ? runAggregateSession(bus, cl->args, std::cout,
                                                                  std::cerr)
                                            : runAggregateLive(bus, cl->args, std::cout, std::cerr);
                             }});
}

} // namespace

void addDtraceVerb(CLI::App& app, VerbTable& verbs) {
    addDProgramVerb(app, verbs, "dtrace");
}

void addAggregateVerb(CLI::App& app, VerbTable& verbs) {
    addDProgramVerb(app, verbs, "aggregate");
}

} // namespace tracectl::cli
