#include "aggregate_command.hpp"

#include "aggregate/aggregation_set.hpp"
#include "aggregate/binding.hpp"
#include "aggregate/json_output.hpp"
#include "aggregate/parser.hpp"
#include "aggregate/text_output.hpp"
#include "aggregate/trace_reader.hpp"
#include "bus_client.hpp"
#include "error_report.hpp"
#include "session_view.hpp"

#include <filesystem>
#include <ostream>

namespace tracectl::cli {

namespace agg = tracectl::aggregate;

namespace {

/// Runs `program` over `traces`, prints the result; ProgramError and TraceReadError become
/// an error line and an exit status.
ExitStatus aggregate(const agg::Program& program, const std::vector<std::string>& traces, bool json,
                     std::ostream& out, std::ostream& err) {
    agg::Binder binder(program);
    agg::AggregationSet aggregations(program);
    agg::read_traces(traces, program, binder, aggregations);
    for (const std::string& probe : binder.unmatched_probes()) {
        print_error_line(err, "aggregate: warning: probe description " + probe +
                                  " matched no event record");
    }
    if (aggregations.errors > 0) {
        print_error_line(err, "aggregate: warning: " + std::to_string(aggregations.errors) +
                                  " error(s): division by zero (the clause was skipped "
                                  "for those event records)");
    }
    if (json) {
        out << agg::to_json(aggregations).dump(2) << '\n';
    } else {
        agg::print_text(out, aggregations);
    }
    return ExitStatus::success;
}

template <typename F>
ExitStatus reporting_errors(std::ostream& err, F&& body) {
    try {
        return body();
    } catch (const agg::ProgramError& e) {
        print_error_line(err, std::string("aggregate: ") + e.what());
        return ExitStatus::usage;
    } catch (const agg::TraceReadError& e) {
        print_error_line(err, std::string("aggregate: ") + e.what());
        return ExitStatus::daemon_error;
    }
}

} // namespace

ExitStatus run_aggregate_trace(const AggregateArgs& args, std::ostream& out, std::ostream& err) {
    return reporting_errors(err, [&] {
        const agg::Program program = agg::parse_program(args.program);
        return aggregate(program, agg::find_traces(args.trace.value()), args.json, out, err);
    });
}

ExitStatus run_aggregate_session(BusClient& bus, const AggregateArgs& args, std::ostream& out,
                                 std::ostream& err) {
    return reporting_errors(err, [&] {
        const agg::Program program = agg::parse_program(args.program);
        const std::string& name = args.session.value();
        // A name among the caller's sessions, or a session's object path (another user's
        // session: the daemon decides, and answers AccessDenied if the caller may not).
        const std::string path = name.starts_with('/') ? name : bus.get_session(name);
        const SessionView view = session_view_from_properties(path, bus.session_properties(path));
        std::string folder = view.output_path;
        if (view.state == "active") {
            bus.rotate(path, true, [&](const std::string& line) {
                err << line << '\n' << std::flush;
            });
            folder = (std::filesystem::path(view.output_path) / "archives").string();
        }
        return aggregate(program, agg::find_traces(folder), args.json, out, err);
    });
}

} // namespace tracectl::cli
