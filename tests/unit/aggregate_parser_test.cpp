// The lexer and the parser of tracectl aggregate's D programs: what they accept, and the
// line:column and message of what they refuse.
#include "aggregate/lexer.hpp"
#include "aggregate/parser.hpp"

#include <gtest/gtest.h>

namespace tracectl::aggregate {
namespace {

/// The error parse_program throws for `source`, or a failure.
ProgramError errorOf(const std::string& source) {
    try {
        parseProgram(source);
    } catch (const ProgramError& e) {
        return e;
    }
    ADD_FAILURE() << "accepted: " << source;
    return ProgramError({0, 0}, "");
}

TEST(AggregateLexer, PositionsCountLinesAndColumns) {
    const auto tokens = tokenize("ip:::send\n  { @x[a] = count(); }");
    ASSERT_EQ(tokens.size(), 13u);
    EXPECT_EQ(tokens[0].kind, Token::Kind::Probe);
    EXPECT_EQ(tokens[0].text, "ip:::send");
    EXPECT_EQ(tokens[1].text, "{");
    EXPECT_EQ(tokens[1].at.line, 2);
    EXPECT_EQ(tokens[1].at.column, 3);
    EXPECT_EQ(tokens[2].kind, Token::Kind::Aggregation);
    EXPECT_EQ(tokens[2].text, "x");
    EXPECT_EQ(tokens[2].at.column, 5);
    EXPECT_EQ(tokens[4].kind, Token::Kind::Identifier);
    EXPECT_EQ(tokens.back().kind, Token::Kind::End);
}

TEST(AggregateLexer, CommentsStringsAndIntegers) {
    const auto tokens = tokenize("a:b /* x\n y */ { // z\n @ = sum(0x10 + 7 == \"q\\\"\"); }");
    std::vector<std::string> texts;
    for (const auto& t : tokens) {
        texts.push_back(t.text);
    }
    const std::vector<std::string> expected{"a:b", "{",  "",    "=", "sum", "(", "10", "+",
                                            "7",   "==", "q\"", ")", ";",   "}", ""};
    EXPECT_EQ(texts, expected);
    EXPECT_EQ(tokens[6].value, 16);
    EXPECT_EQ(tokens[3].at.line, 3);
}

TEST(AggregateLexer, Errors) {
    EXPECT_STREQ(errorOf("a:b { @ = count(); } /* open").what(), "1:22: unterminated comment");
    EXPECT_STREQ(errorOf("a:b { @[\"x] = count(); }").what(), "1:9: unterminated string");
    EXPECT_STREQ(errorOf("a:b { @[x#] = count(); }").what(), "1:10: unexpected character '#'");
    EXPECT_STREQ(errorOf("a:b { @ = sum(99999999999999999999); }").what(),
                 "1:15: integer constant too large");
}

TEST(AggregateParser, ClausesStatementsAndAggregations) {
    const Program p =
        parseProgram("ip:::send, tracectl_demo:tick /value > 2 && !(x == 1)/ {\n"
                     "  @bytes[a, \"k\"] = sum(value * 2); @ = count();\n"
                     "}\n"
                     "sched_* { @bytes[b, c] = sum(1); @lin = lquantize(v, -10, 10, 5) }");
    ASSERT_EQ(p.clauses.size(), 2u);
    EXPECT_EQ(p.clauses[0].probes.size(), 2u);
    EXPECT_EQ(p.clauses[0].probes[0].pattern, "ip:send");
    EXPECT_EQ(p.clauses[0].probes[1].pattern, "tracectl_demo:tick");
    EXPECT_EQ(p.clauses[1].probes[0].pattern, "sched_*");
    ASSERT_TRUE(p.clauses[0].predicate);
    EXPECT_EQ(p.clauses[0].predicate->op, Operator::LogicalAnd);
    EXPECT_EQ(p.clauses[0].statements.size(), 2u);
    ASSERT_EQ(p.aggregations.size(), 3u);
    EXPECT_EQ(p.aggregations[0].name, "bytes");
    EXPECT_EQ(p.aggregations[0].function, Function::Sum);
    EXPECT_EQ(p.aggregations[0].keyCount, 2u);
    EXPECT_EQ(p.aggregations[1].name, "");
    EXPECT_EQ(p.aggregations[2].linear, (LinearParameters{-10, 10, 5}));
    EXPECT_EQ(p.clauses[1].statements[0].aggregation, 0u);
    // value, x, a (the string "k" is no reference)
    ASSERT_EQ(p.clauses[0].references.size(), 3u);
    EXPECT_EQ(p.clauses[0].references[0].name, "value");
    EXPECT_EQ(p.clauses[0].references[0].at.column, 32);
}

TEST(AggregateParser, AClauseMayHaveNoBody) {
    // dtrace -n 'PROBE': a probe description alone (several -n: one after another) is a
    // clause without statements, as an empty body is.
    const Program p = parseProgram("syscalls:sys_enter_getppid\nip:::receive, ip:::send\n"
                                   "BEGIN {}\nEND");
    ASSERT_EQ(p.clauses.size(), 4u);
    EXPECT_EQ(p.clauses[0].probes[0].pattern, "syscalls:sys_enter_getppid");
    EXPECT_EQ(p.clauses[1].probes.size(), 2u);
    EXPECT_EQ(p.clauses[3].probes[0].kind, ProbeKind::End);
    for (const Clause& c : p.clauses) {
        EXPECT_TRUE(c.defaultAction());
        EXPECT_FALSE(c.predicate);
    }
    EXPECT_TRUE(p.needsOrder()); // a line per firing, in time order
}

TEST(AggregateParser, ArgsMemberIsTheField) {
    const Program p = parseProgram("ip:::receive { @[args[2]->ip_saddr] = count(); }");
    const Expression& key = *p.clauses[0].statements[0].keys[0];
    EXPECT_EQ(key.kind, Expression::Kind::Identifier);
    EXPECT_EQ(key.text, "ip_saddr");
    EXPECT_EQ(key.at.column, 27);
}

TEST(AggregateParser, PredicateDivisionAndClosingSlash) {
    const Program p = parseProgram("a:b / x / 2 > 1 / { @ = count(); }");
    const Expression& pred = *p.clauses[0].predicate;
    EXPECT_EQ(pred.op, Operator::Greater);
    EXPECT_EQ(pred.left->op, Operator::Divide);
}

TEST(AggregateParser, Precedence) {
    const Program p = parseProgram("a:b { @ = sum(1 + 2 * 3 - -4 % 5); }");
    const Expression& e = *p.clauses[0].statements[0].argument;
    EXPECT_EQ(e.op, Operator::Subtract);
    EXPECT_EQ(e.left->op, Operator::Add);
    EXPECT_EQ(e.left->right->op, Operator::Multiply);
    EXPECT_EQ(e.right->op, Operator::Modulo);
    EXPECT_EQ(e.right->left->op, Operator::Negate);
}

TEST(AggregateParser, SyntaxErrors) {
    EXPECT_STREQ(errorOf("").what(), "1:1: empty program: expected a probe description");
    EXPECT_STREQ(errorOf("a:b { @ = count() }x /y/").what(),
                 "1:25: syntax error: expected '{' (the actions after a predicate), found end "
                 "of program");
    EXPECT_STREQ(errorOf("a:b {\n  @x = count()\n  @y = count(); }").what(),
                 "3:3: syntax error: expected ';' or '}', found '@y'");
    // A variable is assigned a value, an aggregation fed by an aggregating function.
    EXPECT_STREQ(errorOf("a:b { x = count(); }").what(),
                 "1:11: count() is an aggregating function: use it as @name[keys] = count()");
    EXPECT_STREQ(errorOf("a:b { 1 = 2; }").what(),
                 "1:7: syntax error: expected a statement (an aggregation, an assignment or an "
                 "action), found '1'");
    EXPECT_STREQ(errorOf("a:b { @ = sum(1 +); }").what(),
                 "1:18: syntax error: expected an expression, found ')'");
    EXPECT_STREQ(errorOf("a:b /x > 1 { @ = count(); }").what(),
                 "1:12: syntax error: expected '/', found '{'");
}

std::string repeated(const std::string& text, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) {
        out += text;
    }
    return out;
}

TEST(AggregateParser, NestingIsBoundedLikeTheFilterParser) {
    // Refused rather than a stack overflow (20000 parentheses crashed it); the limits bound
    // every later walk of the tree (binding, evaluation) too.
    const std::string head = "a:b { @ = sum(";
    EXPECT_NO_THROW(parseProgram(head + repeated("(", 256) + "1" + repeated(")", 256) + "); }"));
    EXPECT_STREQ(
        errorOf(head + repeated("(", 20000) + "1" + repeated(")", 20000) + "); }").what(),
        "1:271: expression nested too deeply (more than 256 parentheses and unary operators)");
    EXPECT_NO_THROW(parseProgram(head + repeated("-", 256) + "1); }"));
    EXPECT_STREQ(
        errorOf(head + repeated("-", 50000) + "1); }").what(),
        "1:271: expression nested too deeply (more than 256 parentheses and unary operators)");
    EXPECT_STREQ(
        errorOf(head + repeated("!", 50000) + "1); }").what(),
        "1:271: expression nested too deeply (more than 256 parentheses and unary operators)");
    // A long chain costs the parser no stack, but its tree is as deep as it is long.
    EXPECT_NO_THROW(parseProgram(head + "1" + repeated("+1", 999) + "); }"));
    EXPECT_STREQ(errorOf(head + "1" + repeated("+1", 100000) + "); }").what(),
                 "1:2014: expression too deep (more than 1000 levels of operators)");
    EXPECT_STREQ(errorOf("a:b /" + repeated("x==", 5000) + "x/ { @ = count(); }").what(),
                 "1:3004: expression too deep (more than 1000 levels of operators)");
}

TEST(AggregateParser, ProbeDescriptions) {
    EXPECT_EQ(probePattern("ip:::send", {}), "ip:send");
    EXPECT_EQ(probePattern("ip:*:*:send", {}), "ip:send");
    EXPECT_EQ(probePattern(":::send", {}), "*:send");
    EXPECT_EQ(probePattern("sched:sched_switch", {}), "sched:sched_switch");
    EXPECT_EQ(probePattern("sched_*", {}), "sched_*");
    EXPECT_STREQ(errorOf("a:b:c { @ = count(); }").what(),
                 "1:1: invalid probe description 'a:b:c': expected "
                 "provider:module:function:name, provider:name or an event name");
    EXPECT_STREQ(errorOf("x { @ = count(); }\nip:mod::send { @ = count(); }").what(),
                 "2:1: probe description 'ip:mod::send': module and function parts must be "
                 "empty or '*' (CTF event records have neither)");
}

TEST(AggregateParser, FunctionsAndArgumentCounts) {
    EXPECT_STREQ(errorOf("a:b { @ = cnt(); }").what(),
                 "1:11: unknown aggregating function 'cnt' (count, sum, avg, min, max, "
                 "stddev, quantize, lquantize, llquantize)");
    EXPECT_STREQ(errorOf("a:b { @ = count(x); }").what(),
                 "1:17: count() takes no arguments, 1 given");
    EXPECT_STREQ(errorOf("a:b { @ = sum(); }").what(), "1:14: sum() takes 1 argument, 0 given");
    EXPECT_STREQ(errorOf("a:b { @ = quantize(x, 2); }").what(),
                 "1:23: quantize() takes 1 argument, 2 given");
    EXPECT_STREQ(errorOf("a:b { @ = lquantize(x, 0); }").what(),
                 "1:20: lquantize() takes 3 or 4 arguments (expression, lower bound, upper "
                 "bound[, step]), 2 given");
    EXPECT_STREQ(errorOf("a:b { @ = lquantize(x, 0, y); }").what(),
                 "1:27: lquantize() upper bound must be an integer constant");
    EXPECT_STREQ(errorOf("a:b { @ = lquantize(x, 10, 10); }").what(),
                 "1:28: lquantize() upper bound must be greater than lower bound");
    EXPECT_STREQ(errorOf("a:b { @ = lquantize(x, 0, 10, 0); }").what(),
                 "1:31: lquantize() step must be from 1 to 65535");
    EXPECT_STREQ(errorOf("a:b { @ = lquantize(x, 0, 100000); }").what(),
                 "1:27: lquantize() has more than 65535 levels: use a larger step");
    EXPECT_STREQ(errorOf("a:b { @ = lquantize(x, 0, 10, 20); }").what(),
                 "1:31: lquantize() step is larger than upper bound minus lower bound");
    EXPECT_STREQ(errorOf("a:b { @ = lquantize(x, 0, 4294967296); }").what(),
                 "1:27: lquantize() upper bound must be a 32-bit integer");
}

TEST(AggregateParser, OneFunctionPerAggregation) {
    EXPECT_STREQ(errorOf("a:b { @a = count(); @a = sum(x); }").what(),
                 "1:26: @a is an aggregation of count(): it cannot also use sum() (first used "
                 "at 1:7)");
    EXPECT_STREQ(errorOf("a:b { @a[x] = count(); }\nc:d { @a = count(); }").what(),
                 "2:7: @a has 1 key(s), not 0 (first used at 1:7)");
    EXPECT_STREQ(errorOf("a:b { @a = lquantize(x, 0, 10); @a = lquantize(x, 0, 20); }").what(),
                 "1:38: @a uses lquantize() with other bounds or step (first used at 1:7)");
}

} // namespace
} // namespace tracectl::aggregate
