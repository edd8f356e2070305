#include "aggregate/binding.hpp"

#include "aggregate/user_probes.hpp"
#include "kernel/lttng_kernel_names.hpp"

#include <algorithm>
#include <cstdint>
#include <fnmatch.h>
#include <string>
#include <utility>

namespace tracectl::aggregate {

bool probeMatches(std::string_view pattern, std::string_view eventName, std::string_view domain) {
    const std::string p(pattern);
    const std::string name(eventName);
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

ProbeNames probeNames(std::string_view eventClassName, std::string_view domain) {
    ProbeNames names;
    const std::size_t colon = eventClassName.find(':');
    if (colon == std::string_view::npos) {
        names.name = std::string(eventClassName);
        const std::size_t underscore = eventClassName.find('_');
        if (domain == "kernel" && underscore != std::string_view::npos && underscore > 0) {
            names.provider = std::string(eventClassName.substr(0, underscore));
        }
    } else {
        names.provider = std::string(eventClassName.substr(0, colon));
        names.name = std::string(eventClassName.substr(colon + 1));
    }
    return names;
}

namespace {

using VariableTypes = std::vector<std::optional<std::pair<ValueType, std::uint8_t>>>;

bool isProbeBuiltin(const std::string& name) {
    return name == "probeprov" || name == "probemod" || name == "probefunc" || name == "probename";
}

/// Resolves identifiers of one clause against one event class, collecting slots.
class ClauseBinder {
public:
    ClauseBinder(const EventClassView& eventClass, std::vector<FieldDescription>& slots,
                 const Program& program, VariableTypes& variableTypes)
        : class_(eventClass), slots_(slots), program_(program), variableTypes_(variableTypes) {}

    /// Where `name` is in this class, if it is. `payload`: written args[N]->name, a payload
    /// member only. A name of the payload read with lttng-modules' `_` prefix (`_pid`; the
    /// reader drops it, as CTF 1.8 says) is that member when the class has no `_pid`.
    std::optional<FieldDescription> resolve(const std::string& name, bool payload = false) const {
        if (payload) {
            return class_.find(FieldScope::Payload, name);
        }
        if (isProbeBuiltin(name)) {
            return FieldDescription{FieldScope::Timestamp, 0, FieldKind::String}; // a constant
        }
        if (name == "timestamp" || name == "walltimestamp") {
            return FieldDescription{FieldScope::Timestamp, 0, FieldKind::SignedInteger};
        }
        // pid_t, processorid_t: DTrace's int.
        const auto asInt = [](std::optional<FieldDescription> found) {
            if (found) {
                found->bytes = 4;
            }
            return found;
        };
        if (name == "cpu") {
            return asInt(class_.find(FieldScope::PacketContext, "cpu_id"));
        }
        const auto context = [&](std::string_view field) -> std::optional<FieldDescription> {
            for (const FieldScope scope :
                 {FieldScope::SpecificContext, FieldScope::CommonContext}) {
                if (auto found = class_.find(scope, field)) {
                    return found;
                }
            }
            return std::nullopt;
        };
        if (name == "pid" || name == "tid") {
            if (auto found = context(name == "pid" ? "vpid" : "vtid")) {
                return asInt(found);
            }
            return asInt(context(name));
        }
        if (name == "execname") {
            return context("procname");
        }
        if (user != nullptr && isArgument(name)) {
            // A process's probe: its fields arg0.. (entry, USDT); a return's arg1 is the
            // return value, its arg0 (dtrace's return offset) is not recorded.
            if (user->kind == UserProbe::Kind::Return) {
                return name == "arg1" ? class_.find(FieldScope::Payload, "ret") : std::nullopt;
            }
            return class_.find(FieldScope::Payload, name);
        }
        if (auto found = class_.find(FieldScope::Payload, name)) {
            return found;
        }
        if (isArgument(name)) {
            if (const auto member =
                    class_.payloadMemberName(static_cast<std::uint64_t>(name[3] - '0'))) {
                return class_.find(FieldScope::Payload, *member);
            }
        }
        if (auto found = context(name)) {
            return found;
        }
        if (name.size() > 1 && name[0] == '_') {
            return class_.find(FieldScope::Payload, name.substr(1));
        }
        return std::nullopt;
    }

    /// arg0 .. arg9.
    static bool isArgument(const std::string& name) {
        return name.size() == 4 && name.rfind("arg", 0) == 0 && name[3] >= '0' && name[3] <= '9';
    }

    BoundExpression bind(const Expression& e) {
        BoundExpression b;
        b.at = e.at;
        switch (e.kind) {
        case Expression::Kind::Integer:
            b.kind = BoundExpression::Kind::Constant;
            b.integer = e.integer;
            b.bytes = e.integer > INT32_MAX ? 8 : 4;
            return b;
        case Expression::Kind::String:
            b.kind = BoundExpression::Kind::Constant;
            b.type = ValueType::String;
            b.string = e.text;
            return b;
        case Expression::Kind::Identifier: {
            if (isProbeBuiltin(e.text) && !e.payloadMember) {
                ProbeNames names = probeNames(class_.name(), class_.domain());
                if (user != nullptr) {
                    names = {user->provider + std::to_string(user->pid), user->module,
                             user->function, user->name};
                }
                b.kind = BoundExpression::Kind::Constant;
                b.type = ValueType::String;
                b.string = e.text == "probeprov"   ? names.provider
                           : e.text == "probemod"  ? names.module
                           : e.text == "probefunc" ? names.function
                                                   : names.name;
                b.bytes = 8;
                return b;
            }
            const auto field = resolve(e.text, e.payloadMember); // present: checked before
            if (field->kind == FieldKind::Unusable) {
                throw ProgramError(e.at, "field '" + e.text + "' of event class '" + class_.name() +
                                             "' is neither an integer nor a string: " + use);
            }
            if (field->kind == FieldKind::Addresses && !inStackCall) {
                throw ProgramError(e.at, "field '" + e.text + "' of event class '" + class_.name() +
                                             "' is a call stack: read it with stack() or "
                                             "ustack()");
            }
            b.kind = BoundExpression::Kind::Slot;
            b.type = valueType(field->kind);
            b.bytes = b.type == ValueType::String ? 8 : field->bytes;
            const auto found = std::find(slots_.begin(), slots_.end(), *field);
            b.slot = static_cast<std::size_t>(found - slots_.begin());
            if (found == slots_.end()) {
                slots_.push_back(*field);
            }
            return b;
        }
        case Expression::Kind::Ternary: {
            b.kind = BoundExpression::Kind::Ternary;
            b.left = std::make_unique<BoundExpression>(bind(*e.left));
            requireInteger(*b.left, "?:");
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
        case Expression::Kind::Variable: {
            b.kind = BoundExpression::Kind::Variable;
            b.variable = e.variable;
            b.scope = program_.variables[e.variable].scope;
            for (const auto& key : e.arguments) {
                b.arguments.push_back(bind(*key));
            }
            auto& type = variableTypes_[e.variable];
            if (!type) {
                type = std::pair{ValueType::Integer, std::uint8_t{8}}; // read before assigned
            }
            b.type = type->first;
            b.bytes = type->second;
            if (b.scope == VariableScope::ThreadLocal) {
                usesSelf = true;
            }
            return b;
        }
        case Expression::Kind::Call:
            return bindCall(e);
        case Expression::Kind::Aggregation:
            throw ProgramError(e.at, "an aggregation has no value in an expression: use "
                                     "printa()");
        case Expression::Kind::Unary: {
            b.kind = BoundExpression::Kind::Unary;
            b.op = e.op;
            b.left = std::make_unique<BoundExpression>(bind(*e.left));
            requireInteger(*b.left, e.op);
            b.bytes = e.op == Operator::LogicalNot ? 4 : std::max<std::uint8_t>(4, b.left->bytes);
            if (e.op == Operator::CastSigned || e.op == Operator::CastUnsigned) {
                b.integer = e.integer; // the type's size in bytes
                b.bytes = static_cast<std::uint8_t>(e.integer);
            }
            return b;
        }
        case Expression::Kind::Binary:
            break;
        }
        b.kind = BoundExpression::Kind::Binary;
        b.op = e.op;
        b.left = std::make_unique<BoundExpression>(bind(*e.left));
        b.right = std::make_unique<BoundExpression>(bind(*e.right));
        switch (e.op) {
        case Operator::Equal:
        case Operator::NotEqual:
        case Operator::Less:
        case Operator::LessEqual:
        case Operator::Greater:
        case Operator::GreaterEqual:
            if (b.left->type != b.right->type) {
                throw ProgramError(e.at, std::string("operator ") + operatorText(e.op) +
                                             " compares a string with an integer (in event "
                                             "class '" +
                                             class_.name() + "')");
            }
            break;
        default:
            requireInteger(*b.left, e.op);
            requireInteger(*b.right, e.op);
        }
        const bool arithmetic = e.op == Operator::Add || e.op == Operator::Subtract ||
                                e.op == Operator::Multiply || e.op == Operator::Divide ||
                                e.op == Operator::Modulo;
        const bool widening = arithmetic || e.op == Operator::BitAnd || e.op == Operator::BitOr ||
                              e.op == Operator::BitXor || e.op == Operator::ShiftLeft ||
                              e.op == Operator::ShiftRight;
        b.bytes = widening ? std::max<std::uint8_t>(4, std::max(b.left->bytes, b.right->bytes)) : 4;
        return b;
    }

    BoundExpression bindCall(const Expression& e) {
        static const std::pair<const char*, Subroutine> names[] = {
            {"stringof", Subroutine::Stringof},  {"strjoin", Subroutine::Strjoin},
            {"substr", Subroutine::Substr},      {"strlen", Subroutine::Strlen},
            {"lltostr", Subroutine::Lltostr},    {"inet_ntoa", Subroutine::InetNtoa},
            {"inet_ntop", Subroutine::InetNtop}, {"stack", Subroutine::Stack},
            {"ustack", Subroutine::Ustack}};
        BoundExpression b;
        b.at = e.at;
        b.kind = BoundExpression::Kind::Call;
        for (const auto& [name, subroutine] : names) {
            if (e.text == name) {
                b.subroutine = subroutine;
            }
        }
        if (b.subroutine == Subroutine::Stack || b.subroutine == Subroutine::Ustack) {
            return bindStack(e, std::move(b));
        }
        const std::string outer = use;
        for (std::size_t i = 0; i < e.arguments.size(); ++i) {
            use = "it cannot be " + e.text + "() argument #" + std::to_string(i + 1);
            b.arguments.push_back(bind(*e.arguments[i]));
        }
        use = outer;
        const auto want = [&](std::size_t i, ValueType type) {
            if (i < b.arguments.size() && b.arguments[i].type != type) {
                throw ProgramError(b.arguments[i].at,
                                   e.text + "() argument #" + std::to_string(i + 1) + " must be " +
                                       (type == ValueType::String ? "a string" : "an integer") +
                                       " (in event class '" + class_.name() + "')");
            }
        };
        b.type = ValueType::String;
        b.bytes = 8;
        switch (b.subroutine) {
        case Subroutine::Strjoin:
            want(0, ValueType::String);
            want(1, ValueType::String);
            break;
        case Subroutine::Substr:
            want(0, ValueType::String);
            want(1, ValueType::Integer);
            want(2, ValueType::Integer);
            break;
        case Subroutine::Strlen:
            want(0, ValueType::String);
            b.type = ValueType::Integer;
            break;
        case Subroutine::Lltostr:
            want(0, ValueType::Integer);
            break;
        case Subroutine::InetNtop:
            want(0, ValueType::Integer);
            break;
        case Subroutine::Stringof:
        case Subroutine::InetNtoa:
            break;
        case Subroutine::Stack:
        case Subroutine::Ustack:
            break; // bindStack's
        }
        return b;
    }

    /// stack([N]), ustack([N]) (see BoundExpression): aggregation keys and the action
    /// `stack();` only, as in D, where a stack is no value an expression can use.
    BoundExpression bindStack(const Expression& e, BoundExpression b) {
        if (!bindingKey) {
            throw ProgramError(e.at, e.written + " is only taken as an aggregation key (@[" +
                                         e.written + "] = count()) or as an action (" + e.written +
                                         ";): " + use);
        }
        inStackCall = true;
        for (const auto& argument : e.arguments) {
            b.arguments.push_back(bind(*argument));
        }
        inStackCall = false;
        if (b.subroutine == Subroutine::Ustack && user != nullptr &&
            user->kind == UserProbe::Kind::Entry) {
            if (auto caller = class_.find(FieldScope::Payload, "caller")) {
                BoundExpression c;
                c.at = e.at;
                c.kind = BoundExpression::Kind::Slot;
                c.bytes = 8;
                const auto found = std::find(slots_.begin(), slots_.end(), *caller);
                c.slot = static_cast<std::size_t>(found - slots_.begin());
                if (found == slots_.end()) {
                    slots_.push_back(*caller);
                }
                b.arguments.push_back(std::move(c));
            }
        }
        b.integer = e.integer;
        b.type = ValueType::String;
        b.bytes = 0;
        return b;
    }

    /// Records the type of an assigned variable, or checks it against the one recorded.
    void assigned(const BoundExpression& target, const BoundExpression& value, Position at) {
        auto& type = variableTypes_[target.variable];
        if (!type) {
            type = std::pair{value.type, std::max<std::uint8_t>(value.bytes, 4)};
            return;
        }
        if (type->first != value.type) {
            throw ProgramError(at,
                               "variable '" + program_.variables[target.variable].name + "' is " +
                                   (type->first == ValueType::String ? "a string" : "an integer") +
                                   ": it cannot be assigned " +
                                   (value.type == ValueType::String ? "a string" : "an integer"));
        }
    }

    void requireInteger(const BoundExpression& operand, const std::string& op) const {
        if (operand.type != ValueType::Integer) {
            throw ProgramError(operand.at, "operator " + op +
                                               " needs an integer operand, not a string (in "
                                               "event class '" +
                                               class_.name() + "')");
        }
    }
    void requireInteger(const BoundExpression& operand, Operator op) const {
        requireInteger(operand, operatorText(op));
    }

    bool usesSelf = false;
    /// Binding an aggregate statement's keys or the action stack()'s call (where stack()
    /// and ustack() are taken).
    bool bindingKey = false;
    /// Binding stack()'s or ustack()'s fields (the only use of a call stack field).
    bool inStackCall = false;
    /// The process's probe (user_probes.hpp) the clause matched the class by, if so.
    const UserProbe* user = nullptr;
    /// What the expression being bound is for, in the message refusing a field that is
    /// neither an integer nor a string: "it cannot be printf() argument #2"...
    std::string use = "D expressions cannot use it";

private:
    const EventClassView& class_;
    std::vector<FieldDescription>& slots_;
    const Program& program_;
    VariableTypes& variableTypes_;
};

/// The type a program's expression has whatever the event class, if that is known without
/// fields: constants, built-ins, subroutines, operators, variables already typed.
std::optional<std::pair<ValueType, std::uint8_t>> staticType(const Expression& e,
                                                             const VariableTypes& variables) {
    using T = std::pair<ValueType, std::uint8_t>;
    switch (e.kind) {
    case Expression::Kind::Integer:
        return T{ValueType::Integer, 8};
    case Expression::Kind::String:
        return T{ValueType::String, 8};
    case Expression::Kind::Identifier:
        if (e.payloadMember) {
            return std::nullopt; // a field: its class says
        }
        if (e.text == "execname" || isProbeBuiltin(e.text)) {
            return T{ValueType::String, 8};
        }
        if (e.text == "timestamp" || e.text == "walltimestamp") {
            return T{ValueType::Integer, 8};
        }
        if (e.text == "pid" || e.text == "tid" || e.text == "cpu") {
            return T{ValueType::Integer, 4};
        }
        return std::nullopt;
    case Expression::Kind::Unary:
    case Expression::Kind::Binary:
        return T{ValueType::Integer, 8};
    case Expression::Kind::Ternary: {
        auto t = staticType(*e.right, variables);
        return t ? t : staticType(*e.third, variables);
    }
    case Expression::Kind::Variable:
        return variables[e.variable];
    case Expression::Kind::Call:
        return e.text == "strlen" ? T{ValueType::Integer, 8} : T{ValueType::String, 8};
    case Expression::Kind::Aggregation:
        return std::nullopt;
    }
    return std::nullopt;
}

bool isSpecial(const ProbeDescription& probe) {
    return probe.kind != ProbeKind::Event;
}

} // namespace

Binder::Binder(const Program& program)
    : program_(program), variableTypes_(program.variables.size()),
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
                if (s.kind != Statement::Kind::Assign) {
                    continue;
                }
                auto& type = variableTypes_[s.target->variable];
                if (type) {
                    continue;
                }
                if (s.compound) {
                    type = std::pair{ValueType::Integer, std::uint8_t{8}};
                } else {
                    type = staticType(*s.argument, variableTypes_);
                }
                learnt = learnt || type.has_value();
            }
        }
    }
}

