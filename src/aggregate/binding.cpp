#include "aggregate/binding.hpp"

#include "aggregate/user_probes.hpp"
#include "kernel/lttng_kernel_names.hpp"

#include <algorithm>
#include <cstdint>
#include <fnmatch.h>
#include <string>
#include <utility>

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
    // System calls are ruled, not listed: syscalls:sys_enter_X is syscall_entry_X and
    // syscalls:sys_exit_X syscall_exit_X (kernel/lttng_kernel_names.hpp), so a pattern on
    // ftrace's names (syscalls:sys_enter_getpp*, syscalls:*) is matched against the
    // ftrace name of the record.
    if (system == "syscalls") {
        for (const auto& [lttng, ftrace] :
             {std::pair<std::string_view, std::string_view>{"syscall_entry_", "sys_enter_"},
              {"syscall_exit_", "sys_exit_"}}) {
            if (name.rfind(lttng, 0) == 0) {
                const std::string asFtrace = std::string(ftrace) + name.substr(lttng.size());
                return fnmatch(event.c_str(), asFtrace.c_str(), 0) == 0;
            }
        }
    }
    const bool wildcard = event.find_first_of("*?[") != std::string::npos;
    if (fnmatch(event.c_str(), name.c_str(), 0) != 0) {
        // The trace names S:E as lttng-modules does (kernel/lttng_kernel_names.hpp):
        // irq:softirq_entry is irq_softirq_entry, kmem:kmalloc kmem_kmalloc,
        // net:netif_receive_skb net_if_receive_skb; irq:softirq_* matches irq_softirq_*.
        if (system.find_first_of("*?[") != std::string::npos) {
            return false;
        }
        if (!wildcard) {
            return name == kernel::lttngNaming(system, event).eventName;
        }
        return fnmatch((system + "_" + event).c_str(), name.c_str(), 0) == 0;
    }
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

ProbeNames probe_names(std::string_view event_class_name, std::string_view domain) {
    ProbeNames names;
    const std::size_t colon = event_class_name.find(':');
    if (colon == std::string_view::npos) {
        names.name = std::string(event_class_name);
        const std::size_t underscore = event_class_name.find('_');
        if (domain == "kernel" && underscore != std::string_view::npos && underscore > 0) {
            names.provider = std::string(event_class_name.substr(0, underscore));
        }
    } else {
        names.provider = std::string(event_class_name.substr(0, colon));
        names.name = std::string(event_class_name.substr(colon + 1));
    }
    return names;
}

namespace {

using VariableTypes = std::vector<std::optional<std::pair<ValueType, std::uint8_t>>>;

bool is_probe_builtin(const std::string& name) {
    return name == "probeprov" || name == "probemod" || name == "probefunc" || name == "probename";
}

/// An action's name as written ("printf").
std::string_view action_name(Action action) noexcept {
    switch (action) {
    case Action::printf_:
        return "printf";
    case Action::printa:
        return "printa";
    case Action::print:
        return "print";
    case Action::trace:
        return "trace";
    case Action::exit:
        return "exit";
    case Action::clear:
        return "clear";
    case Action::trunc:
        return "trunc";
    case Action::normalize:
        return "normalize";
    case Action::denormalize:
        return "denormalize";
    }
    return "";
}

/// Resolves identifiers of one clause against one event class, collecting slots.
class ClauseBinder {
public:
    ClauseBinder(const EventClassView& event_class, std::vector<FieldDescription>& slots,
                 const Program& program, VariableTypes& variable_types)
        : class_(event_class), slots_(slots), program_(program), variable_types_(variable_types) {}

