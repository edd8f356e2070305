// A D program run over trace chunks one after another (src/aggregate/chunked_run.hpp), as
// tracectl dtrace's live mode feeds it a session's archives: BEGIN once, the state
// (variables, aggregations, timers, probe ids) kept from chunk to chunk, each chunk's
// output there before the next is read, END once; and the same output as one run over
// the chunks' union. Traces written byte by byte (dtrace_trace_writer.hpp).
#include "aggregate/chunked_run.hpp"
#include "aggregate/options.hpp"
#include "aggregate/parser.hpp"
#include "aggregate/program_run.hpp"
#include "dtrace_trace_writer.hpp"

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace tracectl::aggregate {
namespace {

namespace fs = std::filesystem;
using testing::DtraceTraceWriter;

class DtraceChunks : public ::testing::Test {
protected:
    void SetUp() override {
        const char* tmp = std::getenv("TMPDIR");
        std::string templ = std::string(tmp != nullptr ? tmp : "/tmp") + "/dtrace-chunks-XXXXXX";
        ASSERT_NE(mkdtemp(templ.data()), nullptr);
        root_ = templ;
    }
    void TearDown() override { fs::remove_all(root_); }

    /// Chunk `index` (0, 1, 2): notes "c<index>-<n>" with value n at 1 s * index + n us,
    /// n = 1..3, thread 10 on CPU 0 (n odd) or thread 20 on CPU 1 (n even).
    std::vector<std::string> chunk(int index) {
        DtraceTraceWriter w;
        const DtraceTraceWriter::Thread app{10, 100, "app"};
        const DtraceTraceWriter::Thread web{20, 200, "web"};
        for (int n = 1; n <= 3; ++n) {
            const std::uint64_t at = 1000000000ULL * static_cast<std::uint64_t>(index) +
                                     1000ULL * static_cast<std::uint64_t>(n);
            w.note(n % 2 == 1 ? 0 : 1, at, n % 2 == 1 ? app : web,
                   "c" + std::to_string(index) + "-" + std::to_string(n), n);
        }
        const fs::path dir = root_ / ("chunk-" + std::to_string(index));
        w.write(dir);
        return {dir.string()};
    }

    static RunOptions optionsOf(const Program& program, bool quiet) {
        RunOptions options;
        applyOptions(program.options, options);
        options.quiet = options.quiet || quiet;
        return options;
    }

    fs::path root_;
};

TEST_F(DtraceChunks, StateCarriesOverAndEachChunksOutputComesBeforeTheNextIsRead) {
    const Program program = parseProgram("BEGIN { printf(\"begin\\n\"); }\n"
                                         "demo:note { n++; printf(\"%d %s\\n\", n, text); }\n"
                                         "demo:note { @total = sum(value); }\n"
                                         "END { printf(\"end %d\\n\", n); }");
    std::ostringstream out;
    ChunkedRun run(program, optionsOf(program, true), out);
    run.begin(0);
    EXPECT_EQ(out.str(), "begin\n");
    EXPECT_TRUE(run.feed(chunk(0)));
    EXPECT_EQ(out.str(), "begin\n1 c0-1\n2 c0-2\n3 c0-3\n");
    EXPECT_TRUE(run.feed({})); // a chunk without a trace (nothing recorded)
    EXPECT_TRUE(run.feed(chunk(1)));
    EXPECT_EQ(out.str(), "begin\n1 c0-1\n2 c0-2\n3 c0-3\n4 c1-1\n5 c1-2\n6 c1-3\n");
    const ProgramRun result = run.finish();
    // BEGIN once, the counter across chunks, END once, the sum over both chunks.
    EXPECT_EQ(out.str(), "begin\n1 c0-1\n2 c0-2\n3 c0-3\n4 c1-1\n5 c1-2\n6 c1-3\nend 6\n"
                         "\n               12\n");
    EXPECT_EQ(result.statistics.eventRecords, 6u);
    EXPECT_TRUE(result.unmatchedProbes.empty());
}

TEST_F(DtraceChunks, ChunksPrintWhatOneRunOverTheirUnionPrints) {
    // Not quiet: probe ids stay those first given (a chunk's event class is another one).
    const std::string source = "demo:note { trace(value); } demo:note /value == 2/ { @c[execname] "
                               "= count(); } END { printa(\"%s %@d\\n\", @c); }";
    const Program program = parseProgram(source);
    const auto c0 = chunk(0);
    const auto c1 = chunk(1);
    const auto c2 = chunk(2);
    std::ostringstream chunked;
    ChunkedRun run(program, optionsOf(program, false), chunked);
    for (const auto& c : {c0, c1, c2}) {
        ASSERT_TRUE(run.feed(c));
    }
    run.finish();
    std::ostringstream whole;
    runProgram(program, optionsOf(program, false), {c0[0], c1[0], c2[0]}, whole);
    EXPECT_EQ(chunked.str(), whole.str());
    std::size_t notes = 0;
    for (std::size_t at = 0; (at = chunked.str().find("      4                            :note ",
                                                      at)) != std::string::npos;
         ++at) {
        ++notes;
    }
    EXPECT_EQ(notes, 9u) << chunked.str();
    EXPECT_NE(chunked.str().find("web 3\n"), std::string::npos) << chunked.str();
}

TEST_F(DtraceChunks, AggregationsOnlyAreReadInParallelAndSummedOverChunks) {
    const Program program = parseProgram("demo:note { @n = count(); @s[execname] = sum(value); }");
    ASSERT_FALSE(program.needsOrder());
    std::ostringstream out;
    ChunkedRun run(program, optionsOf(program, false), out, true);
    run.feed(chunk(0));
    run.feed(chunk(1));
    std::string json;
    run.finish(&json);
    const auto document = nlohmann::json::parse(json);
    EXPECT_EQ(document["aggregations"][0]["entries"][0]["value"], 6) << json;
    // By value: web (n = 2 in each chunk), then app (n = 1 and 3).
    EXPECT_EQ(document["aggregations"][1]["entries"][0]["keys"][0], "web") << json;
    EXPECT_EQ(document["aggregations"][1]["entries"][0]["value"], 4) << json;
    EXPECT_EQ(document["aggregations"][1]["entries"][1]["value"], 8) << json;
    EXPECT_EQ(out.str(), "");
}

TEST_F(DtraceChunks, TimersFireWhenTimeAdvancesWithoutRecordsAndExitEndsTheRun) {
    const Program program = parseProgram("demo:note { n++; }\n"
                                         "tick-1sec { printf(\"tick %d %d\\n\", timestamp, n); }\n"
                                         "tick-1sec /n == 6/ { exit(4); }\n"
                                         "END { printf(\"end\\n\"); }");
    std::ostringstream out;
    ChunkedRun run(program, optionsOf(program, true), out);
    run.begin(0);
    ASSERT_TRUE(run.feed(chunk(0)));
    // No record after chunk 0 yet: the first tick, due at 1 s, has not fired.
    EXPECT_EQ(out.str(), "");
    ASSERT_TRUE(run.advanceTo(1500000000)); // the time of a rotation
    EXPECT_EQ(out.str(), "tick 1000000000 3\n");
    // Chunk 1's records are after 1.5 s... here at 1 s + n us: a record earlier than time
    // already advanced to is still run (rotations bound chunks per stream, not exactly).
    EXPECT_FALSE(run.feed(chunk(1)) && run.advanceTo(2000000000));
    EXPECT_EQ(out.str(), "tick 1000000000 3\ntick 2000000000 6\n");
    EXPECT_EQ(run.exitStatus(), 4);
    EXPECT_FALSE(run.feed(chunk(2))); // not read after exit()
    const ProgramRun result = run.finish();
    EXPECT_EQ(out.str(), "tick 1000000000 3\ntick 2000000000 6\nend\n");
    EXPECT_EQ(result.exitStatus, 4);
    EXPECT_EQ(result.statistics.eventRecords, 6u);
}

TEST(SwitchRate, PeriodOfARateOrATime) {
    const auto period = [](const std::string& text) {
        RunOptions options;
        if (!text.empty()) {
            applyOptions({optionFromText("switchrate=" + text)}, options);
        }
        return switchPeriodNs(options);
    };
    EXPECT_EQ(period(""), 1000000000); // dtrace's default, 1hz
    EXPECT_EQ(period("10hz"), 100000000);
    EXPECT_EQ(period("4"), 250000000); // a bare number is a rate
    EXPECT_EQ(period("250ms"), 250000000);
    EXPECT_EQ(period("2s"), 2000000000);
    EXPECT_EQ(period("1min"), 60000000000);
    EXPECT_EQ(period("5000hz"), 10000000); // held to 10 ms
    EXPECT_EQ(period("1ns"), 10000000);
    EXPECT_EQ(period("0"), 10000000);
    EXPECT_EQ(period("30d"), 86400000000000); // held to a day
}

// dtrace's forms of a rate, as libdtrace's dt_opt_rate reads them: the number as
// strtoull(3) with base 0 reads it (hexadecimal, octal), a unit in any case; anything
// else is refused with what is taken.
TEST(SwitchRate, TakesDtracesFormsAndRefusesOthers) {
    const auto period = [](const std::string& text) -> std::int64_t {
        RunOptions options;
        applyOptions({optionFromText("switchrate=" + text)}, options);
        return switchPeriodNs(options);
    };
    EXPECT_EQ(period("20"), 50000000);
    EXPECT_EQ(period("20Hz"), 50000000);
    EXPECT_EQ(period("0x10hz"), 62500000); // 16 per second
    EXPECT_EQ(period("010"), 125000000);   // octal: 8 per second
    EXPECT_EQ(period("500000us"), 500000000);
    EXPECT_EQ(period("300msec"), 300000000);
    EXPECT_EQ(period("3SEC"), 3000000000);
    EXPECT_EQ(period("2m"), 120000000000); // m is minutes, as in dtrace
    EXPECT_EQ(period("1hour"), 3600000000000);
    EXPECT_EQ(period("20000000nsec"), 20000000);
    EXPECT_EQ(period("9223372036854775807d"), 86400000000000); // no overflow: a day
    const auto refusal = [](const std::string& text) -> std::string {
        RunOptions options;
        try {
            applyOptions({optionFromText("switchrate=" + text)}, options);
        } catch (const ProgramError& e) {
            return e.message();
        }
        return "accepted";
    };
    for (const char* bad : {"", "1.5hz", "10k", "hz", "-1", "+1", " 5", "5 hz", "10hzz", "0x", "08",
                            "9223372036854775808", "1e3"}) {
        EXPECT_EQ(refusal(bad),
                  "option switchrate needs a rate or a period, as dtrace takes it: N per second "
                  "(N or Nhz), or N with ns, us, ms, s, m, h or d (or nsec, usec, msec, sec, min, "
                  "hour, day), N decimal, 0x hexadecimal or 0 octal, as in 10hz or 100ms; not '" +
                      std::string(bad) + "'")
            << bad;
    }
    // Sizes as dt_optval_parse reads them.
    RunOptions options;
    applyOptions({optionFromText("strsize=0x10")}, options);
    EXPECT_EQ(options.strsize, 16u);
    applyOptions({optionFromText("strsize=01K")}, options);
    EXPECT_EQ(options.strsize, 1024u);
    EXPECT_NO_THROW(applyOptions({optionFromText("bufsize=0x400k")}, options));
    EXPECT_THROW(applyOptions({optionFromText("bufsize=4kb")}, options), ProgramError);
    EXPECT_THROW(applyOptions({optionFromText("bufsize=4.5m")}, options), ProgramError);
}

} // namespace
} // namespace tracectl::aggregate