namespace {

/// `pid == probe.pid`, and `predicate` (if any) after it: the predicate of a clause bound
/// to a process's probe. Throws ProgramError (at `at`) if the class records no pid.
std::unique_ptr<BoundExpression> onlyProcess(ClauseBinder& binder, const UserProbe& probe,
                                             std::unique_ptr<BoundExpression> predicate,
                                             Position at, const std::string& text) {
    if (!binder.resolve("pid")) {
        throw ProgramError(at, "probe description '" + text +
                                   "': its event records no process id (context pid or vpid), "
                                   "so the records of process " +
                                   std::to_string(probe.pid) + " cannot be told apart");
    }
    Expression pid;
    pid.kind = Expression::Kind::Identifier;
    pid.text = "pid";
    pid.at = at;
    auto test = std::make_unique<BoundExpression>();
    test->kind = BoundExpression::Kind::Binary;
    test->op = Operator::Equal;
    test->at = at;
    test->left = std::make_unique<BoundExpression>(binder.bind(pid));
    test->right = std::make_unique<BoundExpression>();
    test->right->kind = BoundExpression::Kind::Constant;
    test->right->integer = probe.pid;
    test->right->at = at;
    if (!predicate) {
        return test;
    }
    auto both = std::make_unique<BoundExpression>();
    both->kind = BoundExpression::Kind::Binary;
    both->op = Operator::LogicalAnd;
    both->at = at;
    both->left = std::move(test);
    both->right = std::move(predicate);
    return both;
}

} // namespace

