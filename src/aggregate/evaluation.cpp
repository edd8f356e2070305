#include "aggregate/evaluation.hpp"

#include "aggregate/stack_key.hpp"

#include <cstdio>

namespace tracectl::aggregate {

std::string stackKeyOf(const BoundExpression& k, const Value* slots) {
    const bool user = k.subroutine == Subroutine::Ustack;
    const std::string_view addresses = slots[k.arguments[0].slot].string;
    std::optional<std::uint64_t> caller;
    if (user && k.arguments.size() > 2) {
        caller = static_cast<std::uint64_t>(slots[k.arguments[2].slot].integer);
    }
    const auto pid =
        user ? static_cast<std::int32_t>(slots[k.arguments[1].slot].integer) : std::int32_t{0};
    return stackKey(user, pid, addresses, static_cast<std::size_t>(k.integer), caller);
}

namespace {

std::int64_t wrap(std::uint64_t v) noexcept {
    return static_cast<std::int64_t>(v);
}
std::uint64_t bits(std::int64_t v) noexcept {
    return static_cast<std::uint64_t>(v);
}

int compare(const BoundExpression& e, const Value& a, const Value& b) noexcept {
    if (e.left->type == ValueType::String) {
        const int c = a.string.compare(b.string);
        return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    return a.integer < b.integer ? -1 : (a.integer > b.integer ? 1 : 0);
}

bool makeKey(const std::vector<BoundExpression>& keys, const Value* slots, Key& key,
             Runtime* runtime) {
    key.reserve(keys.size());
    Value v;
    for (const BoundExpression& k : keys) {
        if (k.kind == BoundExpression::Kind::Call &&
            (k.subroutine == Subroutine::Stack || k.subroutine == Subroutine::Ustack)) {
            key.emplace_back(stackKeyOf(k, slots));
            continue;
        }
        if (!evaluate(k, slots, v, runtime)) {
            return false;
        }
        if (k.type == ValueType::String) {
            key.emplace_back(std::string(v.string));
        } else {
            key.emplace_back(v.integer);
        }
    }
    return true;
}

/// The key of an element of associative array `variable` (its `keys`, evaluated): a
/// thread-local array's (self->name[keys]) begins with the thread's tid, so that each
/// thread has its own elements in Runtime::arrays.
bool arrayKey(const BoundExpression& variable, const std::vector<BoundExpression>& keys,
              const Value* slots, Runtime& runtime, Key& key) {
    if (variable.scope == VariableScope::ThreadLocal) {
        key.reserve(keys.size() + 1);
        key.emplace_back(runtime.tid);
    }
    return makeKey(keys, slots, key, &runtime);
}

/// The stored value of variable `e`, or null if it was never assigned (or freed).
const StoredValue* load(const BoundExpression& e, const Value* slots, Runtime& runtime, bool& ok) {
    ok = true;
    if (!e.arguments.empty()) { // an associative array's element, global or thread-local
        Key key;
        if (!arrayKey(e, e.arguments, slots, runtime, key)) {
            ok = false;
            return nullptr;
        }
        const auto& array = runtime.arrays[e.variable];
        const auto found = array.find(key);
        return found == array.end() ? nullptr : &found->second;
    }
    switch (e.scope) {
    case VariableScope::Global:
    case VariableScope::ClauseLocal:
        return &runtime.scalars[e.variable];
    case VariableScope::ThreadLocal: {
        const auto& thread = runtime.threads[e.variable];
        const auto found = thread.find(runtime.tid);
        return found == thread.end() ? nullptr : &found->second;
    }
    }
    return nullptr;
}

std::string ipv4Text(std::int64_t address) {
    const auto a = static_cast<std::uint32_t>(address);
    char text[16];
    std::snprintf(text, sizeof text, "%u.%u.%u.%u", (a >> 24) & 0xff, (a >> 16) & 0xff,
                  (a >> 8) & 0xff, a & 0xff);
    return text;
}

bool call(const BoundExpression& e, const Value* slots, Value& result, Runtime& runtime) {
    Value args[3];
    for (std::size_t i = 0; i < e.arguments.size() && i < 3; ++i) {
        if (!evaluate(e.arguments[i], slots, args[i], &runtime)) {
            return false;
        }
    }
    const auto isString = [&](std::size_t i) { return e.arguments[i].type == ValueType::String; };
    switch (e.subroutine) {
    case Subroutine::Stringof:
        result.string =
            isString(0) ? args[0].string : runtime.keep(std::to_string(args[0].integer));
        return true;
    case Subroutine::Strjoin:
        result.string = runtime.keep(std::string(args[0].string) + std::string(args[1].string));
        return true;
    case Subroutine::Substr: {
        // substr(s, index[, length]): a negative index counts from the end (clamped to the
        // start); a negative length leaves that many characters off the end.
        const auto size = static_cast<std::int64_t>(args[0].string.size());
        std::int64_t index = args[1].integer;
        if (index < 0) {
            index = index + size < 0 ? 0 : index + size;
        }
        if (index >= size) {
            result.string = {};
            return true;
        }
        std::int64_t length = size - index;
        if (e.arguments.size() == 3) {
            length = args[2].integer >= 0
                         ? std::min(args[2].integer, size - index)
                         : std::max<std::int64_t>(0, size - index + args[2].integer);
        }
        result.string = args[0].string.substr(static_cast<std::size_t>(index),
                                              static_cast<std::size_t>(length));
        return true;
    }
    case Subroutine::Strlen:
        result.integer = static_cast<std::int64_t>(args[0].string.size());
        return true;
    case Subroutine::Lltostr:
        result.string = runtime.keep(std::to_string(args[0].integer));
        return true;
    case Subroutine::InetNtoa:
        result.string = isString(0) ? args[0].string : runtime.keep(ipv4Text(args[0].integer));
        return true;
    case Subroutine::InetNtop:
        if (args[0].integer != 2 && args[0].integer != 10) { // AF_INET, AF_INET6
            return false;
        }
        if (isString(1)) {
            result.string = args[1].string;
            return true;
        }
        if (args[0].integer == 10) {
            return false; // an IPv6 address does not fit an integer
        }
        result.string = runtime.keep(ipv4Text(args[1].integer));
        return true;
    case Subroutine::Stack:
    case Subroutine::Ustack:
        return false; // keys and the action stack() only (stackKeyOf), as the binder ensures
    }
    return false;
}

std::uint64_t shiftCount(std::int64_t y) noexcept {
    return static_cast<std::uint64_t>(y) & 63; // as the machine does
}

/// x op y for the arithmetic, bitwise and shift operators (those of compound
/// assignments). False on division or modulo by zero.
bool arithmetic(Operator op, std::int64_t x, std::int64_t y, std::int64_t& result) noexcept {
    switch (op) {
    case Operator::Add:
        result = wrap(bits(x) + bits(y));
        return true;
    case Operator::Subtract:
        result = wrap(bits(x) - bits(y));
        return true;
    case Operator::Multiply:
        result = wrap(bits(x) * bits(y));
        return true;
    case Operator::Divide:
    case Operator::Modulo:
        if (y == 0) {
            return false;
        }
        if (y == -1) { // INT64_MIN / -1 overflows: wrap as two's complement does
            result = op == Operator::Divide ? wrap(0 - bits(x)) : 0;
        } else {
            result = op == Operator::Divide ? x / y : x % y;
        }
        return true;
    case Operator::BitAnd:
        result = x & y;
        return true;
    case Operator::BitOr:
        result = x | y;
        return true;
    case Operator::BitXor:
        result = x ^ y;
        return true;
    case Operator::ShiftLeft:
        result = wrap(bits(x) << shiftCount(y));
        return true;
    case Operator::ShiftRight: // >> of a signed value: arithmetic, as C compilers do
        result = x >> shiftCount(y);
        return true;
    default:
        result = 0;
        return true;
    }
}

bool evaluateUnbounded(const BoundExpression& e, const Value* slots, Value& result,
                       Runtime* runtime);

} // namespace

bool evaluate(const BoundExpression& e, const Value* slots, Value& result, Runtime* runtime) {
    if (!evaluateUnbounded(e, slots, result, runtime)) {
        return false;
    }
    if (e.type == ValueType::String) {
        const std::size_t strsize = runtime != nullptr ? runtime->strsize : kDefaultStrsize;
        const std::size_t most = strsize > 0 ? strsize - 1 : 0;
        if (result.string.size() > most) {
            result.string = result.string.substr(0, most);
        }
    }
    return true;
}

namespace {

bool evaluateUnbounded(const BoundExpression& e, const Value* slots, Value& result,
                       Runtime* runtime) {
    switch (e.kind) {
    case BoundExpression::Kind::Constant:
        result.integer = e.integer;
        result.string = e.string;
        return true;
    case BoundExpression::Kind::Slot:
        result = slots[e.slot];
        return true;
    case BoundExpression::Kind::Unary: {
        Value operand;
        if (!evaluate(*e.left, slots, operand, runtime)) {
            return false;
        }
        if (e.op == Operator::CastSigned || e.op == Operator::CastUnsigned) {
            const int shift = 64 - 8 * static_cast<int>(e.integer);
            const std::uint64_t low = bits(operand.integer) << shift;
            result.integer = e.op == Operator::CastSigned ? wrap(low) >> shift : wrap(low >> shift);
            return true;
        }
        result.integer = e.op == Operator::LogicalNot ? (operand.integer == 0 ? 1 : 0)
                         : e.op == Operator::BitNot   ? ~operand.integer
                                                      : wrap(0 - bits(operand.integer));
        return true;
    }
    case BoundExpression::Kind::Ternary: {
        Value condition;
        if (!evaluate(*e.left, slots, condition, runtime)) {
            return false;
        }
        return evaluate(condition.integer != 0 ? *e.right : *e.third, slots, result, runtime);
    }
    case BoundExpression::Kind::Variable: {
        bool ok = true;
        const StoredValue* stored = load(e, slots, *runtime, ok);
        if (!ok) {
            return false;
        }
        result.integer = stored != nullptr ? stored->integer : 0;
        result.string = stored != nullptr ? std::string_view(stored->string) : std::string_view();
        return true;
    }
    case BoundExpression::Kind::Call:
        return call(e, slots, result, *runtime);
    case BoundExpression::Kind::Binary:
        break;
    }
    Value a;
    if (!evaluate(*e.left, slots, a, runtime)) {
        return false;
    }
    // && and || short-circuit, as in C.
    if (e.op == Operator::LogicalAnd && a.integer == 0) {
        result.integer = 0;
        return true;
    }
    if (e.op == Operator::LogicalOr && a.integer != 0) {
        result.integer = 1;
        return true;
    }
    Value b;
    if (!evaluate(*e.right, slots, b, runtime)) {
        return false;
    }
    const std::int64_t x = a.integer;
    const std::int64_t y = b.integer;
    switch (e.op) {
    case Operator::Add:
        result.integer = wrap(bits(x) + bits(y));
        break;
    case Operator::Subtract:
        result.integer = wrap(bits(x) - bits(y));
        break;
    case Operator::Multiply:
        result.integer = wrap(bits(x) * bits(y));
        break;
    case Operator::Divide:
    case Operator::Modulo:
        if (y == 0) {
            return false;
        }
        if (y == -1) { // INT64_MIN / -1 overflows: wrap as two's complement does
            result.integer = e.op == Operator::Divide ? wrap(0 - bits(x)) : 0;
        } else {
            result.integer = e.op == Operator::Divide ? x / y : x % y;
        }
        break;
    case Operator::Equal:
        result.integer = compare(e, a, b) == 0;
        break;
    case Operator::NotEqual:
        result.integer = compare(e, a, b) != 0;
        break;
    case Operator::Less:
        result.integer = compare(e, a, b) < 0;
        break;
    case Operator::LessEqual:
        result.integer = compare(e, a, b) <= 0;
        break;
    case Operator::Greater:
        result.integer = compare(e, a, b) > 0;
        break;
    case Operator::GreaterEqual:
        result.integer = compare(e, a, b) >= 0;
        break;
    case Operator::LogicalAnd:
    case Operator::LogicalOr:
        result.integer = y != 0;
        break;
    case Operator::BitAnd:
        result.integer = x & y;
        break;
    case Operator::BitOr:
        result.integer = x | y;
        break;
    case Operator::BitXor:
        result.integer = x ^ y;
        break;
    case Operator::ShiftLeft:
        result.integer = wrap(bits(x) << shiftCount(y));
        break;
    case Operator::ShiftRight: // >> of a signed value: arithmetic, as C compilers do
        result.integer = x >> shiftCount(y);
        break;
    default:
        break;
    }
    return true;
}

} // namespace

bool aggregate(const BoundStatement& statement, const Value* slots, AggregationSet& aggregations,
               Runtime* runtime, std::uint64_t weight) {
    Value v;
    if (statement.keys.empty()) {
        std::int64_t argument = 0;
        if (statement.argument) {
            if (!evaluate(*statement.argument, slots, v, runtime)) {
                return false;
            }
            argument = v.integer;
        }
        aggregations.unkeyedState(statement.aggregation).add(argument, weight);
        return true;
    }
    Key key;
    if (!makeKey(statement.keys, slots, key, runtime)) {
        return false;
    }
    std::int64_t argument = 0;
    if (statement.argument) {
        if (!evaluate(*statement.argument, slots, v, runtime)) {
            return false;
        }
        argument = v.integer;
    }
    aggregations.state(statement.aggregation, std::move(key), statement.keyBytes)
        .add(argument, weight);
    return true;
}

bool assign(const BoundStatement& statement, const Value* slots, Runtime& runtime) {
    Value value;
    if (!evaluate(*statement.argument, slots, value, &runtime)) {
        return false;
    }
    const BoundExpression& target = *statement.target;
    if (statement.compound) {
        Value old;
        if (!evaluate(target, slots, old, &runtime) ||
            !arithmetic(statement.op, old.integer, value.integer, value.integer)) {
            return false;
        }
    }
    const bool string = target.type == ValueType::String;
    const bool zero = string ? value.string.empty() : value.integer == 0;
    StoredValue stored;
    if (string) {
        stored.string = std::string(value.string);
    } else {
        stored.integer = value.integer;
    }
    if (target.arguments.empty()) {
        if (target.scope != VariableScope::ThreadLocal) {
            runtime.scalars[target.variable] = std::move(stored);
        } else if (zero) {
            runtime.threads[target.variable].erase(runtime.tid);
        } else {
            runtime.threads[target.variable][runtime.tid] = std::move(stored);
        }
        return true;
    }
    Key key;
    if (!arrayKey(target, target.arguments, slots, runtime, key)) {
        return false;
    }
    if (zero) {
        runtime.arrays[target.variable].erase(key);
    } else {
        runtime.arrays[target.variable][std::move(key)] = std::move(stored);
    }
    return true;
}

void execute(const BoundEventClass& bound, const Value* slots, AggregationSet& aggregations) {
    for (const BoundClause& clause : bound.clauses) {
        Value v;
        if (clause.predicate) {
            if (!evaluate(*clause.predicate, slots, v)) {
                ++aggregations.errors;
                continue;
            }
            if (v.integer == 0) {
                continue;
            }
        }
        for (const BoundStatement& statement : clause.statements) {
            if (!aggregate(statement, slots, aggregations)) {
                ++aggregations.errors;
                break; // the clause stops at its error, as DTrace's actions do
            }
        }
    }
}

} // namespace tracectl::aggregate
