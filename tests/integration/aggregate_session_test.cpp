// tracectl aggregate --session, against the sandbox's tracectld: an active session is
// rotated first and everything it recorded up to then is aggregated; a stopped one is
// read whole; someone else's session is refused with the daemon's error. The expected
// values follow from what the demo app emits (tests/apps/tracectl_demo_app.c: tick i has
// seq = i).
#include "child_process.hpp"
#include "multi_user.hpp"
#include "sandbox.hpp"
#include "sandbox_suite.hpp"
#include "tracectl_clients.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace tracectl::test;

namespace {

class AggregateSession : public MultiUserSuite {
protected:
    static RunResult cli(std::vector<std::string> argv) {
        const char* tracectl = std::getenv("TRACECTL");
        argv.insert(argv.begin(), tracectl != nullptr ? tracectl : "tracectl");
        return run(argv, RunOptions{});
    }

    /// The value of the only entry of aggregation `name` in `json` (tracectl aggregate
    /// --json output); -1 if there is none.
    static long long onlyValue(const std::string& json, const std::string& name) {
        const nlohmann::json parsed = nlohmann::json::parse(json);
        for (const auto& a : parsed["aggregations"]) {
            if (a["name"] == name && a["entries"].size() == 1) {
                return a["entries"][0]["value"].get<long long>();
            }
        }
        return -1;
    }
};

constexpr const char* kProgram =
    "tracectl_demo:tick { @n = count(); @s = sum(seq); } tracectl_demo:done { @d = max(count); }";

} // namespace

TEST_F(AggregateSession, ActiveSessionIsRotatedThenStoppedOneIsReadWhole) {
    const std::string dir = output("agg-session");
    ASSERT_EQ(cli({"create", "agg-session", "--output", dir}).exitCode, 0);
    ASSERT_EQ(cli({"enable-event", "-u", "tracectl_demo:*", "-s", "agg-session"}).exitCode, 0);
    ASSERT_EQ(cli({"start", "agg-session"}).exitCode, 0);
    {
        ChildProcess app({demoApp(), "100", "0"}, {}, sandbox_->dir() + "/log/apps.log");
        ASSERT_EQ(app.wait(30000), 0);
    }
    // Active: rotated, the archive holds everything so far.
    const RunResult active = cli({"aggregate", "--session", "agg-session", "--json", kProgram});
    ASSERT_EQ(active.exitCode, 0) << active.describe();
    EXPECT_EQ(onlyValue(active.out, "n"), 100) << active.out << active.err;
    EXPECT_EQ(onlyValue(active.out, "s"), 99 * 100 / 2);
    EXPECT_EQ(onlyValue(active.out, "d"), 100);
    EXPECT_TRUE(std::filesystem::is_directory(dir + "/archives")) << dir;
    // More events, then stopped: the archive and the current chunk together.
    {
        ChildProcess app({demoApp(), "50", "0"}, {}, sandbox_->dir() + "/log/apps.log");
        ASSERT_EQ(app.wait(30000), 0);
    }
    ASSERT_EQ(cli({"stop", "agg-session"}).exitCode, 0);
    const RunResult stopped = cli({"aggregate", "--session", "agg-session", "--json", kProgram});
    ASSERT_EQ(stopped.exitCode, 0) << stopped.describe();
    EXPECT_EQ(onlyValue(stopped.out, "n"), 150) << stopped.out << stopped.err;
    EXPECT_EQ(onlyValue(stopped.out, "s"), 99 * 100 / 2 + 49 * 50 / 2);
    // Text output too, and the program is checked before the daemon is asked anything.
    const RunResult text =
        cli({"aggregate", "--session", "agg-session", "tracectl_demo:tick { @ = count(); }"});
    EXPECT_EQ(text.exitCode, 0) << text.describe();
    EXPECT_EQ(text.out, "\n              150\n");
    const RunResult bad = cli({"aggregate", "--session", "no-such-session", "x:y { @ = cnt(); }"});
    EXPECT_EQ(bad.exitCode, 2);
    EXPECT_NE(bad.err.find("tracectl: aggregate: 1:11: unknown aggregating function"),
              std::string::npos)
        << bad.err;
    EXPECT_EQ(cli({"destroy", "agg-session"}).exitCode, 0);
}

