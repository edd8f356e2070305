// Binding a program to an event class (CTF's: the layout every event record of that class
// shares): which clauses' probes match the class's name, where each identifier the clause
// uses lives (an index in a field structure), and the type of every expression. Done once
// per event class; an event record then only reads the fields its class's binding lists.
#pragma once

#include "aggregate/program.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tracectl::aggregate {

/// Where a field of an event record is: a member of one of its structures, or its time.
enum class FieldScope {
    Payload,         ///< the event payload structure
    SpecificContext, ///< the event class's own context structure
    CommonContext,   ///< the stream class's event common context (LTTng's add-context)
    PacketContext,   ///< the packet context (cpu_id)
    Timestamp,       ///< the event's default clock snapshot, ns from the clock's origin
};

/// How the reader gets a field's value.
enum class FieldKind {
    SignedInteger,   ///< also signed enumerations
    UnsignedInteger, ///< also unsigned enumerations; read as int64 (wraps above 2^63 - 1)
    Boolean,         ///< 0 or 1
    Real,            ///< truncated towards zero to an integer (D has no floating point)
    String,          ///< CTF strings, and text arrays/sequences (babeltrace2 reads them so)
    /// A sequence or array of 64-bit unsigned integers (lttng-modules' callstack_kernel
    /// and callstack_user contexts): read as a string of 8-byte native-endian addresses,
    /// for stack() and ustack() only.
    Addresses,
    Unusable, ///< arrays, structures, variants...: aggregation cannot use them
};

enum class ValueType { Integer, String };

/// The type an expression sees a field kind as.
inline ValueType valueType(FieldKind kind) noexcept {
    return kind == FieldKind::String || kind == FieldKind::Addresses ? ValueType::String
                                                                     : ValueType::Integer;
}

struct FieldDescription {
    FieldScope scope = FieldScope::Payload;
    std::uint64_t index = 0; ///< member index in the scope's structure (not for timestamp)
    FieldKind kind = FieldKind::SignedInteger;
    /// An integer's storage size in bytes, 1, 2, 4 or 8 (its CTF size rounded up): DTrace
    /// prints keys by their type's size (see text_output.hpp).
    std::uint8_t bytes = 8;
    bool operator==(const FieldDescription&) const = default;
};

/// What the binder needs to know of an event class; the reader implements it over
/// libbabeltrace2's field classes, tests with a table.
class EventClassView {
public:
    virtual ~EventClassView() = default;
    /// The event class's name: "provider:event" (LTTng-UST), "sched_switch" (kernel).
    virtual std::string name() const = 0;
    /// The trace environment's "domain" entry ("ust", "kernel"), or "".
    virtual std::string domain() const = 0;
    /// The member `name` of one of the scopes payload, specific_context, common_context,
    /// packet_context, if the scope has it.
    virtual std::optional<FieldDescription> find(FieldScope scope, std::string_view name) const = 0;
    /// The name of member `index` of the payload, if it has one (for D's arg0, arg1...).
    virtual std::optional<std::string> payloadMemberName(std::uint64_t /*index*/) const {
        return std::nullopt;
    }
};

/// Whether a probe description's event pattern (ProbeDescription::pattern) matches an
/// event class: fnmatch(3) on the whole name; in a trace whose domain is "kernel", a
/// pattern "S:E" also matches an event named like E when S_ starts the name or E has no
/// wildcard (`sched:sched_switch` and `sched:*` match lttng-modules' `sched_switch`), and
/// "S:E" (S without wildcard) the name lttng-modules gives ftrace's S:E
/// (kernel/lttng_kernel_names.hpp: `irq:softirq_entry` matches `irq_softirq_entry`,
/// `net:netif_receive_skb` `net_if_receive_skb`) or, E with a wildcard, a name like S_E
/// (`irq:softirq_*` matches `irq_softirq_raise`).
bool probeMatches(std::string_view pattern, std::string_view eventName, std::string_view domain);

/// D's subroutines that give a value (Dynamic Tracing Guide, "Actions and Subroutines").
/// Stack and Ustack: aggregation keys only (evaluation.cpp makes their keys: stack_key.hpp).
enum class Subroutine {
    Stringof,
    Strjoin,
    Substr,
    Strlen,
    Lltostr,
    InetNtoa,
    InetNtop,
    Stack,
    Ustack
};

/// A typed expression over the bound fields ("slots"). `variable`: the program's variable
/// `variable` (its `scope`), keyed by `arguments` for an associative array; `call`: the
/// subroutine `subroutine` on `arguments`; `ternary`: left ? right : third. stack([N]):
/// `arguments` the callstack_kernel slot; ustack([N]): the callstack_user slot, the pid
/// slot and, at a process's function entry, the `caller` slot (the return address the
/// probe read at the top of the stack); N in `integer`.
struct BoundExpression {
    enum class Kind { Constant, Slot, Unary, Binary, Ternary, Variable, Call };
    Kind kind = Kind::Constant;
    ValueType type = ValueType::Integer;
    Position at;
    std::int64_t integer = 0; ///< constant integer
    std::string string;       ///< constant string
    std::size_t slot = 0;     ///< Kind::Slot: index into BoundEventClass::slots
    /// The size in bytes of the expression's D type (integers): a field's own, 4 for int
    /// (constants that fit, comparisons, the built-ins pid, tid and cpu), the larger
    /// operand's, at least 4, for arithmetic (C's promotions).
    std::uint8_t bytes = 4;
    Operator op = Operator::Add;
    std::unique_ptr<BoundExpression> left;
    std::unique_ptr<BoundExpression> right;
    std::unique_ptr<BoundExpression> third;
    std::vector<BoundExpression> arguments;
    VariableScope scope = VariableScope::Global;
    std::size_t variable = 0;
    Subroutine subroutine = Subroutine::Stringof;
};

