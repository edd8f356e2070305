// The lexer and parser on every construct of LTTng 2.13's filter language,
// and the refusals with their messages and columns.
#include "filter/filter_compiler.hpp"
#include "filter/filter_lexer.hpp"
#include "filter/filter_parser.hpp"
#include "filter/ftrace_filter.hpp"

#include <gtest/gtest.h>
#include <pthread.h>
#include <string>

using namespace tracectl::filter;

namespace {

// The tree as a Lisp-like string: (op l r), fields as root:seg[i].seg.
std::string show(const Node& n) {
    switch (n.kind) {
    case NodeKind::Integer:
        return std::to_string(n.integer);
    case NodeKind::Float:
        return "f" + std::to_string(n.floating);
    case NodeKind::String:
        return "\"" + n.text + "\"";
    case NodeKind::Field: {
        std::string s = n.root == FieldRoot::Context      ? "$ctx:"
                        : n.root == FieldRoot::AppContext ? "$app:"
                                                          : "";
        for (std::size_t i = 0; i < n.path.size(); ++i) {
            s += (i ? "." : "") + n.path[i].name;
            if (n.path[i].index)
                s += "[" + std::to_string(*n.path[i].index) + "]";
        }
        return s;
    }
    case NodeKind::Unary:
        return std::string("(") + unaryOpText(n.unaryOp) + " " + show(*n.left) + ")";
    case NodeKind::Binary:
        return std::string("(") + binaryOpText(n.binaryOp) + " " + show(*n.left) + " " +
               show(*n.right) + ")";
    }
    return "?";
}

std::string parsed(std::string_view expression) {
    return show(*parseFilter(expression));
}

struct Refusal {
    std::size_t column;
    std::string message;
};

Refusal refused(std::string_view expression) {
    try {
        compileFilter(expression);
    } catch (const FilterError& e) {
        return {e.column(), e.what()};
    }
    return {0, "(accepted)"};
}

} // namespace

TEST(FilterLexer, IntegerBases) {
    const auto tokens = tokenize("42 0x1F 0X1f 017 0 10u 7UL 8ull 9LLu 0xFFFFFFFFFFFFFFFF");
    const std::uint64_t expected[] = {42, 31, 31, 15, 0, 10, 7, 8, 9, 0xFFFFFFFFFFFFFFFFull};
    ASSERT_EQ(tokens.size(), std::size(expected) + 1);
    for (std::size_t i = 0; i < std::size(expected); ++i) {
        EXPECT_EQ(tokens[i].kind, TokenKind::Integer) << i;
        EXPECT_EQ(tokens[i].integer, expected[i]) << i;
    }
    EXPECT_EQ(tokens.back().kind, TokenKind::End);
}

TEST(FilterLexer, Floats) {
    const auto tokens = tokenize("1.5 .5 2. 1e3 2.5E-1f 0x1p3 0x.8p1 0x1.8 3e2L");
    const double expected[] = {1.5, 0.5, 2.0, 1000.0, 0.25, 8.0, 1.0, 1.5, 300.0};
    ASSERT_EQ(tokens.size(), std::size(expected) + 1);
    for (std::size_t i = 0; i < std::size(expected); ++i) {
        EXPECT_EQ(tokens[i].kind, TokenKind::Float) << i;
        EXPECT_DOUBLE_EQ(tokens[i].floating, expected[i]) << i;
    }
}

TEST(FilterLexer, StringsIdentifiersAndColumns) {
    const auto tokens = tokenize("$ctx.procname == L\"a\\*b\" && x:y != 'c' /* c */ // d\n");
    ASSERT_EQ(tokens.size(), 10u);
    EXPECT_EQ(tokens[0].kind, TokenKind::GlobalIdentifier);
    EXPECT_EQ(tokens[0].text, "$ctx");
    EXPECT_EQ(tokens[1].kind, TokenKind::Dot);
    EXPECT_EQ(tokens[2].text, "procname");
    EXPECT_EQ(tokens[2].column, 6u);
    EXPECT_EQ(tokens[3].kind, TokenKind::Equal);
    EXPECT_EQ(tokens[4].kind, TokenKind::String);
    EXPECT_EQ(tokens[4].text, "a\\*b");
    EXPECT_EQ(tokens[4].column, 18u);
    EXPECT_EQ(tokens[5].kind, TokenKind::LogicalAnd);
    EXPECT_EQ(tokens[6].kind, TokenKind::Identifier);
    EXPECT_EQ(tokens[6].text, "x:y");
    EXPECT_EQ(tokens[8].kind, TokenKind::String);
    EXPECT_EQ(tokens[8].text, "c");
    EXPECT_EQ(tokens[9].kind, TokenKind::End);
}