TEST_F(AggregateSession, ActiveSnapshotSessionIsSnapshotFirst) {
    // A snapshot session cannot rotate: a snapshot is recorded instead, then read.
    const std::string dir = output("agg-snap");
    ASSERT_EQ(cli({"create", "agg-snap", "--snapshot", "--output", dir}).exitCode, 0);
    ASSERT_EQ(cli({"enable-event", "-u", "tracectl_demo:*", "-s", "agg-snap"}).exitCode, 0);
    ASSERT_EQ(cli({"start", "agg-snap"}).exitCode, 0);
    {
        ChildProcess app({demoApp(), "100", "0"}, {}, sandbox_->dir() + "/log/apps.log");
        ASSERT_EQ(app.wait(30000), 0);
    }
    const RunResult active = cli({"aggregate", "--session", "agg-snap", "--json", kProgram});
    ASSERT_EQ(active.exitCode, 0) << active.describe();
    EXPECT_EQ(onlyValue(active.out, "n"), 100) << active.out << active.err;
    EXPECT_EQ(onlyValue(active.out, "s"), 99 * 100 / 2);
    EXPECT_NE(active.err.find("Recorded snapshot " + dir + "/snapshot-"), std::string::npos)
        << active.err;
    EXPECT_EQ(cli({"destroy", "agg-snap"}).exitCode, 0);
}

TEST_F(AggregateSession, NoSuchSessionAndSomeoneElsesSession) {
    const RunResult missing =
        cli({"aggregate", "--session", "no-such-session", "x:y { @ = count(); }"});
    EXPECT_EQ(missing.exitCode, 1);
    EXPECT_NE(missing.err.find(kNoSuchSession), std::string::npos) << missing.err;
    // alice's session, asked for by bob: by name it is none of his; by its object path,
    // the daemon's refusal, shown as it is.
    const std::string path = createAs("alice", "agg-alice", homeOutput("alice", "agg-alice"));
    const char* tracectl = std::getenv("TRACECTL");
    ASSERT_NE(tracectl, nullptr);
    const std::string program = "tracectl_demo:tick { @ = count(); }";
    const RunResult byName = as("bob", {tracectl, "aggregate", "--session", "agg-alice", program});
    EXPECT_EQ(byName.exitCode, 1) << byName.describe();
    EXPECT_EQ(byName.err.rfind(std::string("tracectl: ") + kNoSuchSession, 0), 0u) << byName.err;
    const RunResult byPath = as("bob", {tracectl, "aggregate", "--session", path, program});
    EXPECT_EQ(byPath.exitCode, 1) << byPath.describe();
    EXPECT_EQ(byPath.err.rfind(std::string("tracectl: ") + kAccessDenied, 0), 0u) << byPath.err;
    EXPECT_EQ(byPath.out, "");
}

namespace {

/// The temporary session `tracectl aggregate` made (the only session there is), once it
/// is active; "" if none came within 20 s. `folder` gets its output path.
std::string waitForTemporarySession(SandboxSuite& suite, ManagerClient& manager,
                                    sdbus::IConnection& bus, std::string& folder) {
    (void)suite;
    std::string found;
    eventually(
        [&] {
            for (const auto& path : manager.ListSessions()) {
                SessionClient s(bus, path);
                const std::string name = s.Name();
                const std::string state = s.State();
                if ((name.rfind("aggregate-", 0) == 0 || name.rfind("dtrace-", 0) == 0) &&
                    (state == "active" || state == "rotating")) {
                    folder = s.OutputPath();
                    found = path;
                    return true;
                }
            }
            return false;
        },
        std::chrono::seconds(20));
    return found;
}

std::string readFile(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

} // namespace

TEST_F(AggregateSession, LikeDtraceNForADurationThenNothingIsLeft) {
    const char* tracectl = std::getenv("TRACECTL");
    ASSERT_NE(tracectl, nullptr);
    const std::string log = sandbox_->dir() + "/log/aggregate-live.log";
    const std::string go = sandbox_->dir() + "/aggregate-live-go";
    std::filesystem::remove(go);
    // The app waits for `go`: it emits only once the session traces.
    ChildProcess app({demoApp(), "120", "0", go}, {}, sandbox_->dir() + "/log/apps.log");
    ChildProcess aggregate({tracectl, "aggregate", "--duration", "6", "--json",
                            "tracectl_demo:tick { @n = count(); @s = sum(seq); }"},
                           {}, log);
    std::string folder;
    const std::string path = waitForTemporarySession(*this, *manager_, *bus_, folder);
    ASSERT_NE(path, "") << readFile(log);
    EXPECT_TRUE(std::filesystem::exists(folder)) << folder;
    std::ofstream(go).put('\n');
    ASSERT_EQ(app.wait(30000), 0);
    ASSERT_EQ(aggregate.wait(30000), 0) << readFile(log);
    const std::string text = readFile(log);
    EXPECT_NE(text.find("Tracing tracectl_demo:tick (ust) in session aggregate-"),
              std::string::npos)
        << text;
    const auto json = nlohmann::json::parse(text.substr(text.find('{')));
    EXPECT_EQ(json["aggregations"][0]["entries"][0]["value"], 120) << text;
    EXPECT_EQ(json["aggregations"][1]["entries"][0]["value"], 119 * 120 / 2) << text;
    EXPECT_TRUE(manager_->ListSessions().empty());
    EXPECT_FALSE(std::filesystem::exists(folder)) << folder;
    EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(folder).parent_path()));
}

