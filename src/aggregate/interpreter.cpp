#include "aggregate/interpreter.hpp"

#include "aggregate/format.hpp"
#include "aggregate/stack_key.hpp"
#include "aggregate/text_output.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <sstream>
#include <utility>

namespace tracectl::aggregate {

namespace {

/// The event class of a dtrace-provider or timer probe: no fields but the timestamp.
class PseudoEventClass final : public EventClassView {
public:
    explicit PseudoEventClass(std::string name) : name_(std::move(name)) {}
    std::string name() const override { return name_; }
    std::string domain() const override { return "dtrace"; }
    std::optional<FieldDescription> find(FieldScope, std::string_view) const override {
        return std::nullopt;
    }

private:
    std::string name_;
};

/// " %Nd": an integer right-aligned in `width` columns after a space (trace()).
std::string traced(int width, std::int64_t value) {
    Conversion c;
    c.width = width;
    c.conversion = 'd';
    std::string text = " ";
    appendInteger(text, c, value);
    return text;
}

} // namespace

Interpreter::Interpreter(const Program& program, const RunOptions& options, std::ostream& out)
    : program_(program), options_(options), out_(out), binder_(program), aggregations_(program),
      runtime_(program), printed_(program.aggregations.size(), false) {
    aggregations_.order.byKey = options.aggsortkey;
    aggregations_.order.reverse = options.aggsortrev;
    runtime_.strsize = options.strsize;
    for (std::size_t v = 0; v < program.variables.size(); ++v) {
        if (program.variables[v].scope == VariableScope::ClauseLocal) {
            runtime_.locals.push_back(v);
        }
    }
    begin_ = binder_.bind(PseudoEventClass("dtrace:BEGIN"));
    end_ = binder_.bind(PseudoEventClass("dtrace:END"));
    error_ = binder_.bind(PseudoEventClass("dtrace:ERROR"));
    std::vector<std::string> seen;
    for (const Clause& clause : program.clauses) {
        for (const ProbeDescription& probe : clause.probes) {
            if (probe.kind != ProbeKind::Tick ||
                std::find(seen.begin(), seen.end(), probe.pattern) != seen.end()) {
                continue;
            }
            seen.push_back(probe.pattern);
            Tick tick;
            tick.period = probe.tickNs;
            tick.bound = binder_.bind(PseudoEventClass(probe.pattern));
            tick.id = nextId_++;
            ticks_.push_back(std::move(tick));
        }
    }
}

int Interpreter::idOf(const BoundEventClass& bound) {
    const auto [it, inserted] = ids_.try_emplace(bound.name, nextId_);
    if (inserted) {
        ++nextId_;
    }
    return it->second;
}

void Interpreter::begin(std::int64_t timestamp) {
    if (begun_) {
        return;
    }
    begun_ = true;
    lastTimestamp_ = timestamp;
    for (Tick& tick : ticks_) {
        tick.next = timestamp + tick.period;
    }
    firePseudo(begin_, 1, timestamp);
}

bool Interpreter::event(const BoundEventClass& bound, const Value* slots, std::int64_t timestamp) {
    if (!begun_) {
        begin(timestamp);
    }
    if (exitStatus_) {
        return false;
    }
    lastTimestamp_ = std::max(lastTimestamp_, timestamp);
    if (!fireTimers(timestamp)) {
        return false;
    }
    if (!bound.clauses.empty()) {
        run(bound, slots, idOf(bound));
    }
    return !exitStatus_;
}

bool Interpreter::eventTimes(const BoundEventClass& bound, const Value* slots,
                             std::int64_t timestamp, std::uint64_t weight) {
    weight_ = weight;
    const bool more = event(bound, slots, timestamp);
    weight_ = 1;
    return more;
}

bool Interpreter::advance(std::int64_t timestamp) {
    if (!begun_) {
        begin(timestamp);
    }
    if (exitStatus_) {
        return false;
    }
    lastTimestamp_ = std::max(lastTimestamp_, timestamp);
    return fireTimers(timestamp);
}

bool Interpreter::fireTimers(std::int64_t timestamp) {
    // The timers due by `timestamp` fire first, earliest first.
    for (;;) {
        Tick* due = nullptr;
        for (Tick& tick : ticks_) {
            if (tick.next <= timestamp && (due == nullptr || tick.next < due->next)) {
                due = &tick;
            }
        }
        if (due == nullptr) {
            return true;
        }
        const std::int64_t at = due->next;
        due->next += due->period;
        firePseudo(due->bound, due->id, at);
        if (exitStatus_) {
            return false;
        }
    }
}

void Interpreter::end() {
    if (ended_) {
        return;
    }
    if (!begun_) {
        begin(0);
    }
    ended_ = true;
    firePseudo(end_, 2, lastTimestamp_);
    for (std::size_t a = 0; a < program_.aggregations.size(); ++a) {
        if (!printed_[a] && printAggregationsAtEnd) {
            printAggregation(out_, aggregations_, a);
        }
    }
    out_.flush();
}

void Interpreter::firePseudo(const BoundEventClass& bound, int id, std::int64_t timestamp) {
    if (bound.clauses.empty()) {
        return;
    }
    std::vector<Value> slots(bound.slots.size());
    for (std::size_t i = 0; i < bound.slots.size(); ++i) {
        if (bound.slots[i].scope == FieldScope::Timestamp) {
            slots[i].integer = timestamp;
        }
    }
    const std::uint64_t weight = std::exchange(weight_, 1); // a pseudo-probe fires once
    run(bound, slots.data(), id);
    weight_ = weight;
}

void Interpreter::error() {
    aggregations_.errors += weight_;
    if (inError_ || error_.clauses.empty()) {
        return;
    }
    inError_ = true;
    firePseudo(error_, 3, lastTimestamp_);
    inError_ = false;
}

void Interpreter::run(const BoundEventClass& bound, const Value* slots, int id) {
    for (const BoundClause& clause : bound.clauses) {
        if (clause.tidSlot) {
            runtime_.tid = slots[*clause.tidSlot].integer;
        }
        if (clause.predicate) {
            Value v;
            if (!evaluate(*clause.predicate, slots, v, &runtime_)) {
                error();
                continue;
            }
            if (v.integer == 0) {
                continue;
            }
        }
        std::string line;
        const bool prefixed = clause.prints && !options_.quiet;
        if (prefixed) {
            if (!header_) {
                header_ = true;
                line += "CPU     ID                    FUNCTION:NAME\n";
            }
            const std::int64_t cpu = clause.cpuSlot ? slots[*clause.cpuSlot].integer : 0;
            char prefix[80];
            const std::string name =
                bound.label.empty() ? ":" + probeNames(bound.name).name : bound.label;
            std::snprintf(prefix, sizeof prefix, "%3d %6d %32s ", static_cast<int>(cpu), id,
                          name.c_str());
            line += prefix;
        }
        for (const BoundStatement& s : clause.statements) {
            bool ok = true;
            switch (s.kind) {
            case Statement::Kind::Aggregate:
                ok = aggregate(s, slots, aggregations_, &runtime_, weight_);
                break;
            case Statement::Kind::Assign:
                ok = assign(s, slots, runtime_);
                break;
            case Statement::Kind::Action:
                ok = act(s, slots, line);
                break;
            }
            if (!ok) {
                out_ << line;
                line.clear();
                error();
                break;
            }
        }
        if (prefixed) {
            line += '\n';
        }
        out_ << line;
    }
    if (!inError_) {
        runtime_.endFiring(); // ERROR fires within another firing: that one ends later
    }
}

bool Interpreter::act(const BoundStatement& s, const Value* slots, std::string& line) {
    if (s.action == Action::Stack) {
        // The stack of this firing, named by what the traces told so far (the records
        // naming its addresses come before it: stack_learning.hpp).
        if (const auto stack = parseStackKey(stackKeyOf(s.arguments.front(), slots))) {
            line += stackText(*stack, *aggregations_.stackNames);
        }
        return true;
    }
    std::vector<Value> values(s.arguments.size());
    for (std::size_t i = 0; i < s.arguments.size(); ++i) {
        if (!evaluate(s.arguments[i], slots, values[i], &runtime_)) {
            return false;
        }
    }
    switch (s.action) {
    case Action::Printf: {
        std::size_t a = 0;
        for (const Conversion& c : s.format->pieces) {
            line += c.literal;
            if (c.conversion == 0) {
                continue;
            }
            const Value& v = values[a];
            if (takesString(c)) {
                appendString(line, c, v.string);
            } else {
                appendInteger(line, c, v.integer);
            }
            ++a;
        }
        return true;
    }
    case Action::Trace:
    case Action::Print: {
        const BoundExpression& e = s.arguments.front();
        const Value& v = values.front();
        if (e.type == ValueType::String) {
            const std::string text(v.string);
            if (options_.quiet) {
                line += text;
            } else {
                Conversion c;
                c.flags = "-";
                c.width = 33;
                c.conversion = 's';
                line += "  ";
                appendString(line, c, text);
            }
        } else if (options_.quiet) {
            line += std::to_string(v.integer);
        } else {
            switch (e.bytes) {
            case 1:
                line += traced(3, static_cast<std::uint8_t>(v.integer));
                break;
            case 2:
                line += traced(5, static_cast<std::uint16_t>(v.integer));
                break;
            case 4:
                line += traced(8, static_cast<std::int32_t>(v.integer));
                break;
            default:
                line += traced(16, v.integer);
            }
        }
        return true;
    }
    case Action::Exit:
        if (!exitStatus_) {
            exitStatus_ = values.front().integer;
        }
        return true;
    case Action::Printa:
        printa(s, line);
        return true;
    case Action::Clear:
        aggregations_.clear(s.aggregations.front());
        return true;
    case Action::Trunc:
        aggregations_.truncate(
            s.aggregations.front(),
            values.empty() ? std::nullopt : std::optional<std::int64_t>(values.front().integer));
        return true;
    case Action::Normalize:
        if (values.front().integer <= 0) {
            return false; // DTrace: "illegal normalization value"
        }
        aggregations_.normal[s.aggregations.front()] = values.front().integer;
        return true;
    case Action::Denormalize:
        aggregations_.normal[s.aggregations.front()] = 1;
        return true;
    case Action::Stack:
        return true; // above
    }
    return true;
}

void Interpreter::printa(const BoundStatement& s, std::string& line) {
    std::ostringstream text;
    for (const std::size_t a : s.aggregations) {
        printed_[a] = true;
        if (s.format == nullptr) {
            printAggregation(text, aggregations_, a);
            continue;
        }
        const std::int64_t normal = aggregations_.normal[a];
        for (const auto& entry : aggregations_.sorted(a)) {
            std::string entryLine;
            std::size_t k = 0;
            for (const Conversion& c : s.format->pieces) {
                entryLine += c.literal;
                if (c.conversion == 0) {
                    continue;
                }
                if (c.aggregation) {
                    const Function f = entry.state->function();
                    if (f == Function::Quantize || f == Function::Lquantize ||
                        f == Function::Llquantize) {
                        std::ostringstream distribution;
                        printDistribution(distribution, *entry.state, normal);
                        entryLine += distribution.str();
                    } else {
                        appendInteger(entryLine, c, entry.state->value() / normal);
                    }
                    continue;
                }
                const KeyValue& key = (*entry.key)[k++];
                if (std::holds_alternative<std::string>(key)) {
                    appendString(entryLine, c, std::get<std::string>(key));
                } else if (takesString(c)) {
                    appendString(entryLine, c, std::to_string(std::get<std::int64_t>(key)));
                } else {
                    appendInteger(entryLine, c, std::get<std::int64_t>(key));
                }
            }
            text << entryLine;
        }
    }
    line += text.str();
}

} // namespace tracectl::aggregate
