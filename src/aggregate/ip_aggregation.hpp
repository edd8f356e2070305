// A D program's ip provider clauses run over an in-kernel aggregation instead of recorded
// event records (the daemon's Manager.CreateIpAggregation, src/daemon/ip/ip_aggregations.hpp),
// as dtrace(1M) and bpftrace aggregate in the kernel: the BPF program counts packets by the
// payload fields the program reads, and each row (one masked tracectl_ip_record and its
// count) runs the program's clauses once, feeding its aggregations `count` times.
//
// Exact for the programs ip_aggregation_plan() takes: their clauses of trace events only
// aggregate and set this-> variables, from the ip provider's payload fields, constants and
// the probe's names; then running them once per distinct value of those fields, weighted by
// its count, gives the aggregations that running them on each record would.
#pragma once

#include "aggregate/binding.hpp"
#include "aggregate/interpreter.hpp"
#include "aggregate/program.hpp"
#include "ip_probe_abi.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tracectl::aggregate {

/// What the kernel must count for a program: the probes, and the payload fields (the
/// names of ip_event_fields.hpp) the keys of its rows keep.
struct IpAggregationPlan {
    bool send = false;
    bool receive = false;
    std::vector<std::string> fields; ///< sorted, each once
};

/// The plan of `program` if it can run over an in-kernel aggregation: it has clauses of
/// ip:::send or ip:::receive (patterns "ip:send", "ip:receive", "ip:*"), and no other
/// probes than those, BEGIN and END (no timer: its clauses would read aggregations still
/// in the kernel; no ERROR); those clauses have statements (not the default action, a
/// line per firing), no action, and assign only this->
/// variables; their expressions read only the provider's payload fields, probeprov,
/// probemod, probefunc, probename, this-> variables, constants and subroutines. nullopt
/// otherwise (the program records its events instead).
std::optional<IpAggregationPlan> ipAggregationPlan(const Program& program);

/// The ip provider's event classes ("ip:send", "ip:receive", of domain "kernel", the
/// payload of ip_event_fields.hpp) bound to a program, and the rows fed to its interpreter.
class IpRowFeeder {
public:
    /// Binds the program of `interpreter` to both event classes (ProgramError as
    /// Binder::bind throws it). `interpreter` outlives this object.
    explicit IpRowFeeder(Interpreter& interpreter);

    /// Runs the program on `count` records like `record` (only the bytes the plan's fields
    /// come from matter) at `timestamp` (ns). Returns false once exit() has run.
    bool feed(const tracectl_ip_record& record, std::uint64_t count, std::int64_t timestamp);

private:
    Interpreter& interpreter_;
    BoundEventClass send_;
    BoundEventClass receive_;
    std::vector<std::byte> payload_; ///< appendIpEventFields' bytes of the current row
    std::vector<Value> fields_;      ///< every payload field's value, in payload order
    std::vector<Value> slots_;       ///< the bound class's slots
};

} // namespace tracectl::aggregate