TEST_F(AggregateSession, CtrlCEndsTracingAndLeavesNothing) {
    const char* tracectl = std::getenv("TRACECTL");
    ASSERT_NE(tracectl, nullptr);
    const std::string log = sandbox_->dir() + "/log/aggregate-sigint.log";
    ChildProcess aggregate({tracectl, "aggregate", "tracectl_demo:tick { @ = count(); }"}, {}, log);
    std::string folder;
    ASSERT_NE(waitForTemporarySession(*this, *manager_, *bus_, folder), "") << readFile(log);
    {
        ChildProcess app({demoApp(), "30", "0"}, {}, sandbox_->dir() + "/log/apps.log");
        ASSERT_EQ(app.wait(30000), 0);
    }
    aggregate.kill(SIGINT);
    ASSERT_EQ(aggregate.wait(30000), 0) << readFile(log);
    EXPECT_NE(readFile(log).find("\n               30\n"), std::string::npos) << readFile(log);
    EXPECT_TRUE(manager_->ListSessions().empty());
    EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(folder).parent_path())) << folder;
}

TEST_F(AggregateSession, ACommandWhoseExecFailsEndsTheRunAndLeavesNothing) {
    // An executable file passes the check made before tracing; its exec fails (no such
    // interpreter), which the command, started stopped at its first instruction before any
    // session is made, finds at once: the close-on-exec pipe says why, status 1, and
    // nothing is left (it was "pid N has exited", status 0).
    const char* tracectl = std::getenv("TRACECTL");
    ASSERT_NE(tracectl, nullptr);
    const std::string script = sandbox_->dir() + "/no-interpreter";
    std::ofstream(script) << "#!/nonexistent/interpreter\n";
    std::filesystem::permissions(
        script, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                    std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                    std::filesystem::perms::others_exec);
    const std::string log = sandbox_->dir() + "/log/aggregate-exec.log";
    ChildProcess aggregate(
        {tracectl, "dtrace", "-c", script, "-n", "tracectl_demo:tick { @ = count(); }"}, {}, log);
    ASSERT_EQ(aggregate.wait(30000), 1) << readFile(log);
    EXPECT_NE(readFile(log).find("tracectl: dtrace: cannot run " + script +
                                 ": No such file or directory\n"),
              std::string::npos)
        << readFile(log);
    EXPECT_EQ(readFile(log).find("has exited"), std::string::npos) << readFile(log);
    EXPECT_TRUE(manager_->ListSessions().empty());
}

TEST_F(AggregateSession, HangUpEndsTracingAndLeavesNothing) {
    // SIGHUP (a closed terminal or SSH connection) and SIGQUIT end it like Ctrl-C: results,
    // then no session and no folder left.
    const char* tracectl = std::getenv("TRACECTL");
    ASSERT_NE(tracectl, nullptr);
    for (const int signal : {SIGHUP, SIGQUIT}) {
        const std::string log = sandbox_->dir() + "/log/aggregate-sighup.log";
        ChildProcess aggregate(
            {tracectl, "aggregate", "--duration", "30", "tracectl_demo:tick { @ = count(); }"}, {},
            log);
        std::string folder;
        ASSERT_NE(waitForTemporarySession(*this, *manager_, *bus_, folder), "") << readFile(log);
        {
            ChildProcess app({demoApp(), "30", "0"}, {}, sandbox_->dir() + "/log/apps.log");
            ASSERT_EQ(app.wait(30000), 0);
        }
        aggregate.kill(signal);
        ASSERT_EQ(aggregate.wait(30000), 0) << signal << readFile(log);
        EXPECT_NE(readFile(log).find("\n               30\n"), std::string::npos) << readFile(log);
        EXPECT_TRUE(manager_->ListSessions().empty()) << signal;
        EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(folder).parent_path()))
            << folder;
    }
}

TEST_F(AggregateSession, ATemporarySessionDestroyedMeanwhileEndsTheWait) {
    // Someone destroys the temporary session: --duration 60 does not wait on, it says so
    // and exits with status 1, leaving no folder.
    const char* tracectl = std::getenv("TRACECTL");
    ASSERT_NE(tracectl, nullptr);
    const std::string log = sandbox_->dir() + "/log/aggregate-destroyed.log";
    ChildProcess aggregate(
        {tracectl, "aggregate", "--duration", "60", "tracectl_demo:tick { @ = count(); }"}, {},
        log);
    std::string folder;
    const std::string path = waitForTemporarySession(*this, *manager_, *bus_, folder);
    ASSERT_NE(path, "") << readFile(log);
    const auto before = std::chrono::steady_clock::now();
    SessionClient(*bus_, path).Destroy({});
    EXPECT_EQ(aggregate.wait(30000), 1) << readFile(log);
    EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(20));
    EXPECT_NE(readFile(log).find("was destroyed while tracing"), std::string::npos)
        << readFile(log);
    EXPECT_TRUE(manager_->ListSessions().empty());
    EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(folder).parent_path())) << folder;
}

