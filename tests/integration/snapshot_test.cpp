// Snapshot sessions, for real: Mode "snapshot" sessions traced by the
// bundled LTTng-UST app through tracectld and its consumer unit, snapshots
// taken with Session.RecordSnapshot (and tracectl snapshot), each read back
// with babeltrace2 and python3-bt2 (count_events.py).
#include "child_process.hpp"
#include "eventually.hpp"
#include "sandbox.hpp"
#include "sandbox_suite.hpp"
#include "signal_recorder.hpp"
#include "trace_counts.hpp"
#include "tracectl_clients.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace tracectl::test;
using Options = std::map<std::string, sdbus::Variant>;
namespace fs = std::filesystem;

namespace {

const char* const kInvalidArgument = "org.tracectl.Tracing1.Error.InvalidArgument";
const char* const kWrongState = "org.tracectl.Tracing1.Error.WrongState";
const char* const kUnknownObject = "org.freedesktop.DBus.Error.UnknownObject";

/// Regular files below `dir` (none if it does not exist).
std::vector<std::string> filesBelow(const std::string& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
         it.increment(ec))
        if (it->is_regular_file())
            out.push_back(it->path().string());
    return out;
}

/// Bytes of the data stream files (not metadata, not index) below `dir`.
std::uint64_t dataBytes(const std::string& dir, std::size_t* streams = nullptr) {
    std::uint64_t sum = 0;
    std::size_t n = 0;
    for (const auto& f : filesBelow(dir)) {
        const fs::path p(f);
        if (p.filename() == "metadata" || p.parent_path().filename() == "index")
            continue;
        sum += fs::file_size(p);
        ++n;
    }
    if (streams != nullptr)
        *streams = n;
    return sum;
}

class Snapshot : public SandboxSuite {
protected:
    /// A started snapshot session `name` recording tracectl_demo:tick.
    std::unique_ptr<SessionClient> startSession(const std::string& name, bool perPid = false,
                                                Options channel = {}) {
        return startTickSession(name, {{"mode", sdbus::Variant(std::string("snapshot"))}}, perPid,
                                channel);
    }
    std::string appLog() const { return sandbox_->dir() + "/log/apps.log"; }
};

} // namespace