TEST(FilterLexer, Operators) {
    const auto tokens = tokenize("[ ] ( ) . -> * + - % / << >> == != <= >= < > && || ! & ^ | ~");
    const TokenKind expected[] = {
        TokenKind::LBracket,     TokenKind::RBracket, TokenKind::LParen,   TokenKind::RParen,
        TokenKind::Dot,          TokenKind::Arrow,    TokenKind::Star,     TokenKind::Plus,
        TokenKind::Minus,        TokenKind::Percent,  TokenKind::Slash,    TokenKind::ShiftLeft,
        TokenKind::ShiftRight,   TokenKind::Equal,    TokenKind::NotEqual, TokenKind::LessEqual,
        TokenKind::GreaterEqual, TokenKind::Less,     TokenKind::Greater,  TokenKind::LogicalAnd,
        TokenKind::LogicalOr,    TokenKind::Not,      TokenKind::BitAnd,   TokenKind::BitXor,
        TokenKind::BitOr,        TokenKind::BitNot,   TokenKind::End};
    ASSERT_EQ(tokens.size(), std::size(expected));
    for (std::size_t i = 0; i < tokens.size(); ++i)
        EXPECT_EQ(tokens[i].kind, expected[i]) << i;
}

TEST(FilterParser, PrecedenceAsLttngGrammar) {
    EXPECT_EQ(parsed("a || b && c"), "(|| a (&& b c))");
    EXPECT_EQ(parsed("a && b == c"), "(&& a (== b c))");
    EXPECT_EQ(parsed("a == b < c"), "(== a (< b c))");
    // Relational binds looser than the bitwise operators (unlike C).
    EXPECT_EQ(parsed("a < b | c"), "(< a (| b c))");
    EXPECT_EQ(parsed("a & 1 == 0"), "(== (& a 1) 0)");
    EXPECT_EQ(parsed("a | b ^ c & d << 1"), "(| a (^ b (& c (<< d 1))))");
    EXPECT_EQ(parsed("a << b + c * d"), "(<< a (+ b (* c d)))");
    EXPECT_EQ(parsed("-a * ~b % !c"), "(% (* (- a) (~ b)) (! c))");
    EXPECT_EQ(parsed("(a || b) && c"), "(&& (|| a b) c)");
}

TEST(FilterParser, LeftAssociative) {
    EXPECT_EQ(parsed("a - b - c"), "(- (- a b) c)");
    EXPECT_EQ(parsed("a >> 1 >> 2"), "(>> (>> a 1) 2)");
    EXPECT_EQ(parsed("a == b != c"), "(!= (== a b) c)");
    EXPECT_EQ(parsed("a || b || c"), "(|| (|| a b) c)");
    EXPECT_EQ(parsed("!!a"), "(! (! a))");
    EXPECT_EQ(parsed("+-a"), "(+ (- a))");
}

TEST(FilterParser, FieldPaths) {
    EXPECT_EQ(parsed("a"), "a");
    EXPECT_EQ(parsed("a.b.c"), "a.b.c");
    EXPECT_EQ(parsed("a->b"), "a.b");
    EXPECT_EQ(parsed("arr[3]"), "arr[3]");
    EXPECT_EQ(parsed("a.b[0x10].c"), "a.b[16].c");
    EXPECT_EQ(parsed("$ctx.vpid"), "$ctx:vpid");
    EXPECT_EQ(parsed("$ctx.arr[2]"), "$ctx:arr[2]");
    EXPECT_EQ(parsed("$app.prov:ctx"), "$app:prov:ctx");
    EXPECT_EQ(parsed("\\u00e9t\\U0001F600 == 1"), "(== \\u00e9t\\U0001F600 1)");
}

