// The tracectl binary's `dtrace` command (and `aggregate`, the same command) on a CTF trace
// written here byte by byte (dtrace_trace_writer.hpp): dtrace(1)'s options -s (several,
// and a script run through its "#!/usr/bin/env -S tracectl dtrace -s" line), -n
// (several), -q, -o, -x, -l, -p and $target, macro arguments, exit()'s status, and
// where errors are reported in a program made of several pieces; and the example scripts
// (share/tracectl/examples, in $EXAMPLES) on known UDP traffic over IPv4 and IPv6 on
// loopback. The binary's path is in $TRACECTL.
#include "dtrace_trace_writer.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace tracectl::aggregate {
namespace {

namespace fs = std::filesystem;
using testing::DtraceTraceWriter;

std::string readFile(const fs::path& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string shellQuoted(const std::string& word) {
    std::string q = "'";
    for (const char c : word) {
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return q + "'";
}

class DtraceCommand : public ::testing::Test {
protected:
    void SetUp() override {
        const char* tracectl = std::getenv("TRACECTL");
        ASSERT_NE(tracectl, nullptr) << "set TRACECTL to the tracectl binary";
        tracectl_ = tracectl;
        const char* tmp = std::getenv("TMPDIR");
        std::string templ = std::string(tmp != nullptr ? tmp : "/tmp") + "/dtrace-command-XXXXXX";
        ASSERT_NE(mkdtemp(templ.data()), nullptr);
        root_ = templ;
        DtraceTraceWriter w;
        const DtraceTraceWriter::Thread app{10, 100, "app"};
        const DtraceTraceWriter::Thread web{20, 200, "web"};
        w.entry(0, 1000, app, 3);
        w.exit(0, 1500, app, 10);
        w.entry(1, 1200, web, 4);
        w.exit(1, 3200, web, -1);
        w.note(1, 5000, web, "hello", 7);
        trace_ = (root_ / "trace").string();
        w.write(trace_);
    }
    void TearDown() override { fs::remove_all(root_); }

    struct Result {
        int status = -1;
        std::string out;
        std::string err;
    };

    /// Runs `words` (the first one a program; "tracectl" is the binary under test).
    Result run(const std::vector<std::string>& words) {
        std::string command;
        for (const std::string& word : words) {
            command += (command.empty() ? "" : " ") + (word == "tracectl" && command.empty()
                                                           ? shellQuoted(tracectl_)
                                                           : shellQuoted(word));
        }
        const fs::path out = root_ / "stdout";
        const fs::path err = root_ / "stderr";
        command +=
            " >" + shellQuoted(out.string()) + " 2>" + shellQuoted(err.string()) + " </dev/null";
        const int status = std::system(command.c_str());
        Result r;
        r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        r.out = readFile(out);
        r.err = readFile(err);
        return r;
    }

    fs::path script(const std::string& name, const std::string& text) {
        const fs::path path = root_ / name;
        std::ofstream(path) << text;
        return path;
    }

    std::string tracectl_;
    fs::path root_;
    std::string trace_;
};

TEST_F(DtraceCommand, ScriptsAndProgramsRunTogetherInOrder) {
    const fs::path a = script("a.d", "#pragma D option quiet\n"
                                     "BEGIN { printf(\"a\\n\"); }\n");
    const fs::path b = script("b.d", "demo:entry { printf(\"%s %d\\n\", execname, fd); }\n");
    const Result r = run({"tracectl", "dtrace", "--trace", trace_, "-s", a.string(), "-s",
                          b.string(), "-n", "END { printf(\"end\\n\"); }"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "a\napp 3\nweb 4\nend\n");
    EXPECT_EQ(r.err, "");
}

TEST_F(DtraceCommand, AScriptRunsThroughItsInterpreterLine) {
    const fs::path s = script("count.d", "#!/usr/bin/env -S tracectl dtrace -s\n"
                                         "#pragma D option quiet\n"
                                         "demo:return /ret < 0/ { printf(\"%s failed\\n\", "
                                         "execname); }\n");
    fs::permissions(s, fs::perms::owner_all);
    const std::string path = fs::path(tracectl_).parent_path().string() + ":" +
                             (std::getenv("PATH") != nullptr ? std::getenv("PATH") : "");
    const Result r = run({"env", "PATH=" + path, s.string(), "--trace", trace_});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "web failed\n");
}

TEST_F(DtraceCommand, ErrorsNameTheScriptOrTheProgramPieceLineAndColumn) {
    const fs::path ok = script("ok.d", "BEGIN\n{\n}\n");
    const fs::path bad = script("bad.d", "#!/usr/bin/env -S tracectl dtrace -s\n"
                                         "BEGIN {\n  x = copyin(0, 4);\n}\n");
    Result r =
        run({"tracectl", "dtrace", "--trace", trace_, "-s", ok.string(), "-s", bad.string()});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "tracectl: dtrace: " + bad.string() +
                         ":3:7: copyin() reads or writes a live process's memory: not "
                         "available over recorded events\n");
    r = run(
        {"tracectl", "dtrace", "--trace", trace_, "-n", "BEGIN {}", "-n", "END { @ = nosuch(); }"});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "tracectl: dtrace: 1:11: unknown aggregating function 'nosuch' (count, "
                     "sum, avg, min, max, stddev, quantize, lquantize, llquantize)\n");
    r = run({"tracectl", "dtrace", "--trace", trace_, "-x", "destructive", "-n", "BEGIN {}"});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "tracectl: dtrace: -x: option destructive is refused: destructive "
                     "actions are not available (tracectl dtrace never acts on the traced "
                     "system)\n");
}

