#include "aggregate/program.hpp"

namespace tracectl::aggregate {

ProgramError::ProgramError(Position at, const std::string& message)
    : std::runtime_error(std::to_string(at.line) + ":" + std::to_string(at.column) + ": " +
                         message),
      at_(at), message_(message) {}

const char* operatorText(Operator op) noexcept {
    switch (op) {
    case Operator::Add:
        return "+";
    case Operator::Subtract:
        return "-";
    case Operator::Multiply:
        return "*";
    case Operator::Divide:
        return "/";
    case Operator::Modulo:
        return "%";
    case Operator::Equal:
        return "==";
    case Operator::NotEqual:
        return "!=";
    case Operator::Less:
        return "<";
    case Operator::LessEqual:
        return "<=";
    case Operator::Greater:
        return ">";
    case Operator::GreaterEqual:
        return ">=";
    case Operator::LogicalAnd:
        return "&&";
    case Operator::LogicalOr:
        return "||";
    case Operator::LogicalNot:
        return "!";
    case Operator::Negate:
        return "-";
    case Operator::BitAnd:
        return "&";
    case Operator::BitOr:
        return "|";
    case Operator::BitXor:
        return "^";
    case Operator::BitNot:
        return "~";
    case Operator::ShiftLeft:
        return "<<";
    case Operator::ShiftRight:
        return ">>";
    case Operator::CastSigned:
    case Operator::CastUnsigned:
        return "(cast)";
    }
    return "?";
}

const char* functionName(Function function) noexcept {
    switch (function) {
    case Function::Count:
        return "count";
    case Function::Sum:
        return "sum";
    case Function::Avg:
        return "avg";
    case Function::Min:
        return "min";
    case Function::Max:
        return "max";
    case Function::Stddev:
        return "stddev";
    case Function::Quantize:
        return "quantize";
    case Function::Lquantize:
        return "lquantize";
    case Function::Llquantize:
        return "llquantize";
    }
    return "?";
}

std::size_t Format::argumentCount() const noexcept {
    std::size_t n = 0;
    for (const Conversion& c : pieces) {
        n += c.conversion != 0 && c.conversion != '%' && !c.aggregation ? 1 : 0;
    }
    return n;
}

namespace {

bool needsRuntime(const Expression* e) noexcept {
    if (e == nullptr) {
        return false;
    }
    if (e->kind == Expression::Kind::Variable || e->kind == Expression::Kind::Call ||
        e->kind == Expression::Kind::Aggregation) {
        return true;
    }
    if (needsRuntime(e->left.get()) || needsRuntime(e->right.get()) ||
        needsRuntime(e->third.get())) {
        return true;
    }
    for (const auto& a : e->arguments) {
        if (needsRuntime(a.get())) {
            return true;
        }
    }
    return false;
}

} // namespace

bool Program::hasProbe(ProbeKind kind) const noexcept {
    for (const Clause& clause : clauses) {
        for (const ProbeDescription& probe : clause.probes) {
            if (probe.kind == kind) {
                return true;
            }
        }
    }
    return false;
}

bool Program::needsOrder() const noexcept {
    if (hasProbe(ProbeKind::Tick) || hasProbe(ProbeKind::Error)) {
        return true;
    }
    for (const Clause& clause : clauses) {
        bool events = false;
        for (const ProbeDescription& probe : clause.probes) {
            events = events || probe.kind == ProbeKind::Event;
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
        if (needsRuntime(clause.predicate.get()) || clause.defaultAction()) {
            return true; // the default action prints a line per firing
        }
        for (const Statement& s : clause.statements) {
            if (s.kind != Statement::Kind::Aggregate || needsRuntime(s.argument.get())) {
                return true;
            }
            for (const auto& key : s.keys) {
                if (needsRuntime(key.get())) {
                    return true;
                }
            }
        }
    }
    return false;
}

std::optional<std::int64_t> timeUnitNs(std::string_view unit) noexcept {
    constexpr std::int64_t kSecond = 1000000000;
    static const std::pair<std::string_view, std::int64_t> units[] = {{"ns", 1},
                                                                      {"nsec", 1},
                                                                      {"us", 1000},
                                                                      {"usec", 1000},
                                                                      {"ms", 1000000},
                                                                      {"msec", 1000000},
                                                                      {"s", kSecond},
                                                                      {"sec", kSecond},
                                                                      {"m", 60 * kSecond},
                                                                      {"min", 60 * kSecond},
                                                                      {"h", 3600 * kSecond},
                                                                      {"hour", 3600 * kSecond},
                                                                      {"d", 86400 * kSecond},
                                                                      {"day", 86400 * kSecond}};
    for (const auto& [name, ns] : units) {
        if (unit == name) {
            return ns;
        }
    }
    return std::nullopt;
}

std::string_view actionName(Action action) noexcept {
    switch (action) {
    case Action::Printf:
        return "printf";
    case Action::Printa:
        return "printa";
    case Action::Print:
        return "print";
    case Action::Trace:
        return "trace";
    case Action::Exit:
        return "exit";
    case Action::Clear:
        return "clear";
    case Action::Trunc:
        return "trunc";
    case Action::Normalize:
        return "normalize";
    case Action::Denormalize:
        return "denormalize";
    case Action::Stack:
        return "stack";
    }
    return "";
}

} // namespace tracectl::aggregate