TEST(FilterParser, Literals) {
    EXPECT_EQ(parsed("s == \"\""), "(== s \"\")");
    EXPECT_EQ(parsed("s == 'abc'"), "(== s \"abc\")");
    EXPECT_EQ(parsed("s == \"a\nb\""), "(== s \"ab\")"); // newlines are dropped
    EXPECT_EQ(parsed("x == 1.5"), "(== x f1.500000)");
}

TEST(FilterParser, SyntaxErrorsNameThePlace) {
    struct Case {
        const char* expression;
        std::size_t column;
        const char* message;
    } cases[] = {
        {"a &&", 5, "syntax error: unexpected end of expression"},
        {"a == 1;", 7, "unexpected token ';'"},
        {"a = 1", 3, "unexpected token '='"},
        {"(a == 1", 8, "expected ')'"},
        {"a == 1)", 7, "syntax error: unexpected ')'"},
        {"a b", 3, "unexpected identifier 'b'"},
        {"a == @", 6, "unexpected character '@'"},
        {"a == 1\r", 7, "unexpected character byte \\x0D"},
        {"$ == 1", 1, "unexpected character '$'"},
        {"{a}", 1, "unexpected token '{'"},
        {"a ... b", 3, "unexpected token '...'"},
        {"x == 09", 7, "invalid digit '9' in octal constant"},
        {"x == 0x", 6, "invalid hexadecimal constant"},
        {"x == 99999999999999999999", 6, "integer constant does not fit in 64 bits"},
        {"x == 0x10000000000000000", 6, "does not fit in 64 bits"},
        {"x == 1e999", 6, "floating-point constant out of range"},
        {"s == \"abc", 6, "unterminated string literal"},
        {"s == 'abc", 6, "unterminated character constant"},
        {"s == ''", 6, "empty character constant"},
        {"s == \"a\\nb\"", 8, "escape sequences not supported yet"},
        {"s == \"a\\\\b\"", 8, "escape sequences not supported yet"},
        {"s == \"a\\x41\"", 8, "escape sequences not supported yet"},
        {"a[b] == 1", 2, "Expecting constant index in array expression"},
        {"a[-1] == 1", 2, "Expecting constant index in array expression"},
        {"a[(1)] == 1", 2, "Expecting constant index in array expression"},
        {"a[1][2] == 3", 5, "only one index per field"},
        {"$foo.x == 1", 1, "Unexpected identifier '$foo'"},
        {"$ctx == 1", 1, "Expecting identifier after '$ctx'"},
        {"$app == 1", 1, "Expecting identifier after '$app'"},
        {"$ctx[1].x == 1", 1, "'$ctx' cannot be indexed"},
        {"(a).b == 1", 4, "unexpected '.'"},
    };
    for (const auto& c : cases) {
        const Refusal r = refused(c.expression);
        EXPECT_EQ(r.column, c.column) << c.expression << ": " << r.message;
        EXPECT_NE(r.message.find(c.message), std::string::npos)
            << c.expression << ": " << r.message;
        EXPECT_EQ(
            r.message.rfind("Invalid filter expression at column " + std::to_string(c.column), 0),
            0u)
            << r.message;
    }
}

TEST(FilterParser, NulAndEmpty) {
    using namespace std::string_literals;
    const Refusal nul = refused("a == 1\0 || b"s);
    EXPECT_EQ(nul.column, 7u);
    EXPECT_NE(nul.message.find("NUL byte"), std::string::npos);
    const Refusal inString = refused("s == \"a\0b\""s);
    EXPECT_EQ(inString.column, 8u);
    EXPECT_EQ(refused("").column, 0u);
    EXPECT_NE(refused("").message.find("empty"), std::string::npos);
    EXPECT_NE(refused("   ").message.find("unexpected end of expression"), std::string::npos);
}