TEST_F(Snapshot, TwoSnapshotsASecondApartAreCompleteTracesAndTheSecondHoldsLaterEvents) {
    SignalRecorder signals;
    const std::string dir = output("snap-two");
    auto s = startSession("snap-two");
    EXPECT_EQ(s->Mode(), "snapshot");
    ChildProcess app({demoApp(), "100000", "1000"}, {}, appLog()); // ~100 s
    ASSERT_TRUE(waitTracing(app.pid(), appLog()));
    // A flight recorder: nothing is written while it records. An
    // observation window: the app records ~500 ticks in it.
    observeFor(std::chrono::milliseconds(500));
    EXPECT_TRUE(filesBelow(dir).empty()) << filesBelow(dir).front();

    const std::string first = s->RecordSnapshot({});
    // The scenario's second apart (the app ticks ~1000 times in it), not a
    // wait for the daemon.
    observeFor(std::chrono::seconds(1));
    const std::string second = s->RecordSnapshot({});
    const std::regex name(dir + R"(/snapshot-1-\d{8}-\d{6}-(\d+))");
    std::smatch m;
    ASSERT_TRUE(std::regex_match(first, m, name)) << first;
    EXPECT_EQ(m[1], "0");
    ASSERT_TRUE(std::regex_match(second, m, name)) << second;
    EXPECT_EQ(m[1], "1");
    // LTTng's layout, with its own metadata.
    EXPECT_TRUE(fs::exists(first + "/ust/uid/0/64-bit/metadata"));
    EXPECT_TRUE(fs::exists(first + "/ust/uid/0/64-bit/index"));
    // Nothing but the snapshots in the output.
    for (const auto& f : filesBelow(dir))
        EXPECT_TRUE(f.rfind(first + "/", 0) == 0 || f.rfind(second + "/", 0) == 0) << f;

    const long inFirst = countTicks(first);
    const long inSecond = countTicks(second);
    EXPECT_GT(inFirst, 0);
    EXPECT_GT(inSecond, 0);
    const auto a = countEvents(first);
    const auto b = countEvents(second);
    ASSERT_FALSE(a["seq"]["last"].is_null());
    ASSERT_FALSE(b["seq"]["last"].is_null());
    const auto lastA = a["seq"]["last"].get<std::uint64_t>();
    const auto lastB = b["seq"]["last"].get<std::uint64_t>();
    // ~1000 ticks a second: the second snapshot goes on well past the first.
    EXPECT_GT(lastB, lastA + 500) << "first up to " << lastA << ", second up to " << lastB;
    EXPECT_EQ(b["seq"]["duplicates"].get<std::uint64_t>(), 0u);
    std::cout << "snapshot 1: seq " << a["seq"]["first"] << ".." << lastA << ", snapshot 2: seq "
              << b["seq"]["first"] << ".." << lastB << "\n";

    // Both announced with their paths.
    const std::string obj = s->getObjectPath();
    bool seenFirst = false, seenSecond = false;
    std::size_t count = 0;
    for (int i = 0; i < 50 && !(seenFirst && seenSecond); ++i) {
        const auto lines = signals.waitFor(count + 1, std::chrono::milliseconds(100));
        count = lines.size();
        for (const auto& l : lines) {
            seenFirst = seenFirst || l == "SnapshotRecorded " + obj + " " + first;
            seenSecond = seenSecond || l == "SnapshotRecorded " + obj + " " + second;
        }
    }
    EXPECT_TRUE(seenFirst && seenSecond);

    // Stopped: still allowed, and it ends where tracing did.
    app.kill();
    s->Stop({});
    const std::string third = s->RecordSnapshot({});
    EXPECT_GT(countTicks(third), 0);
    s->Destroy({});
}

TEST_F(Snapshot, MaxSizeKeepsTheNewestSubBuffersOfEveryStream) {
    const std::string dir = output("snap-max");
    auto s = startSession("snap-max", false,
                          {{"subbuf-size", sdbus::Variant(std::uint64_t{4096})},
                           {"subbuf-count", sdbus::Variant(std::uint64_t{16})}});
    {
        ChildProcess app({demoApp(), "50000", "0"}, {}, appLog());
        ASSERT_EQ(app.wait(60000), 0);
    }
    const std::string all = s->RecordSnapshot({});
    std::size_t streams = 0;
    const std::uint64_t allBytes = dataBytes(all, &streams);
    ASSERT_GT(streams, 0u);
    const std::uint64_t bound = 2 * 4096 * streams;
    ASSERT_GT(allBytes, bound) << "the buffers should hold more than 2 sub-buffers";
    const std::string bounded =
        s->RecordSnapshot({{"max-size", sdbus::Variant(std::uint64_t{bound + 4095})}});
    const std::uint64_t boundedBytes = dataBytes(bounded);
    EXPECT_LE(boundedBytes, bound);
    EXPECT_GT(boundedBytes, 0u);
    const auto full = countEvents(all);
    const auto part = countEvents(bounded);
    ASSERT_FALSE(part["seq"]["last"].is_null());
    // The newest ones: both end with the app's last ticks.
    EXPECT_EQ(part["seq"]["last"], full["seq"]["last"]);
    EXPECT_LT(part["seq"]["count"].get<std::uint64_t>(), full["seq"]["count"].get<std::uint64_t>());
    // Not even one sub-buffer of every stream fits.
    EXPECT_EQ(errorNameOf([&] {
                  s->RecordSnapshot({{"max-size", sdbus::Variant(std::uint64_t{4095})}});
              }),
              kInvalidArgument);
    s->Destroy({});
}

