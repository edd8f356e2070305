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
std::optional<ExitStatus> run_dtrace_without_bus(const AggregateArgs& args) {
    if (args.trace || (args.list && !args.session)) {
        const ExitStatus status = run_aggregate_trace(args, std::cout, std::cerr);
        if (!std::cout.flush()) {
            print_error_line(std::cerr, "cannot write to standard output");
            return ExitStatus::daemon_error;
        }
        return status;
    }
    if (!args.session) {
        if (const auto problem = live_target_problem(args)) {
            print_error_line(std::cerr, args.command + ": " + *problem);
            return ExitStatus::daemon_error;
        }
    }
    return std::nullopt;
}

/// Adds the subcommand `name` ("dtrace" or "aggregate") and its handler.
void add_d_program_verb(CLI::App& app, VerbTable& verbs, const std::string& name) {
    auto cl = std::make_shared<DtraceCommandLine>();
    CLI::App* command = add_dtrace_command(app, name, *cl);
    verbs.add(*command,
              {.finish = [cl] { finish_dtrace_command_line(*cl); },
               .before_bus = [cl] { return run_dtrace_without_bus(cl->args); },
               .run =
                   [cl](BusClient& bus) {
                       return cl->args.session
                                  ? run_aggregate_session(bus, cl->args, std::cout, std::cerr)
                                  : run_aggregate_live(bus, cl->args, std::cout, std::cerr);
                   }});
}

} // namespace

void add_dtrace_verb(CLI::App& app, VerbTable& verbs) {
    add_d_program_verb(app, verbs, "dtrace");
}

void add_aggregate_verb(CLI::App& app, VerbTable& verbs) {
    add_d_program_verb(app, verbs, "aggregate");
}

} // namespace tracectl::cli
