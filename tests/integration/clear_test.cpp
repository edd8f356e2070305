// Session.Clear / tracectl clear, for real (lttng-clear(1)): sessions traced
// by the bundled LTTng-UST app (and the kernel) through tracectld and its
// consumer unit, cleared while active, stopped, after a rotation, in snapshot
// mode; what stays is read back with babeltrace2 (python3-bt2,
// trace_events.py / count_events.py). Timestamps are compared on
// CLOCK_MONOTONIC, which the UST and kernel clocks count (1 GHz): a record's
// "cycles" is its CLOCK_MONOTONIC time in ns.
#include "child_process.hpp"
#include "eventually.hpp"
#include "kernel_trace_support.hpp"
#include "sandbox.hpp"
#include "sandbox_suite.hpp"
#include "trace_counts.hpp"
#include "tracectl_clients.hpp"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using namespace tracectl::test;
using Json = nlohmann::json;
using Options = std::map<std::string, sdbus::Variant>;

namespace {

std::uint64_t monoNowNs() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

/// Bytes of the data stream files (channel0_<cpu>) below `dir`.
std::uint64_t dataBytes(const std::string& dir) {
    std::uint64_t total = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
        std::error_code e;
        if (it->is_regular_file(e) && it->path().filename().string().rfind("channel0_", 0) == 0 &&
            it->path().parent_path().filename() != "index")
            total += it->file_size(e);
    }
    return total;
}

/// Small sub-buffers: packets reach the disk a few times a second at the
/// app's pace, so "something was written" comes soon.
const Options kSmallChannel = {{"subbuf-size", sdbus::Variant(std::uint64_t{16384})},
                               {"subbuf-count", sdbus::Variant(std::uint64_t{8})}};

class Clear : public SandboxSuite {
protected:
    static std::string appLog() { return sandbox_->dir() + "/log/clear-apps.log"; }

    /// The tick records below `dir` (every trace there), babeltrace2's
    /// order; totals in `totals`.
    static std::vector<Json> ticks(const std::string& dir, Json* totals = nullptr) {
        return traceEvents(dir, {"tracectl_demo:tick"}, totals);
    }

    /// Waits until the session's stream files below `dir` hold more than
    /// `bytes` of packets.
    static bool written(const std::string& dir, std::uint64_t bytes) {
        return eventually([&] { return dataBytes(dir) > bytes; }, std::chrono::seconds(30));
    }

    /// An app emits `count` ticks steadily into a new session `name`
    /// (per-PID buffers if `perPid`), which is cleared meanwhile.
    void clearWhileEmitting(const std::string& name, bool perPid, std::uint64_t count);

    static pid_t consumerPid(SessionClient& s) {
        const RunResult r = sandbox_->systemctl(
            {"show", "-p", "MainPID", "--value", "tracectl-consumer-" + hexId(s) + ".service"});
        return static_cast<pid_t>(std::atol(r.out.c_str()));
    }
};

} // namespace

