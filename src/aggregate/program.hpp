// The abstract syntax of a D program (see tracectl-dtrace(1)). Terms are DTrace's (Dynamic
// Tracing Guide): a program is a list of clauses; a clause has probe descriptions, an
// optional predicate and statements; a statement feeds an aggregation
// (`@name[keys] = function(args)`, an aggregating function of the guide's "Aggregations"),
// assigns a variable (global, `this->` clause-local, `self->` thread-local) or runs an
// action (printf, trace, printa, exit...).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tracectl::aggregate {

/// Where something is in the program text: 1-based line and column (columns count bytes).
struct Position {
    int line = 1;
    int column = 1;
};

/// A program that cannot run: a syntax error, an unknown function, a wrong argument count,
/// an unknown field, a type mismatch. what() is "LINE:COLUMN: MESSAGE".
class ProgramError : public std::runtime_error {
public:
    ProgramError(Position at, const std::string& message);
    Position position() const noexcept { return at_; }
    /// The message without the position.
    const std::string& message() const noexcept { return message_; }

private:
    Position at_;
    std::string message_;
};

/// Operators of D expressions (C's precedence; see parser.hpp).
enum class Operator {
    Add,
    Subtract,
    Multiply,
    Divide,
    Modulo,
    Equal,
    NotEqual,
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
    LogicalAnd,
    LogicalOr,
    LogicalNot,
    Negate,
    BitAnd,
    BitOr,
    BitXor,
    BitNot,
    ShiftLeft,
    ShiftRight,
    CastSigned,   ///< (int), (long)...: keeps the low Expression::integer bytes, sign-extended
    CastUnsigned, ///< (unsigned int), (uint8_t)...: the same, zero-extended
};

/// The text of an operator as D writes it ("+", "&&", "!"...).
const char* operatorText(Operator op) noexcept;

/// Where a D variable lives: a global (scalar or associative array), `this->name` (the
/// probe firing's, zeroed before each), `self->name` (the thread's, keyed by tid).
enum class VariableScope { Global, ClauseLocal, ThreadLocal };

/// A D expression. `identifier` names an event payload field, a context field or a
/// built-in variable (pid, tid, execname, cpu, timestamp, probename...); `args[N]->member`
/// is parsed as the identifier `member` (text), as tracectl has no translators.
/// `variable`: text is the name, `variable` its index in Program::variables, `arguments`
/// its keys (an associative array). `call`: a function (text) and its `arguments`.
/// `aggregation`: `@name` as an action's argument (printa, clear...), its index in
/// `variable`. `ternary`: left ? right : third.
struct Expression {
    enum class Kind {
        Integer,
        String,
        Identifier,
        Unary,
        Binary,
        Ternary,
        Variable,
        Call,
        Aggregation
    };
    Kind kind = Kind::Integer;
    Position at;
    std::int64_t integer = 0; ///< Kind::integer
    std::string text;         ///< Kind::string (the value) or Kind::identifier (the name)
    Operator op = Operator::Add;
    std::unique_ptr<Expression> left;  ///< unary: the operand
    std::unique_ptr<Expression> right; ///< binary only
    std::unique_ptr<Expression> third; ///< ternary only
    std::vector<std::unique_ptr<Expression>> arguments;
    std::size_t variable = 0;
    int height = 1; ///< nodes on the longest path down (the parser bounds it)
    /// Kind::identifier written `args[N]->member`: a payload member only (FieldReference).
    bool payloadMember = false;
    /// Kind::call of stack or ustack: the call as written ("stack()", "ustack(5)"), which
    /// messages print back (its `arguments` are the fields it reads, its N is `integer`).
    std::string written;
};

/// DTrace's aggregating functions.
enum class Function { Count, Sum, Avg, Min, Max, Stddev, Quantize, Lquantize, Llquantize };

/// The D name of a function ("count", "lquantize"...).
const char* functionName(Function function) noexcept;

/// lquantize(expr, low, high[, step]): `levels` = (high - low) / step buckets of width
/// step from low, plus the "< low" and ">= low + levels * step" rows (DTrace's
/// DTRACE_LQUANTIZE_LEVELS).
struct LinearParameters {
    std::int64_t low = 0;
    std::int64_t high = 0;
    std::int64_t step = 1;
    std::int64_t levels() const noexcept { return (high - low) / step; }
    bool operator==(const LinearParameters&) const = default;
};

