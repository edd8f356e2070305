// A thousand D programs, random and truncated, seeded so that every run sees the same ones:
// parsing never crashes or hangs, every refusal is a ProgramError whose message begins with
// a LINE:COLUMN inside the text, and the programs that parse are bound and run over a
// small trace (dtrace_trace_writer.hpp), where a refusal is again a located ProgramError.
#include "aggregate/options.hpp"
#include "aggregate/parser.hpp"
#include "aggregate/program_run.hpp"
#include "dtrace_trace_writer.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace tracectl::aggregate {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> valid = {
    "demo:entry { self->ts = timestamp; }\n"
    "demo:return /self->ts/ { @[execname] = quantize(timestamp - self->ts); self->ts = 0; }",
    "#pragma D option quiet\nBEGIN { printf(\"%-10s %5d\\n\", \"x\", 1); }\n"
    "demo:note /value > 0 ? 1 : 0/ { @c[text, cpu] = count(); }\nEND { printa(\"%s %d %@d\\n\", "
    "@c); }",
    "ip:::send, ip:::receive { @[args[2]->ip_saddr, args[2]->ip_ver == 4 ? "
    "args[4]->ipv4_protostr : args[5]->ipv6_nextstr] = sum(args[2]->ip_plength); }",
    "tick-1ms { n++; } demo:* { this->x = strjoin(execname, lltostr(tid)); a[this->x] += 1; "
    "trace(strlen(this->x)); } END { trace(n); exit(0); }",
    "demo:return { @ = llquantize(ret, 10, 0, 3, 20); @l = lquantize(ret, -5, 5, 2); "
    "trunc(@l, 2); }\nEND { normalize(@, 3); printa(@); clear(@l); denormalize(@); }",
    "/* comment */ demo:note // line\n{ x = substr(text, 1, -1); y = inet_ntoa(value); "
    "printf(\"%s %s %c %x %o %u %p\\n\", x, y, 65, 255, 8, 1, 16); }",
    "ERROR { printf(\"e\"); } demo:return { z = 1 / ret; z = z << 2 | 1 & ~3 ^ 4 >> 1; }",
};

const std::vector<std::string> vocabulary = {"demo:entry",  "BEGIN",
                                             "END",         "ERROR",
                                             "tick-1ms",    "ip:::send",
                                             "demo:*",      "{",
                                             "}",           "/",
                                             ";",           ",",
                                             "(",           ")",
                                             "[",           "]",
                                             "@",           "@a",
                                             "=",           "+=",
                                             "++",          "--",
                                             "->",          "?",
                                             ":",           "==",
                                             "!=",          "<",
                                             ">=",          "&&",
                                             "||",          "^^",
                                             "!",           "~",
                                             "-",           "*",
                                             "%",           "<<",
                                             ">>",          "&",
                                             "|",           "^",
                                             "self",        "this",
                                             "x",           "arr",
                                             "fd",          "ret",
                                             "text",        "value",
                                             "execname",    "timestamp",
                                             "tid",         "cpu",
                                             "probename",   "args[2]",
                                             "printf",      "printa",
                                             "trace",       "print",
                                             "exit",        "count",
                                             "sum",         "quantize",
                                             "lquantize",   "llquantize",
                                             "strjoin",     "substr",
                                             "stringof",    "clear",
                                             "trunc",       "normalize",
                                             "speculation", "copyin",
                                             "stack",       "0",
                                             "1",           "42",
                                             "0x10",        "0777",
                                             "'a'",         "'\\n'",
                                             "\"s\"",       "\"%d\\n\"",
                                             "\"%s %@d\"",  "\"\\q\"",
                                             "$1",          "$$1",
                                             "$target",     "#pragma D option quiet\n",
                                             "#include",    "/*",
                                             "*/",          "//",
                                             "\n",          " ",
                                             "\t",          "99999999999999999999",
                                             "\"",          "'",
                                             "#",           "`",
                                             "\x01",        "tick-0s",
                                             "profile-9"};

class DtraceFuzz : public ::testing::Test {
protected:
    void SetUp() override {
        const char* tmp = std::getenv("TMPDIR");
        std::string templ = std::string(tmp != nullptr ? tmp : "/tmp") + "/dtrace-fuzz-XXXXXX";
        ASSERT_NE(mkdtemp(templ.data()), nullptr);
        root_ = templ;
        testing::DtraceTraceWriter w;
        const testing::DtraceTraceWriter::Thread app{10, 100, "app"};
        w.entry(0, 1000, app, 3);
        w.exit(0, 1500, app, 0);
        w.note(0, 2000, app, "hi", 5);
        w.packet(true, 0, 3000, app, 4, 100, "10.0.0.1", "10.0.0.2", "lo", "UDP");
        trace_ = (root_ / "trace").string();
        w.write(trace_);
    }
    void TearDown() override { fs::remove_all(root_); }

