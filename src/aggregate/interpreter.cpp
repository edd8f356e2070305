#include "aggregate/interpreter.hpp"

#include "aggregate/format.hpp"
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

/// " %Nd": an integer right-aligned in `width` columns after a space (trace( )).
std::string traced(int width, std::int64_t value) {
    Conversion c;
    c.width = width;
    c.conversion = 'd';
    std::string text = " ";
    append_integer(text, c, value);
    return text;
}

} // namespace

Interpreter::Interpreter(const Program& program, const RunOptions& options, std::ostream& out)
    : program_(program), options_(options), out_(out), binder_(program), aggregations_(program),
      runtime_(program), printed_(program.aggregations.size(), false) {
    aggregations_.order.by_key = options.aggsortkey;
    aggregations_.order.reverse = options.aggsortrev;
    runtime_.strsize = options.strsize;
    for (std::size_t v = 0; v < program.variables.size(); ++v) {
        if (program.variables[v].scope == VariableScope::clause_local) {
            runtime_.locals.push_back(v);
        }
    }
    begin_ = binder_.bind(PseudoEventClass("dtrace:BEGIN"));
    end_ = binder_.bind(PseudoEventClass("dtrace:END"));
    error_ = binder_.bind(PseudoEventClass("dtrace:ERROR"));
    std::vector<std::string> seen;
    for (const Clause& clause : program.clauses) {
        for (const ProbeDescription& probe : clause.probes) {
            if (probe.kind != ProbeKind::tick ||
                std::find(seen.begin(), seen.end(), probe.pattern) != seen.end()) {
                continue;
            }
            seen.push_back(probe.pattern);
            Tick tick;
            tick.period = probe.tick_ns;
            tick.bound = binder_.bind(PseudoEventClass(probe.pattern));
            tick.id = next_id_++;
            ticks_.push_back(std::move(tick));
        }
    }
}

int Interpreter::id_of(const BoundEventClass& bound) {
    const auto [it, inserted] = ids_.try_emplace(bound.name, next_id_);
    if (inserted) {
        ++next_id_;
    }
    return it->second;
}

void Interpreter::begin(std::int64_t timestamp) {
    if (begun_) {
        return;
    }
    begun_ = true;
    last_timestamp_ = timestamp;
    for (Tick& tick : ticks_) {
        tick.next = timestamp + tick.period;
    }
    fire_pseudo(begin_, 1, timestamp);
}

bool Interpreter::event(const BoundEventClass& bound, const Value* slots, std::int64_t timestamp) {
    if (!begun_) {
        begin(timestamp);
    }
    if (exit_status_) {
        return false;
    }
    last_timestamp_ = std::max(last_timestamp_, timestamp);
    if (!fire_timers(timestamp)) {
        return false;
    }
    if (!bound.clauses.empty()) {
        run(bound, slots, id_of(bound));
    }
    return !exit_status_;
}

bool Interpreter::event_times(const BoundEventClass& bound, const Value* slots,
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
    if (exit_status_) {
        return false;
    }
    last_timestamp_ = std::max(last_timestamp_, timestamp);
    return fire_timers(timestamp);
}

