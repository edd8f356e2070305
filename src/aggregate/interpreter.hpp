// Runs a whole D program over recorded event records, as dtrace(1) runs it over live
// probes: BEGIN before the first record, each record's clauses in time order, timers
// (tick-N) on the records' clock, END after the last record or at exit(), then every
// aggregation printa() did not print. Output follows dtrace(1) (illumos libdtrace
// dt_consume.c): without quiet, the first clause that prints is preceded by the header
// "%3s %6s %32s\n" (CPU, ID, FUNCTION:NAME), and each clause that runs an action by
// "%3d %6d %32s " (cpu, probe id, ":" name) and followed by a newline; trace() prints
// " %16lld" (8-byte integers; " %8d" 4, " %5d" 2, " %3d" 1) or "  %-33s" (strings), and
// "%lld"/"%s" when quiet. Probe ids are tracectl's: 1 BEGIN, 2 END, 3 ERROR, then the
// timers, then event classes in the order first met.
#pragma once

#include "aggregate/aggregation_set.hpp"
#include "aggregate/binding.hpp"
#include "aggregate/evaluation.hpp"
#include "aggregate/options.hpp"
#include "aggregate/program.hpp"
#include "aggregate/runtime.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace tracectl::aggregate {

/// Receives event records in time order (trace_reader.hpp, read_traces_in_order).
class EventSink {
public:
    virtual ~EventSink() = default;
    /// One record of a class bound as `bound`, its fields in `slots`, at `timestamp` ns.
    /// Returns false to stop reading (exit()).
    virtual bool event(const BoundEventClass& bound, const Value* slots,
                       std::int64_t timestamp) = 0;
    /// Whether event() wants the records of classes no clause matched (for timers).
    virtual bool wantsEveryRecord() const = 0;
    /// Where the reader records the traces' kernel symbols and process mappings (for
    /// stack() and ustack() keys); null: nowhere.
    virtual symbols::StackNames* stackNames() { return nullptr; }
};

class Interpreter final : public EventSink {
public:
    /// `program` and the streams must outlive this. Binds BEGIN, END, ERROR and the timers
    /// (ProgramError as Binder::bind throws it).
    Interpreter(const Program& program, const RunOptions& options, std::ostream& out);

    Binder& binder() noexcept { return binder_; }
    AggregationSet& aggregations() noexcept { return aggregations_; }

    /// Runs BEGIN (once) at `timestamp`. Done by the first event() if not called before.
    void begin(std::int64_t timestamp = 0);

    bool event(const BoundEventClass& bound, const Value* slots, std::int64_t timestamp) override;
    /// event() for `weight` identical records at once (a row of an in-kernel aggregation,
    /// ip_aggregation.hpp): the clauses run once, each aggregation is fed `weight` times and
    /// a run-time error counts `weight` errors. Exact only for the programs
    /// ip_aggregation_plan() takes, whose clauses of trace events only aggregate and set
    /// this-> variables.
    bool eventTimes(const BoundEventClass& bound, const Value* slots, std::int64_t timestamp,
                    std::uint64_t weight);
    bool wantsEveryRecord() const override { return !ticks_.empty(); }
    symbols::StackNames* stackNames() override { return aggregations_.stackNames.get(); }

    /// Fires the timers due at or before `timestamp` (ns, the records' clock), earliest
    /// first, as a record at `timestamp` would, but runs no clause of its own: a live run
    /// calls it when no record before `timestamp` is still to come, so that tick-N clauses
    /// fire on time while no record flows. Returns false once exit() has run.
    bool advance(std::int64_t timestamp);

    /// Runs END (at the last record's timestamp) and prints what is left to print.
    void end();

    /// Whether end() prints the aggregations printa() did not (dtrace does; --json not).
    bool printAggregationsAtEnd = true;

    /// exit()'s status once it ran.
    std::optional<std::int64_t> exitStatus() const noexcept { return exitStatus_; }
    /// Run-time errors (division by zero, ...): each stopped its clause.
    std::uint64_t errors() const noexcept { return aggregations_.errors; }

private:
    struct Tick {
        std::int64_t period = 0;
        std::int64_t next = 0;
        BoundEventClass bound;
        int id = 0;
    };

    void firePseudo(const BoundEventClass& bound, int id, std::int64_t timestamp);
    void run(const BoundEventClass& bound, const Value* slots, int id);
    /// Runs an action, appending what it prints to `line`. False: a run-time error.
    bool act(const BoundStatement& s, const Value* slots, std::string& line);
    void printa(const BoundStatement& s, std::string& line);
    void error();
    int idOf(const BoundEventClass& bound);
    /// Fires the timers due at or before `timestamp`; false once exit() has run.
    bool fireTimers(std::int64_t timestamp);

    const Program& program_;
    RunOptions options_;
    std::ostream& out_;
    Binder binder_;
    AggregationSet aggregations_;
    Runtime runtime_;
    BoundEventClass begin_, end_, error_;
    std::vector<Tick> ticks_;
    /// Probe ids by event class name: a class read again from another trace or another
    /// chunk of a live session (another BoundEventClass) keeps its id.
    std::map<std::string, int, std::less<>> ids_;
    int nextId_ = 4;
    std::vector<bool> printed_;
    bool begun_ = false;
    bool ended_ = false;
    bool header_ = false;
    bool inError_ = false;
    std::int64_t lastTimestamp_ = 0;
    std::uint64_t weight_ = 1; ///< the records the current event() stands for
    std::optional<std::int64_t> exitStatus_;
};

} // namespace tracectl::aggregate
