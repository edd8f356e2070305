#include "aggregate/program_run.hpp"

#include "aggregate/chunked_run.hpp"

namespace tracectl::aggregate {

ProgramRun run_program(const Program& program, const RunOptions& options,
                       const std::vector<std::string>& traces, std::ostream& out, bool json,
                       std::string* aggregations_json) {
    ChunkedRun run(program, options, out, json);
    run.feed(traces); // one chunk: every trace
    return run.finish(aggregations_json);
}

} // namespace tracectl::aggregate