TEST(FilterParser, DepthLimits) {
    std::string deep(kMaxFilterNesting + 1, '(');
    deep += "a" + std::string(kMaxFilterNesting + 1, ')');
    EXPECT_NE(refused(deep).message.find("nested too deeply"), std::string::npos);
    std::string nots(kMaxFilterNesting + 1, '!');
    EXPECT_NE(refused(nots + "a").message.find("nested too deeply"), std::string::npos);
    // 1,500 parentheses: nesting, refused as such.
    std::string parens(1500, '(');
    parens += "a == 1" + std::string(1500, ')');
    EXPECT_NE(refused(parens).message.find("nested too deeply (more than 256"), std::string::npos)
        << refused(parens).message;
    std::string ok(100, '(');
    ok += "a == 1" + std::string(100, ')');
    EXPECT_NO_THROW(compileFilter(ok));
}

TEST(FilterCheck, TypeRefusalsAsLttng) {
    struct Case {
        const char* expression;
        std::size_t column;
        const char* message;
    } cases[] = {
        {"a + 1 == 2", 3, "binary operation '+' not supported"},
        {"a * 2 == 2", 3, "binary operation '*' not supported"},
        {"a / 2 == 2", 3, "binary operation '/' not supported"},
        {"a % 2 == 0", 3, "binary operation '%' not supported"},
        {"a - 1 == 2", 3, "binary operation '-' not supported"},
        {"\"a\" == 1", 5, "binary operation '==' operand type mismatch"},
        {"1.5 < \"a\"", 5, "binary operation '<' operand type mismatch"},
        {"-\"x\" == a", 1, "unary operation '-' not allowed on string literal"},
        {"!\"x\"", 1, "unary operation '!' not allowed on string literal"},
        {"a && \"x\"", 3, "logical binary operation '&&' cannot have string operand"},
        {"a | \"x\"", 3, "bitwise binary operation '|' cannot have string operand"},
        {"a & 1.5", 3, "bitwise binary operation '&' cannot have floating point operand"},
        {"\"abc\"", 1, "String cannot be root data type"},
        {"1.5", 1, "floating-point value cannot be root data type"},
        {"s < \"abc\"", 3, "Only '==' and '!=' comparators are allowed for strings"},
        {"\"a*b\" == \"c*\"", 7, "Cannot compare two globbing patterns"},
        {"\"a*b\" < s", 7, "Only the `==` and `!=` operators are allowed with a globbing pattern"},
        {"s == \"a\\d\"", 6, "Unsupported escape character"},
        {"s == \"a\\\"", 8, "escape sequences not supported yet"}, // \" too
    };
    for (const auto& c : cases) {
        const Refusal r = refused(c.expression);
        EXPECT_EQ(r.column, c.column) << c.expression << ": " << r.message;
        EXPECT_NE(r.message.find(c.message), std::string::npos)
            << c.expression << ": " << r.message;
    }
}

TEST(FilterCheck, GlobKinds) {
    // A full pattern loads with LOAD_STAR_GLOB_STRING (76), the rest with
    // LOAD_STRING (64); the opcode follows the 3-byte field reference.
    EXPECT_EQ(compileFilter("s == \"a*b\"").data[3], 76);
    EXPECT_EQ(compileFilter("s == \"abc*\"").data[3], 64);
    EXPECT_EQ(compileFilter("s == \"a\\*b\"").data[3], 64); // escaped star: plain
    EXPECT_EQ(compileFilter("s == \"a**\"").data[3], 76);   // then normalized to "a*"
    EXPECT_EQ(compileFilter("s == \"a**\"").data[6], 0);
    EXPECT_NO_THROW(compileFilter("\"ab*\" == \"cd*\"")); // star-at-end patterns may meet
}