/// An app emits `count` ticks steadily into session `name`; the session is
/// cleared while it does; then the trace holds only later ticks, all of
/// them from the first one kept on, and babeltrace2 reads it.
void Clear::clearWhileEmitting(const std::string& name, bool perPid, std::uint64_t count) {
    const std::string dir = output(name);
    auto s = startTickSession(name, {}, perPid, kSmallChannel);
    ChildProcess app({demoApp(), std::to_string(count), "300"}, {}, appLog());
    ASSERT_TRUE(waitTracing(app.pid(), appLog()));
    ASSERT_TRUE(written(dir + "/ust", 3 * 16384)) << "the app's first ticks never reached the disk";
    const std::uint64_t before = monoNowNs();
    s->Clear({});
    // The closed chunk (the output folder's own ust/) is gone once Clear
    // answers; tracing goes on in a new chunk.
    EXPECT_FALSE(fs::exists(dir + "/ust"));
    EXPECT_EQ(s->State(), "active");
    ASSERT_EQ(app.wait(120000), 0);
    s->Stop({});
    Json totals;
    const auto events = ticks(dir, &totals);
    ASSERT_FALSE(events.empty()) << "no event after the clear";
    std::set<std::uint64_t> seqs;
    for (const Json& e : events) {
        EXPECT_GE(e["cycles"].get<std::uint64_t>(), before) << e.dump();
        seqs.insert(e["fields"]["seq"].get<std::uint64_t>());
    }
    EXPECT_GT(*seqs.begin(), 0u) << "the first ticks were recorded before the clear: deleted";
    // After the clear nothing is lost: every tick from the point where every
    // stream had switched to the new chunk to the last, minus what the tracer
    // said it discarded. Each stream switches at its own position (as LTTng's
    // clear and rotation do): a tick written on one CPU just before that
    // CPU's switch may come after the first tick another CPU kept, so the
    // kept ticks start contiguous only from the last stream's first one.
    std::map<std::string, std::uint64_t> firstOfStream;
    for (const Json& e : events) {
        const auto seq = e["fields"]["seq"].get<std::uint64_t>();
        auto [it, added] = firstOfStream.emplace(e["stream"].get<std::string>(), seq);
        if (!added)
            it->second = std::min(it->second, seq);
    }
    std::uint64_t allSwitched = 0;
    for (const auto& [stream, first] : firstOfStream)
        allSwitched = std::max(allSwitched, first);
    const auto kept =
        static_cast<std::uint64_t>(std::distance(seqs.lower_bound(allSwitched), seqs.end()));
    EXPECT_EQ(*seqs.rbegin(), count - 1);
    EXPECT_EQ(kept + totals["discarded"].get<std::uint64_t>(), count - allSwitched)
        << firstOfStream.size() << " streams, the last switched at tick " << allSwitched;
    EXPECT_EQ(countTicks(dir), static_cast<long>(events.size())) << "babeltrace2 reads it";
    s->Destroy({});
}

TEST_F(Clear, WhileAnAppEmitsTheTraceAfterTheClearHoldsOnlyLaterEventsAndStaysReadable) {
    clearWhileEmitting("clr-active", false, 30000);
}

TEST_F(Clear, PerPidWhileAnAppEmitsTheTraceAfterTheClearHoldsOnlyLaterEvents) {
    clearWhileEmitting("clr-active-pid", true, 12000);
}

TEST_F(Clear, AfterARotationTheArchivesStayAsInLttngAndOnlyTheCurrentChunkGoes) {
    const std::string dir = output("clr-rot");
    auto s = startTickSession("clr-rot", {}, false, {});
    {
        ChildProcess app({demoApp(), "200", "0"}, {}, appLog());
        ASSERT_EQ(app.wait(30000), 0);
    }
    const std::string archive = s->Rotate({});
    ASSERT_TRUE(eventually([&] { return s->State() == "active"; }, std::chrono::seconds(20)));
    EXPECT_EQ(countTicksIfAny(archive), 200) << archive;
    {
        ChildProcess app({demoApp(), "300", "0"}, {}, appLog());
        ASSERT_EQ(app.wait(30000), 0);
    }
    const std::uint64_t before = monoNowNs();
    s->Clear({});
    {
        ChildProcess app({demoApp(), "50", "0"}, {}, appLog());
        ASSERT_EQ(app.wait(30000), 0);
    }
    s->Stop({});
    // The archive is untouched; of the 300 ticks of the chunk current at the
    // clear none is left anywhere; the 50 after it are.
    EXPECT_EQ(countTicksIfAny(archive), 200) << archive;
    EXPECT_EQ(countTicks(dir), 250) << "the archive's 200 and the 50 after the clear";
    std::size_t later = 0;
    for (const Json& e : ticks(dir))
        later += e["cycles"].get<std::uint64_t>() >= before ? 1 : 0;
    EXPECT_EQ(later, 50u);
    // Numbering goes on as LTTng's: the deleted chunk had index 1, the next
    // archive is -2.
    const std::string next = s->Rotate({});
    EXPECT_EQ(next.substr(next.size() - 2), "-2") << next;
    ASSERT_TRUE(eventually([&] { return s->State() == "stopped"; }, std::chrono::seconds(20)));
    EXPECT_EQ(countTicksIfAny(next), 50) << next;
    s->Destroy({});
}