TEST_F(Snapshot, BadCallsAreRefusedWithTypedErrors) {
    SessionClient normal(*bus_, manager_->CreateSession(
                                    "snap-normal", {{"output-path", sdbus::Variant(output("n"))}}));
    normal.EnableEvents("ust", "", "tracectl_demo:tick", {});
    normal.Start({});
    EXPECT_EQ(errorNameOf([&] { normal.RecordSnapshot({}); }), kWrongState);
    normal.Destroy({});

    SessionClient snap(*bus_, manager_->CreateSession(
                                  "snap-bad", {{"output-path", sdbus::Variant(output("snap-bad"))},
                                               {"mode", sdbus::Variant(std::string("snapshot"))}}));
    // Its channels overwrite: an explicit discard channel is refused.
    EXPECT_EQ(errorNameOf([&] {
                  snap.AddChannel("ust", "discarding", {{"overwrite", sdbus::Variant(false)}});
              }),
              kInvalidArgument);
    snap.EnableEvents("ust", "", "tracectl_demo:tick", {});
    EXPECT_EQ(errorNameOf([&] { snap.RecordSnapshot({}); }), kWrongState); // never started
    snap.Start({});
    EXPECT_EQ(errorNameOf([&] {
                  snap.RecordSnapshot({{"colour", sdbus::Variant(1)}});
              }),
              kInvalidArgument);
    EXPECT_EQ(errorNameOf([&] {
                  snap.RecordSnapshot({{"max-size", sdbus::Variant(std::string("1M"))}});
              }),
              kInvalidArgument);
    EXPECT_EQ(errorNameOf([&] { snap.Rotate({}); }), kWrongState);
    EXPECT_EQ(errorNameOf([&] {
                  snap.SetRotationSchedule({{"timer-us", sdbus::Variant(std::uint64_t{1000000})}});
              }),
              kWrongState);
    // "interactive" is accepted.
    const std::string p = snap.RecordSnapshot({{"interactive", sdbus::Variant(false)}});
    EXPECT_TRUE(fs::is_directory(p));
    snap.Destroy({});
}

TEST_F(Snapshot, ADeletedOutputFolderIsMadeAgain) {
    const std::string dir = output("snap-gone");
    auto s = startSession("snap-gone");
    {
        ChildProcess app({demoApp(), "300", "0"}, {}, appLog());
        ASSERT_EQ(app.wait(30000), 0);
    }
    const std::string first = s->RecordSnapshot({});
    EXPECT_EQ(countTicks(first), 300);
    fs::remove_all(dir);
    ASSERT_FALSE(fs::exists(dir));
    const std::string second = s->RecordSnapshot({});
    EXPECT_EQ(second.rfind(dir + "/", 0), 0u) << second;
    EXPECT_EQ(countTicks(second), 300);
    const std::string third = s->RecordSnapshot({});
    EXPECT_EQ(countTicks(third), 300);
    s->Destroy({});
}

TEST_F(Snapshot, SnapshotsWhileAppsExitAreReadable) {
    for (const bool perPid : {false, true}) {
        SCOPED_TRACE(perPid ? "per-pid" : "per-uid");
        const std::string name = perPid ? "snap-exit-pid" : "snap-exit-uid";
        auto s = startSession(name, perPid);
        ChildProcess app({demoApp(), "20000", "50"}, {}, appLog()); // ~2 s
        ASSERT_TRUE(waitTracing(app.pid(), appLog()));
        int taken = 0;
        long lastTicks = 0;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        int status = -1;
        while ((status = app.wait(0)) == -1 && std::chrono::steady_clock::now() < deadline) {
            const std::string p = s->RecordSnapshot({});
            lastTicks = countTicks(p);
            EXPECT_GE(lastTicks, 0);
            ++taken;
        }
        EXPECT_GT(taken, 0);
        // And after the exit: the exited app's last events are still there
        // (per-PID too: its buffers are kept until destroy).
        ASSERT_EQ(status, 0);
        // The daemon has seen it leave (its sockets hung up; the tracer
        // retires its per-PID trace on the same hang-up).
        EXPECT_TRUE(eventually([&] { return !listsApp(app.pid()); }));
        const std::string after = s->RecordSnapshot({});
        const auto counts = countEvents(after);
        ASSERT_FALSE(counts["seq"]["last"].is_null()) << after;
        EXPECT_EQ(counts["seq"]["last"].get<std::uint64_t>(), 19999u);
        std::cout << (perPid ? "per-pid" : "per-uid") << ": " << taken
                  << " snapshots while the app ran\n";
        s->Destroy({});
    }
}