TEST_F(AggregateSession, ATemporarySessionStoppedMeanwhileIsAggregatedAsIncomplete) {
    // The session stops without us (as when its consumer dies): the wait ends, what it
    // recorded is aggregated, with a warning and exit status 1; nothing is left.
    const char* tracectl = std::getenv("TRACECTL");
    ASSERT_NE(tracectl, nullptr);
    const std::string log = sandbox_->dir() + "/log/aggregate-stopped.log";
    ChildProcess aggregate(
        {tracectl, "aggregate", "--duration", "60", "tracectl_demo:tick { @ = count(); }"}, {},
        log);
    std::string folder;
    const std::string path = waitForTemporarySession(*this, *manager_, *bus_, folder);
    ASSERT_NE(path, "") << readFile(log);
    {
        ChildProcess app({demoApp(), "30", "0"}, {}, sandbox_->dir() + "/log/apps.log");
        ASSERT_EQ(app.wait(30000), 0);
    }
    const auto before = std::chrono::steady_clock::now();
    SessionClient(*bus_, path).Stop({});
    EXPECT_EQ(aggregate.wait(30000), 1) << readFile(log);
    EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(20));
    const std::string text = readFile(log);
    EXPECT_NE(text.find("ended while tracing (state stopped); the results may be incomplete"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("\n               30\n"), std::string::npos) << text;
    EXPECT_TRUE(manager_->ListSessions().empty());
    EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(folder).parent_path())) << folder;
}

TEST_F(AggregateSession, CtrlCDuringSetUpLeavesNothing) {
    const char* tracectl = std::getenv("TRACECTL");
    ASSERT_NE(tracectl, nullptr);
    // SIGINT at once, and again a little later: whatever step it lands in, no session and
    // no folder remain. Its temporary folders go to a TMPDIR of this test's own, which
    // nothing else running beside it (another suite's tracectl dtrace) writes to.
    const std::string tmp = sandbox_->dir() + "/aggregate-early-tmp";
    std::filesystem::create_directories(tmp);
    for (const int delayMs : {0, 30, 80, 150}) {
        const std::string log = sandbox_->dir() + "/log/aggregate-early.log";
        ChildProcess aggregate({tracectl, "aggregate", "tracectl_demo:tick { @ = count(); }"},
                               {"TMPDIR=" + tmp}, log);
        std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
        aggregate.kill(SIGINT);
        const int status = aggregate.wait(30000);
        // 1: interrupted during set-up; 0: it was already tracing; -1: the signal came before
        // tracectl blocked it (default action: it died) - but it must be gone.
        EXPECT_TRUE(status == 0 || status == 1 || (status == -1 && ::kill(aggregate.pid(), 0) != 0))
            << status << readFile(log);
        EXPECT_TRUE(manager_->ListSessions().empty()) << delayMs;
    }
    bool leftover = false;
    for (const auto& entry : std::filesystem::directory_iterator(tmp)) {
        leftover =
            leftover || entry.path().filename().string().rfind("tracectl-aggregate-", 0) == 0;
    }
    EXPECT_FALSE(leftover);
}