TEST_F(DtraceCommand, QuietOutputFileAndOptions) {
    const std::string program = "demo:note { trace(value); }";
    Result r = run({"tracectl", "dtrace", "--trace", trace_, "-q", "-n", program});
    EXPECT_EQ(r.out, "7");
    r = run({"tracectl", "dtrace", "--trace", trace_, "-x", "quiet", "-n", program});
    EXPECT_EQ(r.out, "7");
    const fs::path out = root_ / "out.txt";
    r = run({"tracectl", "dtrace", "--trace", trace_, "-o", out.string(), "-n", program});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(readFile(out), "CPU     ID                    FUNCTION:NAME\n"
                             "  1      4                            :note  " +
                                 std::string(15, ' ') + "7\n");
    // A second run appends, as illumos dtrace -o does.
    r = run({"tracectl", "dtrace", "--trace", trace_, "-q", "-o", out.string(), "-n", program});
    EXPECT_EQ(readFile(out), "CPU     ID                    FUNCTION:NAME\n"
                             "  1      4                            :note  " +
                                 std::string(15, ' ') + "7\n7");
    r = run({"tracectl", "dtrace", "--trace", trace_, "-x", "aggsortkey", "-x", "aggsortrev", "-n",
             "demo:entry { @[execname] = count(); }"});
    EXPECT_EQ(r.out, "\n  web" + std::string(47, ' ') + std::string(16, ' ') + "1\n" + "  app" +
                         std::string(47, ' ') + std::string(16, ' ') + "1\n");
}

