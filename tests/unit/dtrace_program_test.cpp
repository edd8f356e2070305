// tracectl dtrace's language (src/aggregate: parser, binding, evaluation, interpreter) on
// CTF traces written here byte by byte (dtrace_trace_writer.hpp) and read by our reader,
// with dtrace(1)'s exact output expected: BEGIN/END, printf and its conversions, trace,
// printa with and without a format, variables (global, associative arrays, this->,
// self->), the ternary operator, string subroutines, timers on the trace's clock, exit(),
// ERROR, llquantize, clear, trunc, normalize, the aggsortkey/aggsortrev options, and the
// refusals (speculations, copyin, stack(), destructive) with their line:column.
#include "aggregate/options.hpp"
#include "aggregate/parser.hpp"
#include "aggregate/program_run.hpp"
#include "dtrace_trace_writer.hpp"

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <sstream>
#include <string>

namespace tracectl::aggregate {
namespace {

namespace fs = std::filesystem;
using testing::DtraceTraceWriter;

class DtraceProgram : public ::testing::Test {
protected:
    void SetUp() override {
        const char* tmp = std::getenv("TMPDIR");
        std::string templ = std::string(tmp != nullptr ? tmp : "/tmp") + "/dtrace-program-XXXXXX";
        ASSERT_NE(mkdtemp(templ.data()), nullptr);
        root_ = templ;
    }
    void TearDown() override { fs::remove_all(root_); }

    /// The standard trace: thread 10 (app) on CPU 0 and thread 20 (web) on CPU 1.
    /// Times in ns: entries/returns of both threads, notes, and ip packets.
    std::string standardTrace() {
        DtraceTraceWriter w;
        const DtraceTraceWriter::Thread app{10, 100, "app"};
        const DtraceTraceWriter::Thread web{20, 200, "web"};
        w.entry(0, 1000, app, 3);
        w.exit(0, 1500, app, 10); // 500 ns
        w.entry(1, 1200, web, 4);
        w.exit(1, 3200, web, -1); // 2000 ns
        w.entry(0, 4000, app, 3);
        w.exit(0, 4100, app, 20); // 100 ns
        w.note(1, 5000, web, "hello", 7);
        w.note(0, 6000, app, "world", -3);
        w.note(1, 2500000000, web, "late", 1);
        const std::string path = (root_ / "trace").string();
        w.write(path);
        return path;
    }

    struct Result {
        std::string out;
        ProgramRun run;
    };

    Result run(const std::string& source, const std::string& trace, bool quiet = false) {
        const Program program = parseProgram(source);
        RunOptions options;
        applyOptions(program.options, options);
        options.quiet = options.quiet || quiet;
        std::ostringstream out;
        Result r;
        r.run = runProgram(
            program, options,
            trace.empty() ? std::vector<std::string>{} : std::vector<std::string>{trace}, out);
        r.out = out.str();
        return r;
    }