bool Interpreter::fire_timers(std::int64_t timestamp) {
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
        fire_pseudo(due->bound, due->id, at);
        if (exit_status_) {
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
    fire_pseudo(end_, 2, last_timestamp_);
    for (std::size_t a = 0; a < program_.aggregations.size(); ++a) {
        if (!printed_[a] && print_aggregations_at_end) {
            print_aggregation(out_, aggregations_, a);
        }
    }
    out_.flush();
}

void Interpreter::fire_pseudo(const BoundEventClass& bound, int id, std::int64_t timestamp) {
    if (bound.clauses.empty()) {
        return;
    }
    std::vector<Value> slots(bound.slots.size());
    for (std::size_t i = 0; i < bound.slots.size(); ++i) {
        if (bound.slots[i].scope == FieldScope::timestamp) {
            slots[i].integer = timestamp;
        }
    }
    const std::uint64_t weight = std::exchange(weight_, 1); // a pseudo-probe fires once
    run(bound, slots.data(), id);
    weight_ = weight;
}

void Interpreter::error() {
    aggregations_.errors += weight_;
    if (in_error_ || error_.clauses.empty()) {
        return;
    }
    in_error_ = true;
    fire_pseudo(error_, 3, last_timestamp_);
    in_error_ = false;
}

void Interpreter::run(const BoundEventClass& bound, const Value* slots, int id) {
    for (const BoundClause& clause : bound.clauses) {
        if (clause.tid_slot) {
            runtime_.tid = slots[*clause.tid_slot].integer;
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
            const std::int64_t cpu = clause.cpu_slot ? slots[*clause.cpu_slot].integer : 0;
            char prefix[80];
            const std::string name =
                bound.label.empty() ? ":" + probe_names(bound.name).name : bound.label;
            std::snprintf(prefix, sizeof prefix, "%3d %6d %32s ", static_cast<int>(cpu), id,
                          name.c_str());
            line += prefix;
        }
        for (const BoundStatement& s : clause.statements) {
            bool ok = true;
            switch (s.kind) {
            case Statement::Kind::aggregate:
                ok = aggregate(s, slots, aggregations_, &runtime_, weight_);
                break;
            case Statement::Kind::assign:
                ok = assign(s, slots, runtime_);
                break;
            case Statement::Kind::action:
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
    if (!in_error_) {
        runtime_.end_firing(); // ERROR fires within another firing: that one ends later
    }
}

bool Interpreter::act(const BoundStatement& s, const Value* slots, std::string& line) {
    std::vector<Value> values(s.arguments.size());
    for (std::size_t i = 0; i < s.arguments.size(); ++i) {
        if (!evaluate(s.arguments[i], slots, values[i], &runtime_)) {
            return false;
        }
    }
    switch (s.action) {
    case Action::printf_: {
        std::size_t a = 0;
        for (const Conversion& c : s.format->pieces) {
            line += c.literal;
            if (c.conversion == 0) {
                continue;
            }
            const Value& v = values[a];
            if (takes_string(c)) {
                append_string(line, c, v.string);
            } else {
                append_integer(line, c, v.integer);
            }
            ++a;
        }
        return true;
    }
    case Action::trace:
    case Action::print: {
        const BoundExpression& e = s.arguments.front();
        const Value& v = values.front();
        if (e.type == ValueType::string) {
            const std::string text(v.string);
            if (options_.quiet) {
                line += text;
            } else {
                Conversion c;
                c.flags = "-";
                c.width = 33;
                c.conversion = 's';
                line += "  ";
                append_string(line, c, text);
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
    case Action::exit:
        if (!exit_status_) {
            exit_status_ = values.front().integer;
        }
        return true;
    case Action::printa:
        printa(s, line);
        return true;
    case Action::clear:
        aggregations_.clear(s.aggregations.front());
        return true;
    case Action::trunc:
        aggregations_.truncate(
            s.aggregations.front(),
            values.empty() ? std::nullopt : std::optional<std::int64_t>(values.front().integer));
        return true;
    case Action::normalize:
        if (values.front().integer <= 0) {
            return false; // DTrace: "illegal normalization value"
        }
        aggregations_.normal[s.aggregations.front()] = values.front().integer;
        return true;
    case Action::denormalize:
        aggregations_.normal[s.aggregations.front()] = 1;
        return true;
    }
    return true;
}

void Interpreter::printa(const BoundStatement& s, std::string& line) {
    std::ostringstream text;
    for (const std::size_t a : s.aggregations) {
        printed_[a] = true;
        if (s.format == nullptr) {
            print_aggregation(text, aggregations_, a);
            continue;
        }
        const std::int64_t normal = aggregations_.normal[a];
        for (const auto& entry : aggregations_.sorted(a)) {
            std::string entry_line;
            std::size_t k = 0;
            for (const Conversion& c : s.format->pieces) {
                entry_line += c.literal;
                if (c.conversion == 0) {
                    continue;
                }
                if (c.aggregation) {
                    const Function f = entry.state->function();
                    if (f == Function::quantize || f == Function::lquantize ||
                        f == Function::llquantize) {
                        std::ostringstream distribution;
                        print_distribution(distribution, *entry.state, normal);
                        entry_line += distribution.str();
                    } else {
                        append_integer(entry_line, c, entry.state->value() / normal);
                    }
                    continue;
                }
                const KeyValue& key = (*entry.key)[k++];
                if (std::holds_alternative<std::string>(key)) {
                    append_string(entry_line, c, std::get<std::string>(key));
                } else if (takes_string(c)) {
                    append_string(entry_line, c, std::to_string(std::get<std::int64_t>(key)));
                } else {
                    append_integer(entry_line, c, std::get<std::int64_t>(key));
                }
            }
            text << entry_line;
        }
    }
    line += text.str();
}

} // namespace tracectl::aggregate