TEST_F(Clear, AStoppedSessionClearedThenStartedHoldsOnlyTheNewEvents) {
    const std::string dir = output("clr-stopped");
    auto s = startTickSession("clr-stopped", {}, false, {});
    {
        ChildProcess app({demoApp(), "120", "0"}, {}, appLog());
        ASSERT_EQ(app.wait(30000), 0);
    }
    s->Stop({});
    ASSERT_EQ(countTicks(dir), 120);
    s->Clear({});
    EXPECT_EQ(s->State(), "stopped");
    EXPECT_EQ(countTicksIfAny(dir), 0) << "nothing recorded is left";
    s->Clear({}); // nothing to clear: no error (as LTTng)
    s->Start({});
    {
        ChildProcess app({demoApp(), "70", "0"}, {}, appLog());
        ASSERT_EQ(app.wait(30000), 0);
    }
    s->Stop({});
    const auto counts = countEvents(dir);
    EXPECT_EQ(counts["seq"]["count"].get<std::uint64_t>(), 70u);
    EXPECT_EQ(counts["seq"]["missing"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(countTicks(dir), 70);
    s->Destroy({});
}

TEST_F(Clear, PerPidAStoppedSessionClearedThenStartedHoldsOnlyTheNewEvents) {
    const std::string dir = output("clr-stopped-pid");
    auto s = startTickSession("clr-stopped-pid", {}, true, {});
    {
        ChildProcess app({demoApp(), "120", "0"}, {}, appLog());
        ASSERT_EQ(app.wait(30000), 0);
    }
    s->Stop({});
    ASSERT_EQ(countTicks(dir), 120);
    s->Clear({});
    EXPECT_EQ(s->State(), "stopped");
    EXPECT_EQ(countTicksIfAny(dir), 0) << "nothing recorded is left";
    s->Clear({}); // nothing to clear: no error (as LTTng)
    s->Start({});
    {
        ChildProcess app({demoApp(), "70", "0"}, {}, appLog());
        ASSERT_EQ(app.wait(30000), 0);
    }
    s->Stop({});
    const auto counts = countEvents(dir);
    EXPECT_EQ(counts["seq"]["count"].get<std::uint64_t>(), 70u);
    EXPECT_EQ(counts["seq"]["missing"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(countTicks(dir), 70);
    s->Destroy({});
}

TEST_F(Clear, ASnapshotAfterAClearHoldsOnlyLaterEvents) {
    const std::string dir = output("clr-snap");
    auto s = startTickSession("clr-snap", {{"mode", sdbus::Variant(std::string("snapshot"))}},
                              false, {});
    {
        ChildProcess app({demoApp(), "150", "0"}, {}, appLog());
        ASSERT_EQ(app.wait(30000), 0);
    }
    const std::string first = s->RecordSnapshot({});
    ASSERT_EQ(countTicks(first), 150) << first;
    const std::uint64_t before = monoNowNs();
    s->Clear({});
    EXPECT_EQ(countTicks(first), 150) << "snapshots already taken stay";
    const std::string empty = s->RecordSnapshot({});
    EXPECT_EQ(countTicksIfAny(empty), 0) << empty;
    {
        ChildProcess app({demoApp(), "40", "0"}, {}, appLog());
        ASSERT_EQ(app.wait(30000), 0);
    }
    const std::string second = s->RecordSnapshot({});
    const auto events = ticks(second);
    EXPECT_EQ(events.size(), 40u) << second;
    for (const Json& e : events)
        EXPECT_GE(e["cycles"].get<std::uint64_t>(), before) << e.dump();
    s->Destroy({});
}

// Issue 40, A.4 (a): after a clear, a snapshot lacked the streams of the
// CPUs nothing ran on since (the clear had emptied them, and nothing opened
// a packet in them again), and the busy stream's first packet opened only
// with its first event, so babeltrace2 --stream-intersection cut the first
// events. As lttng-sessiond's clear of an active session (clear.c,
// session_open_packets), a packet now opens in every stream at the clear,
// and every stream ends at the snapshot.
TEST_F(Clear, ASnapshotAfterAClearHasEveryStreamAndItsIntersectionKeepsTheFirstEvent) {
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        GTEST_SKIP() << "needs two CPUs";
    auto s = startTickSession("clr-snap-idle", {{"mode", sdbus::Variant(std::string("snapshot"))}},
                              false, {});
    {
        // Every CPU's stream holds something before the clear.
        ChildProcess a({"taskset", "-c", "0", demoApp(), "30", "0"}, {}, appLog());
        ChildProcess b({"taskset", "-c", "1", demoApp(), "30", "0"}, {}, appLog());
        ASSERT_EQ(a.wait(30000), 0);
        ASSERT_EQ(b.wait(30000), 0);
    }
    s->Clear({});
    {
        // After the clear, only CPU 1 records, from tick 0.
        ChildProcess app({"taskset", "-c", "1", demoApp(), "40", "1000"}, {}, appLog());
        ASSERT_EQ(app.wait(30000), 0);
    }
    const std::string snap = s->RecordSnapshot({});
    const std::string trace = snap + "/ust/uid/0/64-bit";
    const long cpus = sysconf(_SC_NPROCESSORS_CONF);
    for (long cpu = 0; cpu < cpus; ++cpu) {
        const std::string stream = "channel0_" + std::to_string(cpu);
        EXPECT_TRUE(fs::exists(trace + "/" + stream)) << trace << " lacks " << stream;
        EXPECT_TRUE(fs::exists(trace + "/index/" + stream + ".idx")) << trace << " lacks its index";
    }
    const auto events = ticks(snap);
    ASSERT_EQ(events.size(), 40u) << snap;
    EXPECT_EQ(events.front()["fields"]["seq"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(countTicksInIntersection(snap), 40) << "--stream-intersection cuts " << snap;
    s->Destroy({});
}

TEST_F(Clear, RefusedWhileARotationIsUnderWayWithAClearErrorAndNothingIsLost) {
    const std::string dir = output("clr-busy");
    auto s = startTickSession("clr-busy", {}, false, {});
    {
        ChildProcess app({demoApp(), "400", "0"}, {}, appLog());
        ASSERT_EQ(app.wait(30000), 0);
    }
    // The consumer, stopped, cannot answer the Rotate: the rotation stays
    // under way (State "rotating") until it is let go.
    const pid_t consumer = consumerPid(*s);
    ASSERT_GT(consumer, 0);
    ASSERT_EQ(::kill(consumer, SIGSTOP), 0);
    std::atomic<bool> rotated{false};
    std::string archive;
    std::thread rotator([&] {
        auto bus = sdbus::createSystemBusConnection();
        SessionClient same(*bus, s->getObjectPath());
        try {
            archive = same.Rotate({});
        } catch (const sdbus::Error& e) {
            ADD_FAILURE() << e.getName() << ": " << e.getMessage();
        }
        rotated = true;
    });
    const bool rotating = eventually([&] { return s->State() == "rotating"; });
    std::string error, message;
    try {
        s->Clear({});
        error = "no error";
    } catch (const sdbus::Error& e) {
        error = e.getName();
        message = e.getMessage();
    }
    ::kill(consumer, SIGCONT);
    rotator.join();
    ASSERT_TRUE(rotating);
    EXPECT_EQ(error, "org.tracectl.Tracing1.Error.WrongState");
    EXPECT_NE(message.find("rotation"), std::string::npos) << message;
    ASSERT_TRUE(rotated);
    ASSERT_TRUE(eventually([&] { return s->State() == "active"; }, std::chrono::seconds(20)));
    s->Stop({});
    // Nothing was deleted: the 400 ticks are in the archive.
    EXPECT_EQ(countTicksIfAny(archive), 400) << archive;
    EXPECT_EQ(countTicks(dir), 400);
    s->Destroy({});
}

TEST_F(Clear, KernelStreamsAreClearedToo) {
    ASSERT_TRUE(manager_->KernelTracingAvailable());
    const std::string dir = output("clr-kernel");
    auto s = std::make_unique<SessionClient>(
        *bus_, manager_->CreateSession("clr-kernel", {{"output-path", sdbus::Variant(dir)}}));
    s->EnableEvents("kernel", "", "sched:sched_process_fork", {});
    s->EnableEvents("ust", "", "tracectl_demo:tick", {});
    s->Start({});
    const auto forkSome = [] {
        std::set<pid_t> children;
        for (int i = 0; i < 5; ++i) {
            const pid_t child = ::fork();
            if (child == 0)
                ::_exit(0);
            children.insert(child);
        }
        for (const pid_t c : children)
            ::waitpid(c, nullptr, 0);
        return children;
    };
    const std::set<pid_t> early = forkSome();
    {
        ChildProcess app({demoApp(), "30", "0"}, {}, appLog());
        ASSERT_EQ(app.wait(30000), 0);
    }
    s->Clear({});
    EXPECT_FALSE(fs::exists(dir + "/kernel"));
    EXPECT_FALSE(fs::exists(dir + "/ust"));
    const std::set<pid_t> late = forkSome();
    s->Stop({});
    std::set<pid_t> recorded;
    for (const Json& e : traceEvents(dir, {"sched_process_fork"}))
        if (e["fields"]["parent_tid"] == ::getpid())
            recorded.insert(e["fields"]["child_tid"].get<pid_t>());
    EXPECT_EQ(recorded, late) << "only the forks after the clear";
    for (const pid_t p : early)
        EXPECT_FALSE(recorded.count(p)) << "fork " << p << " came before the clear";
    EXPECT_EQ(countTicksIfAny(dir), 0) << "the app's ticks went with the clear";
    s->Destroy({});
}

TEST_F(Clear, AKernelOnlySessionIsCleared) {
    ASSERT_TRUE(manager_->KernelTracingAvailable());
    const std::string dir = output("clr-kernel-only");
    auto s = std::make_unique<SessionClient>(
        *bus_, manager_->CreateSession("clr-kernel-only", {{"output-path", sdbus::Variant(dir)}}));
    s->EnableEvents("kernel", "", "sched:sched_process_fork", {});
    s->Start({});
    const auto forkOne = [] {
        const pid_t child = ::fork();
        if (child == 0)
            ::_exit(0);
        ::waitpid(child, nullptr, 0);
        return child;
    };
    const pid_t early = forkOne();
    s->Clear({});
    EXPECT_FALSE(fs::exists(dir + "/kernel"));
    const pid_t late = forkOne();
    s->Stop({});
    std::set<pid_t> recorded;
    for (const Json& e : traceEvents(dir, {"sched_process_fork"}))
        if (e["fields"]["parent_tid"] == ::getpid())
            recorded.insert(e["fields"]["child_tid"].get<pid_t>());
    EXPECT_EQ(recorded, std::set<pid_t>{late}) << "fork " << early << " came before the clear";
    s->Destroy({});
}

TEST_F(Clear, ASnapshotSessionsKernelBuffersAreClearedToo) {
    ASSERT_TRUE(manager_->KernelTracingAvailable());
    const std::string dir = output("clr-ksnap");
    auto s = std::make_unique<SessionClient>(
        *bus_,
        manager_->CreateSession("clr-ksnap", {{"output-path", sdbus::Variant(dir)},
                                              {"mode", sdbus::Variant(std::string("snapshot"))}}));
    s->EnableEvents("kernel", "", "sched:sched_process_fork", {});
    s->Start({});
    const auto forkSome = [] {
        std::set<pid_t> children;
        for (int i = 0; i < 4; ++i) {
            const pid_t child = ::fork();
            if (child == 0)
                ::_exit(0);
            children.insert(child);
        }
        for (const pid_t c : children)
            ::waitpid(c, nullptr, 0);
        return children;
    };
    const auto forksIn = [](const std::string& snapshot) {
        std::set<pid_t> recorded;
        for (const Json& e : traceEvents(snapshot, {"sched_process_fork"}))
            if (e["fields"]["parent_tid"] == ::getpid())
                recorded.insert(e["fields"]["child_tid"].get<pid_t>());
        return recorded;
    };
    const std::set<pid_t> early = forkSome();
    s->Clear({});
    const std::set<pid_t> late = forkSome();
    const std::string snapshot = s->RecordSnapshot({});
    const std::set<pid_t> recorded = forksIn(snapshot);
    EXPECT_EQ(recorded, late) << "only the forks after the clear: " << snapshot;
    for (const pid_t p : early)
        EXPECT_FALSE(recorded.count(p)) << "fork " << p << " came before the clear";
    s->Destroy({});
}

TEST_F(Clear, TheCliClearsOneSessionOrAllAndRefusesBadUse) {
    const char* cli = std::getenv("TRACECTL");
    ASSERT_NE(cli, nullptr);
    const std::string dir = output("clr-cli");
    auto runCli = [&](std::vector<std::string> argv) {
        argv.insert(argv.begin(), cli);
        return run(argv);
    };
    ASSERT_EQ(runCli({"create", "clr-cli", "--output", dir}).exitCode, 0);
    ASSERT_EQ(runCli({"enable-event", "-u", "tracectl_demo:tick", "-s", "clr-cli"}).exitCode, 0);
    ASSERT_EQ(runCli({"start", "clr-cli"}).exitCode, 0);
    {
        ChildProcess app({demoApp(), "80", "0"}, {}, appLog());
        ASSERT_EQ(app.wait(30000), 0);
    }
    ASSERT_EQ(runCli({"stop", "clr-cli"}).exitCode, 0);
    ASSERT_EQ(countTicks(dir), 80);
    RunResult r = runCli({"clear", "clr-cli"});
    EXPECT_EQ(r.exitCode, 0) << r.describe();
    EXPECT_NE(r.out.find("Session clr-cli cleared."), std::string::npos) << r.out;
    EXPECT_EQ(countTicksIfAny(dir), 0);
    ASSERT_EQ(runCli({"start", "clr-cli"}).exitCode, 0);
    {
        ChildProcess app({demoApp(), "20", "0"}, {}, appLog());
        ASSERT_EQ(app.wait(30000), 0);
    }
    r = runCli({"clear", "--all"});
    EXPECT_EQ(r.exitCode, 0) << r.describe();
    EXPECT_NE(r.out.find("Session clr-cli cleared."), std::string::npos) << r.out;
    ASSERT_EQ(runCli({"stop", "clr-cli"}).exitCode, 0);
    EXPECT_EQ(countTicksIfAny(dir), 0) << "the 20 ticks went with clear --all";
    // Without NAME: the current session, here the only one there is.
    r = runCli({"clear"});
    EXPECT_EQ(r.exitCode, 0) << r.describe();
    EXPECT_EQ(r.out, "Session clr-cli cleared.\n");
    EXPECT_EQ(runCli({"clear", "clr-cli", "--all"}).exitCode, 2);
    r = runCli({"clear", "no-such-session"});
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE(r.err.find("no-such-session"), std::string::npos) << r.err;
    EXPECT_EQ(runCli({"destroy", "clr-cli"}).exitCode, 0);
}

TEST_F(Clear, TheCliShowsProgressWhileAClearTakesLong) {
    const char* cli = std::getenv("TRACECTL");
    ASSERT_NE(cli, nullptr);
    auto s = startTickSession("clr-slow", {}, false, {});
    {
        ChildProcess app({demoApp(), "60", "0"}, {}, appLog());
        ASSERT_EQ(app.wait(30000), 0);
    }
    // The consumer, stopped, cannot carry the clear out until it is let go
    // (well within its 10 s deadline): meanwhile tracectl says so.
    const pid_t consumer = consumerPid(*s);
    ASSERT_GT(consumer, 0);
    const std::string log = sandbox_->dir() + "/log/clr-slow-cli.log";
    std::error_code ec;
    fs::remove(log, ec);
    ASSERT_EQ(::kill(consumer, SIGSTOP), 0);
    ChildProcess clear({cli, "clear", "clr-slow"}, {}, log);
    const auto logText = [&] {
        std::ifstream in(log);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    const bool progressed = eventually(
        [&] { return logText().find("clearing session clr-slow: ") != std::string::npos; },
        std::chrono::seconds(5));
    ::kill(consumer, SIGCONT);
    EXPECT_TRUE(progressed) << logText();
    EXPECT_EQ(clear.wait(30000), 0) << logText();
    EXPECT_NE(logText().find("Session clr-slow cleared."), std::string::npos) << logText();
    s->Stop({});
    EXPECT_EQ(countTicksIfAny(output("clr-slow")), 0);
    s->Destroy({});
}