TEST_F(DtraceCommand, AProbeAloneRunsTheDefaultAction) {
    // dtrace -n PROBE: one line per firing under the header, none with -q.
    Result r = run({"tracectl", "dtrace", "--trace", trace_, "-n", "demo:entry", "-n", "END"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "CPU     ID                    FUNCTION:NAME\n"
                     "  0      4                           :entry \n"
                     "  1      4                           :entry \n"
                     "  0      2                             :END \n");
    r = run({"tracectl", "dtrace", "--trace", trace_, "-q", "-n", "demo:entry"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "");
}

/// A line of dtrace -l: "%5s %10s %17s %33s %s".
std::string probeLine(const std::string& id, const std::string& provider, const std::string& name) {
    const auto right = [](const std::string& s, std::size_t width) {
        return std::string(width - s.size(), ' ') + s;
    };
    return right(id, 5) + " " + right(provider, 10) + " " + std::string(17, ' ') + " " +
           std::string(33, ' ') + " " + name + "\n";
}

TEST_F(DtraceCommand, ListsTheProbesAProgramEnables) {
    const std::string header =
        "   ID   PROVIDER            MODULE                          FUNCTION NAME\n";
    // The trace's event classes the probes match (its metadata declares ip:send too).
    Result r = run({"tracectl", "dtrace", "--trace", trace_, "-l", "-n",
                    "demo:*ent* { @ = count(); } ip:::send { @ = count(); }"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, header + probeLine("1", "demo", "entry") + probeLine("2", "ip", "send"));
    // Without a trace: the descriptions as written, and no daemon is asked.
    r = run({"tracectl", "--bus-address", "unix:path=/nonexistent", "dtrace", "-l", "-n",
             "ip:::send, ip:::receive { @ = count(); }"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, header + probeLine("1", "ip", "send") + probeLine("2", "ip", "receive"));
}

TEST_F(DtraceCommand, TargetMacroArgumentsAndExitStatus) {
    Result r = run({"tracectl", "dtrace", "--trace", trace_, "-q", "-p", "4242", "-n",
                    "BEGIN { printf(\"%d %s %d\\n\", $target, $$1, $2); exit(7); }", "word", "12"});
    EXPECT_EQ(r.status, 7) << r.err;
    EXPECT_EQ(r.out, "4242 word 12\n");
    r = run({"tracectl", "dtrace", "--trace", trace_, "-n", "BEGIN { trace($target); }"});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "tracectl: dtrace: 1:15: $target is undefined: give -c COMMAND or -p "
                     "PID\n");
    r = run({"tracectl", "dtrace", "--trace", trace_, "-x", "defaultargs", "-q", "-n",
             "BEGIN { printf(\"[%d][%s]\", $1, $$2); }"});
    EXPECT_EQ(r.out, "[0][]");
    // The pragma does the same, however spaced; a word that only begins
    // with it does not.
    const fs::path pragma = script("defaults.d", "#pragma D option quiet\n"
                                                 "  # pragma\tD  option defaultargs\n"
                                                 "BEGIN { printf(\"[%d][%s]\", $1, $$2); }\n");
    r = run({"tracectl", "dtrace", "--trace", trace_, "-s", pragma.string()});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "[0][]");
    const fs::path notIt = script("not.d", "#pragma D option defaultargsx\n"
                                           "BEGIN { trace($1); }\n");
    r = run({"tracectl", "dtrace", "--trace", trace_, "-s", notIt.string()});
    EXPECT_NE(r.status, 0);
}

TEST_F(DtraceCommand, ACommandThatCannotRunOrAProcessThatDoesNotExistIsRefused) {
    // Refused before any session is made, hence before the bus (none is given here: an
    // address nobody listens on would exit with status 3).
    const std::string bus = "unix:path=" + (root_ / "no-bus").string();
    Result r = run({"tracectl", "--bus-address", bus, "dtrace", "-c", "/nonexistent/cmd arg", "-n",
                    "tracectl_demo:tick { @ = count(); }"});
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.err, "tracectl: dtrace: cannot run /nonexistent/cmd: No such file or directory\n");
    EXPECT_EQ(r.out, "");
    r = run({"tracectl", "--bus-address", bus, "dtrace", "-c", "no-such-command-here", "-n",
             "tracectl_demo:tick { @ = count(); }"});
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.err,
              "tracectl: dtrace: cannot run no-such-command-here: No such file or directory\n");
    const fs::path plain = script("plain.txt", "not a program\n");
    r = run({"tracectl", "--bus-address", bus, "dtrace", "-c", plain.string(), "-n",
             "tracectl_demo:tick { @ = count(); }"});
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.err, "tracectl: dtrace: cannot run " + plain.string() + ": Permission denied\n");
    r = run({"tracectl", "--bus-address", bus, "dtrace", "-c", root_.string(), "-n",
             "tracectl_demo:tick { @ = count(); }"});
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.err, "tracectl: dtrace: cannot run " + root_.string() + ": Permission denied\n");
    r = run({"tracectl", "--bus-address", bus, "dtrace", "-p", "999999999", "-n",
             "tracectl_demo:tick { @ = count(); }"});
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.err, "tracectl: dtrace: cannot grab pid 999999999: No such process\n");
    // Beyond pid_t: not wrapped to -1 (every process) or a process group.
    r = run({"tracectl", "--bus-address", bus, "dtrace", "-p", "4294967295", "-n",
             "tracectl_demo:tick { @ = count(); }"});
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.err, "tracectl: dtrace: cannot grab pid 4294967295: No such process\n");
    // Process 1 exists (another user's: EPERM): it goes on to the bus.
    r = run({"tracectl", "--bus-address", bus, "dtrace", "-p", "1", "-n",
             "tracectl_demo:tick { @ = count(); }"});
    EXPECT_EQ(r.status, 3) << r.err;
    // A command that can run goes on to the bus (none here: status 3).
    r = run({"tracectl", "--bus-address", bus, "dtrace", "-c", "true", "-n",
             "tracectl_demo:tick { @ = count(); }"});
    EXPECT_EQ(r.status, 3) << r.err;
    // With --trace, -p only sets $target: the process may be long gone.
    r = run({"tracectl", "dtrace", "--trace", trace_, "-q", "-p", "999999999", "-n",
             "BEGIN { printf(\"%d\", $target); exit(0); }"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "999999999");
}

