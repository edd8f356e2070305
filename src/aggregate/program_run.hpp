// Running a whole D program over traces on disk: BEGIN, the records (in time order when the
// program needs it, else streams in parallel), END, the aggregations left to print. What
// `tracectl dtrace --trace` does, without the command line.
#pragma once

#include "aggregate/interpreter.hpp"
#include "aggregate/options.hpp"
#include "aggregate/program.hpp"
#include "aggregate/trace_reader.hpp"

#include <ostream>
#include <string>
#include <vector>

namespace tracectl::aggregate {

struct ProgramRun {
    ReadStatistics statistics;
    std::vector<std::string> unmatchedProbes; ///< Binder::unmatched_probes
    std::uint64_t errors = 0;                 ///< run-time errors
    std::optional<std::int64_t> exitStatus;   ///< exit()'s
};

/// Runs `program` over `traces` (none: only BEGIN and END run), its output on `out`.
/// `json`: the aggregations are not printed at the end but returned in `aggregations_json`
/// (json_output.hpp's document). Throws ProgramError (binding) and TraceReadError.
ProgramRun runProgram(const Program& program, const RunOptions& options,
                      const std::vector<std::string>& traces, std::ostream& out, bool json = false,
                      std::string* aggregationsJson = nullptr);

} // namespace tracectl::aggregate