TEST_F(Snapshot, RecordSnapshotRacingStopAndDestroyAnswersCleanly) {
    auto s = startSession("snap-race");
    const std::string path = s->getObjectPath();
    ChildProcess app({demoApp(), "100000", "100"}, {}, appLog());
    ASSERT_TRUE(waitTracing(app.pid(), appLog()));
    std::atomic<bool> over{false};
    std::atomic<int> recorded{0}, refused{0}, other{0};
    std::thread snapper([&] {
        auto bus = sdbus::createSystemBusConnection();
        SessionClient mine(*bus, path);
        while (!over) {
            const auto begin = std::chrono::steady_clock::now();
            try {
                const std::string p = mine.RecordSnapshot({});
                ++recorded;
            } catch (const sdbus::Error& e) {
                if (e.getName() == kWrongState || e.getName() == kUnknownObject)
                    ++refused;
                else {
                    ++other;
                    ADD_FAILURE() << e.getName() << ": " << e.getMessage();
                }
            }
            EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(10));
        }
    });
    auto retry = [](const std::function<void()>& call) {
        // WrongState while a snapshot is in flight: try again.
        return eventually(
            [&] {
                try {
                    call();
                    return true;
                } catch (const sdbus::Error& e) {
                    if (e.getName() != kWrongState)
                        throw;
                }
                return false;
            },
            std::chrono::seconds(10), std::chrono::milliseconds(2));
    };
    // Each step once the snapper has raced the one before: snapshots of
    // the active session, of the stopped one, and calls refused after
    // Destroy.
    EXPECT_TRUE(eventually([&] { return recorded > 0; }));
    EXPECT_TRUE(retry([&] { s->Stop({}); }));
    const int beforeStop = recorded;
    EXPECT_TRUE(eventually([&] { return recorded > beforeStop; }))
        << "no snapshot of the stopped session";
    EXPECT_TRUE(retry([&] { s->Destroy({}); }));
    EXPECT_TRUE(eventually([&] { return refused > 0; }));
    over = true;
    snapper.join();
    app.kill();
    EXPECT_GT(recorded.load(), 0);
    EXPECT_GT(refused.load(), 0) << "no call after Destroy?";
    EXPECT_EQ(other.load(), 0);
    // Gone, and the daemon still serves.
    for (const auto& o : manager_->ListSessions())
        EXPECT_NE(o, path);
}

