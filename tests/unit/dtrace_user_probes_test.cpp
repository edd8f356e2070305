// D's probes of a process (aggregate/user_probes.hpp): how pid$target::f:entry,
// pid$target::f:return and PROVIDER$target:::NAME parse (macros expanded in the
// description), the events and userspace probe locations they stand for, and how the
// binder reads their arguments (arg1 of a return is the return value) and counts only
// the target process's records.
#include "aggregate/binding.hpp"
#include "aggregate/evaluation.hpp"
#include "aggregate/parser.hpp"
#include "aggregate/user_probes.hpp"
#include "aggregate_test_support.hpp"

#include <gtest/gtest.h>
#include <string>

namespace tracectl::aggregate {
namespace {

using testing::TableEventClass;

Macros target(std::int64_t pid) {
    Macros m;
    m.target = pid;
    return m;
}

std::string errorOf(const std::string& source, const Macros& macros) {
    try {
        parseProgram(source, macros);
    } catch (const ProgramError& e) {
        return e.what();
    }
    return "";
}

TEST(DtraceUserProbes, PidProviderEntryAndReturnWithTarget) {
    const Program p = parseProgram("pid$target::work:entry, pid$target:a.out:work:return "
                                   "{ @ = count(); }",
                                   target(4242));
    ASSERT_EQ(p.clauses[0].probes.size(), 2u);
    const ProbeDescription& entry = p.clauses[0].probes[0];
    EXPECT_EQ(entry.text, "pid4242::work:entry") << "$target expanded";
    ASSERT_TRUE(entry.user);
    EXPECT_EQ(entry.user->kind, UserProbe::Kind::Entry);
    EXPECT_EQ(entry.user->pid, 4242);
    EXPECT_EQ(entry.user->provider, "pid");
    EXPECT_EQ(entry.user->function, "work");
    EXPECT_EQ(entry.pattern, "pid4242_work_entry");
    const ProbeDescription& ret = p.clauses[0].probes[1];
    ASSERT_TRUE(ret.user);
    EXPECT_EQ(ret.user->kind, UserProbe::Kind::Return);
    EXPECT_EQ(ret.user->module, "a.out");
    EXPECT_EQ(ret.pattern, "pid4242_work_return");
    EXPECT_EQ(userProbeLocation(*entry.user, "/usr/bin/my:app"), "elf:/usr/bin/my\\:app:work%args");
    EXPECT_EQ(userProbeLocation(*ret.user, "/bin/app"), "elf:/bin/app:work%return");
    EXPECT_EQ(userProbeLabel(*entry.user), "work:entry");
    // A literal process id works too, without -c or -p.
    const Program literal = parseProgram("pid17::f:entry { @ = count(); }");
    ASSERT_TRUE(literal.clauses[0].probes[0].user);
    EXPECT_EQ(literal.clauses[0].probes[0].user->pid, 17);
}

TEST(DtraceUserProbes, UsdtProviderOfTheTargetOnly) {
    const Program p =
        parseProgram("tracectl_test$target:::tick { @[arg0] = count(); }", target(99));
    const ProbeDescription& usdt = p.clauses[0].probes[0];
    ASSERT_TRUE(usdt.user);
    EXPECT_EQ(usdt.user->kind, UserProbe::Kind::Usdt);
    EXPECT_EQ(usdt.user->provider, "tracectl_test");
    EXPECT_EQ(usdt.user->name, "tick");
    EXPECT_EQ(usdt.pattern, "tracectl_test99_tick");
    EXPECT_EQ(userProbeLocation(*usdt.user, "/bin/app"), "sdt:/bin/app:tracectl_test:tick");
    // An LTTng-UST provider whose name ends in digits other than $target's stays an event.
    const Program ust = parseProgram("app2:::event { @ = count(); }", target(99));
    EXPECT_FALSE(ust.clauses[0].probes[0].user);
    EXPECT_EQ(ust.clauses[0].probes[0].pattern, "app2:event");
    const Program none = parseProgram("app2:::event { @ = count(); }");
    EXPECT_FALSE(none.clauses[0].probes[0].user);
    // A provider whose own name ends in a digit: only $target's digits are the process's.
    const Program python =
        parseProgram("python3$target:::function__entry { @ = count(); }", target(77));
    ASSERT_TRUE(python.clauses[0].probes[0].user);
    EXPECT_EQ(python.clauses[0].probes[0].user->provider, "python3");
    EXPECT_EQ(python.clauses[0].probes[0].user->pid, 77);
}

TEST(DtraceUserProbes, EventNamesAreIdentifiersOfAtMost64Bytes) {
    UserProbe p;
    p.pid = 12;
    p.provider = "pid";
    p.function = "foo.isra.0";
    p.name = "entry";
    EXPECT_EQ(userProbeEvent(p), "pid12_foo_isra_0_entry");
    p.function = std::string(100, 'f');
    const std::string longName = userProbeEvent(p);
    EXPECT_EQ(longName.size(), 64u);
    p.function = std::string(99, 'f') + "g";
    EXPECT_NE(userProbeEvent(p), longName) << "a hash of the whole name ends it";
}

TEST(DtraceUserProbes, Refusals) {
    EXPECT_EQ(errorOf("pid$target::work:entry { @ = count(); }", {}),
              "1:1: $target is undefined: give -c COMMAND or -p PID");
    EXPECT_EQ(errorOf("pid$target::work:4 { @ = count(); }", target(5)),
              "1:1: probe description 'pid5::work:4': the pid provider's probes are entry and "
              "return (instruction offsets are not offered)");
    EXPECT_EQ(errorOf("pid$target::wo*:entry { @ = count(); }", target(5)),
              "1:1: probe description 'pid5::wo*:entry': the pid provider needs one function's "
              "name (no wildcards), as in pid$target::malloc:entry");
    EXPECT_EQ(errorOf("pid$target:::entry { @ = count(); }", target(5)),
              "1:1: probe description 'pid5:::entry': the pid provider needs one function's "
              "name (no wildcards), as in pid$target::malloc:entry");
    EXPECT_EQ(errorOf("p$target::f:tick { @ = count(); }", target(5)),
              "1:1: probe description 'p5::f:tick': a USDT probe is named by its provider and "
              "name (PROVIDER$target:::NAME); leave the function empty");
    EXPECT_EQ(errorOf("p$target:::ti* { @ = count(); }", target(5)),
              "1:1: probe description 'p5:::ti*': give the USDT probe's name (no wildcards)");
    EXPECT_EQ(errorOf("pid0::f:entry { @ = count(); }", {}),
              "1:1: probe description 'pid0::f:entry': 0 is no process id");
    EXPECT_EQ(errorOf("pid$nope::f:entry { @ = count(); }", target(5)),
              "1:1: probe description 'pid$nope::f:entry': unknown macro variable '$nope' "
              "($target, $1..)");
}

/// An event class as the kernel consumer records a userspace probe: payload ip and the
/// fetched fields, the pid context the live run adds.
TableEventClass probeClass(const std::string& name, std::vector<std::string> payload) {
    std::vector<TableEventClass::Field> fields{
        {"ip", FieldScope::Payload, FieldKind::UnsignedInteger}};
    for (const std::string& f : payload) {
        fields.push_back({f, FieldScope::Payload, FieldKind::SignedInteger});
    }
    fields.push_back({"pid", FieldScope::CommonContext, FieldKind::SignedInteger, 4});
    return TableEventClass(name, "kernel", fields);
}

TEST(DtraceUserProbes, OnlyTheProcessCountsAndArgumentsAreTheFetchedFields) {
    const Program p = parseProgram("pid$target::work:entry /arg0 > 1/ { @a = sum(arg1); } "
                                   "pid$target::work:return { @r = sum(arg1); }",
                                   target(300));
    Binder binder(p);
    const TableEventClass entry =
        probeClass("pid300_work_entry", {"arg0", "arg1", "arg2", "arg3", "arg4", "arg5"});
    const BoundEventClass bound = binder.bind(entry);
    ASSERT_EQ(bound.clauses.size(), 1u);
    EXPECT_EQ(bound.label, "work:entry");
    const auto passes = [&](const BoundEventClass& b, const TableEventClass& c,
                            const std::map<std::string, std::int64_t>& values) {
        const std::vector<Value> slots = c.slots(b, values, {});
        Value v;
        EXPECT_TRUE(evaluate(*b.clauses[0].predicate, slots.data(), v));
        return v.integer != 0;
    };
    std::map<std::string, std::int64_t> record{{"ip", 1},   {"arg0", 2}, {"arg1", 3}, {"arg2", 0},
                                               {"arg3", 0}, {"arg4", 0}, {"arg5", 0}, {"pid", 300}};
    EXPECT_TRUE(passes(bound, entry, record));
    record["pid"] = 301;
    EXPECT_FALSE(passes(bound, entry, record)) << "another process of the same executable";
    record["pid"] = 300;
    record["arg0"] = 1;
    EXPECT_FALSE(passes(bound, entry, record)) << "the clause's own predicate still holds";

    const TableEventClass ret = probeClass("pid300_work_return", {"ret"});
    const BoundEventClass boundRet = binder.bind(ret);
    ASSERT_EQ(boundRet.clauses.size(), 1u);
    ASSERT_TRUE(boundRet.clauses[0].statements[0].argument);
    const std::vector<Value> slots =
        ret.slots(boundRet, {{"ip", 5}, {"ret", 42}, {"pid", 300}}, {});
    Value v;
    ASSERT_TRUE(evaluate(*boundRet.clauses[0].statements[0].argument, slots.data(), v));
    EXPECT_EQ(v.integer, 42) << "arg1 of a return is the return value";
    EXPECT_TRUE(passes(boundRet, ret, {{"ip", 5}, {"ret", 42}, {"pid", 300}}));
    EXPECT_FALSE(passes(boundRet, ret, {{"ip", 5}, {"ret", 42}, {"pid", 7}}));
}

TEST(DtraceUserProbes, ReturnHasNoArg0AndNoPidIsRefused) {
    // dtrace's arg0 of a return (its offset) is not recorded: not the payload's ip.
    const Program p = parseProgram("pid$target::work:return { @ = sum(arg0); }", target(8));
    Binder binder(p);
    const BoundEventClass bound = binder.bind(probeClass("pid8_work_return", {"ret"}));
    EXPECT_TRUE(bound.clauses.empty());
    EXPECT_THROW(binder.checkReferences(), ProgramError);
    // A record without a process id cannot be told apart.
    const Program q = parseProgram("pid$target::work:entry { @ = count(); }", target(8));
    Binder noPid(q);
    EXPECT_THROW(
        noPid.bind(TableEventClass("pid8_work_entry", "kernel",
                                   {{"ip", FieldScope::Payload, FieldKind::UnsignedInteger}})),
        ProgramError);
}

} // namespace
} // namespace tracectl::aggregate