    /// Checks that `e` is located inside `source`.
    static void expectLocated(const ProgramError& e, const std::string& source) {
        static const std::regex located(R"(^[0-9]+:[0-9]+: .+)");
        EXPECT_TRUE(std::regex_search(e.what(), located)) << e.what() << "\nin: " << source;
        const int lines = 1 + static_cast<int>(std::count(source.begin(), source.end(), '\n'));
        EXPECT_GE(e.position().line, 1) << source;
        EXPECT_LE(e.position().line, lines) << e.what() << "\nin: " << source;
        EXPECT_GE(e.position().column, 1) << source;
        EXPECT_LE(e.position().column, static_cast<int>(source.size()) + 1) << source;
    }

    fs::path root_;
    std::string trace_;
};

TEST_F(DtraceFuzz, AThousandRandomAndTruncatedProgramsAreRefusedWithAPositionOrRun) {
    std::mt19937_64 random(37); // seeded: the same programs every run
    std::vector<std::string> programs;
    for (int i = 0; i < 400; ++i) { // random token soups
        std::string p;
        const int n = 1 + static_cast<int>(random() % 40);
        for (int t = 0; t < n; ++t) {
            p += vocabulary[random() % vocabulary.size()];
            p += random() % 3 == 0 ? "" : " ";
        }
        programs.push_back(p);
    }
    for (int i = 0; i < 400; ++i) { // valid programs cut anywhere
        const std::string& v = valid[random() % valid.size()];
        programs.push_back(v.substr(0, random() % (v.size() + 1)));
    }
    for (int i = 0; i < 200; ++i) { // valid programs with one byte changed, added or removed
        std::string v = valid[random() % valid.size()];
        const std::size_t at = random() % v.size();
        const std::string& word = vocabulary[random() % vocabulary.size()];
        switch (random() % 3) {
        case 0:
            v[at] = static_cast<char>(random() % 128);
            break;
        case 1:
            v.insert(at, word);
            break;
        default:
            v.erase(at, 1 + random() % 8);
        }
        programs.push_back(v);
    }
    ASSERT_EQ(programs.size(), 1000u);
    int parsed = 0;
    int ran = 0;
    for (const std::string& source : programs) {
        const auto start = std::chrono::steady_clock::now();
        try {
            const Program program = parseProgram(source);
            ++parsed;
            RunOptions options;
            applyOptions(program.options, options);
            std::ostringstream out;
            runProgram(program, options, {trace_}, out);
            ++ran;
        } catch (const ProgramError& e) {
            expectLocated(e, source);
        } catch (const std::exception& e) {
            ADD_FAILURE() << "not a ProgramError: " << e.what() << "\nin: " << source;
        }
        EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5)) << source;
    }
    // The corpus is not all refusals: some programs parse, some of those run.
    EXPECT_GT(parsed, 50);
    EXPECT_GT(ran, 20);
    for (const std::string& source : valid) {
        EXPECT_NO_THROW(parseProgram(source)) << source;
    }
}

std::string repeated(const std::string& text, int times) {
    std::string all;
    for (int i = 0; i < times; ++i) {
        all += text;
    }
    return all;
}

TEST_F(DtraceFuzz, DeepNestingThroughKeysCallsAndTernariesIsBounded) {
    // Each would recurse once per level in the parser, the binder and the evaluator.
    const std::vector<std::string> sources = {
        "BEGIN { a[1] = 1; x = " + repeated("a[", 5000) + "1; }",
        "BEGIN { x = " + repeated("strlen(lltostr(", 5000) + "1; }",
        "BEGIN { x = " + repeated("1 ? ", 5000) + "1; }",
        "BEGIN { x = " + repeated("(int)", 5000) + "1; }"};
    for (const std::string& source : sources) {
        try {
            parseProgram(source);
            ADD_FAILURE() << "accepted: " << source.substr(0, 80);
        } catch (const ProgramError& e) {
            expectLocated(e, source);
            EXPECT_NE(std::string(e.what()).find("nested too deeply"), std::string::npos)
                << e.what();
        }
    }
}

} // namespace
} // namespace tracectl::aggregate