TEST_F(AggregateSession, KernelTraceProbesMatchLttngModulesNames) {
    // A kernel session of tracectld (lttng-modules' event names: sched_switch,
    // syscall_entry_write), then `sched:sched_switch` and `sched:*` aggregated, against
    // the records trace_events.py (python3-bt2) reads from the same trace.
    const std::string dir = output("agg-kernel");
    ASSERT_EQ(cli({"create", "agg-kernel", "--output", dir}).exitCode, 0);
    ASSERT_EQ(cli({"enable-channel", "-k", "kchan", "-s", "agg-kernel"}).exitCode, 0);
    const RunResult enabled =
        cli({"enable-event", "-k", "-c", "kchan", "-s", "agg-kernel", "sched:sched_switch"});
    if (enabled.exitCode != 0) {
        GTEST_SKIP() << "no kernel domain here: " << enabled.describe();
    }
    ASSERT_EQ(cli({"start", "agg-kernel"}).exitCode, 0);
    for (int i = 0; i < 20; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10)); // context switches
    }
    ASSERT_EQ(cli({"stop", "agg-kernel"}).exitCode, 0);
    const RunResult r =
        cli({"aggregate", "--session", "agg-kernel", "--json",
             "sched:sched_switch { @n[prev_tid] = count(); } sched:* { @all = count(); }"});
    ASSERT_EQ(r.exitCode, 0) << r.describe();
    const char* root = std::getenv("TRACECTL_SOURCE_ROOT");
    RunOptions options;
    options.timeout = std::chrono::minutes(2);
    const RunResult events =
        run({"/usr/bin/python3",
             std::string(root != nullptr ? root : ".") + "/tests/integration/trace_events.py", dir,
             "--event", "sched_switch"},
            options);
    ASSERT_EQ(events.exitCode, 0) << events.describe();
    std::map<long long, long long> expected;
    long long total = 0;
    std::istringstream lines(events.out);
    for (std::string line; std::getline(lines, line);) {
        const auto record = nlohmann::json::parse(line);
        if (record.contains("name")) {
            ++expected[record["fields"]["prev_tid"].get<long long>()];
            ++total;
        }
    }
    ASSERT_GT(total, 0);
    std::map<long long, long long> got;
    long long all = -1;
    const auto json = nlohmann::json::parse(r.out);
    for (const auto& a : json["aggregations"]) {
        for (const auto& e : a["entries"]) {
            if (a["name"] == "n") {
                got[e["keys"][0].get<long long>()] = e["value"].get<long long>();
            } else {
                all = e["value"].get<long long>();
            }
        }
    }
    EXPECT_EQ(got, expected);
    EXPECT_EQ(all, total);
    EXPECT_EQ(cli({"destroy", "agg-kernel"}).exitCode, 0);
}

namespace {

/// "FIRST\nFIRST+1\n...\nLAST\n".
std::string numbers(int first, int last) {
    std::string text;
    for (int i = first; i <= last; ++i) {
        text += std::to_string(i) + "\n";
    }
    return text;
}

/// argv running `tracectl ARGS...` with its stderr appended to `err` (its stdout goes to
/// ChildProcess's log): sh execs it, so the process is tracectl itself.
std::vector<std::string> withStderrTo(const std::string& err,
                                      const std::vector<std::string>& args) {
    const char* tracectl = std::getenv("TRACECTL");
    std::vector<std::string> argv{"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>>'" + err + "'",
                                  tracectl != nullptr ? tracectl : "tracectl"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
}

} // namespace

TEST_F(AggregateSession, LiveOutputComesWithinTheSwitchRateAndEveryTickOnceAtCtrlC) {
    // dtrace -q -n '...printf...': each tick's line is printed within the switch rate
    // (default 1 s) while the session still records, not at the end. The app ticks every
    // 250 ms for 10 s; its first lines must be on stdout within 10 s of its start, long
    // before Ctrl-C; after Ctrl-C, stdout holds BEGIN's line, every tick once in order,
    // and END's line.
    const std::string out = sandbox_->dir() + "/log/dtrace-live.out";
    const std::string err = sandbox_->dir() + "/log/dtrace-live.err";
    const std::string go = sandbox_->dir() + "/dtrace-live-go";
    std::filesystem::remove(out);
    std::filesystem::remove(err);
    std::filesystem::remove(go);
    ChildProcess app({demoApp(), "40", "250000", go}, {}, sandbox_->dir() + "/log/apps.log");
    ChildProcess dtrace(withStderrTo(err, {"dtrace", "-q", "-n",
                                           "BEGIN { printf(\"begin\\n\"); }\n"
                                           "tracectl_demo:tick { printf(\"%d\\n\", seq); }\n"
                                           "END { printf(\"end\\n\"); }"}),
                        {}, out);
    std::string folder;
    ASSERT_NE(waitForTemporarySession(*this, *manager_, *bus_, folder), "") << readFile(err);
    std::ofstream(go).put('\n');
    // The first ticks' lines, while both still run.
    EXPECT_TRUE(eventually([&] { return readFile(out).rfind("begin\n0\n1\n", 0) == 0; },
                           std::chrono::seconds(10)))
        << readFile(out) << readFile(err);
    EXPECT_EQ(dtrace.wait(0), -1) << "ended before Ctrl-C: " << readFile(err);
    const std::string seen = readFile(out);
    ASSERT_EQ(app.wait(60000), 0);
    dtrace.kill(SIGINT);
    ASSERT_EQ(dtrace.wait(30000), 0) << readFile(err);
    const std::string text = readFile(out);
    EXPECT_EQ(text, "begin\n" + numbers(0, 39) + "end\n") << readFile(err);
    EXPECT_EQ(text.rfind(seen, 0), 0u) << "what was printed live was printed again: " << text;
    EXPECT_TRUE(manager_->ListSessions().empty());
    EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(folder).parent_path())) << folder;
}

