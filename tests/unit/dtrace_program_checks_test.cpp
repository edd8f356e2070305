// What D's compiler refuses before anything runs (aggregate/program_checks.hpp): a stack
// anywhere but as a whole aggregation key or the action, at parse time; the fields a
// clause reads that none of its probes records, from the probe descriptions.
#include "aggregate/parser.hpp"
#include "aggregate/program_checks.hpp"

#include <gtest/gtest.h>

namespace tracectl::aggregate {
namespace {

Macros target() {
    Macros m;
    m.target = 42;
    return m;
}

/// The error parse_program throws for `source`, or "accepted".
std::string parseError(const std::string& source) {
    try {
        parseProgram(source, target());
    } catch (const ProgramError& e) {
        return e.what();
    }
    return "accepted";
}

/// The error check_probe_fields throws for `source`, whose trace event probes named `ust`
/// are LTTng-UST's, or "accepted".
std::string fieldsError(const std::string& source, const std::string& ust = "app:*") {
    const Program program = parseProgram(source, target());
    try {
        checkProbeFields(program, [&](const ProbeDescription& p) { return p.pattern != ust; });
    } catch (const ProgramError& e) {
        return e.what();
    }
    return "accepted";
}

} // namespace

TEST(DtraceProgramChecks, StacksAreTakenAsWholeKeysAndAsTheActionOnly) {
    EXPECT_EQ(parseError("a:b { @[ustack(), stack(3)] = count(); ustack(); stack(5); }"),
              "accepted");
    const std::string only = "ustack() is only taken as an aggregation key (@[ustack()] = "
                             "count()) or as an action (ustack();): ";
    EXPECT_EQ(parseError("a:b { printf(\"%s\", ustack()); }"),
              "1:20: " + only + "it cannot be printf() argument #2");
    EXPECT_EQ(parseError("a:b { trace(ustack() + 1); }"),
              "1:13: " + only + "it cannot be trace() argument #1");
    EXPECT_EQ(parseError("a:b { x = ustack(); }"),
              "1:11: " + only + "it cannot be assigned to a variable");
    EXPECT_EQ(parseError("a:b { x[ustack()] = 1; }"),
              "1:9: " + only + "it cannot be an associative array key");
    EXPECT_EQ(parseError("a:b /ustack() == 0/ { }"),
              "1:6: " + only + "it cannot be used in a predicate");
    EXPECT_EQ(parseError("a:b { @ = sum(ustack()); }"),
              "1:15: " + only + "it cannot be sum() argument");
    EXPECT_EQ(parseError("a:b { @[strlen(ustack())] = count(); }"),
              "1:16: " + only + "it cannot be strlen() argument #1");
    EXPECT_EQ(parseError("a:b { @[x ? ustack() : 1] = count(); }"),
              "1:13: " + only + "it cannot be part of an aggregation key, only a whole one");
    // Each call is printed back as written.
    EXPECT_EQ(parseError("a:b { printf(\"%s\", ustack(5)); }"),
              "1:20: ustack(5) is only taken as an aggregation key (@[ustack(5)] = count()) or "
              "as an action (ustack(5);): it cannot be printf() argument #2");
    EXPECT_EQ(parseError("a:b { trace(stack() + 1); }"),
              "1:13: stack() is only taken as an aggregation key (@[stack()] = count()) or as an "
              "action (stack();): it cannot be trace() argument #1");
}

TEST(DtraceProgramChecks, StacksOfProbesThatRecordNoneAreRefused) {
    // Kernel events and probes of processes record them; LTTng-UST events and dtrace's
    // own probes do not.
    EXPECT_EQ(fieldsError("sched:sched_switch, app:* { @[stack()] = count(); }"), "accepted");
    EXPECT_EQ(fieldsError("pid$target::f:entry { ustack(); }"), "accepted");
    EXPECT_EQ(fieldsError("app:* { @[ustack()] = count(); }"),
              "1:11: ustack() needs the callstack-user context, which only kernel events "
              "record: app:* names LTTng-UST events, which have no call stack context");
    EXPECT_EQ(fieldsError("BEGIN, app:* { stack(); }"),
              "1:16: stack() needs the callstack-kernel context, which only kernel events "
              "record: BEGIN is a probe of dtrace's own, with no fields; app:* names "
              "LTTng-UST events, which have no call stack context");
    EXPECT_EQ(fieldsError("app:* { @[ustack(7)] = count(); }"),
              "1:11: ustack(7) needs the callstack-user context, which only kernel events "
              "record: app:* names LTTng-UST events, which have no call stack context");
}

TEST(DtraceProgramChecks, ArgumentsOfProbesThatRecordNoneAreRefused) {
    EXPECT_EQ(fieldsError("pid$target::f:entry { @[arg0, arg5] = count(); }"), "accepted");
    EXPECT_EQ(fieldsError("pid$target::f:return { @[arg1] = count(); }"), "accepted");
    EXPECT_EQ(fieldsError("pid$target::f:return, pid$target::f:entry { @[arg0] = count(); }"),
              "accepted");
    EXPECT_EQ(fieldsError("pid$target::f:return, sched:sched_switch { @[arg0] = count(); }"),
              "accepted")
        << "a tracepoint's fields are its format's";
    EXPECT_EQ(fieldsError("p$target:::tick { @[arg9] = count(); }"), "accepted")
        << "a USDT probe's are its note's";
    EXPECT_EQ(fieldsError("pid$target::f:return { @[arg0] = count(); }"),
              "1:26: arg0 is recorded by no probe of its clause: pid42::f:return records "
              "arg1 only, the return value (dtrace's arg0 of a return, its offset, is not "
              "recorded)");
    EXPECT_EQ(fieldsError("pid$target::f:entry { trace(arg6); }"),
              "1:29: arg6 is recorded by no probe of its clause: pid42::f:entry records "
              "arg0 to arg5");
    EXPECT_EQ(fieldsError("END { trace(arg0); }"),
              "1:13: arg0 is recorded by no probe of its clause: END is a probe of dtrace's "
              "own, with no fields");
}

} // namespace tracectl::aggregate
