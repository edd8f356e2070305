#include "aggregate/evaluation.hpp"

namespace tracectl::aggregate {

namespace {

std::int64_t wrap(std::uint64_t v) noexcept {
    return static_cast<std::int64_t>(v);
}
std::uint64_t bits(std::int64_t v) noexcept {
    return static_cast<std::uint64_t>(v);
}

int compare(const BoundExpression& e, const Value& a, const Value& b) noexcept {
    if (e.left->type == ValueType::string) {
        const int c = a.string.compare(b.string);
        return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    return a.integer < b.integer ? -1 : (a.integer > b.integer ? 1 : 0);
}

} // namespace

bool evaluate(const BoundExpression& e, const Value* slots, Value& result) noexcept {
    switch (e.kind) {
    case BoundExpression::Kind::constant:
        result.integer = e.integer;
        result.string = e.string;
        return true;
    case BoundExpression::Kind::slot:
        result = slots[e.slot];
        return true;
    case BoundExpression::Kind::unary: {
        Value operand;
        if (!evaluate(*e.left, slots, operand)) {
            return false;
        }
        result.integer = e.op == Operator::logical_not ? (operand.integer == 0 ? 1 : 0)
                                                       : wrap(0 - bits(operand.integer));
        return true;
    }
    case BoundExpression::Kind::binary:
        break;
    }
    Value a;
    if (!evaluate(*e.left, slots, a)) {
        return false;
    }
    // && and || short-circuit, as in C.
    if (e.op == Operator::logical_and && a.integer == 0) {
        result.integer = 0;
        return true;
    }
    if (e.op == Operator::logical_or && a.integer != 0) {
        result.integer = 1;
        return true;
    }
    Value b;
    if (!evaluate(*e.right, slots, b)) {
        return false;
    }
    const std::int64_t x = a.integer;
    const std::int64_t y = b.integer;
    switch (e.op) {
    case Operator::add:
        result.integer = wrap(bits(x) + bits(y));
        break;
    case Operator::subtract:
        result.integer = wrap(bits(x) - bits(y));
        break;
    case Operator::multiply:
        result.integer = wrap(bits(x) * bits(y));
        break;
    case Operator::divide:
    case Operator::modulo:
        if (y == 0) {
            return false;
        }
        if (y == -1) { // INT64_MIN / -1 overflows: wrap as two's complement does
            result.integer = e.op == Operator::divide ? wrap(0 - bits(x)) : 0;
        } else {
            result.integer = e.op == Operator::divide ? x / y : x % y;
        }
        break;
    case Operator::equal:
        result.integer = compare(e, a, b) == 0;
        break;
    case Operator::not_equal:
        result.integer = compare(e, a, b) != 0;
        break;
    case Operator::less:
        result.integer = compare(e, a, b) < 0;
        break;
    case Operator::less_equal:
        result.integer = compare(e, a, b) <= 0;
        break;
    case Operator::greater:
        result.integer = compare(e, a, b) > 0;
        break;
    case Operator::greater_equal:
        result.integer = compare(e, a, b) >= 0;
        break;
    case Operator::logical_and:
    case Operator::logical_or:
        result.integer = y != 0;
        break;
    default:
        break;
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
            if (statement.keys.empty()) {
                std::int64_t argument = 0;
                if (statement.argument) {
                    if (!evaluate(*statement.argument, slots, v)) {
                        ++aggregations.errors;
                        break;
                    }
                    argument = v.integer;
                }
                aggregations.unkeyed_state(statement.aggregation).add(argument);
                continue;
            }
            Key key;
            key.reserve(statement.keys.size());
            bool ok = true;
            for (const BoundExpression& k : statement.keys) {
                if (!evaluate(k, slots, v)) {
                    ok = false;
                    break;
                }
                if (k.type == ValueType::string) {
                    key.emplace_back(std::string(v.string));
                } else {
                    key.emplace_back(v.integer);
                }
            }
            std::int64_t argument = 0;
            if (ok && statement.argument) {
                ok = evaluate(*statement.argument, slots, v);
                argument = v.integer;
            }
            if (!ok) {
                ++aggregations.errors;
                break; // the clause stops at its error, as DTrace's actions do
            }
            aggregations.state(statement.aggregation, std::move(key), statement.key_bytes)
                .add(argument);
        }
    }
}

} // namespace tracectl::aggregate