/// llquantize(expr, factor, low, high, steps): log-linear buckets (DTrace's
/// dtrace_aggregate_llquantize): for each order of magnitude factor^m, low <= m <= high,
/// `steps` linear buckets (steps divides factor^m's range), plus one bucket below
/// factor^low and one at or above factor^(high+1). Bounds are exponents.
struct LogLinearParameters {
    std::int64_t factor = 10;
    std::int64_t low = 0;
    std::int64_t high = 0;
    std::int64_t steps = 10;
    bool operator==(const LogLinearParameters&) const = default;
};

/// One aggregation of the program, as declared by its first use.
struct AggregationDeclaration {
    std::string name; ///< without '@'; empty for `@`
    Function function = Function::Count;
    std::size_t keyCount = 0;
    LinearParameters linear;       ///< lquantize only
    LogLinearParameters logLinear; ///< llquantize only
    Position at;
};

/// A conversion of a printf()/printa() format: `%[flags][width][.precision][length]conv`.
/// conv: d i u x X o c s p %; `aggregation` for printa's `%@d`-style conversions.
struct Conversion {
    std::string literal; ///< the text before the conversion
    std::string flags;   ///< of "-+ #0"
    int width = -1;      ///< -1: none
    int precision = -1;  ///< -1: none
    char conversion = 0; ///< 0: none (the format's trailing literal)
    bool aggregation = false;
};

/// A parsed format string: conversions in order, the last one possibly only a literal.
struct Format {
    std::vector<Conversion> pieces;
    /// Conversions that take an argument (printf) or a key (printa, not counting %@).
    std::size_t argumentCount() const noexcept;
};

/// The actions a statement can run (Dynamic Tracing Guide, "Actions and Subroutines").
/// An action. Stack: `stack([N]);` or `ustack([N]);`, whose one argument is the stack() or
/// ustack() call (Expression::Kind::Call): the stack of the firing, printed as dtrace(1)
/// prints it.
enum class Action {
    Printf,
    Printa,
    Print,
    Trace,
    Exit,
    Clear,
    Trunc,
    Normalize,
    Denormalize,
    Stack
};

/// An action's name as written in D ("printf").
std::string_view actionName(Action action) noexcept;

/// A statement: `@name[keys...] = function(argument, ...);` (Kind::aggregate), a variable
/// assignment `target op value` (Kind::assign: op is `=` or a compound operator; ++ and
/// -- are `+= 1` and `-= 1`), or an action (Kind::action) with its arguments.
struct Statement {
    enum class Kind { Aggregate, Assign, Action };
    Kind kind = Kind::Aggregate;
    std::size_t aggregation = 0; ///< index into Program::aggregations
    Position at;
    std::vector<std::unique_ptr<Expression>> keys;
    std::unique_ptr<Expression> argument; ///< null for count(); the assigned value
    std::unique_ptr<Expression> target;   ///< assign: a Kind::variable expression
    bool compound = false;                ///< assign: `target op= argument`
    Operator op = Operator::Add;          ///< assign: the compound operator
    Action action = Action::Printf;
    std::vector<std::unique_ptr<Expression>> arguments; ///< action's (printf: after format)
    Format format;                                      ///< printf, printa with a format
    bool hasFormat = false;
};

/// What a probe description names: trace events, or one of the dtrace provider's probes
/// (BEGIN before the first event record, END after the last or at exit(), ERROR at a
/// run-time error) or a timer (`tick-N[unit]`, `profile:::tick-N[unit]`, firing every
/// tick_ns of trace time).
enum class ProbeKind { Event, Begin, End, Error, Tick };

/// The nanoseconds of one `unit` of D's time suffixes (ns nsec us usec ms msec s sec m min h
/// hour d day: illumos libdtrace's dt_opt_rate suffixes and the profile provider's tick-N
/// units); nullopt for any other (including "hz", which callers read as a rate).
std::optional<std::int64_t> timeUnitNs(std::string_view unit) noexcept;

