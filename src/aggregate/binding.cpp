#include "aggregate/binding.hpp"

#include <algorithm>
#include <cstdint>
#include <fnmatch.h>

namespace tracectl::aggregate {

bool probe_matches(std::string_view pattern, std::string_view event_name, std::string_view domain) {
    const std::string p(pattern);
    const std::string name(event_name);
    if (fnmatch(p.c_str(), name.c_str(), 0) == 0) {
        return true;
    }
    const std::size_t colon = p.find(':');
    if (domain != "kernel" || colon == std::string::npos || name.find(':') != std::string::npos) {
        return false;
    }
    const std::string system = p.substr(0, colon);
    const std::string event = p.substr(colon + 1);
    if (fnmatch(event.c_str(), name.c_str(), 0) != 0) {
        return false;
    }
    const bool wildcard = event.find_first_of("*?[") != std::string::npos;
    if (!wildcard) {
        return true;
    }
    // S:E with E a pattern: the events of system S, named S_...; a pattern S (*:*, *:E, s*:*)
    // stands for every system it matches, "*" for all of them.
    if (system.find_first_of("*?[") != std::string::npos) {
        return system == "*" || fnmatch((system + "_*").c_str(), name.c_str(), 0) == 0;
    }
    return name.rfind(system + "_", 0) == 0;
}

namespace {

/// Resolves identifiers of one clause against one event class, collecting slots.
class ClauseBinder {
public:
    ClauseBinder(const EventClassView& event_class, std::vector<FieldDescription>& slots)
        : class_(event_class), slots_(slots) {}

    /// Where `name` is in this class, if it is.
    std::optional<FieldDescription> resolve(const std::string& name) const {
        if (name == "timestamp") {
            return FieldDescription{FieldScope::timestamp, 0, FieldKind::signed_integer};
        }
        // pid_t, processorid_t: DTrace's int.
        const auto as_int = [](std::optional<FieldDescription> found) {
            if (found) {
                found->bytes = 4;
            }
            return found;
        };
        if (name == "cpu") {
            return as_int(class_.find(FieldScope::packet_context, "cpu_id"));
        }
        const auto context = [&](std::string_view field) -> std::optional<FieldDescription> {
            for (const FieldScope scope :
                 {FieldScope::specific_context, FieldScope::common_context}) {
                if (auto found = class_.find(scope, field)) {
                    return found;
                }
            }
            return std::nullopt;
        };
        if (name == "pid" || name == "tid") {
            if (auto found = context(name == "pid" ? "vpid" : "vtid")) {
                return as_int(found);
            }
            return as_int(context(name));
        }
        if (name == "execname") {
            return context("procname");
        }
        if (auto found = class_.find(FieldScope::payload, name)) {
            return found;
        }
        return context(name);
    }

    BoundExpression bind(const Expression& e) {
        BoundExpression b;
        b.at = e.at;
        switch (e.kind) {
        case Expression::Kind::integer:
            b.kind = BoundExpression::Kind::constant;
            b.integer = e.integer;
            b.bytes = e.integer > INT32_MAX ? 8 : 4;
            return b;
        case Expression::Kind::string:
            b.kind = BoundExpression::Kind::constant;
            b.type = ValueType::string;
            b.string = e.text;
            return b;
        case Expression::Kind::identifier: {
            const auto field = resolve(e.text); // present: the caller checked
            if (field->kind == FieldKind::unusable) {
                throw ProgramError(e.at, "field '" + e.text + "' of event class '" + class_.name() +
                                             "' is neither an integer nor a string: "
                                             "aggregations cannot use it");
            }
            b.kind = BoundExpression::Kind::slot;
            b.type = value_type(field->kind);
            b.bytes = b.type == ValueType::string ? 8 : field->bytes;
            const auto found = std::find(slots_.begin(), slots_.end(), *field);
            b.slot = static_cast<std::size_t>(found - slots_.begin());
            if (found == slots_.end()) {
                slots_.push_back(*field);
            }
            return b;
        }
        case Expression::Kind::unary: {
            b.kind = BoundExpression::Kind::unary;
            b.op = e.op;
            b.left = std::make_unique<BoundExpression>(bind(*e.left));
            require_integer(*b.left, e.op);
            b.bytes = e.op == Operator::logical_not ? 4 : std::max<std::uint8_t>(4, b.left->bytes);
            return b;
        }
        case Expression::Kind::binary:
            break;
        }
        b.kind = BoundExpression::Kind::binary;
        b.op = e.op;
        b.left = std::make_unique<BoundExpression>(bind(*e.left));
        b.right = std::make_unique<BoundExpression>(bind(*e.right));
        switch (e.op) {
        case Operator::equal:
        case Operator::not_equal:
        case Operator::less:
        case Operator::less_equal:
        case Operator::greater:
        case Operator::greater_equal:
            if (b.left->type != b.right->type) {
                throw ProgramError(e.at, std::string("operator ") + operator_text(e.op) +
                                             " compares a string with an integer (in event "
                                             "class '" +
                                             class_.name() + "')");
            }
            break;
        default:
            require_integer(*b.left, e.op);
            require_integer(*b.right, e.op);
        }
        const bool arithmetic = e.op == Operator::add || e.op == Operator::subtract ||
                                e.op == Operator::multiply || e.op == Operator::divide ||
                                e.op == Operator::modulo;
        b.bytes =
            arithmetic ? std::max<std::uint8_t>(4, std::max(b.left->bytes, b.right->bytes)) : 4;
        return b;
    }

private:
    void require_integer(const BoundExpression& operand, Operator op) const {
        if (operand.type != ValueType::integer) {
            throw ProgramError(operand.at, std::string("operator ") + operator_text(op) +
                                               " needs an integer operand, not a string (in "
                                               "event class '" +
                                               class_.name() + "')");
        }
    }

