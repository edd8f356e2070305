// Binding, evaluation, and the two outputs of tracectl aggregate: dtrace(1)'s text layout
// (the expected strings are DTrace's own output, as in Oracle dtrace-utils'
// test/unittest/aggs/*.r) and the JSON document.
#include "aggregate/json_output.hpp"
#include "aggregate/text_output.hpp"
#include "aggregate_test_support.hpp"

#include <gtest/gtest.h>
#include <sstream>

namespace tracectl::aggregate {
namespace {

using testing::TableEventClass;

const TableEventClass tick{"tracectl_demo:tick",
                           "ust",
                           {{"seq", FieldScope::Payload, FieldKind::UnsignedInteger},
                            {"text", FieldScope::Payload, FieldKind::String},
                            {"triple", FieldScope::Payload, FieldKind::Unusable},
                            {"vpid", FieldScope::CommonContext, FieldKind::SignedInteger},
                            {"procname", FieldScope::CommonContext, FieldKind::String},
                            {"cpu_id", FieldScope::PacketContext, FieldKind::UnsignedInteger}}};

/// Runs `source` on the records `values` (seq, text) of `tick`.
struct Runner {
    Program program;
    AggregationSet set;
    Binder binder;
    BoundEventClass bound;
    explicit Runner(const std::string& source)
        : program(parseProgram(source)), set(program), binder(program), bound(binder.bind(tick)) {}
    void record(std::int64_t seq, const std::string& text = "alpha") {
        // The slots view these strings: they must outlive execute().
        const std::map<std::string, std::string> strings{{"text", text}, {"procname", "demo"}};
        const auto slots = tick.slots(bound, {{"seq", seq}, {"vpid", 42}, {"cpu_id", 1}}, strings);
        execute(bound, slots.data(), set);
    }
    std::string text() const {
        std::ostringstream out;
        printText(out, set);
        return out.str();
    }
};

ProgramError bindError(const std::string& source, const EventClassView& eventClass = tick) {
    const Program program = parseProgram(source);
    Binder binder(program);
    try {
        binder.bind(eventClass);
        binder.checkReferences();
    } catch (const ProgramError& e) {
        return e;
    }
    ADD_FAILURE() << "bound: " << source;
    return ProgramError({0, 0}, "");
}

TEST(AggregateBinding, ProbeMatching) {
    EXPECT_TRUE(probeMatches("tracectl_demo:tick", "tracectl_demo:tick", "ust"));
    EXPECT_TRUE(probeMatches("tracectl_demo:*", "tracectl_demo:tick", "ust"));
    EXPECT_TRUE(probeMatches("tracectl_demo:t?ck", "tracectl_demo:tick", "ust"));
    EXPECT_FALSE(probeMatches("tracectl_demo:done", "tracectl_demo:tick", "ust"));
    EXPECT_TRUE(probeMatches("sched:sched_switch", "sched_switch", "kernel"));
    EXPECT_FALSE(probeMatches("sched:sched_switch", "sched_switch", "ust"));
    EXPECT_TRUE(probeMatches("sched:*", "sched_wakeup", "kernel"));
    EXPECT_FALSE(probeMatches("sched:*", "syscall_entry_write", "kernel"));
    EXPECT_TRUE(probeMatches("sched_*", "sched_switch", "kernel"));
    EXPECT_TRUE(probeMatches("ip:send", "ip:send", "kernel"));
    EXPECT_TRUE(probeMatches("*:*", "ip:send", "kernel"));
    // *:* and *:E match kernel events as S:E does (sched_switch is sched:sched_switch).
    EXPECT_TRUE(probeMatches("*:*", "sched_switch", "kernel"));
    EXPECT_TRUE(probeMatches("*:*", "lttnglogger", "kernel"));
    EXPECT_TRUE(probeMatches("*:sched_*", "sched_switch", "kernel"));
    EXPECT_TRUE(probeMatches("*:sched_switch", "sched_switch", "kernel"));
    EXPECT_FALSE(probeMatches("*:sched_*", "irq_handler_entry", "kernel"));
    EXPECT_TRUE(probeMatches("s*:*", "sched_switch", "kernel"));
    EXPECT_FALSE(probeMatches("s*:*", "irq_handler_entry", "kernel"));
    EXPECT_FALSE(probeMatches("*:*", "sched_switch", "ust"));
    // Events lttng-modules renames are matched by ftrace's system:event too.
    EXPECT_TRUE(probeMatches("irq:softirq_entry", "irq_softirq_entry", "kernel"));
    EXPECT_TRUE(probeMatches("kmem:kmalloc", "kmem_kmalloc", "kernel"));
    EXPECT_TRUE(probeMatches("net:netif_receive_skb", "net_if_receive_skb", "kernel"));
    EXPECT_TRUE(probeMatches("irq:softirq_*", "irq_softirq_raise", "kernel"));
    EXPECT_TRUE(probeMatches("kmem:mm_page_*", "kmem_mm_page_alloc", "kernel"));
    EXPECT_FALSE(probeMatches("irq:softirq_entry", "irq_softirq_exit", "kernel"));
    EXPECT_FALSE(probeMatches("irq:softirq_*", "irq_handler_entry", "kernel"));
    EXPECT_FALSE(probeMatches("irq:softirq_entry", "irq_softirq_entry", "ust"));
}

TEST(AggregateBinding, UnknownFieldAtItsPosition) {
    EXPECT_STREQ(bindError("tracectl_demo:tick { @[sequence] = count(); }").what(),
                 "1:24: unknown field 'sequence': no event record matched by "
                 "tracectl_demo:tick has it");
    // A clause that matches nothing has nothing to say about its fields.
    const Program p = parseProgram("other:event { @[nope] = count(); }");
    Binder b(p);
    EXPECT_TRUE(b.bind(tick).clauses.empty());
    EXPECT_NO_THROW(b.checkReferences());
    EXPECT_EQ(b.unmatchedProbes(), std::vector<std::string>{"other:event"});
}

TEST(AggregateBinding, TypeMismatches) {
    EXPECT_STREQ(bindError("tracectl_demo:tick { @ = quantize(text); }").what(),
                 "1:35: quantize() needs an integer argument, not a string (in event class "
                 "'tracectl_demo:tick')");
    EXPECT_STREQ(bindError("tracectl_demo:tick { @ = sum(text); }").what(),
                 "1:30: sum() needs an integer argument, not a string (in event class "
                 "'tracectl_demo:tick')");
    EXPECT_STREQ(bindError("tracectl_demo:tick /text == 1/ { @ = count(); }").what(),
                 "1:26: operator == compares a string with an integer (in event class "
                 "'tracectl_demo:tick')");
    EXPECT_STREQ(bindError("tracectl_demo:tick { @ = sum(seq + text); }").what(),
                 "1:36: operator + needs an integer operand, not a string (in event class "
                 "'tracectl_demo:tick')");
    EXPECT_STREQ(bindError("tracectl_demo:tick { @[triple] = count(); }").what(),
                 "1:24: field 'triple' of event class 'tracectl_demo:tick' is neither an "
                 "integer nor a string: it cannot be an aggregation key");
    // The message names the use of the field.
    const std::string unusable =
        "field 'triple' of event class 'tracectl_demo:tick' is neither an integer nor a string: ";
    EXPECT_EQ(bindError("tracectl_demo:tick { printf(\"%d\", triple); }").what(),
              "1:35: " + unusable + "it cannot be printf() argument #2");
    EXPECT_EQ(bindError("tracectl_demo:tick { trace(triple); }").what(),
              "1:28: " + unusable + "it cannot be trace() argument #1");
    EXPECT_EQ(bindError("tracectl_demo:tick /triple/ { @ = count(); }").what(),
              "1:21: " + unusable + "it cannot be used in a predicate");
    EXPECT_EQ(bindError("tracectl_demo:tick { x = triple; }").what(),
              "1:26: " + unusable + "it cannot be assigned to a variable");
    EXPECT_EQ(bindError("tracectl_demo:tick { a[triple] = 1; }").what(),
              "1:24: " + unusable + "it cannot be an associative array key");
    EXPECT_EQ(bindError("tracectl_demo:tick { @ = max(triple); }").what(),
              "1:30: " + unusable + "it cannot be max() argument");
    EXPECT_EQ(bindError("tracectl_demo:tick { @[strjoin(text, triple)] = count(); }").what(),
              "1:38: " + unusable + "it cannot be strjoin() argument #2");
}

TEST(AggregateBinding, BuiltinsReadContextFields) {
    Runner r("tracectl_demo:tick { @[pid, execname, cpu] = count(); }");
    EXPECT_EQ(r.bound.slots.size(), 3u);
    r.record(1);
    const auto entries = r.set.sorted(0);
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(*entries[0].key, (Key{std::int64_t{42}, std::string("demo"), std::int64_t{1}}));
}

// issue 40 (B12): a payload member named like a built-in (sched_wakeup's `pid`, the woken
// thread) was out of reach: `pid` is the built-in, and `args[0]->pid` and `_pid` were
// "unknown field". args[N]->member is the payload's member; `_member` (lttng-modules'
// spelling in TSDL) too.
TEST(AggregateBinding, APayloadMemberNamedLikeABuiltinIsReachedThroughArgs) {
    const TableEventClass wakeup{
        "sched_wakeup",
        "kernel",
        {{"comm", FieldScope::Payload, FieldKind::String},
         {"pid", FieldScope::Payload, FieldKind::SignedInteger, 4},
         {"tid", FieldScope::CommonContext, FieldKind::SignedInteger, 4},
         {"pid", FieldScope::CommonContext, FieldKind::SignedInteger, 4},
         {"cpu_id", FieldScope::PacketContext, FieldKind::UnsignedInteger}}};
    for (const char* source : {"sched_wakeup { @[args[0]->pid, pid] = count(); }",
                               "sched_wakeup { @[_pid, pid] = count(); }"}) {
        const Program program = parseProgram(source);
        Binder binder(program);
        const BoundEventClass bound = binder.bind(wakeup);
        binder.checkReferences();
        // The payload's pid (the woken thread) and the context's (the waker): two slots.
        ASSERT_EQ(bound.slots.size(), 2u) << source;
        EXPECT_EQ(bound.slots[0].scope, FieldScope::Payload) << source;
        EXPECT_EQ(bound.slots[1].scope, FieldScope::CommonContext) << source;
    }
    EXPECT_NE(
        bindError("tracectl_demo:tick { @[args[0]->nosuch] = count(); }").message().find("nosuch"),
        std::string::npos);
    // A payload member is reached through args[] whatever its name.
    Runner r("tracectl_demo:tick { @[args[0]->seq] = count(); }");
    r.record(5);
    ASSERT_EQ(r.set.sorted(0).size(), 1u);
    EXPECT_EQ(*r.set.sorted(0)[0].key, (Key{std::int64_t{5}}));
}

TEST(AggregateEvaluation, PredicatesAndArithmetic) {
    Runner r("tracectl_demo:tick /seq % 2 == 0 && !(seq > 6) || text == \"zeta\"/ {\n"
             "  @[seq / 2 * 3 - 1] = count(); }");
    for (std::int64_t s = 0; s < 10; ++s) {
        r.record(s, s == 9 ? "zeta" : "alpha");
    }
    std::vector<std::int64_t> keys;
    for (const auto& e : r.set.sorted(0)) {
        keys.push_back(std::get<std::int64_t>((*e.key)[0]));
    }
    // seq 0, 2, 4, 6 and 9 ("zeta"): 0/2*3-1 = -1, 2, 5, 8, 9/2*3-1 = 11
    EXPECT_EQ(keys, (std::vector<std::int64_t>{-1, 2, 5, 8, 11}));
}

TEST(AggregateEvaluation, TheDeepestExpressionsTheParserAcceptsBindAndEvaluate) {
    // Binding and evaluation recurse over the tree: the parser's limits bound them.
    std::string chain = "seq";
    for (int i = 1; i < kMaxExpressionHeight; ++i) {
        chain += "+1";
    }
    const std::string nested =
        std::string(kMaxExpressionNesting, '(') + "seq" + std::string(kMaxExpressionNesting, ')');
    const std::string negated = std::string(kMaxExpressionNesting, '-') + "seq";
    Runner r("tracectl_demo:tick { @c = sum(" + chain + "); @n = sum(" + nested + "); @m = sum(" +
             negated + "); }");
    r.record(5);
    const auto j = to_json(r.set);
    EXPECT_EQ(j["aggregations"][0]["entries"][0]["value"], 5 + kMaxExpressionHeight - 1);
    EXPECT_EQ(j["aggregations"][1]["entries"][0]["value"], 5);
    EXPECT_EQ(j["aggregations"][2]["entries"][0]["value"], 5); // an even number of '-'
}

TEST(AggregateEvaluation, FlatChainsOfThousandsOfLogicalTermsAreNotNesting) {
    // Issue 40, B7's class: 1,500 || terms (and && terms) are a flat chain,
    // accepted as LTTng's filter parser accepts them, and select what they say.
    std::string any = "seq == 1000000";
    std::string all = "seq != 1000000";
    for (int i = 0; i < 1500; ++i) {
        any += " || seq == " + std::to_string(3 * i);
        all += " && seq != " + std::to_string(3 * i + 1);
    }
    Runner r("tracectl_demo:tick /" + any +
             "/ { @any = count(); }\n"
             "tracectl_demo:tick /" +
             all + "/ { @all = count(); }");
    for (std::int64_t s = 0; s < 30; ++s) {
        r.record(s);
    }
    const auto j = to_json(r.set);
    EXPECT_EQ(j["aggregations"][0]["entries"][0]["value"], 10); // 0, 3, ... 27
    EXPECT_EQ(j["aggregations"][1]["entries"][0]["value"], 20); // all but 1, 4, ... 28
}

TEST(AggregateEvaluation, DivisionByZeroSkipsTheClause) {
    Runner r("tracectl_demo:tick { @a = count(); @b = sum(10 / seq); }");
    r.record(0);
    r.record(5);
    EXPECT_EQ(r.set.errors, 1u);
    EXPECT_EQ(r.set.sorted(0)[0].state->value(), 2); // @a ran before the error
    EXPECT_EQ(r.set.sorted(1)[0].state->value(), 2); // only 10 / 5
}

TEST(AggregateText, CountWithStringKey) {
    // tst.chararray-key.r
    Runner r("tracectl_demo:tick { @[\"dtrace\"] = count(); }");
    r.record(1);
    EXPECT_EQ(r.text(),
              "\n  dtrace                                                            1\n");
}

TEST(AggregateText, SortedByValueThenKey) {
    Runner r("tracectl_demo:tick { @c[text] = count(); }");
    for (const char* t : {"b", "a", "c", "c", "b", "c"}) {
        r.record(0, t);
    }
    r.record(0, "d");
    EXPECT_EQ(r.text(), "\n"
                        "  a                                                                 1\n"
                        "  d                                                                 1\n"
                        "  b                                                                 2\n"
                        "  c                                                                 3\n");
}

TEST(AggregateText, IntegerKeysAndScalarFunctions) {
    Runner r("tracectl_demo:tick { @s[seq % 2] = sum(seq); @a = avg(seq); @d = stddev(seq);\n"
             "@mn = min(seq); @mx = max(seq); }");
    for (std::int64_t s = 1; s <= 4; ++s) {
        r.record(s);
    }
    EXPECT_EQ(r.text(), "\n"
                        "                1                4\n"
                        "                0                6\n"
                        "\n"
                        "                2\n" // avg 10 / 4
                        "\n"
                        "                1\n" // stddev: sqrt(30/4 - 2*2) = sqrt(3)
                        "\n"
                        "                1\n"
                        "\n"
                        "                4\n");
}

TEST(AggregateText, QuantizeOfTheLargestBucket) {
    // tst.quantlast.r: @ = quantize(1LL << 62) 1234 times.
    Runner r("tracectl_demo:tick { @ = quantize(seq); }");
    for (int i = 0; i < 1234; ++i) {
        r.record(std::int64_t{1} << 62);
    }
    EXPECT_EQ(r.text(), "\n\n           value  ------------- Distribution ------------- count    \n"
                        "2305843009213693952 |                                         0        \n"
                        "4611686018427387904 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 1234     \n"
                        "\n");
}

TEST(AggregateText, QuantizeRowsAroundTheData) {
    Runner r("tracectl_demo:tick { @ = quantize(seq - 2); }");
    for (const std::int64_t s : {1, 2, 3, 4, 5}) {
        r.record(s); // -1, 0, 1, 2, 3
    }
    EXPECT_EQ(r.text(), "\n\n           value  ------------- Distribution ------------- count    \n"
                        "              -2 |                                         0        \n"
                        "              -1 |@@@@@@@@                                 1        \n"
                        "               0 |@@@@@@@@                                 1        \n"
                        "               1 |@@@@@@@@                                 1        \n"
                        "               2 |@@@@@@@@@@@@@@@@                         2        \n"
                        "               4 |                                         0        \n"
                        "\n");
}

TEST(AggregateText, LquantizeLayout) {
    // The rows of tst.trunc-lquantize-default.r (there keyed by an int; here without key).
    Runner r("tracectl_demo:tick { @ = lquantize(seq, 0, 1000); }");
    for (std::int64_t v = 102; v <= 105; ++v) {
        for (int i = 0; i < 20101; ++i) {
            r.record(v);
        }
    }
    EXPECT_EQ(r.text(), "\n\n           value  ------------- Distribution ------------- count    \n"
                        "             101 |                                         0        \n"
                        "             102 |@@@@@@@@@@                               20101    \n"
                        "             103 |@@@@@@@@@@                               20101    \n"
                        "             104 |@@@@@@@@@@                               20101    \n"
                        "             105 |@@@@@@@@@@                               20101    \n"
                        "             106 |                                         0        \n"
                        "\n");
}

TEST(AggregateText, LquantizeOverflowRowsAndKeys) {
    Runner r("tracectl_demo:tick { @[text] = lquantize(seq, 10, 30, 10); }");
    r.record(5, "k");
    r.record(35, "k");
    r.record(35, "k");
    EXPECT_EQ(r.text(), "\n  k                                                 \n"
                        "           value  ------------- Distribution ------------- count    \n"
                        "            < 10 |@@@@@@@@@@@@@                            1        \n"
                        "              10 |                                         0        \n"
                        "              20 |                                         0        \n"
                        "           >= 30 |@@@@@@@@@@@@@@@@@@@@@@@@@@@              2        \n"
                        "\n");
}

TEST(AggregateText, IntegerKeysPrintByTheirTypesSize) {
    // dtrace-utils tst.signedkeys.r: 1-byte keys " %3d" (-2 stored as 254), 2-byte
    // " %5d", 4-byte " %8d" (signed), 8-byte " %16lld"; pid (pid_t) is an int.
    const TableEventClass narrow{
        "p:e",
        "ust",
        {{"b", FieldScope::Payload, FieldKind::SignedInteger, 1},
         {"h", FieldScope::Payload, FieldKind::UnsignedInteger, 2},
         {"w", FieldScope::Payload, FieldKind::UnsignedInteger, 4},
         {"q", FieldScope::Payload, FieldKind::SignedInteger, 8},
         {"vpid", FieldScope::CommonContext, FieldKind::SignedInteger, 8}}};
    const Program program =
        parseProgram("p:e { @b[b] = count(); @h[h] = count(); @w[w] = count(); @q[q] = count();\n"
                     "@p[pid] = count(); @sum[w + 1] = count(); @cmp[b < 0] = count(); }");
    Binder binder(program);
    AggregationSet set(program);
    const BoundEventClass bound = binder.bind(narrow);
    const std::map<std::string, std::string> none;
    const auto slots = narrow.slots(
        bound, {{"b", -2}, {"h", 65535}, {"w", 4294967295}, {"q", -2}, {"vpid", 77}}, none);
    execute(bound, slots.data(), set);
    std::ostringstream out;
    printText(out, set);
    EXPECT_EQ(out.str(), "\n 254                1\n"
                         "\n 65535                1\n"
                         "\n       -1                1\n"
                         "\n               -2                1\n"
                         "\n       77                1\n"
                         "\n        0                1\n" // uint32 + int: 4 bytes, wraps
                         "\n        1                1\n");
    // JSON keeps the values as read.
    EXPECT_EQ(to_json(set)["aggregations"][2]["entries"][0]["keys"][0], 4294967295);
}

TEST(AggregateJson, EntriesAndBuckets) {
    Runner r("tracectl_demo:tick { @n[text, seq] = count(); @q = quantize(seq);\n"
             "@l = lquantize(seq, 0, 4, 2); }");
    r.record(1, "a");
    r.record(3, "a");
    r.record(3, "a");
    const nlohmann::json expected = nlohmann::json::parse(R"({
      "aggregations": [
        {"name": "n", "function": "count", "entries": [
          {"keys": ["a", 1], "value": 1}, {"keys": ["a", 3], "value": 2}]},
        {"name": "q", "function": "quantize", "entries": [
          {"keys": [], "count": 3, "buckets": [
            {"lower": 1, "upper": 1, "count": 1}, {"lower": 2, "upper": 3, "count": 2}]}]},
        {"name": "l", "function": "lquantize", "low": 0, "high": 4, "step": 2, "entries": [
          {"keys": [], "count": 3, "buckets": [
            {"lower": 0, "upper": 1, "count": 1}, {"lower": 2, "upper": 3, "count": 2}]}]}
      ],
      "errors": 0})");
    EXPECT_EQ(to_json(r.set), expected);
}

TEST(AggregateJson, OpenEndedBuckets) {
    Runner r("tracectl_demo:tick { @l = lquantize(seq - 100, 0, 4, 2); @q = quantize(seq - "
             "9223372036854775807 - 2); }");
    r.record(0);   // l: < 0; q: INT64_MIN + ... wraps to the lowest bucket
    r.record(200); // l: >= 4
    const auto j = to_json(r.set);
    const auto& l = j["aggregations"][0]["entries"][0]["buckets"];
    ASSERT_EQ(l.size(), 2u);
    EXPECT_TRUE(l[0]["lower"].is_null());
    EXPECT_EQ(l[0]["upper"], -1);
    EXPECT_EQ(l[1]["lower"], 4);
    EXPECT_TRUE(l[1]["upper"].is_null());
    const auto& q = j["aggregations"][1]["entries"][0]["buckets"];
    EXPECT_EQ(q[0]["lower"], std::numeric_limits<std::int64_t>::min());
}

TEST(AggregateJson, NegativeQuantizeBucketsAsDTraceFillsThem) {
    // The row labelled -4 holds -7..-4, -8 holds -15..-8, the first one INT64_MIN..-2^62.
    Runner r("tracectl_demo:tick { @q = quantize(seq); }");
    for (const std::int64_t v :
         {std::int64_t{-5}, std::int64_t{-7}, std::int64_t{-4}, std::int64_t{-8}, std::int64_t{-1},
          std::int64_t{-3}, std::numeric_limits<std::int64_t>::min()}) {
        r.record(v);
    }
    const auto q = to_json(r.set)["aggregations"][0]["entries"][0]["buckets"];
    const auto expected = nlohmann::json::parse(R"([
        {"lower": -9223372036854775808, "upper": -4611686018427387904, "count": 1},
        {"lower": -15, "upper": -8, "count": 1},
        {"lower": -7, "upper": -4, "count": 3},
        {"lower": -3, "upper": -2, "count": 1},
        {"lower": -1, "upper": -1, "count": 1}])");
    EXPECT_EQ(q, expected);
}