TEST_F(Snapshot, TheCliCreatesSnapshotSessionsAndRecords) {
    const char* cli = std::getenv("TRACECTL");
    ASSERT_NE(cli, nullptr);
    const std::string dir = output("snap-cli");
    auto runCli = [&](std::vector<std::string> argv) {
        argv.insert(argv.begin(), cli);
        return run(argv);
    };
    RunResult r = runCli({"create", "snap-cli", "--snapshot", "--output", dir});
    ASSERT_EQ(r.exitCode, 0) << r.describe();
    ASSERT_EQ(runCli({"enable-event", "-u", "tracectl_demo:tick", "-s", "snap-cli"}).exitCode, 0);
    ASSERT_EQ(runCli({"start", "snap-cli"}).exitCode, 0);
    {
        ChildProcess app({demoApp(), "100", "0"}, {}, appLog());
        ASSERT_EQ(app.wait(30000), 0);
    }
    r = runCli({"snapshot", "snap-cli"});
    ASSERT_EQ(r.exitCode, 0) << r.describe();
    const std::string path = r.out.substr(0, r.out.find('\n'));
    EXPECT_EQ(path.rfind(dir + "/snapshot-1-", 0), 0u) << r.out;
    EXPECT_EQ(countTicks(path), 100);
    r = runCli({"snapshot", "snap-cli", "--max-size", "1M"});
    EXPECT_EQ(r.exitCode, 0) << r.describe();
    // LTTng's spelling, as scripts have it.
    r = runCli({"snapshot", "record", "-s", "snap-cli", "-m", "1M"});
    EXPECT_EQ(r.exitCode, 0) << r.describe();
    EXPECT_EQ(r.out.rfind(dir + "/snapshot-1-", 0), 0u) << r.out;
    r = runCli({"snapshot", "record", "snap-cli"});
    EXPECT_EQ(r.exitCode, 0) << r.describe();
    EXPECT_EQ(countTicks(r.out.substr(0, r.out.find('\n'))), 100);
    EXPECT_EQ(runCli({"snapshot", "record", "snap-cli", "-s", "snap-cli"}).exitCode, 2);
    EXPECT_EQ(runCli({"snapshot", "snap-cli", "other"}).exitCode, 2);
    r = runCli({"snapshot", "snap-cli", "--max-size", "lots"});
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE(r.err.find("--max-size"), std::string::npos) << r.err;
    EXPECT_EQ(runCli({"destroy", "snap-cli"}).exitCode, 0);
}

TEST_F(Snapshot, CostOfASnapshotAgainstStartingAConsumerUnit) {
    // Why snapshots run on the session's consumer (recording_snapshot.cpp):
    // Start of a session with no app is dominated by starting its consumer
    // unit (StartTransientUnit, the unit's start, Hello).
    const std::string dir = output("snap-cost");
    std::vector<double> startMs, snapMs;
    for (int i = 0; i < 3; ++i) {
        const std::string name = "snap-cost-" + std::to_string(i);
        SessionClient s(*bus_, manager_->CreateSession(
                                   name, {{"output-path", sdbus::Variant(output(name))},
                                          {"mode", sdbus::Variant(std::string("snapshot"))}}));
        s.EnableEvents("ust", "", "tracectl_demo:tick", {});
        auto t0 = std::chrono::steady_clock::now();
        s.Start({});
        startMs.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
        {
            ChildProcess app({demoApp(), "20000", "0"}, {}, appLog());
            ASSERT_EQ(app.wait(60000), 0);
        }
        t0 = std::chrono::steady_clock::now();
        const std::string p = s.RecordSnapshot({});
        snapMs.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
        EXPECT_GT(countTicks(p), 0);
        std::cout << "snapshot of " << dataBytes(p) << " data bytes\n";
        s.Destroy({});
    }
    for (int i = 0; i < 3; ++i)
        std::cout << "Start (consumer unit) " << startMs[i] << " ms, RecordSnapshot " << snapMs[i]
                  << " ms\n";
}

// Found by a fresh-user pass: each snapshot switched the current sub-buffer
// even when empty, which in overwrite mode evicts the oldest full one, so
// snapshots taken one after another with no new events pushed the history
// out (401 events in the first three, 0 from the fifth on).
TEST_F(Snapshot, SnapshotsOneAfterAnotherKeepTheHistory) {
    auto s = startSession("snap-repeat");
    {
        ChildProcess app({demoApp(), "200", "1000"}, {}, sandbox_->dir() + "/log/apps.log");
        ASSERT_EQ(app.wait(30000), 0);
    }
    const long first = countTicks(s->RecordSnapshot({}));
    EXPECT_EQ(first, 200);
    for (int i = 1; i < 8; ++i)
        EXPECT_EQ(countTicks(s->RecordSnapshot({})), first) << "snapshot " << i;
    s->Destroy({});
}

