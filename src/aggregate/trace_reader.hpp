// Reads CTF 1.8 traces from disk with libbabeltrace2's C API and runs a program on every
// event record. One graph: a source.ctf.fs component (plugin "ctf") per trace directory,
// and a simple sink per output port (one per stream; no muxer: aggregating needs no
// order), or, for programs that need time order, one muxer and one sink. Each event class is bound
// once (Binder::bind) when a stream of its stream class begins; an event record then reads only the
// fields its binding lists.
#pragma once

#include "aggregate/aggregation_set.hpp"
#include "aggregate/binding.hpp"
#include "aggregate/interpreter.hpp"
#include "aggregate/program.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tracectl::aggregate {

/// A trace that cannot be read: no trace under the path, babeltrace2's ctf plugin missing,
/// a trace babeltrace2 refuses (the message carries babeltrace2's first error cause).
class TraceReadError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Every directory at or under `path` holding a file named `metadata` (a CTF trace, as
/// babeltrace2's CLI finds them), sorted. Throws TraceReadError if `path` does not exist
/// or holds no trace.
std::vector<std::string> findTraces(const std::string& path);

struct ReadStatistics {
    std::uint64_t eventRecords = 0; ///< every event record read, matched or not
    /// The records of event classes some clause matched (their probes fired), whatever
    /// the predicates then said.
    std::uint64_t matchedRecords = 0;
    std::uint64_t eventClasses = 0; ///< event classes bound
    /// Event records the tracer reported discarded (CTF packets' events_discarded, as
    /// babeltrace2's discarded-events messages carry it); when a message has no count, 1 is
    /// added for it and discarded_exact is false ("at least").
    std::uint64_t discardedEvents = 0;
    bool discardedExact = true;
};

/// Runs `program` on every event record of the traces in `directories` (CTF trace
/// directories, e.g. from find_traces), into `aggregations`. Once every stream has begun,
/// checks the program's field references (Binder::check_references).
/// Throws ProgramError (binding: type mismatch, unknown field) or TraceReadError.
ReadStatistics readTraces(const std::vector<std::string>& directories, const Program& program,
                          Binder& binder, AggregationSet& aggregations);

/// The same, one record at a time in time order (babeltrace2's filter.utils.muxer over
/// every stream, one thread) to `sink`, until the traces end or sink.event() returns false.
/// Records of classes no clause matches reach the sink only if it wants_every_record().
ReadStatistics readTracesInOrder(const std::vector<std::string>& directories, Binder& binder,
                                 EventSink& sink);

} // namespace tracectl::aggregate