/// A statement bound: Statement's kinds. aggregate: `aggregation`, `keys`, `argument`;
/// assign: `target` (a Kind::Variable), `argument`, `compound`/`op`; action: `action`,
/// `arguments` (bound; an aggregation argument's index is in `aggregations`), `format`.
struct BoundStatement {
    Statement::Kind kind = Statement::Kind::Aggregate;
    std::size_t aggregation = 0;
    std::vector<BoundExpression> keys;
    /// keys[i].bytes (8 for strings, 0 for stack() and ustack(): text_output.hpp)
    std::vector<std::uint8_t> keyBytes;
    std::optional<BoundExpression> argument; ///< empty for count()
    std::optional<BoundExpression> target;
    bool compound = false;
    Operator op = Operator::Add;
    Action action = Action::Printf;
    std::vector<BoundExpression> arguments;
    std::vector<std::size_t> aggregations;
    const Format* format = nullptr; ///< the program's, or null
};

struct BoundClause {
    std::size_t clause = 0;                     ///< index in Program::clauses
    std::unique_ptr<BoundExpression> predicate; ///< null: always true
    std::vector<BoundStatement> statements;
    std::optional<std::size_t> tidSlot; ///< the slot of tid, if the clause uses self->
    std::optional<std::size_t> cpuSlot; ///< the slot of cpu, if the class has it
    bool prints = false; ///< whether some statement is an action, or the default action
};

/// The program bound to one event class. No clauses: records of the class are skipped.
struct BoundEventClass {
    std::vector<FieldDescription> slots; ///< the fields to read, each once
    std::vector<BoundClause> clauses;
    std::string name; ///< the event class's (for dtrace's FUNCTION:NAME column)
    /// A process's probe's FUNCTION:NAME ("work:entry"), printed instead of ":NAME".
    std::string label;
};

/// probeprov, probemod, probefunc, probename of an event class named `name` in a trace of
/// domain `domain`: "p:n" is provider p and name n. A kernel event name (lttng-modules',
/// without ':', such as sched_switch or syscall_entry_write) is the name, and its provider
/// the tracepoint system that begins it, up to the first '_' ("sched", "syscall"): the
/// system S whose pattern S:* matches it (probe_matches); without '_', no provider. Any
/// other name without ':' is only a name. Module and function are "".
struct ProbeNames {
    std::string provider, module, function, name;
};
ProbeNames probeNames(std::string_view eventClassName, std::string_view domain = "");

/// Binds a program to event classes, and remembers, per clause, which of its identifiers
/// some matched event class had.
class Binder {
public:
    explicit Binder(const Program& program);

    /// The program bound to `eventClass`. A clause whose probes do not match, or which uses
    /// an identifier the class lacks, is left out for this class. An event class of domain
    /// "dtrace" (BEGIN, END, ERROR, timers: the interpreter's) matches only the clauses
    /// naming it; others only clauses of trace events.
    /// Identifiers: the built-in variables timestamp and walltimestamp (ns), cpu (packet
    /// context cpu_id), pid (context vpid, else pid), tid (vtid, else tid), execname
    /// (procname), probeprov/probemod/probefunc/probename (probe_names), argN (the N-th
    /// payload member, when the payload has no member named so); any other name is a
    /// payload member, else a context member (specific, then common).
    /// Throws ProgramError: type mismatches (arithmetic or a numeric aggregating function
    /// on a string, a comparison of a string with an integer, a field of a type
    /// aggregation cannot use), at the offending expression.
    BoundEventClass bind(const EventClassView& eventClass);

    /// The type and size of variable `index` once some assignment of it was bound (or
    /// inferred from the program: constants, built-ins, subroutines, other variables).
    std::optional<std::pair<ValueType, std::uint8_t>> variableType(std::size_t index) const {
        return variableTypes_[index];
    }

    /// Throws ProgramError for the first identifier (in program order) of a clause that
    /// matched some event class but that none of those classes had: "unknown field".
    void checkReferences() const;

    /// The probe descriptions (text) of the clauses no event class matched.
    std::vector<std::string> unmatchedProbes() const;

    /// The names of the trace's event classes some clause matched, each once, sorted.
    std::vector<std::string> matchedEventClasses() const;

    /// The same event classes' probe names (probe_names with their trace's domain), in the
    /// same order.
    std::vector<ProbeNames> matchedProbes() const;

private:
    /// Throws ProgramError where an action's arguments do not fit it (printf's conversions,
    /// printa's format, integers for exit, trunc and normalize).
    void checkAction(const Statement& statement, const BoundStatement& bound,
                     const std::string& eventClass) const;

    const Program& program_;
    std::vector<std::optional<std::pair<ValueType, std::uint8_t>>> variableTypes_;
    std::vector<bool> matched_;
    std::vector<std::vector<bool>> found_;                            // [clause][reference]
    std::vector<std::pair<std::string, std::string>> matchedClasses_; ///< name, domain
};

} // namespace tracectl::aggregate