TEST_F(AggregateSession, LiveExitEndsTheSessionWhileTheAppStillTicks) {
    // exit() in a clause ends tracing within the switch rate: END runs, nothing after
    // the exiting record is run, the command returns exit's status without Ctrl-C.
    const std::string out = sandbox_->dir() + "/log/dtrace-exit.out";
    const std::string err = sandbox_->dir() + "/log/dtrace-exit.err";
    const std::string go = sandbox_->dir() + "/dtrace-exit-go";
    std::filesystem::remove(out);
    std::filesystem::remove(err);
    std::filesystem::remove(go);
    ChildProcess app({demoApp(), "600", "50000", go}, {}, sandbox_->dir() + "/log/apps.log");
    ChildProcess dtrace(withStderrTo(err, {"dtrace", "-q", "-x", "switchrate=4hz", "-n",
                                           "tracectl_demo:tick { printf(\"%d\\n\", seq); }\n"
                                           "tracectl_demo:tick /seq == 5/ { exit(3); }\n"
                                           "END { printf(\"end\\n\"); }"}),
                        {}, out);
    std::string folder;
    ASSERT_NE(waitForTemporarySession(*this, *manager_, *bus_, folder), "") << readFile(err);
    std::ofstream(go).put('\n');
    ASSERT_EQ(dtrace.wait(30000), 3) << readFile(err);
    EXPECT_EQ(readFile(out), numbers(0, 5) + "end\n") << readFile(err);
    EXPECT_TRUE(manager_->ListSessions().empty());
    EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(folder).parent_path())) << folder;
}

// Found by a fresh-user pass: `tracectl dtrace ... | head -3` died of SIGPIPE
// once head had its lines, and left its temporary session recording (and
// its folder). The reader gone ends it as Ctrl-C does: no session, no
// folder, exit 1.
// issue 40 (B12): a live run whose probes named nothing, or matched nothing it recorded,
// printed an empty result and exited 0. A kernel system's event that does not exist is
// refused before anything is made (dtrace(1M): "does not match any probes"); a run whose
// every description matched no record fails, saying so.
TEST_F(AggregateSession, ALiveRunThatMatchesNothingFails) {
    const char* tracectl = std::getenv("TRACECTL");
    ASSERT_NE(tracectl, nullptr);
    RunOptions options;
    options.timeout = std::chrono::minutes(2);
    const RunResult refused = run({tracectl, "dtrace", "--duration", "1", "-n",
                                   "syscalls:sys_enter_nosuchcall { @ = count(); }"},
                                  options);
    EXPECT_EQ(refused.exitCode, 1) << refused.describe();
    EXPECT_NE(refused.err.find("syscalls:sys_enter_nosuchcall does not match any probes"),
              std::string::npos)
        << refused.err;
    EXPECT_EQ(refused.err.find("Tracing"), std::string::npos) << "it traced: " << refused.err;
    const RunResult empty = run(
        {tracectl, "dtrace", "--duration", "1", "-n", "no_such_provider:event { @ = count(); }"},
        options);
    EXPECT_EQ(empty.exitCode, 1) << empty.describe();
    EXPECT_NE(empty.err.find("no probe description matched an event record"), std::string::npos)
        << empty.err;
    // A kernel event nobody causes: its class is in the trace's metadata, and no record.
    const RunResult none = run(
        {tracectl, "dtrace", "--duration", "1", "-n", "syscalls:sys_enter_reboot { @ = count(); }"},
        options);
    EXPECT_EQ(none.exitCode, 1) << none.describe();
    EXPECT_NE(none.err.find("no probe description matched an event record"), std::string::npos)
        << none.err;
    EXPECT_TRUE(eventually([&] { return manager_->ListSessions().empty(); }));
}

TEST_F(AggregateSession, AClosedOutputPipeEndsItAndLeavesNothing) {
    const char* tracectl = std::getenv("TRACECTL");
    ASSERT_NE(tracectl, nullptr);
    const std::string tmp = sandbox_->dir() + "/aggregate-pipe-tmp";
    std::filesystem::create_directories(tmp);
    RunOptions options;
    options.env = {{"TMPDIR", tmp}};
    options.timeout = std::chrono::minutes(2);
    // The app ticks for ten minutes: only the closed pipe can end the command.
    const RunResult r = run({"sh", "-c",
                             "\"$0\" dtrace -q -c \"$1 600000 1000\" -n 'tracectl_demo:tick { "
                             "printf(\"%d\\n\", seq); }' | head -3",
                             tracectl, demoApp()},
                            options);
    EXPECT_FALSE(r.timedOut) << r.describe();
    EXPECT_NE(r.out.find("0\n1\n"), std::string::npos) << r.out;
    EXPECT_TRUE(eventually([&] { return manager_->ListSessions().empty(); }))
        << "the temporary session is left";
    EXPECT_TRUE(std::filesystem::is_empty(tmp)) << "its folder is left";
}

