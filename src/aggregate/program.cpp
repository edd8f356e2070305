#include "aggregate/program.hpp"

namespace tracectl::aggregate {

ProgramError::ProgramError(Position at, const std::string& message)
    : std::runtime_error(std::to_string(at.line) + ":" + std::to_string(at.column) + ": " +
                         message),
      at_(at), message_(message) {}

const char* operator_text(Operator op) noexcept {
    switch (op) {
    case Operator::add:
        return "+";
    case Operator::subtract:
        return "-";
    case Operator::multiply:
        return "*";
    case Operator::divide:
        return "/";
    case Operator::modulo:
        return "%";
    case Operator::equal:
        return "==";
    case Operator::not_equal:
        return "!=";
    case Operator::less:
        return "<";
    case Operator::less_equal:
        return "<=";
    case Operator::greater:
        return ">";
    case Operator::greater_equal:
        return ">=";
    case Operator::logical_and:
        return "&&";
    case Operator::logical_or:
        return "||";
    case Operator::logical_not:
        return "!";
    case Operator::negate:
        return "-";
    case Operator::bit_and:
        return "&";
    case Operator::bit_or:
        return "|";
    case Operator::bit_xor:
        return "^";
    case Operator::bit_not:
        return "~";
    case Operator::shift_left:
        return "<<";
    case Operator::shift_right:
        return ">>";
    case Operator::cast_signed:
    case Operator::cast_unsigned:
        return "(cast)";
    }
    return "?";
}

const char* function_name(Function function) noexcept {
    switch (function) {
    case Function::count:
        return "count";
    case Function::sum:
        return "sum";
    case Function::avg:
        return "avg";
    case Function::min:
        return "min";
    case Function::max:
        return "max";
    case Function::stddev:
        return "stddev";
    case Function::quantize:
        return "quantize";
    case Function::lquantize:
        return "lquantize";
    case Function::llquantize:
        return "llquantize";
    }
    return "?";
}

std::size_t Format::argument_count() const noexcept {
    std::size_t n = 0;
    for (const Conversion& c : pieces) {
        n += c.conversion != 0 && c.conversion != '%' && !c.aggregation ? 1 : 0;
    }
    return n;
}

namespace {

bool needs_runtime(const Expression* e) noexcept {
    if (e == nullptr) {
        return false;
    }
    if (e->kind == Expression::Kind::variable || e->kind == Expression::Kind::call ||
        e->kind == Expression::Kind::aggregation) {
        return true;
    }
    if (needs_runtime(e->left.get()) || needs_runtime(e->right.get()) ||
        needs_runtime(e->third.get())) {
        return true;
    }
    for (const auto& a : e->arguments) {
        if (needs_runtime(a.get())) {
            return true;
        }
    }
    return false;
}

} // namespace

bool Program::has_probe(ProbeKind kind) const noexcept {
    for (const Clause& clause : clauses) {
        for (const ProbeDescription& probe : clause.probes) {
            if (probe.kind == kind) {
                return true;
            }
        }
    }
    return false;
}

bool Program::needs_order() const noexcept {
    if (has_probe(ProbeKind::tick) || has_probe(ProbeKind::error)) {
        return true;
    }
    for (const Clause& clause : clauses) {
        bool events = false;
        for (const ProbeDescription& probe : clause.probes) {
            events = events || probe.kind == ProbeKind::event;
        }
        if (!events) {
            // BEGIN's timestamp is the first event record's, END's the last's.
            for (const FieldReference& r : clause.references) {
                if (r.name == "timestamp" || r.name == "walltimestamp") {
                    return true;
                }
            }
            continue;
        }
        if (needs_runtime(clause.predicate.get()) || clause.default_action()) {
            return true; // the default action prints a line per firing
        }
        for (const Statement& s : clause.statements) {
            if (s.kind != Statement::Kind::aggregate || needs_runtime(s.argument.get())) {
                return true;
            }
            for (const auto& key : s.keys) {
                if (needs_runtime(key.get())) {
                    return true;
                }
            }
        }
    }
    return false;
}

std::optional<std::int64_t> time_unit_ns(std::string_view unit) noexcept {
    constexpr std::int64_t second = 1000000000;
    static const std::pair<std::string_view, std::int64_t> units[] = {{"ns", 1},
                                                                      {"nsec", 1},
                                                                      {"us", 1000},
                                                                      {"usec", 1000},
                                                                      {"ms", 1000000},
                                                                      {"msec", 1000000},
                                                                      {"s", second},
                                                                      {"sec", second},
                                                                      {"m", 60 * second},
                                                                      {"min", 60 * second},
                                                                      {"h", 3600 * second},
                                                                      {"hour", 3600 * second},
                                                                      {"d", 86400 * second},
                                                                      {"day", 86400 * second}};
    for (const auto& [name, ns] : units) {
        if (unit == name) {
            return ns;
        }
    }
    return std::nullopt;
}

} // namespace tracectl::aggregate