    fs::path root_;
};

/// "  KEY" as DTrace prints a string key ("  %-50s").
std::string key(const std::string& k) {
    return "  " + k + std::string(k.size() < 50 ? 50 - k.size() : 0, ' ');
}
/// " %16d" as DTrace prints a count, a sum...
std::string value(long long v) {
    const std::string text = std::to_string(v);
    return " " + std::string(16 - text.size(), ' ') + text;
}
/// A distribution's heading line.
const std::string ruler =
    "\n           value  ------------- Distribution ------------- count    \n";
/// A distribution row: "%16s " label, '|', `ats` '@' padded to 40, " %-9d" count.
std::string row(const std::string& label, int ats, long long count) {
    std::string c = std::to_string(count);
    return std::string(16 - label.size(), ' ') + label + " |" + std::string(ats, '@') +
           std::string(40 - ats, ' ') + " " + c + std::string(9 - c.size(), ' ') + "\n";
}

TEST_F(DtraceProgram, BeginPrintfAndEndInTimeOrderWhenQuiet) {
    const auto r = run("#pragma D option quiet\n"
                       "BEGIN { printf(\"start\\n\"); }\n"
                       "demo:entry { printf(\"%-6s|%5d|%x|%s\\n\", execname, tid, fd, "
                       "probename); }\n"
                       "dtrace:::END { printf(\"end %d\\n\", 42); }",
                       standardTrace());
    // demo:entry at 1000 (app, CPU 0), 1200 (web, CPU 1), 4000 (app): in time order
    // across the two streams.
    EXPECT_EQ(r.out, "start\n"
                     "app   |   10|3|entry\n"
                     "web   |   20|4|entry\n"
                     "app   |   10|3|entry\n"
                     "end 42\n");
    EXPECT_FALSE(r.run.exitStatus);
}

TEST_F(DtraceProgram, WithoutQuietEachFiringHasDtracesCpuIdAndProbeColumns) {
    const auto r = run("BEGIN { trace(1); }\n"
                       "demo:note /value > 0/ { trace(text); trace(value); }\n"
                       "END { printf(\"done\"); }",
                       standardTrace());
    // ids: 1 BEGIN, 2 END, then event classes as first met (demo:note: 4). trace() of
    // an int " %8d", of an int64 " %16lld", of a string "  %-33s"; then a newline.
    EXPECT_EQ(r.out,
              "CPU     ID                    FUNCTION:NAME\n"
              "  0      1                           :BEGIN         1\n"
              "  1      4                            :note   hello                            "
              "                7\n"
              "  1      4                            :note   late                             "
              "                1\n"
              "  0      2                             :END done\n");
}

TEST_F(DtraceProgram, SelfVariablesMakeALatencyHistogramPerThread) {
    // Two threads interleave: app enters at 1000 and returns at 1500, web enters at 1200
    // (between them) and returns at 3200; app again 4000 -> 4100. self->ts is each
    // thread's own.
    const auto r = run("demo:entry { self->ts = timestamp; }\n"
                       "demo:return /self->ts/ {\n"
                       "    @latency[execname] = quantize(timestamp - self->ts);\n"
                       "    self->ts = 0;\n"
                       "}",
                       standardTrace());
    // app: 500 (bucket 256) and 100 (bucket 64); web: 2000 (bucket 1024). Sorted by the
    // sum of bucket values: app (320) before web (1024).
    EXPECT_EQ(r.out, "\n" + key("app") + ruler + row("32", 0, 0) + row("64", 20, 1) +
                         row("128", 0, 0) + row("256", 20, 1) + row("512", 0, 0) + "\n" +
                         key("web") + ruler + row("512", 0, 0) + row("1024", 40, 1) +
                         row("2048", 0, 0) + "\n");
    EXPECT_EQ(r.run.errors, 0u);
}

TEST_F(DtraceProgram, AClauseWithoutActionsRunsTheDefaultAction) {
    // dtrace -n 'PROBE': no body (or an empty one) is a trace() of nothing: the header
    // once, then the CPU, probe id and FUNCTION:NAME of each firing, in time order; a
    // predicate still decides. Quiet: nothing at all.
    const std::string program = "demo:entry\n"
                                "demo:return /ret < 0/ { }\n"
                                "END {}";
    const std::string trace = standardTrace();
    EXPECT_EQ(run(program, trace).out, "CPU     ID                    FUNCTION:NAME\n"
                                       "  0      4                           :entry \n"
                                       "  1      4                           :entry \n"
                                       "  1      5                          :return \n"
                                       "  0      4                           :entry \n"
                                       "  0      2                             :END \n");
    EXPECT_EQ(run(program, trace, true).out, "");
    // A predicate needs its actions, as in dtrace.
    try {
        parseProgram("demo:entry /fd == 3/");
        ADD_FAILURE() << "accepted";
    } catch (const ProgramError& e) {
        EXPECT_STREQ(e.what(), "1:21: syntax error: expected '{' (the actions after a "
                               "predicate), found end of program");
    }
}

TEST_F(DtraceProgram, ThreadLocalAssociativeArraysAreEachThreadsOwnAndFreedByZero) {
    // self->ts[arg0] as D allows it: each thread's element per key; assigning 0 frees it,
    // and an element never assigned (or freed) reads as 0.
    DtraceTraceWriter w;
    const DtraceTraceWriter::Thread app{10, 100, "app"};
    const DtraceTraceWriter::Thread web{20, 200, "web"};
    w.note(0, 1000, app, "x", 1);
    w.note(1, 1100, web, "x", 1);
    w.note(0, 1200, app, "y", 1);
    w.note(0, 1500, app, "x", -1);
    w.note(1, 2100, web, "x", -1);
    w.note(0, 2200, app, "y", -1);
    w.note(0, 3000, app, "x", 0);
    w.note(1, 3100, web, "y", 0);
    w.note(0, 3200, app, "x", -1);
    const std::string trace = (root_ / "trace").string();
    w.write(trace);
    const auto r = run("demo:note /value > 0/ { self->ts[arg0] = timestamp; }\n"
                       "demo:note /value < 0 && self->ts[arg0]/ {\n"
                       "    printf(\"%s %s %d\\n\", execname, arg0, timestamp - self->ts[arg0]);\n"
                       "    self->ts[arg0] = 0;\n"
                       "}\n"
                       "demo:note /value == 0/ { printf(\"%s %s %d\\n\", execname, arg0, "
                       "self->ts[arg0]); }\n"
                       "demo:note /value > 0/ { self->n[arg0, execname] += 2; }\n"
                       "demo:note /value == 0/ { printf(\"%d\\n\", self->n[\"x\", execname]); }",
                       trace, true);
    EXPECT_EQ(r.out, "app x 500\n"
                     "web x 1000\n"
                     "app y 1000\n"
                     "app x 0\n"
                     "2\n"
                     "web y 0\n"
                     "2\n");
    EXPECT_EQ(r.run.errors, 0u);
    const auto error = [&](const std::string& source) -> std::string {
        try {
            parseProgram(source);
        } catch (const ProgramError& e) {
            return e.what();
        }
        return "accepted";
    };
    EXPECT_EQ(error("a:b { self->ts[arg0] = 1; } a:c /self->ts/ { x = 1; }"),
              "1:40: variable 'ts' has 1 key(s), not 0 (first used at 1:7)");
    EXPECT_EQ(error("a:b { this->d[arg0] = 1; }"),
              "1:7: clause-local variables cannot be associative arrays in D "
              "(this->name[key]): use a global or self-> array");
}

TEST_F(DtraceProgram, GlobalsArraysClauseLocalsTernaryAndStringSubroutines) {
    const auto r =
        run("#pragma D option quiet\n"
            "demo:entry { n++; last[execname, fd] = timestamp; }\n"
            "demo:return {\n"
            "  this->d = timestamp - last[execname, execname == \"app\" ? 3 : 4];\n"
            "  printf(\"%s %d %s\\n\", execname, this->d, this->d > 1000 ? \"slow\" : \"fast\");\n"
            "}\n"
            "END { printf(\"%d entries; %s %s %d %s %s %s %s %s\\n\", n, strjoin(\"a\", \"b\"),\n"
            "  substr(\"hello\", 1, 3), strlen(\"hello\"), lltostr(-12), inet_ntoa(0x7f000001),\n"
            "  stringof(5), substr(\"hello\", -2), inet_ntop(2, 0x0a000001)); }",
            standardTrace());
    EXPECT_EQ(r.out, "app 500 fast\n"
                     "web 2000 slow\n"
                     "app 100 fast\n"
                     "3 entries; ab ell 5 -12 127.0.0.1 5 lo 10.0.0.1\n");
}

TEST_F(DtraceProgram, ArgNIsThePayloadsNthMember) {
    const auto r = run("demo:note { printf(\"%s %d|\", arg0, arg1); }\n"
                       "demo:entry /arg0 == 4/ { printf(\"fd %d|\", arg0); }",
                       standardTrace(), true);
    EXPECT_EQ(r.out, "fd 4|hello 7|world -3|late 1|");
}

TEST_F(DtraceProgram, CastsKeepTheTypesBytes) {
    const auto r = run("BEGIN { printf(\"%d %d %d %d %d %d\\n\", (char)255, (unsigned char)-1, "
                       "(uint16_t)65537, (int)0x1ffffffff, (unsigned int)-1, (long long)-5); }\n"
                       "BEGIN { trace((uint8_t)300); exit(0); }",
                       "", false);
    // trace() prints a 1-byte value " %3d".
    EXPECT_EQ(r.out, "CPU     ID                    FUNCTION:NAME\n"
                     "  0      1                           :BEGIN -1 255 1 -1 4294967295 -5\n\n"
                     "  0      1                           :BEGIN   44\n");
}

TEST_F(DtraceProgram, OperatorsAndBuiltInVariables) {
    const auto r = run("demo:note /probeprov == \"demo\" && value > 0/ {\n"
                       "  printf(\"%s:%s:%s:%s pid %d tid %d cpu %d at %d wall %d\\n\", "
                       "probeprov, probemod, probefunc, probename, pid, tid, cpu, timestamp, "
                       "walltimestamp);\n"
                       "  printf(\"%d %d %d %d %d %d %d %d %d %d\\n\", 6 & 3, 6 | 3, 6 ^ 3, ~0, "
                       "1 << 4, -16 >> 2, 7 % 3, 1 ^^ 1, 1 ^^ 0, \"abc\" < \"abd\");\n"
                       "  x = 10; x += 5; x -= 1; x *= 2; x /= 4; x %= 4; x <<= 3; x |= 1; "
                       "x &= 0xf; x ^= 2; x >>= 1; x--; print(x);\n"
                       "}",
                       standardTrace(), true);
    // web (pid 200, tid 20) on CPU 1 at 5000 ns, and again at 2500000000 ns. x: 10, 15,
    // 14, 28, 7, 3, 24, 25, 9, 11, 5, 4.
    EXPECT_EQ(r.out, "demo:::note pid 200 tid 20 cpu 1 at 5000 wall 5000\n"
                     "2 7 5 -1 16 -4 1 0 1 1\n"
                     "4"
                     "demo:::note pid 200 tid 20 cpu 1 at 2500000000 wall 2500000000\n"
                     "2 7 5 -1 16 -4 1 0 1 1\n"
                     "4");
}

TEST_F(DtraceProgram, PrintfConversionsWidthsAndFlags) {
    const auto r = run("BEGIN { printf(\"[%5d][%-5d][%05d][%x][%X][%#x][%o][%c][%p][%10s]"
                       "[%-10s][%.2s][%%][%+d][%i][%lld][%u]\\n\", 42, 42, 42, 255, 255, 255, 8, "
                       "65, 4096, \"abc\", \"abc\", \"abc\", 7, -3, 1234567890123LL, -1); "
                       "exit(0); }",
                       "", true);
    EXPECT_EQ(r.out, "[   42][42   ][00042][ff][FF][0xff][10][A][0x1000][       abc][abc       ]"
                     "[ab][%][+7][-3][1234567890123][18446744073709551615]\n");
    EXPECT_EQ(r.run.exitStatus, 0);
}

TEST_F(DtraceProgram, PrintaWithAFormatPrintsOnceAndTheRestIsPrintedAtTheEnd) {
    const auto r = run("#pragma D option quiet\n"
                       "demo:entry { @c[execname] = count(); @s[execname] = sum(fd); }\n"
                       "END { printa(\"%-8s %@d\\n\", @c); }",
                       standardTrace());
    // @c by value: web 1, app 2; @s, never printa'd, as dtrace prints it at the end.
    EXPECT_EQ(r.out, "web      1\n"
                     "app      2\n"
                     "\n" +
                         key("web") + value(4) + "\n" + key("app") + value(6) + "\n");
}

TEST_F(DtraceProgram, PrintaWithoutAFormatAndSeveralKeysGlobsAndPredicates) {
    const auto r = run("demo:* /execname == \"web\"/ { @[probename, cpu] = count(); }\n"
                       "END { printa(@); }",
                       standardTrace(), true);
    // cpu is an int: " %8d". By value, then key.
    EXPECT_EQ(r.out, "\n" + key("entry") + "        1" + value(1) + "\n" + key("return") +
                         "        1" + value(1) + "\n" + key("note") + "        1" + value(2) +
                         "\n");
}

TEST_F(DtraceProgram, TimersFireOnTheTracesClockAndExitEndsTheRun) {
    // The first record is at 1000 ns: tick-1sec fires at 1000001000 and 2000001000, both
    // before the last record (2500000000).
    auto r = run("tick-1sec { printf(\"tick %d\\n\", timestamp); }\n"
                 "profile:::tick-2s { printf(\"two %d\\n\", timestamp); }",
                 standardTrace(), true);
    EXPECT_EQ(r.out, "tick 1000001000\ntick 2000001000\ntwo 2000001000\n");
    // exit() in the first tick: END runs, the records after it are not.
    r = run("demo:note { printf(\"%s\\n\", text); }\n"
            "tick-1sec { exit(3); }\n"
            "END { printf(\"end\\n\"); }",
            standardTrace(), true);
    EXPECT_EQ(r.out, "hello\nworld\nend\n");
    EXPECT_EQ(r.run.exitStatus, 3);
}

TEST_F(DtraceProgram, RunTimeErrorsFireErrorAndStopTheirClause) {
    const auto r = run("demo:return { x = 10 / (ret - ret); printf(\"not reached\\n\"); }\n"
                       "ERROR { printf(\"error\\n\"); }",
                       standardTrace(), true);
    EXPECT_EQ(r.out, "error\nerror\nerror\n");
    EXPECT_EQ(r.run.errors, 3u);
}

TEST_F(DtraceProgram, LogLinearQuantization) {
    // ret + 100: 110, 99, 120. Factor 10, magnitudes 0..2, 10 steps: 99 is in [90, 100),
    // 110 and 120 in [100, 200).
    const auto r = run("demo:return { @ = llquantize(ret + 100, 10, 0, 2, 10); }", standardTrace());
    EXPECT_EQ(r.out, "\n" + ruler + row("80", 0, 0) + row("90", 13, 1) + row("100", 27, 2) +
                         row("200", 0, 0) + "\n");
}

TEST_F(DtraceProgram, ClearTruncNormalizeAndSortOptions) {
    // Per thread: app has 2 entries, 2 returns, 1 note (5); web 1, 1, 2 (4).
    const std::string counts = "demo:entry, demo:return, demo:note { @[execname] = count(); }\n";
    auto r = run("#pragma D option aggsortkey\n" + counts + "END { normalize(@, 2); }",
                 standardTrace(), true);
    EXPECT_EQ(r.out, "\n" + key("app") + value(2) + "\n" + key("web") + value(2) + "\n");
    r = run(counts + "END { normalize(@, 2); printa(@); denormalize(@); printa(@); }",
            standardTrace(), true);
    EXPECT_EQ(r.out, "\n" + key("web") + value(2) + "\n" + key("app") + value(2) + "\n" + "\n" +
                         key("web") + value(4) + "\n" + key("app") + value(5) + "\n");
    r = run("#pragma D option aggsortrev\n" + counts, standardTrace(), true);
    EXPECT_EQ(r.out, "\n" + key("app") + value(5) + "\n" + key("web") + value(4) + "\n");
    r = run(counts + "END { trunc(@, 1); }", standardTrace(), true);
    EXPECT_EQ(r.out, "\n" + key("app") + value(5) + "\n");
    r = run(counts + "END { trunc(@); }", standardTrace(), true);
    EXPECT_EQ(r.out, "");
    // clear() at the note "world" (6000 ns): only the last note (web) counts after it; the
    // keys stay, at zero.
    r = run(counts + "demo:note /text == \"world\"/ { clear(@); }", standardTrace(), true);
    EXPECT_EQ(r.out, "\n" + key("app") + value(0) + "\n" + key("web") + value(1) + "\n");
}

TEST_F(DtraceProgram, EveryStringIsBoundedByStrsize) {
    // x doubles 40 times: without a bound, 2^40 bytes. DTrace keeps strsize - 1 bytes
    // (default strsize 256) of every string.
    std::string doubling = "BEGIN { x = \"ab\"; ";
    for (int i = 0; i < 40; ++i) {
        doubling += "x = strjoin(x, x); ";
    }
    doubling += "printf(\"%d %s|\", strlen(x), substr(x, 250)); }\n"
                "BEGIN { y = strjoin(x, \"more\"); printf(\"%d \", strlen(y)); "
                "@[strjoin(x, \"z\")] = count(); printf(\"%d\\n\", strlen(lltostr(1))); "
                "exit(0); }";
    Result r = run(doubling, "", true);
    EXPECT_EQ(
        r.out, "255 ababa|255 1\n\n  " + [] {
            std::string s;
            while (s.size() < 255) {
                s += "ab";
            }
            return s.substr(0, 255);
        }() + "                1\n");
    // strsize (pragma or -x): at most strsize bytes with the NUL.
    r = run("#pragma D option strsize=8\n"
            "BEGIN { x = strjoin(\"abcdef\", \"ghijkl\"); printf(\"%s %d %s\\n\", x, "
            "strlen(x), \"a literal longer than that\"); exit(0); }",
            "", true);
    EXPECT_EQ(r.out, "abcdefg 7 a liter\n");
    r = run("#pragma D option strsize=1k\n"
            "BEGIN { x = \"0123456789\"; x = strjoin(x, x); x = strjoin(x, x); x = strjoin(x, x); "
            "x = strjoin(x, x); x = strjoin(x, x); x = strjoin(x, x); x = strjoin(x, x); "
            "printf(\"%d\\n\", strlen(x)); exit(0); }",
            "", true);
    EXPECT_EQ(r.out, "1023\n");
}

TEST_F(DtraceProgram, KernelRecordsHaveTheirTracepointSystemAsProvider) {
    DtraceTraceWriter w;
    w.domain = "kernel";
    w.renames = {{"demo:note", "sched_switch"},
                 {"demo:entry", "syscall_entry_write"},
                 {"demo:return", "kmalloc"}};
    const DtraceTraceWriter::Thread app{10, 100, "app"};
    w.note(0, 1000, app, "switch", 1);
    w.entry(0, 2000, app, 3);
    w.exit(0, 3000, app, 0);
    const std::string trace = (root_ / "kernel").string();
    w.write(trace);
    const Result r =
        run("sched:sched_switch /probeprov == \"sched\"/ { printf(\"%s|%s|%s\\n\", probeprov, "
            "probename, text); }\n"
            "syscall:* { printf(\"%s|%s\\n\", probeprov, probename); }\n"
            "kmem:kmalloc { printf(\"[%s]|%s\\n\", probeprov, probename); }",
            trace, true);
    EXPECT_EQ(r.out, "sched|sched_switch|switch\nsyscall|syscall_entry_write\n[]|kmalloc\n");
    // The same names in a UST trace are only names.
    w.domain = "ust";
    w.renames = {{"demo:note", "sched_switch"}};
    const std::string ust = (root_ / "ust").string();
    w.write(ust);
    EXPECT_EQ(run("sched_switch { printf(\"[%s]\\n\", probeprov); }", ust, true).out, "[]\n");
}

TEST_F(DtraceProgram, RefusalsNameTheFeatureAndWhere) {
    const auto error = [](const std::string& source) -> std::string {
        try {
            RunOptions options;
            const Program program = parseProgram(source);
            applyOptions(program.options, options);
        } catch (const ProgramError& e) {
            return e.what();
        }
        return "accepted";
    };
    EXPECT_EQ(error("BEGIN {\n  x = speculation();\n}"),
              "2:7: speculations (speculation) are not supported: over recorded events there "
              "is nothing to keep back");
    EXPECT_EQ(error("a:b { @[copyinstr(arg0)] = count(); }"),
              "1:9: copyinstr() reads or writes a live process's memory: not available over "
              "recorded events");
    EXPECT_EQ(error("a:b { @[jstack()] = count(); }"),
              "1:9: jstack() is not supported: it needs a Java VM's ustack helper; use "
              "ustack()");
    EXPECT_EQ(error("a:b { ustack(); stack(3); ustack(2); }"), "accepted"); // actions
    EXPECT_EQ(error("a:b { ustack(0); }"),
              "1:14: ustack() takes a positive integer constant: the number of frames");
    EXPECT_EQ(error("a:b { @[ustack(0)] = count(); }"),
              "1:16: ustack() takes a positive integer constant: the number of frames");
    EXPECT_EQ(error("a:b { @[stack(1, 2)] = count(); }"),
              "1:9: stack() takes 0 to 1 argument(s), 2 given");
    EXPECT_EQ(error("\n#pragma D option destructive\nBEGIN { exit(0); }"),
              "2:1: option destructive is refused: destructive actions are not available "
              "(tracectl dtrace never acts on the traced system)");
    EXPECT_EQ(error("BEGIN { system(\"ls\"); }"),
              "1:9: system() is a destructive action: not available (tracectl dtrace never "
              "acts on the traced system)");
    EXPECT_EQ(error("profile-97 { @ = count(); }"),
              "1:1: profile-N probes fire on every CPU at a live system's interrupts: not "
              "available over recorded events (tick-N is)");
    EXPECT_EQ(error("a:b { @ = sum(vtimestamp); }"),
              "1:15: built-in variable 'vtimestamp' is not recorded in the traces: not "
              "supported");
    EXPECT_EQ(error("#include <x.h>\nBEGIN {}"),
              "1:1: preprocessor directive '#include' is not supported (tracectl dtrace does "
              "not run the C preprocessor)");
    EXPECT_EQ(error("#pragma D option nosuch\nBEGIN {}"),
              "1:1: unknown option 'nosuch' (quiet, switchrate, aggrate, bufsize, strsize, "
              "defaultargs, aggsortkey, aggsortrev)");
    EXPECT_EQ(error("#pragma D option strsize=0\nBEGIN {}"),
              "1:1: option strsize needs a size from 1 to 1m (bytes, with the terminating NUL), "
              "as in 512 or 4k, not '0'");
    EXPECT_EQ(error("#pragma D option strsize=2m\nBEGIN {}"),
              "1:1: option strsize needs a size from 1 to 1m (bytes, with the terminating NUL), "
              "as in 512 or 4k, not '2m'");
    EXPECT_EQ(error("#pragma D option strsize=99999999999999t\nBEGIN {}"),
              "1:1: option strsize needs a size from 1 to 1m (bytes, with the terminating NUL), "
              "as in 512 or 4k, not '99999999999999t'");
    EXPECT_EQ(error("BEGIN { printf(\"%d %d\\n\", 1); }"),
              "1:16: printf() format has 2 conversion(s) but 1 argument(s) are given");
    EXPECT_EQ(error("BEGIN { printf(\"%f\\n\", 1); }"),
              "1:16: format conversion '%f': floating point and symbols are not supported");
    // Timers: no faster than illumos's profile provider's minimum, 200 us (5000 hz).
    const std::string tooFast = "' is faster than the shortest period, 200us (5000hz, "
                                "illumos's profile provider's minimum)";
    EXPECT_EQ(error("tick-1ns { n++; }"), "1:1: timer probe 'tick-1ns" + tooFast);
    EXPECT_EQ(error("BEGIN {}\nprofile:::tick-199999ns { n++; }"),
              "2:1: timer probe 'profile:::tick-199999ns" + tooFast);
    EXPECT_EQ(error("tick-5001 { n++; }"), "1:1: timer probe 'tick-5001" + tooFast);
    EXPECT_EQ(error("tick-2000000000hz { n++; }"), "1:1: timer probe 'tick-2000000000hz" + tooFast);
    EXPECT_EQ(error("tick-200us, tick-5000hz, tick-5000 { n++; }"), "accepted");
    EXPECT_EQ(error("#pragma D option switchrate=10hz\n#pragma D option bufsize=4m\n"
                    "#pragma D option aggrate=100ms\nBEGIN { exit(0); }"),
              "accepted");
}

TEST_F(DtraceProgram, TypeErrorsAreFoundWhenBound) {
    const auto error = [&](const std::string& source) -> std::string {
        try {
            run(source, standardTrace(), true);
        } catch (const ProgramError& e) {
            return e.what();
        }
        return "accepted";
    };
    EXPECT_EQ(error("demo:note { printf(\"%d\\n\", text); }"),
              "1:28: printf() argument #2 is a string: it does not fit conversion %d (in "
              "event class 'demo:note')");
    // Event classes are bound in the trace's order (demo:entry first): x is an integer.
    EXPECT_EQ(error("demo:note { x = text; } demo:entry { x = fd; }"),
              "1:13: variable 'x' is an integer: it cannot be assigned a string");
    EXPECT_EQ(error("demo:note { @ = count(); x = value > 0 ? text : 1; }"),
              "1:40: operator ?: has a string on one side and an integer on the other (in "
              "event class 'demo:note')");
    EXPECT_EQ(error("demo:note { @[ustack()] = count(); }"),
              "1:15: ustack() needs the callstack-user context: no event record matched by "
              "demo:note has it");
    // A stack call is printed back as written, whatever its form.
    EXPECT_EQ(error("demo:note { @[ustack(5)] = count(); }"),
              "1:15: ustack(5) needs the callstack-user context: no event record matched by "
              "demo:note has it");
    EXPECT_EQ(error("demo:note { stack(); }"),
              "1:13: stack() needs the callstack-kernel context: no event record matched by "
              "demo:note has it");
    EXPECT_EQ(error("demo:note { trace(stack(7) + 1); }"),
              "1:19: stack(7) is only taken as an aggregation key (@[stack(7)] = count()) or as "
              "an action (stack(7);): it cannot be trace() argument #1");
}

} // namespace
} // namespace tracectl::aggregate
