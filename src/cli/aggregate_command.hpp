// tracectl aggregate: runs a D aggregation program (src/aggregate/) over CTF traces on
// disk and prints the aggregations as dtrace(1) does, or as JSON.
#pragma once

#include "exit_status.hpp"

#include <iosfwd>
#include <string>

namespace tracectl::cli {

struct AggregateArgs {
    std::string program; ///< the D program text
    std::string trace;   ///< --trace PATH: a trace, or a folder holding traces
    bool json = false;   ///< --json
};

/// Parses the program (a ProgramError: "tracectl: aggregate: LINE:COLUMN: MESSAGE" on
/// `err`, ExitStatus::usage), reads every trace under args.trace (unreadable:
/// "tracectl: aggregate: MESSAGE", ExitStatus::daemon_error), prints the aggregations on
/// `out`. A probe description that matched no event record gets a warning on `err`, and
/// so do records whose clause stopped at a division by zero.
ExitStatus run_aggregate_trace(const AggregateArgs& args, std::ostream& out, std::ostream& err);

} // namespace tracectl::cli