BoundEventClass Binder::bind(const EventClassView& eventClass) {
    BoundEventClass result;
    const std::string name = eventClass.name();
    const std::string domain = eventClass.domain();
    result.name = name;
    const bool pseudo = domain == "dtrace";
    for (std::size_t c = 0; c < program_.clauses.size(); ++c) {
        const Clause& clause = program_.clauses[c];
        const auto matching =
            std::find_if(clause.probes.begin(), clause.probes.end(), [&](const auto& probe) {
                return pseudo ? isSpecial(probe) && probe.pattern == name
                              : !isSpecial(probe) && probeMatches(probe.pattern, name, domain);
            });
        if (matching == clause.probes.end()) {
            continue;
        }
        // A process's probe matches its own event only (user_probe_event, no wildcards).
        const UserProbe* user = matching->user ? &*matching->user : nullptr;
        if (user != nullptr) {
            result.label = userProbeLabel(*user);
        }
        matched_[c] = true;
        if (!pseudo && std::none_of(matchedClasses_.begin(), matchedClasses_.end(),
                                    [&](const auto& m) { return m.first == name; })) {
            matchedClasses_.emplace_back(name, domain);
        }
        std::vector<FieldDescription> slots = result.slots;
        ClauseBinder binder(eventClass, slots, program_, variableTypes_);
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
        bound.prints = clause.defaultAction(); // a line per firing, as trace() of nothing
        if (clause.predicate) {
            binder.use = "it cannot be used in a predicate";
            bound.predicate = std::make_unique<BoundExpression>(binder.bind(*clause.predicate));
            if (bound.predicate->type != ValueType::Integer) {
                throw ProgramError(clause.predicate->at,
                                   "a predicate must be an integer expression, not a string");
            }
        }
        if (user != nullptr) {
            // Only process user->pid's records count (its executable's other processes
            // hit the same userspace probe): `pid == PID && predicate`.
            bound.predicate = onlyProcess(binder, *user, std::move(bound.predicate), matching->at,
                                          matching->text);
        }
        for (const Statement& statement : clause.statements) {
            BoundStatement s;
            s.kind = statement.kind;
            s.aggregation = statement.aggregation;
            if (statement.kind == Statement::Kind::Assign) {
                // The value first: a variable whose type nothing before told (a field's
                // value: `this->p = args[4]->ipv4_protostr`) takes the value's type, not the
                // integer a variable read before any assignment has.
                binder.use = "it cannot be assigned to a variable";
                s.argument = binder.bind(*statement.argument);
                auto& type = variableTypes_[statement.target->variable];
                if (!statement.compound && !type) {
                    type =
                        std::pair{s.argument->type, std::max<std::uint8_t>(s.argument->bytes, 4)};
                }
                binder.use = "it cannot be an associative array key";
                s.target = binder.bind(*statement.target);
                s.compound = statement.compound;
                s.op = statement.op;
                if (s.compound && (s.target->type != ValueType::Integer ||
                                   s.argument->type != ValueType::Integer)) {
                    throw ProgramError(statement.at, "a compound assignment needs integers");
                }
                if (!s.compound) {
                    binder.assigned(*s.target, *s.argument, statement.at);
                    s.target->type = s.argument->type;
                }
                bound.statements.push_back(std::move(s));
                continue;
            }
            if (statement.kind == Statement::Kind::Action) {
                s.action = statement.action;
                s.format = statement.hasFormat ? &statement.format : nullptr;
                bound.prints = true;
                for (std::size_t i = 0; i < statement.arguments.size(); ++i) {
                    const Expression& a = *statement.arguments[i];
                    if (a.kind == Expression::Kind::Aggregation) {
                        s.aggregations.push_back(a.variable);
                        continue;
                    }
                    // The format is argument #1, as dtrace(1) counts.
                    binder.use = "it cannot be " + std::string(actionName(statement.action)) +
                                 "() argument #" +
                                 std::to_string(i + (statement.hasFormat ? 2 : 1));
                    // The action stack() takes its own call, as a key takes it.
                    binder.bindingKey = statement.action == Action::Stack;
                    s.arguments.push_back(binder.bind(a));
                    binder.bindingKey = false;
                }
                checkAction(statement, s, name);
                bound.statements.push_back(std::move(s));
                continue;
            }
            binder.use = "it cannot be an aggregation key";
            binder.bindingKey = true;
            for (const auto& key : statement.keys) {
                s.keys.push_back(binder.bind(*key));
                s.keyBytes.push_back(s.keys.back().type == ValueType::String &&
                                             s.keys.back().bytes != 0
                                         ? 8
                                         : s.keys.back().bytes);
            }
            binder.bindingKey = false;
            if (statement.argument) {
                binder.use = "it cannot be " +
                             std::string(functionName(
                                 program_.aggregations[statement.aggregation].function)) +
                             "() argument";
                s.argument = binder.bind(*statement.argument);
                if (s.argument->type != ValueType::Integer) {
                    const Function f = program_.aggregations[statement.aggregation].function;
                    throw ProgramError(statement.argument->at,
                                       std::string(functionName(f)) +
                                           "() needs an integer argument, not a string (in "
                                           "event class '" +
                                           name + "')");
                }
            }
            s.keys.shrink_to_fit();
            bound.statements.push_back(std::move(s));
        }
        if (binder.usesSelf) {
            ClauseBinder tid(eventClass, slots, program_, variableTypes_);
            if (!tid.resolve("tid")) {
                throw ProgramError(clause.probes.front().at,
                                   "self-> variables need the thread id of each event record, "
                                   "and event class '" +
                                       name + "' has no tid/vtid context field");
            }
            Expression e;
            e.kind = Expression::Kind::Identifier;
            e.text = "tid";
            bound.tidSlot = tid.bind(e).slot;
        }
        if (bound.prints) {
            ClauseBinder cpu(eventClass, slots, program_, variableTypes_);
            if (cpu.resolve("cpu")) {
                Expression e;
                e.kind = Expression::Kind::Identifier;
                e.text = "cpu";
                bound.cpuSlot = cpu.bind(e).slot;
            }
        }
        result.slots = std::move(slots);
        result.clauses.push_back(std::move(bound));
    }
    return result;
}

