#include "aggregate/program_run.hpp"

#include "aggregate/json_output.hpp"

namespace tracectl::aggregate {

ProgramRun run_program(const Program& program, const RunOptions& options,
                       const std::vector<std::string>& traces, std::ostream& out, bool json,
                       std::string* aggregations_json) {
    Interpreter interpreter(program, options, out);
    interpreter.print_aggregations_at_end = !json;
    ProgramRun result;
    if (traces.empty()) {
        interpreter.begin();
        interpreter.binder().check_references(); // BEGIN and END's fields, at least
    } else if (program.needs_order()) {
        result.statistics = read_traces_in_order(traces, interpreter.binder(), interpreter);
    } else {
        interpreter.begin();
        if (!interpreter.exit_status()) {
            result.statistics =
                read_traces(traces, program, interpreter.binder(), interpreter.aggregations());
        }
    }
    interpreter.end();
    if (!traces.empty()) {
        result.unmatched_probes = interpreter.binder().unmatched_probes();
    }
    result.errors = interpreter.errors();
    result.exit_status = interpreter.exit_status();
    if (json && aggregations_json != nullptr) {
        nlohmann::json document = to_json(interpreter.aggregations());
        document["discarded"] = result.statistics.discarded_events;
        *aggregations_json = json_text(document);
    }
    return result;
}

} // namespace tracectl::aggregate
