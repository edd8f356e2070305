#include "aggregate_command.hpp"

#include "aggregate/aggregation_set.hpp"
#include "aggregate/binding.hpp"
#include "aggregate/json_output.hpp"
#include "aggregate/parser.hpp"
#include "aggregate/text_output.hpp"
#include "aggregate/trace_reader.hpp"
#include "error_report.hpp"

#include <ostream>

namespace tracectl::cli {

namespace agg = tracectl::aggregate;

ExitStatus run_aggregate_trace(const AggregateArgs& args, std::ostream& out, std::ostream& err) {
    try {
        const agg::Program program = agg::parse_program(args.program);
        const std::vector<std::string> traces = agg::find_traces(args.trace);
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
        if (args.json) {
            out << agg::to_json(aggregations).dump(2) << '\n';
        } else {
            agg::print_text(out, aggregations);
        }
        return ExitStatus::success;
    } catch (const agg::ProgramError& e) {
        print_error_line(err, std::string("aggregate: ") + e.what());
        return ExitStatus::usage;
    } catch (const agg::TraceReadError& e) {
        print_error_line(err, std::string("aggregate: ") + e.what());
        return ExitStatus::daemon_error;
    }
}

} // namespace tracectl::cli