void Binder::checkAction(const Statement& statement, const BoundStatement& bound,
                         const std::string& eventClass) const {
    const auto integer = [&](const BoundExpression& e, const std::string& what) {
        if (e.type != ValueType::Integer) {
            throw ProgramError(e.at,
                               what + " must be an integer (in event class '" + eventClass + "')");
        }
    };
    switch (statement.action) {
    case Action::Printf: {
        std::size_t a = 0;
        for (const Conversion& c : statement.format.pieces) {
            if (c.conversion == 0 || c.conversion == '%') {
                continue;
            }
            const BoundExpression& e = bound.arguments[a++];
            const bool string = c.conversion == 's' || c.conversion == 'S';
            if ((e.type == ValueType::String) != string) {
                throw ProgramError(
                    e.at, "printf() argument #" + std::to_string(a + 1) + " is " +
                              (e.type == ValueType::String ? "a string" : "an integer") +
                              ": it does not fit conversion %" + std::string(1, c.conversion) +
                              " (in event class '" + eventClass + "')");
            }
        }
        break;
    }
    case Action::Printa:
        if (statement.hasFormat) {
            if (bound.aggregations.size() != 1) {
                throw ProgramError(statement.at, "printa() with a format takes one "
                                                 "aggregation here");
            }
            const auto& d = program_.aggregations[bound.aggregations.front()];
            if (statement.format.argumentCount() > d.keyCount) {
                throw ProgramError(statement.at,
                                   "printa() format has " +
                                       std::to_string(statement.format.argumentCount()) +
                                       " key conversion(s) but @" + d.name + " has " +
                                       std::to_string(d.keyCount) + " key(s)");
            }
        }
        break;
    case Action::Exit:
        integer(bound.arguments.front(), "exit()'s status");
        break;
    case Action::Trunc:
    case Action::Normalize:
        if (!bound.arguments.empty()) {
            integer(bound.arguments.front(),
                    std::string(statement.action == Action::Trunc ? "trunc()'s number of entries"
                                                                  : "normalize()'s factor"));
        }
        break;
    default:
        break;
    }
}