TEST_F(DtraceCommand, StrsizeIsAnOption) {
    Result r = run({"tracectl", "dtrace", "--trace", trace_, "-q", "-x", "strsize=4", "-n",
                    "BEGIN { printf(\"%s\\n\", strjoin(\"ab\", \"cd\")); exit(0); }"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "abc\n");
    r = run({"tracectl", "dtrace", "--trace", trace_, "-x", "strsize=big", "-n", "BEGIN {}"});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "tracectl: dtrace: -x: option strsize needs a size from 1 to 1m (bytes, "
                     "with the terminating NUL), as in 512 or 4k, not 'big'\n");
}

TEST_F(DtraceCommand, AScriptIsARegularFileOfAtMostOneMebibyte) {
    Result r = run({"tracectl", "dtrace", "--trace", trace_, "-s", "/dev/zero"});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "tracectl: -s: cannot read /dev/zero: not a regular file (a D script is a "
                     "file) (see 'tracectl dtrace --help')\n");
    r = run({"tracectl", "dtrace", "--trace", trace_, "-s", root_.string()});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "tracectl: -s: cannot read " + root_.string() +
                         ": it is a folder, not a D script (see 'tracectl dtrace --help')\n");
    // 1 MiB is taken (a comment that long), one byte more is not.
    std::string text = "BEGIN { exit(0); }\n/*";
    text += std::string((1u << 20) - text.size() - 2, 'x') + "*/";
    const fs::path largest = script("largest.d", text);
    r = run({"tracectl", "dtrace", "--trace", trace_, "-q", "-s", largest.string()});
    EXPECT_EQ(r.status, 0) << r.err;
    const fs::path larger = script("larger.d", text + "\n");
    r = run({"tracectl", "dtrace", "--trace", trace_, "-s", larger.string()});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "tracectl: -s: cannot read " + larger.string() +
                         ": larger than 1 MiB, the most a D script may be (see 'tracectl dtrace "
                         "--help')\n");
}

TEST_F(DtraceCommand, ListingAKernelTraceShowsTheProvider) {
    DtraceTraceWriter w;
    w.domain = "kernel";
    w.renames = {{"demo:note", "sched_switch"}, {"demo:entry", "syscall_entry_write"}};
    const DtraceTraceWriter::Thread app{10, 100, "app"};
    w.note(0, 1000, app, "switch", 1);
    w.entry(0, 2000, app, 3);
    const std::string kernel = (root_ / "kernel").string();
    w.write(kernel);
    const Result r = run({"tracectl", "dtrace", "--trace", kernel, "-l", "-n",
                          "sched:sched_switch, syscall:* { @ = count(); }"});
    EXPECT_EQ(r.status, 0) << r.err;
    char line[3][200];
    std::snprintf(line[0], sizeof line[0], "%5s %10s %17s %33s %s\n", "ID", "PROVIDER", "MODULE",
                  "FUNCTION", "NAME");
    std::snprintf(line[1], sizeof line[1], "%5d %10s %17s %33s %s\n", 1, "sched", "", "",
                  "sched_switch");
    std::snprintf(line[2], sizeof line[2], "%5d %10s %17s %33s %s\n", 2, "syscall", "", "",
                  "syscall_entry_write");
    EXPECT_EQ(r.out, std::string(line[0]) + line[1] + line[2]);
}