/// The shortest timer period taken: 200 us (5000 hz), illumos's profile provider's minimum
/// (profile_interval_min); a shorter tick-N is refused, as illumos makes no such probe.
inline constexpr std::int64_t kShortestTickNs = 200000;

/// A probe of a process (aggregate/user_probes.hpp): the pid provider's function entry
/// (`pid1234::work:entry`) or return (`pid1234::work:return`), or a USDT probe
/// (`myprov1234:::tick`, its provider's name ending in the process's id). Recorded by a
/// userspace probe of the kernel domain on the process's executable; only the records of
/// process `pid` count.
struct UserProbe {
    enum class Kind { Entry, Return, Usdt };
    Kind kind = Kind::Entry;
    std::int64_t pid = 0;
    std::string provider; ///< "pid", or the USDT provider without the process id
    std::string module;   ///< as written: "", "*", or the executable's file name
    std::string function; ///< the pid provider's function ("" for USDT)
    std::string name;     ///< "entry", "return", or the USDT probe's name
    bool operator==(const UserProbe&) const = default;
};

/// A probe description as written, and the event name pattern it stands for.
struct ProbeDescription {
    std::string text;
    Position at;
    /// The CTF event name pattern (fnmatch(3) wildcards * and ?): "p:n" for a
    /// 4-part "p:m:f:n", otherwise the text itself. For the dtrace provider's and
    /// timer probes: "dtrace:BEGIN", "dtrace:END", "dtrace:ERROR", "profile:tick-..."
    std::string pattern;
    ProbeKind kind = ProbeKind::Event;
    std::int64_t tickNs = 0; ///< ProbeKind::tick: the period in nanoseconds
    /// A probe of a process (ProbeKind::event): `pattern` is then the exact name of the
    /// event its userspace probe records (user_probe_event).
    std::optional<UserProbe> user;
};

/// A variable of the program, as declared by its first use.
struct VariableDeclaration {
    std::string name;
    VariableScope scope = VariableScope::Global;
    std::size_t keyCount = 0; ///< an associative array's number of keys; 0: a scalar
    Position at;
};

/// An option from `#pragma D option NAME[=VALUE]` (or -x NAME=VALUE on the command line).
struct OptionSetting {
    std::string name;
    std::string value; ///< empty when not given
    Position at;
};

/// An identifier an expression of the clause uses, where it first appears.
struct FieldReference {
    std::string name;
    Position at;
    /// Written `args[N]->name`: a member of the event's payload, never a built-in or a
    /// context field of the same name (`args[0]->pid` is sched_wakeup's woken `pid`).
    bool payload = false;
    /// A context field a stack call reads (callstack_kernel, callstack_user, pid): the first
    /// such call as written ("ustack(5)"), for messages; "" for a field the program names.
    std::string call;
};

struct Clause {
    std::vector<ProbeDescription> probes;
    std::unique_ptr<Expression> predicate; ///< null when the clause has none
    /// None (no body, or an empty one): dtrace(1)'s default action, a trace() of nothing:
    /// the firing's line (CPU, probe id, FUNCTION:NAME) and nothing else.
    std::vector<Statement> statements;
    bool defaultAction() const noexcept { return statements.empty(); }
    /// Every identifier of the predicate and the statements, each once, in order.
    std::vector<FieldReference> references;
};

struct Program {
    std::vector<Clause> clauses;
    std::vector<AggregationDeclaration> aggregations; ///< in order of first use
    std::vector<VariableDeclaration> variables;       ///< in order of first use
    std::vector<OptionSetting> options;               ///< the pragmas, in order

    /// Whether some clause of trace events (not BEGIN/END/ERROR) does more than
    /// aggregate fields (assigns or reads variables, calls functions, runs actions, or the default
    /// action), or there are timer or ERROR probes, or BEGIN/END read the timestamp. Such a program
    /// needs its event records in time order; the others may read streams in parallel.
    bool needsOrder() const noexcept;
    /// Whether the program has clauses of this kind of probe.
    bool hasProbe(ProbeKind kind) const noexcept;
};

} // namespace tracectl::aggregate