    const EventClassView& class_;
    std::vector<FieldDescription>& slots_;
};

} // namespace

Binder::Binder(const Program& program)
    : program_(program), matched_(program.clauses.size(), false) {
    for (const Clause& clause : program.clauses) {
        found_.emplace_back(clause.references.size(), false);
    }
}

BoundEventClass Binder::bind(const EventClassView& event_class) {
    BoundEventClass result;
    const std::string name = event_class.name();
    const std::string domain = event_class.domain();
    for (std::size_t c = 0; c < program_.clauses.size(); ++c) {
        const Clause& clause = program_.clauses[c];
        if (std::none_of(clause.probes.begin(), clause.probes.end(), [&](const auto& probe) {
                return probe_matches(probe.pattern, name, domain);
            })) {
            continue;
        }
        matched_[c] = true;
        std::vector<FieldDescription> slots = result.slots;
        ClauseBinder binder(event_class, slots);
        bool complete = true;
        for (std::size_t r = 0; r < clause.references.size(); ++r) {
            if (binder.resolve(clause.references[r].name)) {
                found_[c][r] = true;
            } else {
                complete = false;
            }
        }
        if (!complete) {
            continue;
        }
        BoundClause bound;
        bound.clause = c;
        if (clause.predicate) {
            bound.predicate = std::make_unique<BoundExpression>(binder.bind(*clause.predicate));
            if (bound.predicate->type != ValueType::integer) {
                throw ProgramError(clause.predicate->at,
                                   "a predicate must be an integer expression, not a string");
            }
        }
        for (const Statement& statement : clause.statements) {
            BoundStatement s;
            s.aggregation = statement.aggregation;
            for (const auto& key : statement.keys) {
                s.keys.push_back(binder.bind(*key));
                s.key_bytes.push_back(
                    s.keys.back().type == ValueType::string ? 8 : s.keys.back().bytes);
            }
            if (statement.argument) {
                s.argument = binder.bind(*statement.argument);
                if (s.argument->type != ValueType::integer) {
                    const Function f = program_.aggregations[statement.aggregation].function;
                    throw ProgramError(statement.argument->at,
                                       std::string(function_name(f)) +
                                           "( ) needs an integer argument, not a string (in "
                                           "event class '" +
                                           name + "')");
                }
            }
            s.keys.shrink_to_fit();
            bound.statements.push_back(std::move(s));
        }
        result.slots = std::move(slots);
        result.clauses.push_back(std::move(bound));
    }
    return result;
}

void Binder::check_references() const {
    for (std::size_t c = 0; c < program_.clauses.size(); ++c) {
        if (!matched_[c]) {
            continue;
        }
        const Clause& clause = program_.clauses[c];
        for (std::size_t r = 0; r < clause.references.size(); ++r) {
            if (!found_[c][r]) {
                std::string probes;
                for (const auto& probe : clause.probes) {
                    probes += (probes.empty() ? "" : ", ") + probe.text;
                }
                throw ProgramError(clause.references[r].at,
                                   "unknown field '" + clause.references[r].name +
                                       "': no event record matched by " + probes + " has it");
            }
        }
    }
}

std::vector<std::string> Binder::unmatched_probes() const {
    std::vector<std::string> result;
    for (std::size_t c = 0; c < program_.clauses.size(); ++c) {
        if (!matched_[c]) {
            for (const auto& probe : program_.clauses[c].probes) {
                result.push_back(probe.text);
            }
        }
    }
    return result;
}

} // namespace tracectl::aggregate