TEST_F(DtraceCommand, AggregateIsTheSameCommand) {
    const Result r =
        run({"tracectl", "aggregate", "--trace", trace_, "demo:entry { @[execname] = sum(fd); }"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "\n  app" + std::string(47, ' ') + std::string(16, ' ') + "3\n" + "  web" +
                         std::string(47, ' ') + std::string(16, ' ') + "4\n");
}

std::string left(const std::string& s, std::size_t width) {
    return s + std::string(s.size() < width ? width - s.size() : 0, ' ');
}
std::string right(const std::string& s, std::size_t width) {
    return std::string(s.size() < width ? width - s.size() : 0, ' ') + s;
}

/// UDP datagrams on loopback: 127.0.0.1 -> 127.0.0.1 (28 bytes, sent and received on CPU
/// 0), ::1 -> ::1 (28 bytes, CPU 1), 127.0.0.1 -> 127.0.0.2 (108 bytes, sent and
/// received, then 56 bytes sent). Times in ns.
std::string udpTrace(const fs::path& dir) {
    DtraceTraceWriter w;
    const DtraceTraceWriter::Thread client{30, 300, "client"};
    w.packet(true, 0, 1000000, client, 4, 28, "127.0.0.1", "127.0.0.1", "lo", "UDP");
    w.packet(false, 0, 1000500, client, 4, 28, "127.0.0.1", "127.0.0.1", "lo", "UDP");
    w.packet(true, 1, 3000000, client, 6, 28, "::1", "::1", "lo", "UDP");
    w.packet(false, 1, 3002000, client, 6, 28, "::1", "::1", "lo", "UDP");
    w.packet(true, 0, 5000000, client, 4, 108, "127.0.0.1", "127.0.0.2", "lo", "UDP");
    w.packet(false, 0, 5001000, client, 4, 108, "127.0.0.1", "127.0.0.2", "lo", "UDP");
    w.packet(true, 0, 6000000, client, 4, 56, "127.0.0.1", "127.0.0.2", "lo", "UDP");
    w.write(dir);
    return dir.string();
}

TEST_F(DtraceCommand, TheIpprotoExampleCountsBySourceDestinationAndProtocol) {
    const char* examples = std::getenv("EXAMPLES");
    ASSERT_NE(examples, nullptr);
    const std::string trace = udpTrace(root_ / "udp");
    const Result r = run({"tracectl", "dtrace", "--trace", trace, "-s",
                          (fs::path(examples) / "ipproto.d").string()});
    EXPECT_EQ(r.status, 0) << r.err;
    const auto line = [](const std::string& s, const std::string& d, const std::string& p,
                         const std::string& c) {
        return "   " + left(s, 28) + " " + left(d, 28) + " " + right(p, 6) + " " + right(c, 8) +
               "\n";
    };
    // By count, then by key (strcmp: "127..." before "::1").
    EXPECT_EQ(r.out, "Tracing IP packets... Hit Ctrl-C to end.\n" +
                         line("SADDR", "DADDR", "PROTO", "COUNT") +
                         line("127.0.0.1", "127.0.0.1", "UDP", "2") +
                         line("::1", "::1", "UDP", "2") +
                         line("127.0.0.1", "127.0.0.2", "UDP", "3"));
    EXPECT_EQ(r.err, "");
}

TEST_F(DtraceCommand, TheIpioExamplePrintsOneLinePerPacket) {
    const char* examples = std::getenv("EXAMPLES");
    ASSERT_NE(examples, nullptr);
    const std::string trace = udpTrace(root_ / "udp");
    const Result r = run(
        {"tracectl", "dtrace", "--trace", trace, "-s", (fs::path(examples) / "ipio.d").string()});
    EXPECT_EQ(r.status, 0) << r.err;
    const auto line = [](const std::string& cpu, const std::string& delta, const std::string& a,
                         const std::string& arrow, const std::string& b, const std::string& i,
                         const std::string& bytes) {
        return " " + right(cpu, 3) + " " + right(delta, 10) + " " + right(a, 15) + " " + arrow +
               " " + left(b, 15) + " " + right(i, 8) + " " + right(bytes, 6) + "\n";
    };
    // Microseconds since the packet before (BEGIN's timestamp is the first packet's),
    // truncated: 500 ns is 0, 1999500 ns is 1999.
    EXPECT_EQ(r.out, line("CPU", "DELTA(us)", "SOURCE", "  ", "DEST", "INT", "BYTES") +
                         line("0", "0", "127.0.0.1", "->", "127.0.0.1", "lo", "28") +
                         line("0", "0", "127.0.0.1", "<-", "127.0.0.1", "lo", "28") +
                         line("1", "1999", "::1", "->", "::1", "lo", "28") +
                         line("1", "2", "::1", "<-", "::1", "lo", "28") +
                         line("0", "1998", "127.0.0.1", "->", "127.0.0.2", "lo", "108") +
                         line("0", "1", "127.0.0.2", "<-", "127.0.0.1", "lo", "108") +
                         line("0", "999", "127.0.0.1", "->", "127.0.0.2", "lo", "56"));
    EXPECT_EQ(r.err, "");
}

} // namespace
} // namespace tracectl::aggregate