void Binder::checkReferences() const {
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
                const FieldReference& reference = clause.references[r];
                const std::string& name = reference.name;
                if (name == "callstack_kernel" || name == "callstack_user") {
                    const std::string call = !reference.call.empty()    ? reference.call
                                             : name == "callstack_user" ? std::string("ustack()")
                                                                        : std::string("stack()");
                    throw ProgramError(
                        reference.at,
                        call + " needs the " +
                            (name == "callstack_user" ? "callstack-user" : "callstack-kernel") +
                            " context: no event record matched by " + probes + " has it");
                }
                throw ProgramError(clause.references[r].at, "unknown field '" + name +
                                                                "': no event record matched by " +
                                                                probes + " has it");
            }
        }
    }
}

std::vector<std::string> Binder::matchedEventClasses() const {
    std::vector<std::string> names;
    for (const auto& [name, domain] : matchedClasses_) {
        names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
}

std::vector<ProbeNames> Binder::matchedProbes() const {
    auto classes = matchedClasses_;
    std::sort(classes.begin(), classes.end());
    std::vector<ProbeNames> probes;
    for (const auto& [name, domain] : classes) {
        probes.push_back(probeNames(name, domain));
    }
    return probes;
}

std::vector<std::string> Binder::unmatchedProbes() const {
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
