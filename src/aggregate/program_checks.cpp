#include "aggregate/program_checks.hpp"

#include <algorithm>
#include <string>

namespace tracectl::aggregate {

namespace {

bool isStackCall(const Expression& e) {
    return e.kind == Expression::Kind::Call && (e.text == "stack" || e.text == "ustack");
}

/// Refuses a stack call in `e`, which is used as `use` says ("it cannot be ...").
void noStackIn(const Expression& e, const std::string& use) {
    if (isStackCall(e)) {
        // The call as written (stack(), ustack(5)).
        throw ProgramError(e.at, e.written + " is only taken as an aggregation key (@[" +
                                     e.written + "] = count()) or as an action (" + e.written +
                                     ";): " + use);
    }
    if (e.kind == Expression::Kind::Call) {
        for (std::size_t i = 0; i < e.arguments.size(); ++i) {
            noStackIn(*e.arguments[i],
                      "it cannot be " + e.text + "() argument #" + std::to_string(i + 1));
        }
        return;
    }
    for (const auto* child : {e.left.get(), e.right.get(), e.third.get()}) {
        if (child != nullptr) {
            noStackIn(*child, use);
        }
    }
    for (const auto& argument : e.arguments) {
        noStackIn(*argument, use);
    }
}

} // namespace

void checkStackPlacement(const Program& program) {
    for (const Clause& clause : program.clauses) {
        if (clause.predicate) {
            noStackIn(*clause.predicate, "it cannot be used in a predicate");
        }
        for (const Statement& s : clause.statements) {
            switch (s.kind) {
            case Statement::Kind::Aggregate:
                for (const auto& key : s.keys) {
                    if (!isStackCall(*key)) {
                        noStackIn(*key, "it cannot be part of an aggregation key, only a whole "
                                        "one");
                    }
                }
                if (s.argument) {
                    noStackIn(*s.argument, "it cannot be " +
                                               std::string(functionName(
                                                   program.aggregations[s.aggregation].function)) +
                                               "() argument");
                }
                break;
            case Statement::Kind::Assign:
                noStackIn(*s.argument, "it cannot be assigned to a variable");
                for (const auto& key : s.target->arguments) {
                    noStackIn(*key, "it cannot be an associative array key");
                }
                break;
            case Statement::Kind::Action:
                if (s.action == Action::Stack) {
                    break; // its one argument is its own call
                }
                for (std::size_t i = 0; i < s.arguments.size(); ++i) {
                    noStackIn(*s.arguments[i], "it cannot be " + std::string(actionName(s.action)) +
                                                   "() argument #" +
                                                   std::to_string(i + (s.hasFormat ? 2 : 1)));
                }
                break;
            }
        }
    }
}

namespace {

/// argN's N, or -1 for another name.
int argumentNumber(const FieldReference& r) {
    const std::string& n = r.name;
    if (r.payload || n.size() != 4 || n.rfind("arg", 0) != 0 || n[3] < '0' || n[3] > '9') {
        return -1;
    }
    return n[3] - '0';
}

/// Why `probe` records no `field` (a call stack or argN), or "" if it may record it.
std::string lacks(const ProbeDescription& probe, const FieldReference& field,
                  const std::function<bool(const ProbeDescription&)>& recordsKernel) {
    if (probe.kind != ProbeKind::Event) {
        return probe.text + " is a probe of dtrace's own, with no fields";
    }
    const int n = argumentNumber(field);
    if (n < 0) { // a call stack
        if (probe.user || recordsKernel(probe)) {
            return "";
        }
        return probe.text + " names LTTng-UST events, which have no call stack context";
    }
    if (!probe.user) {
        return "";
    }
    switch (probe.user->kind) {
    case UserProbe::Kind::Entry:
        return n < 6 ? "" : probe.text + " records arg0 to arg5";
    case UserProbe::Kind::Return:
        return n == 1 ? ""
                      : probe.text + " records arg1 only, the return value (dtrace's arg0 of "
                                     "a return, its offset, is not recorded)";
    case UserProbe::Kind::Usdt:
        return ""; // as many as the probe's note says
    }
    return "";
}

} // namespace

void checkProbeFields(const Program& program,
                      const std::function<bool(const ProbeDescription&)>& recordsKernel) {
    for (const Clause& clause : program.clauses) {
        for (const FieldReference& r : clause.references) {
            const bool stack =
                !r.payload && (r.name == "callstack_kernel" || r.name == "callstack_user");
            if (!stack && argumentNumber(r) < 0) {
                continue;
            }
            std::string why;
            for (const ProbeDescription& probe : clause.probes) {
                const std::string reason = lacks(probe, r, recordsKernel);
                if (reason.empty()) {
                    why.clear();
                    break;
                }
                why += (why.empty() ? "" : "; ") + reason;
            }
            if (why.empty()) {
                continue;
            }
            if (stack) {
                const bool user = r.name == "callstack_user";
                const std::string call = !r.call.empty() ? r.call : user ? "ustack()" : "stack()";
                throw ProgramError(r.at, call + " needs the " +
                                             (user ? "callstack-user" : "callstack-kernel") +
                                             " context, which only kernel events record: " + why);
            }
            throw ProgramError(r.at, r.name + " is recorded by no probe of its clause: " + why);
        }
    }
}

} // namespace tracectl::aggregate
