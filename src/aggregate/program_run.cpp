#include "aggregate/program_run.hpp"

#include "aggregate/chunked_run.hpp"

namespace tracectl::aggregate {

ProgramRun runProgram(const Program& program, const RunOptions& options,
                      const std::vector<std::string>& traces, std::ostream& out, bool json,
                      std::string* aggregationsJson) {
    ChunkedRun run(program, options, out, json);
    run.feed(traces); // one chunk: every trace
    return run.finish(aggregationsJson);
}

} // namespace tracectl::aggregate