// Found by a fresh-user pass: live, `pid`, `tid`, `execname` and self-> variables were
// refused ("unknown field 'pid'"): the temporary session recorded no context. It records
// the thread's contexts for a program that reads them, and, in the kernel domain, the
// scheduler's switches and execs that give a thread's name at event time (a process gone
// before its records are converted had none).
TEST_F(AggregateSession, LiveProgramsReadTheRecordingThreadsIdsAndName) {
    const char* tracectl = std::getenv("TRACECTL");
    ASSERT_NE(tracectl, nullptr);
    RunOptions options;
    options.timeout = std::chrono::minutes(2);
    const RunResult ust =
        run({tracectl, "dtrace", "-q", "-c", demoApp() + " 3 100000", "-n",
             "tracectl_demo:tick { self->n++; printf(\"%d %d %s %d\\n\", pid, tid, execname, "
             "self->n); }"},
            options);
    ASSERT_EQ(ust.exitCode, 0) << ust.describe();
    const std::size_t ready = ust.out.find("ready ");
    ASSERT_NE(ready, std::string::npos) << ust.out;
    const long app = std::stol(ust.out.substr(ready + 6));
    for (int n = 1; n <= 3; ++n) {
        const std::string line = std::to_string(app) + " " + std::to_string(app) +
                                 " tracectl-demo-a " + std::to_string(n) + "\n";
        EXPECT_NE(ust.out.find(line), std::string::npos) << line << "in:\n" << ust.out;
    }
    // A process of its own name, gone long before the session ends.
    const std::string named = sandbox_->dir() + "/tc-getppid";
    std::filesystem::remove(named);
    std::filesystem::create_symlink(std::filesystem::canonical("/usr/bin/python3"), named);
    const RunResult kernel =
        run({"sh", "-c",
             "(sleep 1; \"$1\" -c 'import os; [os.getppid() for _ in range(7)]') & "
             "exec \"$0\" dtrace -q --duration 4 -n 'syscalls:sys_enter_getppid /execname == "
             "\"tc-getppid\"/ { @[execname] = count(); }'",
             tracectl, named},
            options);
    ASSERT_EQ(kernel.exitCode, 0) << kernel.describe();
    EXPECT_NE(kernel.out.find("tc-getppid"), std::string::npos) << kernel.out;
    EXPECT_NE(kernel.out.find(" 7\n"), std::string::npos) << kernel.out;
}

// Found by a fresh-user pass: `-p PID` traced until Ctrl-C, though PID had exited; dtrace
// ends when the grabbed process does. Here the process is the shell's, which then becomes
// tracectl (exec): an exited child tracectl never reaps, a zombie, is gone too.
TEST_F(AggregateSession, GrabbingAProcessEndsWhenItExits) {
    const char* tracectl = std::getenv("TRACECTL");
    ASSERT_NE(tracectl, nullptr);
    RunOptions options;
    options.timeout = std::chrono::minutes(1);
    const auto began = std::chrono::steady_clock::now();
    const RunResult r = run({"sh", "-c",
                             "\"$1\" 10 100000 >/dev/null & exec \"$0\" dtrace -q -p $! -n "
                             "'tracectl_demo:tick { @ = count(); }'",
                             tracectl, demoApp()},
                            options);
    EXPECT_EQ(r.exitCode, 0) << r.describe();
    EXPECT_NE(r.err.find("has exited"), std::string::npos) << r.err;
    EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(50))
        << "it traced on after its process exited";
    EXPECT_TRUE(manager_->ListSessions().empty());
}

