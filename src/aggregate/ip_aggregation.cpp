#include "aggregate/ip_aggregation.hpp"

#include "ip_event_fields.hpp"

#include <algorithm>
#include <cstring>
#include <fnmatch.h>
#include <set>

namespace tracectl::aggregate {
namespace {

constexpr const char* kSend = "ip:send";
constexpr const char* kReceive = "ip:receive";

bool isPayloadField(std::string_view name) {
    const auto fields = ip::ipEventFields();
    return std::any_of(fields.begin(), fields.end(),
                       [&](const ip::IpEventField& f) { return f.name == name; });
}

bool isProbeName(std::string_view name) {
    return name == "probeprov" || name == "probemod" || name == "probefunc" || name == "probename";
}

/// Whether `e` reads only what a row holds: payload fields, probe names, this->
/// variables, constants, subroutines of those. Adds the payload fields it reads.
bool rowExpression(const Expression& e, const Program& program, std::set<std::string>& fields) {
    switch (e.kind) {
    case Expression::Kind::Integer:
    case Expression::Kind::String:
        return true;
    case Expression::Kind::Identifier:
        if (isPayloadField(e.text)) {
            fields.insert(e.text);
            return true;
        }
        return isProbeName(e.text);
    case Expression::Kind::Variable:
        if (program.variables[e.variable].scope != VariableScope::ClauseLocal) {
            return false;
        }
        break;
    case Expression::Kind::Aggregation:
        return false;
    case Expression::Kind::Unary:
    case Expression::Kind::Binary:
    case Expression::Kind::Ternary:
    case Expression::Kind::Call:
        break;
    }
    for (const Expression* part : {e.left.get(), e.right.get(), e.third.get()}) {
        if (part != nullptr && !rowExpression(*part, program, fields)) {
            return false;
        }
    }
    return std::all_of(e.arguments.begin(), e.arguments.end(),
                       [&](const auto& a) { return rowExpression(*a, program, fields); });
}

bool rowStatement(const Statement& s, const Program& program, std::set<std::string>& fields) {
    const auto all = [&](const std::vector<std::unique_ptr<Expression>>& list) {
        return std::all_of(list.begin(), list.end(),
                           [&](const auto& e) { return rowExpression(*e, program, fields); });
    };
    switch (s.kind) {
    case Statement::Kind::Action:
        return false;
    case Statement::Kind::Assign:
        if (s.target == nullptr || s.target->kind != Expression::Kind::Variable ||
            program.variables[s.target->variable].scope != VariableScope::ClauseLocal ||
            !all(s.target->arguments)) {
            return false;
        }
        break;
    case Statement::Kind::Aggregate:
        if (!all(s.keys) || !all(s.arguments)) {
            return false;
        }
        break;
    }
    return s.argument == nullptr || rowExpression(*s.argument, program, fields);
}

/// One of the provider's event classes, as the binder sees the trace's.
class IpEventClass final : public EventClassView {
public:
    explicit IpEventClass(std::string name) : name_(std::move(name)) {}
    std::string name() const override { return name_; }
    std::string domain() const override { return "kernel"; }
    std::optional<FieldDescription> find(FieldScope scope, std::string_view name) const override {
        if (scope != FieldScope::Payload) {
            return std::nullopt;
        }
        const auto fields = ip::ipEventFields();
        for (std::size_t i = 0; i < fields.size(); ++i) {
            if (fields[i].name == name) {
                return describe(i, fields[i].ctype);
            }
        }
        return std::nullopt;
    }
    std::optional<std::string> payloadMemberName(std::uint64_t index) const override {
        const auto fields = ip::ipEventFields();
        if (index >= fields.size()) {
            return std::nullopt;
        }
        return std::string(fields[index].name);
    }

private:
    static FieldDescription describe(std::size_t index, std::string_view ctype) {
        FieldDescription d;
        d.scope = FieldScope::Payload;
        d.index = index;
        if (ctype == "string") {
            d.kind = FieldKind::String;
        } else if (ctype == "u8" || ctype == "u16" || ctype == "u32" || ctype == "u64") {
            d.kind = FieldKind::UnsignedInteger;
            d.bytes = static_cast<std::uint8_t>(ctype == "u8"    ? 1
                                                : ctype == "u16" ? 2
                                                : ctype == "u32" ? 4
                                                                 : 8);
        } else {
            d.kind = FieldKind::Unusable; // u8[16]: babeltrace2 reads an array, D cannot use it
        }
        return d;
    }
    std::string name_;
};

} // namespace

std::optional<IpAggregationPlan> ipAggregationPlan(const Program& program) {
    IpAggregationPlan plan;
    std::set<std::string> fields;
    bool any = false;
    for (const Clause& clause : program.clauses) {
        bool ip = false;
        for (const ProbeDescription& probe : clause.probes) {
            switch (probe.kind) {
            case ProbeKind::Begin:
            case ProbeKind::End:
                continue;
            case ProbeKind::Error:
            case ProbeKind::Tick:
                return std::nullopt;
            case ProbeKind::Event:
                break;
            }
            if (probe.pattern.rfind("ip:", 0) != 0) {
                return std::nullopt;
            }
            const bool send = fnmatch(probe.pattern.c_str(), kSend, 0) == 0;
            const bool receive = fnmatch(probe.pattern.c_str(), kReceive, 0) == 0;
            if (!send && !receive) {
                return std::nullopt;
            }
            plan.send = plan.send || send;
            plan.receive = plan.receive || receive;
            ip = true;
        }
        if (!ip) {
            continue; // BEGIN or END: runs in this process, as ever
        }
        if (clause.probes.size() !=
            static_cast<std::size_t>(
                std::count_if(clause.probes.begin(), clause.probes.end(),
                              [](const auto& p) { return p.kind == ProbeKind::Event; }))) {
            return std::nullopt; // BEGIN and ip:::send in one clause
        }
        if (clause.defaultAction()) {
            return std::nullopt; // a line per firing
        }
        if (clause.predicate && !rowExpression(*clause.predicate, program, fields)) {
            return std::nullopt;
        }
        for (const Statement& s : clause.statements) {
            if (!rowStatement(s, program, fields)) {
                return std::nullopt;
            }
        }
        any = true;
    }
    if (!any) {
        return std::nullopt;
    }
    plan.fields.assign(fields.begin(), fields.end());
    return plan;
}

IpRowFeeder::IpRowFeeder(Interpreter& interpreter) : interpreter_(interpreter) {
    send_ = interpreter_.binder().bind(IpEventClass(kSend));
    receive_ = interpreter_.binder().bind(IpEventClass(kReceive));
}

bool IpRowFeeder::feed(const tracectl_ip_record& record, std::uint64_t count,
                       std::int64_t timestamp) {
    const BoundEventClass& bound = record.probe == TRACECTL_IP_SEND ? send_ : receive_;
    if (bound.clauses.empty()) {
        return true;
    }
    payload_.clear();
    ip::appendIpEventFields(record, payload_);
    // The payload's layout (ip_event_fields.hpp): byte-aligned little-endian integers,
    // NUL-terminated strings, 16-byte arrays, in ipEventFields() order.
    const auto fields = ip::ipEventFields();
    fields_.assign(fields.size(), Value{});
    std::size_t at = 0;
    for (std::size_t i = 0; i < fields.size(); ++i) {
        const std::string_view ctype = fields[i].ctype;
        if (ctype == "string") {
            const auto* begin = reinterpret_cast<const char*>(payload_.data() + at);
            const std::size_t length = ::strnlen(begin, payload_.size() - at);
            fields_[i].string = std::string_view(begin, length);
            at += length + 1;
        } else if (ctype == "u8[16]") {
            at += 16;
        } else {
            const std::size_t bytes = ctype == "u8"    ? 1
                                      : ctype == "u16" ? 2
                                      : ctype == "u32" ? 4
                                                       : 8;
            std::uint64_t v = 0;
            for (std::size_t b = 0; b < bytes; ++b) {
                v |= static_cast<std::uint64_t>(payload_[at + b]) << (8 * b);
            }
            fields_[i].integer = static_cast<std::int64_t>(v);
            at += bytes;
        }
    }
    slots_.assign(bound.slots.size(), Value{});
    for (std::size_t s = 0; s < bound.slots.size(); ++s) {
        if (bound.slots[s].scope == FieldScope::Payload && bound.slots[s].index < fields_.size()) {
            slots_[s] = fields_[bound.slots[s].index];
        } else if (bound.slots[s].scope == FieldScope::Timestamp) {
            slots_[s].integer = timestamp;
        }
    }
    return interpreter_.eventTimes(bound, slots_.data(), timestamp, count);
}

} // namespace tracectl::aggregate