// A chain of left-associative operators nests nothing, whatever its length
// (LTTng 2.13 takes a 1,500-term ||): every binary level, as LTTng's
// grammar has them. What bounds a chain is its bytecode (LTTng's 65536
// bytes), refused as such.
TEST(FilterParser, AChainOfAnyOperatorIsNotNesting) {
    const auto chainOf = [](const std::string& first, const std::string& link, int terms) {
        std::string e = first;
        for (int i = 1; i < terms; ++i)
            e += link;
        return e;
    };
    std::string ors;
    for (int i = 0; i < 1500; ++i)
        ors += (i ? " || " : "") + std::string("n == ") + std::to_string(i);
    const FilterBytecode bc = compileFilter(ors);
    EXPECT_GT(bc.data.size(), 1500u * 19);
    EXPECT_NO_THROW(compileFilter(chainOf("a", " && b", 1500)));
    EXPECT_NO_THROW(compileFilter(chainOf("a == 1", " == 1", 1500)));
    EXPECT_NO_THROW(compileFilter(chainOf("a != 1", " != 1", 1500)));
    EXPECT_NO_THROW(compileFilter(chainOf("a < 1", " < 1", 1500)));
    EXPECT_NO_THROW(compileFilter(chainOf("a", " | b", 1500)));
    EXPECT_NO_THROW(compileFilter(chainOf("a", " & b", 1500)));
    EXPECT_NO_THROW(compileFilter(chainOf("a", " ^ b", 1500)));
    EXPECT_NO_THROW(compileFilter(chainOf("a", " << 1", 1500)));
    // Arithmetic is LTTng's type refusal, at the outermost operator, not depth.
    const Refusal plus = refused(chainOf("a", " + 1", 1500));
    EXPECT_NE(plus.message.find("binary operation '+' not supported"), std::string::npos)
        << plus.message;
    EXPECT_EQ(plus.column, 4 * 1499u - 1);
    // A chain whose bytecode is over LTTng's limit, from an expression
    // under its 65536 bytes: each ` || n == 1` is 10 bytes of text and 20
    // of code (a field reference, its reloc entry, a constant, ==, OR).
    const std::string huge = chainOf("n == 1", " || n == 1", 6000);
    ASSERT_LT(huge.size(), 65536u);
    const Refusal big = refused(huge);
    EXPECT_EQ(big.column, 0u);
    EXPECT_NE(big.message.find("over LTTng's limit of 65536 bytes"), std::string::npos)
        << big.message;
    // The longest chain an expression can be (two bytes a term) is refused
    // the same way.
    const Refusal longest = refused(chainOf("1", "|1", 32000));
    EXPECT_NE(longest.message.find("over LTTng's limit of 65536 bytes"), std::string::npos)
        << longest.message;
}

// No pass recurses along a chain: parsed, checked, generated (or refused)
// and freed on a thread of 128 KiB of stack, where a recursion 32,000
// nodes deep would overflow it.
TEST(FilterParser, AChainCostsNoStack) {
    std::string longest = "1";
    for (int i = 1; i < 32000; ++i)
        longest += "|1";
    std::string ors = "a == 0";
    for (int i = 1; i < 1500; ++i)
        ors += " || a == " + std::to_string(i);
    struct Work {
        std::string longest, ors, longestRefusal;
        std::size_t orsBytes = 0, ftraceBytes = 0;
    } work{longest, ors, {}, 0, 0};
    const auto body = [](void* arg) -> void* {
        auto& w = *static_cast<Work*>(arg);
        try {
            compileFilter(w.longest);
        } catch (const FilterError& e) {
            w.longestRefusal = e.reason();
        }
        w.orsBytes = compileFilter(w.ors).data.size();
        w.ftraceBytes = toFtraceFilter(w.ors).size();
        return nullptr;
    };
    pthread_attr_t attr;
    ASSERT_EQ(pthread_attr_init(&attr), 0);
    ASSERT_EQ(pthread_attr_setstacksize(&attr, 128 * 1024), 0);
    pthread_t thread;
    ASSERT_EQ(pthread_create(&thread, &attr, body, &work), 0);
    ASSERT_EQ(pthread_join(thread, nullptr), 0);
    pthread_attr_destroy(&attr);
    EXPECT_NE(work.longestRefusal.find("over LTTng's limit"), std::string::npos)
        << work.longestRefusal;
    EXPECT_GT(work.orsBytes, 1500u * 19);
    EXPECT_GT(work.ftraceBytes, ors.size());
}
