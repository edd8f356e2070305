// The abstract syntax of an aggregation program: DTrace's D language, restricted to what
// aggregations need (see tracectl(1), AGGREGATE). Terms are DTrace's: a program is a list
// of clauses; a clause has probe descriptions, an optional predicate and statements; each
// statement feeds an aggregation (`@name[keys] = function(args)`), whose aggregating
// function is one of DTrace's (Dynamic Tracing Guide, "Aggregations").
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
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
    add,
    subtract,
    multiply,
    divide,
    modulo,
    equal,
    not_equal,
    less,
    less_equal,
    greater,
    greater_equal,
    logical_and,
    logical_or,
    logical_not,
    negate,
};

/// The text of an operator as D writes it ("+", "&&", "!"...).
const char* operator_text(Operator op) noexcept;

/// A D expression. `identifier` names an event payload field, a context field or a
/// built-in variable (pid, tid, execname, cpu, timestamp); `args[N]->member` is parsed
/// as the identifier `member` (text), as tracectl has no translators.
struct Expression {
    enum class Kind { integer, string, identifier, unary, binary };
    Kind kind = Kind::integer;
    Position at;
    std::int64_t integer = 0; ///< Kind::integer
    std::string text;         ///< Kind::string (the value) or Kind::identifier (the name)
    Operator op = Operator::add;
    std::unique_ptr<Expression> left;  ///< unary: the operand
    std::unique_ptr<Expression> right; ///< binary only
    int height = 1;                    ///< nodes on the longest path down (the parser bounds it)
};

/// DTrace's aggregating functions.
enum class Function { count, sum, avg, min, max, stddev, quantize, lquantize };

/// The D name of a function ("count", "lquantize"...).
const char* function_name(Function function) noexcept;

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

/// One aggregation of the program, as declared by its first use.
struct AggregationDeclaration {
    std::string name; ///< without '@'; empty for `@`
    Function function = Function::count;
    std::size_t key_count = 0;
    LinearParameters linear; ///< lquantize only
    Position at;
};

/// `@name[keys...] = function(argument, ...);`
struct Statement {
    std::size_t aggregation = 0; ///< index into Program::aggregations
    Position at;
    std::vector<std::unique_ptr<Expression>> keys;
    std::unique_ptr<Expression> argument; ///< null for count()
};

/// A probe description as written, and the event name pattern it stands for.
struct ProbeDescription {
    std::string text;
    Position at;
    /// The CTF event name pattern (fnmatch(3) wildcards * and ?): "p:n" for a
    /// 4-part "p:m:f:n", otherwise the text itself.
    std::string pattern;
};

/// An identifier an expression of the clause uses, where it first appears.
struct FieldReference {
    std::string name;
    Position at;
};

struct Clause {
    std::vector<ProbeDescription> probes;
    std::unique_ptr<Expression> predicate; ///< null when the clause has none
    std::vector<Statement> statements;
    /// Every identifier of the predicate and the statements, each once, in order.
    std::vector<FieldReference> references;
};

struct Program {
    std::vector<Clause> clauses;
    std::vector<AggregationDeclaration> aggregations; ///< in order of first use
};

} // namespace tracectl::aggregate