    /// Where `name` is in this class, if it is. `payload`: written args[N]->name, a payload
    /// member only. A name of the payload read with lttng-modules' `_` prefix (`_pid`; the
    /// reader drops it, as CTF 1.8 says) is that member when the class has no `_pid`.
    std::optional<FieldDescription> resolve(const std::string& name, bool payload = false) const {
        if (payload) {
            return class_.find(FieldScope::payload, name);
        }
        if (is_probe_builtin(name)) {
            return FieldDescription{FieldScope::timestamp, 0, FieldKind::string}; // a constant
        }
        if (name == "timestamp" || name == "walltimestamp") {
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
        if (user != nullptr && is_argument(name)) {
            // A process's probe: its fields arg0.. (entry, USDT); a return's arg1 is the
            // return value, its arg0 (dtrace's return offset) is not recorded.
            if (user->kind == UserProbe::Kind::return_) {
                return name == "arg1" ? class_.find(FieldScope::payload, "ret") : std::nullopt;
            }
            return class_.find(FieldScope::payload, name);
        }
        if (auto found = class_.find(FieldScope::payload, name)) {
            return found;
        }
        if (is_argument(name)) {
            if (const auto member =
                    class_.payload_member_name(static_cast<std::uint64_t>(name[3] - '0'))) {
                return class_.find(FieldScope::payload, *member);
            }
        }
        if (auto found = context(name)) {
            return found;
        }
        if (name.size() > 1 && name[0] == '_') {
            return class_.find(FieldScope::payload, name.substr(1));
        }
        return std::nullopt;
    }

    /// arg0 .. arg9.
    static bool is_argument(const std::string& name) {
        return name.size() == 4 && name.rfind("arg", 0) == 0 && name[3] >= '0' && name[3] <= '9';
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
            if (is_probe_builtin(e.text) && !e.payload_member) {
                ProbeNames names = probe_names(class_.name(), class_.domain());
                if (user != nullptr) {
                    names = {user->provider + std::to_string(user->pid), user->module,
                             user->function, user->name};
                }
                b.kind = BoundExpression::Kind::constant;
                b.type = ValueType::string;
                b.string = e.text == "probeprov"   ? names.provider
                           : e.text == "probemod"  ? names.module
                           : e.text == "probefunc" ? names.function
                                                   : names.name;
                b.bytes = 8;
                return b;
            }
            const auto field = resolve(e.text, e.payload_member); // present: checked before
            if (field->kind == FieldKind::unusable) {
                throw ProgramError(e.at, "field '" + e.text + "' of event class '" + class_.name() +
                                             "' is neither an integer nor a string: " + use);
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
        case Expression::Kind::ternary: {
            b.kind = BoundExpression::Kind::ternary;
            b.left = std::make_unique<BoundExpression>(bind(*e.left));
            require_integer(*b.left, "?:");
            b.right = std::make_unique<BoundExpression>(bind(*e.right));
            b.third = std::make_unique<BoundExpression>(bind(*e.third));
            if (b.right->type != b.third->type) {
                throw ProgramError(e.at, "operator ?: has a string on one side and an integer "
                                         "on the other (in event class '" +
                                             class_.name() + "')");
            }
            b.type = b.right->type;
            b.bytes = std::max(b.right->bytes, b.third->bytes);
            return b;
        }
        case Expression::Kind::variable: {
            b.kind = BoundExpression::Kind::variable;
            b.variable = e.variable;
            b.scope = program_.variables[e.variable].scope;
            for (const auto& key : e.arguments) {
                b.arguments.push_back(bind(*key));
            }
            auto& type = variable_types_[e.variable];
            if (!type) {
                type = std::pair{ValueType::integer, std::uint8_t{8}}; // read before assigned
            }
            b.type = type->first;
            b.bytes = type->second;
            if (b.scope == VariableScope::thread_local_) {
                uses_self = true;
            }
            return b;
        }
        case Expression::Kind::call:
            return bind_call(e);
        case Expression::Kind::aggregation:
            throw ProgramError(e.at, "an aggregation has no value in an expression: use "
                                     "printa( )");
        case Expression::Kind::unary: {
            b.kind = BoundExpression::Kind::unary;
            b.op = e.op;
            b.left = std::make_unique<BoundExpression>(bind(*e.left));
            require_integer(*b.left, e.op);
            b.bytes = e.op == Operator::logical_not ? 4 : std::max<std::uint8_t>(4, b.left->bytes);
            if (e.op == Operator::cast_signed || e.op == Operator::cast_unsigned) {
                b.integer = e.integer; // the type's size in bytes
                b.bytes = static_cast<std::uint8_t>(e.integer);
            }
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
        const bool widening = arithmetic || e.op == Operator::bit_and || e.op == Operator::bit_or ||
                              e.op == Operator::bit_xor || e.op == Operator::shift_left ||
                              e.op == Operator::shift_right;
        b.bytes = widening ? std::max<std::uint8_t>(4, std::max(b.left->bytes, b.right->bytes)) : 4;
        return b;
    }

    BoundExpression bind_call(const Expression& e) {
        static const std::pair<const char*, Subroutine> names[] = {
            {"stringof", Subroutine::stringof},  {"strjoin", Subroutine::strjoin},
            {"substr", Subroutine::substr},      {"strlen", Subroutine::strlen},
            {"lltostr", Subroutine::lltostr},    {"inet_ntoa", Subroutine::inet_ntoa},
            {"inet_ntop", Subroutine::inet_ntop}};
        BoundExpression b;
        b.at = e.at;
        b.kind = BoundExpression::Kind::call;
        for (const auto& [name, subroutine] : names) {
            if (e.text == name) {
                b.subroutine = subroutine;
            }
        }
        const std::string outer = use;
        for (std::size_t i = 0; i < e.arguments.size(); ++i) {
            use = "it cannot be " + e.text + "( ) argument #" + std::to_string(i + 1);
            b.arguments.push_back(bind(*e.arguments[i]));
        }
        use = outer;
        const auto want = [&](std::size_t i, ValueType type) {
            if (i < b.arguments.size() && b.arguments[i].type != type) {
                throw ProgramError(b.arguments[i].at,
                                   e.text + "( ) argument #" + std::to_string(i + 1) + " must be " +
                                       (type == ValueType::string ? "a string" : "an integer") +
                                       " (in event class '" + class_.name() + "')");
            }
        };
        b.type = ValueType::string;
        b.bytes = 8;
        switch (b.subroutine) {
        case Subroutine::strjoin:
            want(0, ValueType::string);
            want(1, ValueType::string);
            break;
        case Subroutine::substr:
            want(0, ValueType::string);
            want(1, ValueType::integer);
            want(2, ValueType::integer);
            break;
        case Subroutine::strlen:
            want(0, ValueType::string);
            b.type = ValueType::integer;
            break;
        case Subroutine::lltostr:
            want(0, ValueType::integer);
            break;
        case Subroutine::inet_ntop:
            want(0, ValueType::integer);
            break;
        case Subroutine::stringof:
        case Subroutine::inet_ntoa:
            break;
        }
        return b;
    }

    /// Records the type of an assigned variable, or checks it against the one recorded.
    void assigned(const BoundExpression& target, const BoundExpression& value, Position at) {
        auto& type = variable_types_[target.variable];
        if (!type) {
            type = std::pair{value.type, std::max<std::uint8_t>(value.bytes, 4)};
            return;
        }
        if (type->first != value.type) {
            throw ProgramError(at,
                               "variable '" + program_.variables[target.variable].name + "' is " +
                                   (type->first == ValueType::string ? "a string" : "an integer") +
                                   ": it cannot be assigned " +
                                   (value.type == ValueType::string ? "a string" : "an integer"));
        }
    }

    void require_integer(const BoundExpression& operand, const std::string& op) const {
        if (operand.type != ValueType::integer) {
            throw ProgramError(operand.at, "operator " + op +
                                               " needs an integer operand, not a string (in "
                                               "event class '" +
                                               class_.name() + "')");
        }
    }
    void require_integer(const BoundExpression& operand, Operator op) const {
        require_integer(operand, operator_text(op));
    }

    bool uses_self = false;
    /// The process's probe (user_probes.hpp) the clause matched the class by, if so.
    const UserProbe* user = nullptr;
    /// What the expression being bound is for, in the message refusing a field that is
    /// neither an integer nor a string: "it cannot be printf( ) argument #2"...
    std::string use = "D expressions cannot use it";

private:
    const EventClassView& class_;
    std::vector<FieldDescription>& slots_;
    const Program& program_;
    VariableTypes& variable_types_;
};

/// The type a program's expression has whatever the event class, if that is known without
/// fields: constants, built-ins, subroutines, operators, variables already typed.
std::optional<std::pair<ValueType, std::uint8_t>> static_type(const Expression& e,
                                                              const VariableTypes& variables) {
    using T = std::pair<ValueType, std::uint8_t>;
    switch (e.kind) {
    case Expression::Kind::integer:
        return T{ValueType::integer, 8};
    case Expression::Kind::string:
        return T{ValueType::string, 8};
    case Expression::Kind::identifier:
        if (e.payload_member) {
            return std::nullopt; // a field: its class says
        }
        if (e.text == "execname" || is_probe_builtin(e.text)) {
            return T{ValueType::string, 8};
        }
        if (e.text == "timestamp" || e.text == "walltimestamp") {
            return T{ValueType::integer, 8};
        }
        if (e.text == "pid" || e.text == "tid" || e.text == "cpu") {
            return T{ValueType::integer, 4};
        }
        return std::nullopt;
    case Expression::Kind::unary:
    case Expression::Kind::binary:
        return T{ValueType::integer, 8};
    case Expression::Kind::ternary: {
        auto t = static_type(*e.right, variables);
        return t ? t : static_type(*e.third, variables);
    }
    case Expression::Kind::variable:
        return variables[e.variable];
    case Expression::Kind::call:
        return e.text == "strlen" ? T{ValueType::integer, 8} : T{ValueType::string, 8};
    case Expression::Kind::aggregation:
        return std::nullopt;
    }
    return std::nullopt;
}

bool is_special(const ProbeDescription& probe) {
    return probe.kind != ProbeKind::event;
}

} // namespace

Binder::Binder(const Program& program)
    : program_(program), variable_types_(program.variables.size()),
      matched_(program.clauses.size(), false) {
    for (const Clause& clause : program.clauses) {
        found_.emplace_back(clause.references.size(), false);
    }
    // Types of variables assigned from what needs no event class, in program order, until
    // nothing more is learnt.
    for (bool learnt = true; learnt;) {
        learnt = false;
        for (const Clause& clause : program.clauses) {
            for (const Statement& s : clause.statements) {
                if (s.kind != Statement::Kind::assign) {
                    continue;
                }
                auto& type = variable_types_[s.target->variable];
                if (type) {
                    continue;
                }
                if (s.compound) {
                    type = std::pair{ValueType::integer, std::uint8_t{8}};
                } else {
                    type = static_type(*s.argument, variable_types_);
                }
                learnt = learnt || type.has_value();
            }
        }
    }
}

namespace {

/// `pid == probe.pid`, and `predicate` (if any) after it: the predicate of a clause bound
/// to a process's probe. Throws ProgramError (at `at`) if the class records no pid.
std::unique_ptr<BoundExpression> only_process(ClauseBinder& binder, const UserProbe& probe,
                                              std::unique_ptr<BoundExpression> predicate,
                                              Position at, const std::string& text) {
    if (!binder.resolve("pid")) {
        throw ProgramError(at, "probe description '" + text +
                                   "': its event records no process id (context pid or vpid), "
                                   "so the records of process " +
                                   std::to_string(probe.pid) + " cannot be told apart");
    }
    Expression pid;
    pid.kind = Expression::Kind::identifier;
    pid.text = "pid";
    pid.at = at;
    auto test = std::make_unique<BoundExpression>();
    test->kind = BoundExpression::Kind::binary;
    test->op = Operator::equal;
    test->at = at;
    test->left = std::make_unique<BoundExpression>(binder.bind(pid));
    test->right = std::make_unique<BoundExpression>();
    test->right->kind = BoundExpression::Kind::constant;
    test->right->integer = probe.pid;
    test->right->at = at;
    if (!predicate) {
        return test;
    }
    auto both = std::make_unique<BoundExpression>();
    both->kind = BoundExpression::Kind::binary;
    both->op = Operator::logical_and;
    both->at = at;
    both->left = std::move(test);
    both->right = std::move(predicate);
    return both;
}

} // namespace

BoundEventClass Binder::bind(const EventClassView& event_class) {
    BoundEventClass result;
    const std::string name = event_class.name();
    const std::string domain = event_class.domain();
    result.name = name;
    const bool pseudo = domain == "dtrace";
    for (std::size_t c = 0; c < program_.clauses.size(); ++c) {
        const Clause& clause = program_.clauses[c];
        const auto matching =
            std::find_if(clause.probes.begin(), clause.probes.end(), [&](const auto& probe) {
                return pseudo ? is_special(probe) && probe.pattern == name
                              : !is_special(probe) && probe_matches(probe.pattern, name, domain);
            });
        if (matching == clause.probes.end()) {
            continue;
        }
        // A process's probe matches its own event only (user_probe_event, no wildcards).
        const UserProbe* user = matching->user ? &*matching->user : nullptr;
        if (user != nullptr) {
            result.label = user_probe_label(*user);
        }
        matched_[c] = true;
        if (!pseudo && std::none_of(matched_classes_.begin(), matched_classes_.end(),
                                    [&](const auto& m) { return m.first == name; })) {
            matched_classes_.emplace_back(name, domain);
        }
        std::vector<FieldDescription> slots = result.slots;
        ClauseBinder binder(event_class, slots, program_, variable_types_);
        binder.user = user;
        bool complete = true;
        for (std::size_t r = 0; r < clause.references.size(); ++r) {
            if (binder.resolve(clause.references[r].name, clause.references[r].payload)) {
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
        bound.prints = clause.default_action(); // a line per firing, as trace( ) of nothing
        if (clause.predicate) {
            binder.use = "it cannot be used in a predicate";
            bound.predicate = std::make_unique<BoundExpression>(binder.bind(*clause.predicate));
            if (bound.predicate->type != ValueType::integer) {
                throw ProgramError(clause.predicate->at,
                                   "a predicate must be an integer expression, not a string");
            }
        }
        if (user != nullptr) {
            // Only process user->pid's records count (its executable's other processes
            // hit the same userspace probe): `pid == PID && predicate`.
            bound.predicate = only_process(binder, *user, std::move(bound.predicate), matching->at,
                                           matching->text);
        }
        for (const Statement& statement : clause.statements) {
            BoundStatement s;
            s.kind = statement.kind;
            s.aggregation = statement.aggregation;
            if (statement.kind == Statement::Kind::assign) {
                // The value first: a variable whose type nothing before told (a field's
                // value: `this->p = args[4]->ipv4_protostr`) takes the value's type, not the
                // integer a variable read before any assignment has.
                binder.use = "it cannot be assigned to a variable";
                s.argument = binder.bind(*statement.argument);
                auto& type = variable_types_[statement.target->variable];
                if (!statement.compound && !type) {
                    type =
                        std::pair{s.argument->type, std::max<std::uint8_t>(s.argument->bytes, 4)};
                }
                binder.use = "it cannot be an associative array key";
                s.target = binder.bind(*statement.target);
                s.compound = statement.compound;
                s.op = statement.op;
                if (s.compound && (s.target->type != ValueType::integer ||
                                   s.argument->type != ValueType::integer)) {
                    throw ProgramError(statement.at, "a compound assignment needs integers");
                }
                if (!s.compound) {
                    binder.assigned(*s.target, *s.argument, statement.at);
                    s.target->type = s.argument->type;
                }
                bound.statements.push_back(std::move(s));
                continue;
            }
            if (statement.kind == Statement::Kind::action) {
                s.action = statement.action;
                s.format = statement.has_format ? &statement.format : nullptr;
                bound.prints = true;
                for (std::size_t i = 0; i < statement.arguments.size(); ++i) {
                    const Expression& a = *statement.arguments[i];
                    if (a.kind == Expression::Kind::aggregation) {
                        s.aggregations.push_back(a.variable);
                        continue;
                    }
                    // The format is argument #1, as dtrace(1) counts.
                    binder.use = "it cannot be " + std::string(action_name(statement.action)) +
                                 "( ) argument #" +
                                 std::to_string(i + (statement.has_format ? 2 : 1));
                    s.arguments.push_back(binder.bind(a));
                }
                check_action(statement, s, name);
                bound.statements.push_back(std::move(s));
                continue;
            }
            binder.use = "it cannot be an aggregation key";
            for (const auto& key : statement.keys) {
                s.keys.push_back(binder.bind(*key));
                s.key_bytes.push_back(
                    s.keys.back().type == ValueType::string ? 8 : s.keys.back().bytes);
            }
            if (statement.argument) {
                binder.use = "it cannot be " +
                             std::string(function_name(
                                 program_.aggregations[statement.aggregation].function)) +
                             "( ) argument";
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
        if (binder.uses_self) {
            ClauseBinder tid(event_class, slots, program_, variable_types_);
            if (!tid.resolve("tid")) {
                throw ProgramError(clause.probes.front().at,
                                   "self-> variables need the thread id of each event record, "
                                   "and event class '" +
                                       name + "' has no tid/vtid context field");
            }
            Expression e;
            e.kind = Expression::Kind::identifier;
            e.text = "tid";
            bound.tid_slot = tid.bind(e).slot;
        }
        if (bound.prints) {
            ClauseBinder cpu(event_class, slots, program_, variable_types_);
            if (cpu.resolve("cpu")) {
                Expression e;
                e.kind = Expression::Kind::identifier;
                e.text = "cpu";
                bound.cpu_slot = cpu.bind(e).slot;
            }
        }
        result.slots = std::move(slots);
        result.clauses.push_back(std::move(bound));
    }
    return result;
}

void Binder::check_action(const Statement& statement, const BoundStatement& bound,
                          const std::string& event_class) const {
    const auto integer = [&](const BoundExpression& e, const std::string& what) {
        if (e.type != ValueType::integer) {
            throw ProgramError(e.at,
                               what + " must be an integer (in event class '" + event_class + "')");
        }
    };
    switch (statement.action) {
    case Action::printf_: {
        std::size_t a = 0;
        for (const Conversion& c : statement.format.pieces) {
            if (c.conversion == 0 || c.conversion == '%') {
                continue;
            }
            const BoundExpression& e = bound.arguments[a++];
            const bool string = c.conversion == 's' || c.conversion == 'S';
            if ((e.type == ValueType::string) != string) {
                throw ProgramError(
                    e.at, "printf( ) argument #" + std::to_string(a + 1) + " is " +
                              (e.type == ValueType::string ? "a string" : "an integer") +
                              ": it does not fit conversion %" + std::string(1, c.conversion) +
                              " (in event class '" + event_class + "')");
            }
        }
        break;
    }
    case Action::printa:
        if (statement.has_format) {
            if (bound.aggregations.size() != 1) {
                throw ProgramError(statement.at, "printa( ) with a format takes one "
                                                 "aggregation here");
            }
            const auto& d = program_.aggregations[bound.aggregations.front()];
            if (statement.format.argument_count() > d.key_count) {
                throw ProgramError(statement.at,
                                   "printa( ) format has " +
                                       std::to_string(statement.format.argument_count()) +
                                       " key conversion(s) but @" + d.name + " has " +
                                       std::to_string(d.key_count) + " key(s)");
            }
        }
        break;
    case Action::exit:
        integer(bound.arguments.front(), "exit( )'s status");
        break;
    case Action::trunc:
    case Action::normalize:
        if (!bound.arguments.empty()) {
            integer(bound.arguments.front(),
                    std::string(statement.action == Action::trunc ? "trunc( )'s number of entries"
                                                                  : "normalize( )'s factor"));
        }
        break;
    default:
        break;
    }
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

std::vector<std::string> Binder::matched_event_classes() const {
    std::vector<std::string> names;
    for (const auto& [name, domain] : matched_classes_) {
        names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
}

std::vector<ProbeNames> Binder::matched_probes() const {
    auto classes = matched_classes_;
    std::sort(classes.begin(), classes.end());
    std::vector<ProbeNames> probes;
    for (const auto& [name, domain] : classes) {
        probes.push_back(probe_names(name, domain));
    }
    return probes;
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