// Issue 40, A.2: at 4096x8 with an app writing at full speed, a snapshot
// held no packet of a whole CPU's stream (16 of 20 snapshots), and gaps in
// packet_seq_num in the other's, and said nothing: each sub-buffer was
// written to its file between get_subbuf and put_subbuf, slower than the
// app overwrote the oldest ones. Now every CPU's stream has its packets
// and none is missing in the middle, or the snapshot says how many it
// could not hold (packets-lost, and the consumer's log).
TEST_F(Snapshot, SnapshotsOfAnOverwriteChannelAtFullSpeedHoldEveryStreamOrSaySo) {
    constexpr std::uint64_t kSubbufs = 8;
    auto s = startSession("snap-busy", false,
                          {{"subbuf-size", sdbus::Variant(std::uint64_t{4096})},
                           {"subbuf-count", sdbus::Variant(kSubbufs)}});
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    ASSERT_GT(cpus, 0);
    std::vector<std::unique_ptr<ChildProcess>> apps;
    for (long cpu = 0; cpu < cpus; ++cpu) {
        // As fast as it can, on that CPU only, until killed.
        apps.push_back(std::make_unique<ChildProcess>(
            std::vector<std::string>{"taskset", "-c", std::to_string(cpu), demoApp(),
                                     "1000000000000", "0"},
            std::vector<std::string>{}, appLog()));
        ASSERT_TRUE(waitTracing(apps.back()->pid(), appLog()));
    }
    const auto lostSoFar = [&] { return s->Statistics().at("packets-lost").get<std::uint64_t>(); };
    int whole = 0;
    const int snapshots = 10;
    for (int i = 0; i < snapshots; ++i) {
        const std::uint64_t before = lostSoFar();
        const std::string snap = s->RecordSnapshot({});
        const std::uint64_t lost = lostSoFar() - before;
        const auto counts = countEvents(snap, {"--per-stream"});
        ASSERT_TRUE(counts.contains("per_stream")) << snap;
        std::uint64_t gaps = 0;
        for (long cpu = 0; cpu < cpus; ++cpu) {
            const std::string stream = "channel0_" + std::to_string(cpu);
            std::uint64_t packets = 0;
            for (const auto& [path, figures] : counts["per_stream"].items()) {
                if (fs::path(path).filename() != stream)
                    continue;
                packets += figures["packets"].get<std::uint64_t>();
                gaps += figures["discarded_packets"].get<std::uint64_t>();
                EXPECT_EQ(figures["discarded_packets_unknown"], 0) << path;
            }
            // The app wrote on that CPU all along, so its ring buffer held
            // every sub-buffer but the one being written: the stream has
            // them all, unless the snapshot said it lost some.
            EXPECT_TRUE(packets >= kSubbufs - 1 || lost > 0)
                << "snapshot " << i << ": " << stream << " holds " << packets << " of "
                << kSubbufs - 1 << " packets, none said lost";
        }
        // Every packet missing between two the stream holds is one said lost.
        EXPECT_LE(gaps, lost) << "snapshot " << i << ": " << gaps
                              << " packets missing in the middle, " << lost << " said lost";
        EXPECT_GT(counts["seq"]["count"].get<std::uint64_t>(), 0u) << snap;
        whole += lost == 0 ? 1 : 0;
        std::cout << "snapshot " << i << ": " << counts["seq"]["count"] << " ticks, " << gaps
                  << " packets missing in the middle, " << lost << " said lost\n";
    }
    std::cout << whole << " of " << snapshots << " snapshots whole\n";
    apps.clear();
    s->Destroy({});
}

namespace {

/// The data stream files (`channel0_<cpu>`, one per possible CPU) that a
/// trace folder (holding "metadata") below `dir` lacks, or whose index is
/// missing; "none" if `dir` holds no trace folder at all.
std::vector<std::string> missingStreams(const std::string& dir) {
    std::vector<std::string> missing{"none"};
    const long cpus = sysconf(_SC_NPROCESSORS_CONF);
    for (const auto& f : filesBelow(dir)) {
        const fs::path trace = fs::path(f).parent_path();
        if (fs::path(f).filename() != "metadata")
            continue;
        missing.clear();
        for (long cpu = 0; cpu < cpus; ++cpu) {
            const std::string stream = "channel0_" + std::to_string(cpu);
            if (!fs::exists(trace / stream) || !fs::exists(trace / "index" / (stream + ".idx")))
                missing.push_back(trace.string() + " lacks " + stream);
        }
    }
    return missing;
}

} // namespace