// A probe named as lttng-modules names a kernel event, without ftrace's system
// (sched_switch, syscall_entry_getppid, lttng_statedump_process_state), was enabled live as a
// UST event and matched nothing. It is a kernel event: the statedump's threads, the
// switches and exactly the command's 7 getppid calls are counted.
TEST_F(AggregateSession, LiveProbesNamedAsLttngModulesNameKernelEventsAreKernelEvents) {
    if (!manager_->KernelTracingAvailable()) {
        GTEST_SKIP() << "no kernel domain here";
    }
    const char* tracectl = std::getenv("TRACECTL");
    ASSERT_NE(tracectl, nullptr);
    const std::string script = sandbox_->dir() + "/getppid7.py";
    std::ofstream(script) << "import os\nfor _ in range(7):\n    os.getppid()\n";
    RunOptions options;
    options.timeout = std::chrono::minutes(2);
    const RunResult r =
        run({tracectl, "dtrace", "-q", "--json", "-c", "/usr/bin/python3 " + script, "-n",
             "syscall_entry_getppid /pid == $target/ { @calls = count(); }\n"
             "sched_switch { @switches = count(); }\n"
             "lttng_statedump_process_state { @threads = count(); }"},
            options);
    ASSERT_EQ(r.exitCode, 0) << r.describe();
    EXPECT_NE(r.err.find("Tracing syscall_entry_getppid (kernel), sched_switch (kernel), "
                         "lttng_statedump_process_state (kernel) in session dtrace-"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(onlyValue(r.out, "calls"), 7) << r.out;
    EXPECT_GT(onlyValue(r.out, "switches"), 0) << r.out;
    EXPECT_GT(onlyValue(r.out, "threads"), 0) << r.out;
    EXPECT_TRUE(manager_->ListSessions().empty());
}

// A program of only timers (and BEGIN and END) ended at once live: it traced nothing, so
// its timers never fired. As in dtrace(1) it runs until Ctrl-C, exit() or --duration, its
// timers firing on the clock and what they print appearing while it runs; no session is
// made for it.
TEST_F(AggregateSession, ATimersOnlyProgramRunsUntilCtrlCExitOrDuration) {
    const char* tracectl = std::getenv("TRACECTL");
    ASSERT_NE(tracectl, nullptr);
    // Ctrl-C: the first tick's line appears while it still runs, END runs at SIGINT.
    const std::string out = sandbox_->dir() + "/log/dtrace-timers.out";
    const std::string err = sandbox_->dir() + "/log/dtrace-timers.err";
    std::filesystem::remove(out);
    std::filesystem::remove(err);
    ChildProcess dtrace(withStderrTo(err, {"dtrace", "-q", "-n",
                                           "profile:::tick-1sec { printf(\"tick\\n\"); }\n"
                                           "END { printf(\"end\\n\"); }"}),
                        {}, out);
    EXPECT_TRUE(eventually([&] { return readFile(out) == "tick\n"; }, std::chrono::seconds(10)))
        << readFile(out) << readFile(err);
    EXPECT_EQ(dtrace.wait(0), -1) << "ended before Ctrl-C: " << readFile(err);
    EXPECT_TRUE(manager_->ListSessions().empty()) << "a session for a program of timers";
    dtrace.kill(SIGINT);
    ASSERT_EQ(dtrace.wait(30000), 0) << readFile(err);
    const std::string text = readFile(out);
    EXPECT_EQ(text.rfind("tick\n", 0), 0u) << text;
    EXPECT_EQ(text.substr(text.size() - 4), "end\n") << text;
    // exit() in a timer: five ticks of 100 ms, END, exit's status.
    RunOptions options;
    options.timeout = std::chrono::minutes(1);
    const auto began = std::chrono::steady_clock::now();
    const RunResult exited = run({tracectl, "dtrace", "-q", "-n",
                                  "tick-100ms { n++; printf(\"%d\\n\", n); }\n"
                                  "tick-100ms /n == 5/ { exit(4); }\n"
                                  "END { printf(\"end\\n\"); }"},
                                 options);
    EXPECT_EQ(exited.exitCode, 4) << exited.describe();
    EXPECT_EQ(exited.out, "1\n2\n3\n4\n5\nend\n") << exited.describe();
    EXPECT_GE(std::chrono::steady_clock::now() - began, std::chrono::milliseconds(500));
    // --duration: BEGIN, the ticks due by then, END.
    const auto start = std::chrono::steady_clock::now();
    const RunResult timed = run({tracectl, "dtrace", "-q", "--duration", "1.5", "-n",
                                 "BEGIN { printf(\"begin\\n\"); }\n"
                                 "tick-1s { printf(\"tick\\n\"); }\n"
                                 "END { printf(\"end\\n\"); }"},
                                options);
    EXPECT_EQ(timed.exitCode, 0) << timed.describe();
    EXPECT_EQ(timed.out, "begin\ntick\nend\n") << timed.describe();
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1500));
}

// --json with -c: the command's standard output went into the JSON document on standard
// output (the demo app's "ready PID" line before it). It goes to standard error: standard
// output is the JSON document alone.
TEST_F(AggregateSession, JsonOutputKeepsTheCommandsOutputOut) {
    const char* tracectl = std::getenv("TRACECTL");
    ASSERT_NE(tracectl, nullptr);
    RunOptions options;
    options.timeout = std::chrono::minutes(1);
    const RunResult r = run({tracectl, "dtrace", "--json", "-c", demoApp() + " 3 100000", "-n",
                             "tracectl_demo:tick { @n = count(); }"},
                            options);
    ASSERT_EQ(r.exitCode, 0) << r.describe();
    EXPECT_TRUE(nlohmann::json::accept(r.out)) << r.out;
    EXPECT_EQ(onlyValue(r.out, "n"), 3) << r.out;
    EXPECT_NE(r.err.find("ready "), std::string::npos) << r.err;
    EXPECT_TRUE(manager_->ListSessions().empty());
}
