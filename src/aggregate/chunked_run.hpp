// One run of a D program over traces that come one after another: the trace chunks of a
// live session, each archived by a rotation (Session.Rotate) and handed over once
// complete, in rotation order. BEGIN runs once, then each chunk's records (in time order
// when the program needs it, else streams in parallel, as run_program), then END once;
// the program's state (variables, aggregations, timers, probe ids) carries over from
// chunk to chunk, so that a run over chunks 1..n prints what a run over their union
// would. What each chunk prints is flushed before the next is read: this is how
// `tracectl dtrace` prints within its switch rate (dtrace(1M) consumes its principal
// buffers every switchrate; the Dynamic Tracing Guide, "Buffers and Buffering").
#pragma once

#include "aggregate/interpreter.hpp"
#include "aggregate/options.hpp"
#include "aggregate/program.hpp"
#include "aggregate/program_run.hpp"
#include "ip_probe_abi.h"

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace tracectl::aggregate {

class ChunkedRun {
public:
    /// `program` and `out` must outlive this. `json`: finish() does not print the
    /// aggregations but returns them as json_output.hpp's document. Throws ProgramError
    /// (Interpreter's).
    ChunkedRun(const Program& program, const RunOptions& options, std::ostream& out,
               bool json = false);

    /// Runs BEGIN at `timestamp` (ns, the traces' clock: ns from its origin) unless it ran.
    /// Without it, BEGIN runs at the first record (time order) or at 0 (parallel).
    void begin(std::int64_t timestamp);

    /// Runs the program over the records of one chunk's CTF trace directories (find_traces;
    /// none: nothing to read), after every earlier chunk's, then flushes `out`. Nothing is
    /// read once exit() has run. Returns false once it has. Throws ProgramError (binding)
    /// and TraceReadError.
    bool feed(const std::vector<std::string>& traces);

    /// Runs the program over the rows of an in-kernel aggregation of the ip provider
    /// (ip_aggregation.hpp; only for a program ip_aggregation_plan() takes) at `timestamp`:
    /// each record once, standing for its count. `dropped` packets had no row: they are
    /// reported as discarded event records. Then flushes `out`. Throws ProgramError
    /// (binding). Returns false once exit() has run.
    bool feedIpRows(const std::vector<std::pair<tracectl_ip_record, std::uint64_t>>& rows,
                    std::uint64_t dropped, std::int64_t timestamp);

    /// Fires the timers due at or before `timestamp` (ns, the traces' clock; no record
    /// before it is still to come) and flushes `out`. False once exit() has run.
    bool advanceTo(std::int64_t timestamp);

    /// exit()'s status once it ran.
    std::optional<std::int64_t> exitStatus() const noexcept { return interpreter_.exitStatus(); }

    /// What names stack() and ustack() keys when printed: what the traces told, and
    /// what the caller learns into it (tracectl dtrace: its target's mappings).
    symbols::StackNames& stackNames() noexcept { return *interpreter_.aggregations().stackNames; }

    /// Runs END (once) and prints the aggregations left to print (not with `json`:
    /// `aggregations_json` gets them, with "discarded"). The figures of every chunk fed;
    /// unmatched_probes only if some chunk had a trace. Throws ProgramError (an unknown
    /// field, when no trace was read).
    ProgramRun finish(std::string* aggregationsJson = nullptr);

private:
    const Program& program_;
    std::ostream& out_;
    bool json_;
    Interpreter interpreter_;
    ProgramRun result_;
    bool read_ = false; ///< some chunk had a trace
};

} // namespace tracectl::aggregate
