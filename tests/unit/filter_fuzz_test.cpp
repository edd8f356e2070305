// Hostile input never becomes hostile bytecode: random and adversarial
// expressions either throw FilterError or give bytecode that passes our copy
// of lttng-ust 2.13's validation (and fits lttng's size limits).
#include "filter/bytecode_ops.hpp"
#include "filter/bytecode_validator.hpp"
#include "filter/filter_compiler.hpp"
#include "filter_golden_vectors.hpp"

#include <gtest/gtest.h>
#include <random>
#include <string>

using namespace tracectl::filter;

namespace {

struct Outcome {
    std::size_t accepted = 0;
    std::size_t refused = 0;
};

// The property, for one input.
void check(std::string_view expression, Outcome& outcome) {
    try {
        const FilterBytecode bc = compileFilter(expression);
        const auto problem = bytecodeProblem(bc);
        ASSERT_EQ(problem, std::nullopt) << expression;
        ASSERT_LE(bc.data.size() + kBytecodeHeaderSize, kFilterMaxLen) << expression;
        ASSERT_LE(bc.relocOffset, bc.data.size());
        ASSERT_EQ(bc.seqnum, 0u);
        ++outcome.accepted;
    } catch (const FilterError& e) {
        ASSERT_NE(std::string(e.what()).rfind("Invalid filter expression", 0), std::string::npos);
        ++outcome.refused;
    }
}

class Generator {
public:
    explicit Generator(std::uint32_t seed) : rng_(seed) {}

    std::size_t pick(std::size_t n) {
        return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
    }

    std::string identifier() {
        static const char* names[] = {"a", "seq", "intfield", "s", "x:y", "_f1", "arr", "L"};
        return names[pick(std::size(names))];
    }

    std::string leaf() {
        switch (pick(9)) {
        case 0:
            return std::to_string(rng_() % 1000);
        case 1:
            return "0x" + std::to_string(rng_() % 0xFFFF);
        case 2:
            return "0" + std::to_string(rng_() % 777);
        case 3:
            return std::to_string(rng_() % 100) + "." + std::to_string(rng_() % 100);
        case 4: {
            static const char* strings[] = {"\"abc\"",  "\"a*b\"", "\"ab*\"",  "\"\"",  "'c'",
                                            "\"a\\*\"", "\"**\"",  "\"a\\d\"", "L\"w\""};
            return strings[pick(std::size(strings))];
        }
        case 5:
            return "$ctx." + identifier();
        case 6:
            return "$app.prov:" + identifier();
        case 7:
            return identifier() + "[" + std::to_string(rng_() % 5) + "]";
        default:
            return identifier() + (pick(3) == 0 ? "." + identifier() : "");
        }
    }

    std::string expression(int depth) {
        if (depth <= 0 || pick(4) == 0)
            return leaf();
        static const char* binaries[] = {"||", "&&", "==", "!=", "<", ">", "<=", ">=", "|",
                                         "^",  "&",  "<<", ">>", "+", "-", "*",  "/",  "%"};
        static const char* unaries[] = {"!", "~", "-", "+"};
        switch (pick(6)) {
        case 0:
            return unaries[pick(std::size(unaries))] + expression(depth - 1);
        case 1:
            return "(" + expression(depth - 1) + ")";
        default:
            return expression(depth - 1) + " " + binaries[pick(std::size(binaries))] + " " +
                   expression(depth - 1);
        }
    }

    std::string randomBytes(std::size_t n) {
        static const char alphabet[] = "ab$ctx.0x1F9e+-*/%<>=!&|^~()[]\"'\\ \t\n\r:;,{}@_L";
        std::string out;
        for (std::size_t i = 0; i < n; ++i)
            out.push_back(pick(20) == 0 ? static_cast<char>(rng_() & 0xFF)
                                        : alphabet[pick(sizeof alphabet - 1)]);
        return out;
    }

    std::string mutate(std::string s) {
        const std::size_t edits = 1 + pick(4);
        for (std::size_t i = 0; i < edits && !s.empty(); ++i) {
            const std::size_t at = pick(s.size());
            switch (pick(3)) {
            case 0:
                s[at] = static_cast<char>(rng_() & 0xFF);
                break;
            case 1:
                s.erase(at, 1);
                break;
            default:
                s.insert(at, 1, "()[]\"*\\!0"[pick(9)]);
                break;
            }
        }
        return s;
    }

private:
    std::mt19937 rng_;
};

} // namespace

TEST(FilterFuzz, RandomGrammarExpressions) {
    Generator gen(20261201);
    Outcome outcome;
    for (int i = 0; i < 20000; ++i) {
        check(gen.expression(1 + static_cast<int>(gen.pick(7))), outcome);
        if (HasFatalFailure())
            return;
    }
    // Both paths are exercised.
    EXPECT_GT(outcome.accepted, 1000u);
    EXPECT_GT(outcome.refused, 1000u);
}

TEST(FilterFuzz, RandomBytesAndMutations) {
    Generator gen(42);
    Outcome outcome;
    for (int i = 0; i < 20000; ++i) {
        check(gen.randomBytes(1 + gen.pick(60)), outcome);
        if (HasFatalFailure())
            return;
    }
    for (int round = 0; round < 200; ++round)
        for (const auto& v : kLttngGoldenVectors) {
            check(gen.mutate(std::string(v.expression)), outcome);
            if (HasFatalFailure())
                return;
        }
    EXPECT_GT(outcome.accepted, 100u);
}

TEST(FilterFuzz, Adversarial) {
    using namespace std::string_literals;
    Outcome outcome;
    std::vector<std::string> inputs = {
        std::string(300, '(') + "a" + std::string(300, ')'),
        std::string(255, '(') + "a == 1" + std::string(255, ')'),
        std::string(100000, '('),
        std::string(300, '!') + "a",
        std::string(300, '-') + "1 == a",
        "a == " + std::string(1000, '9'),
        "a == 0x" + std::string(17, 'F'),
        "a == 1e" + std::string(400, '9'),
        "a == 0" + std::string(30, '7'),
        std::string(60000, 'a') + " == 1",
        "s == \"" + std::string(65000, 'x') + "\"",
        "s == \"" + std::string(70000, 'x') + "\"",
        std::string(70000, ' ') + "a == 1",
        "a == 1\0"s,
        "\0"s,
        "s == \"\0\""s,
        "$ctx.\0 == 1"s,
        "a[18446744073709551615] == 1",
        "a[18446744073709551616] == 1",
        "$app. == 1",
        "$app.:: == 1",
        "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p[1] == 1",
        "/* unterminated comment",
        "a == 1 /* unterminated",
        "a == 1 // comment",
        "\"\\\\\" == s",
        "s == \"\\",
    };
    // Many names: a large reloc table.
    std::string many = "f0 == 0";
    for (int i = 1; i < 5000; ++i)
        many += " || f" + std::to_string(i) + " == " + std::to_string(i);
    inputs.push_back(many);
    // Right-nested bitwise operators: the interpreter stack overflows.
    std::string nested = "a";
    for (int i = 0; i < 40; ++i)
        nested = "a | (" + nested + ")";
    inputs.push_back(nested + " == 1");
    // Right-nested logical operators stay within the stack.
    std::string logical = "a == 1";
    for (int i = 0; i < 40; ++i)
        logical = "a == 1 && (" + logical + ")";
    inputs.push_back(logical);
    for (const auto& input : inputs) {
        check(input, outcome);
        if (HasFatalFailure())
            return;
    }
    EXPECT_GT(outcome.refused, 10u);
}