// Issue 40, A.4 (b): a snapshot of a session whose app emitted nothing held
// in every stream only the empty packet each opened when its channel was
// made, and the streams an app then wrote nothing to ended there: babeltrace2
// --stream-intersection kept nothing of what came after, or refused the
// inverted range. Each stream now ends at the snapshot, the idle ones too
// (lttng-consumerd 2.13 gets there by switching an empty packet at each
// snapshot), and the ring buffers keep their history.
class SnapshotOfSilence : public Snapshot, public ::testing::WithParamInterface<bool> {};

TEST_P(SnapshotOfSilence, ASnapshotOfAnAppThatEmittedNothingIsReadWithStreamIntersection) {
    const bool perPid = GetParam();
    const std::string name = perPid ? "snap-silent-pid" : "snap-silent-uid";
    auto s = startSession(name, perPid);
    const std::string go = sandbox_->dir() + "/" + name + ".go";
    std::remove(go.c_str());
    // Registered (the channel and its streams are made), waits for `go`.
    ChildProcess app({demoApp(), "20", "0", go}, {}, appLog());
    ASSERT_TRUE(waitTracing(app.pid(), appLog()));
    const std::string silent = s->RecordSnapshot({});
    EXPECT_EQ(missingStreams(silent), std::vector<std::string>{}) << silent;
    EXPECT_EQ(countTicks(silent), 0);
    EXPECT_EQ(countTicksInIntersection(silent), 0);

    // Then it emits (on one CPU, most likely): a second snapshot keeps all
    // of it in the intersection, and so does a third.
    std::ofstream(go).put('\n');
    ASSERT_EQ(app.wait(30000), 0);
    const std::string after = s->RecordSnapshot({});
    EXPECT_EQ(countTicks(after), 20);
    EXPECT_EQ(countTicksInIntersection(after), 20);
    EXPECT_EQ(countTicksInIntersection(s->RecordSnapshot({})), 20);
    s->Destroy({});
}

INSTANTIATE_TEST_SUITE_P(Buffers, SnapshotOfSilence, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) {
                             return p.param ? std::string("PerPid") : std::string("PerUid");
                         });

// The command line: LTTng's snapshot output commands are not taken for
// session names, an empty session name is refused rather than turned into
// an auto- name, and the usage line reads as words. Nothing is created.
TEST_F(Snapshot, TheCliRefusesOutputCommandsAndEmptyNamesAndCreatesNothing) {
    const char* cli = std::getenv("TRACECTL");
    ASSERT_NE(cli, nullptr);
    const auto runCli = [&](std::vector<std::string> argv) {
        argv.insert(argv.begin(), cli);
        return run(argv);
    };
    const auto before = manager_->ListSessions();
    for (const char* command : {"list-output", "add-output", "del-output"}) {
        const RunResult r = runCli({"snapshot", command});
        EXPECT_EQ(r.exitCode, 2) << r.describe();
        EXPECT_NE(r.err.find("no snapshot outputs of their own"), std::string::npos)
            << r.describe();
    }
    const RunResult empty = runCli({"create", ""});
    EXPECT_EQ(empty.exitCode, 2) << empty.describe();
    EXPECT_NE(empty.err.find("a session name cannot be empty"), std::string::npos)
        << empty.describe();
    EXPECT_EQ(manager_->ListSessions(), before);
    const RunResult help = runCli({"snapshot", "--help"});
    EXPECT_EQ(help.exitCode, 0);
    EXPECT_NE(help.out.find("Usage: tracectl snapshot [OPTIONS] [NAME...]"), std::string::npos)
        << help.out;
    EXPECT_EQ(help.out.find("(0x)"), std::string::npos) << help.out;
}