TEST(AggregateJson, KeysThatAreNotUtf8AreReplacedNotFatal) {
    Runner r("tracectl_demo:tick { @[text] = count(); }");
    r.record(1, "bad\xff\xfe"
                "comm");
    r.record(2, "good");
    const std::string text = jsonText(to_json(r.set));
    const auto j = nlohmann::json::parse(text);
    const auto& entries = j["aggregations"][0]["entries"];
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[0]["keys"][0], "bad\xef\xbf\xbd\xef\xbf\xbd"
                                     "comm");
    EXPECT_EQ(entries[1]["keys"][0], "good");
}

} // namespace
} // namespace tracectl::aggregate

// Found by a fresh-user pass: `syscalls:sys_enter_getpp*` (and `syscalls:*`) enabled the
// system calls, and matched none of their records, which the trace names
// syscall_entry_getppid: everything recorded was thrown away.
TEST(AggregateProbes, SystemCallPatternsOnFtracesNamesMatchTheirRecords) {
    using tracectl::aggregate::probeMatches;
    EXPECT_TRUE(probeMatches("syscalls:sys_enter_getppid", "syscall_entry_getppid", "kernel"));
    EXPECT_TRUE(probeMatches("syscalls:sys_enter_getpp*", "syscall_entry_getppid", "kernel"));
    EXPECT_FALSE(probeMatches("syscalls:sys_enter_getpp*", "syscall_exit_getppid", "kernel"));
    EXPECT_TRUE(probeMatches("syscalls:sys_exit_*", "syscall_exit_write", "kernel"));
    EXPECT_TRUE(probeMatches("syscalls:*", "syscall_entry_write", "kernel"));
    EXPECT_TRUE(probeMatches("syscalls:*", "syscall_exit_openat", "kernel"));
    EXPECT_FALSE(probeMatches("syscalls:*", "sched_switch", "kernel"));
    EXPECT_FALSE(probeMatches("syscalls:sys_enter_write", "syscall_entry_writev", "kernel"));
    EXPECT_FALSE(probeMatches("syscalls:sys_enter_write", "syscall_entry_write", "ust"));
}
