// N events in, N events out: LTTng-UST apps emitting into a session with the
// default channel (per-UID, 4 sub-buffers of 512 KiB per CPU), its consumer
// running as a systemd transient unit, and every event read back with
// babeltrace2 (python3-bt2, count_events.py). Two claims, kept apart:
// - at full speed, every event the app emitted is either in the trace,
//   exactly once, or counted by the tracer as discarded (a full ring
//   buffer): nothing is lost or duplicated on the way to disk. That holds
//   under any load, so it is exact;
// - at a tenth of the loss-free rate bench/run finds, with ring buffers
//   that hold a second of it, nothing is discarded: the consumer drains
//   while the app writes (the run writes 2.5 times what the buffers hold).
//   How much is discarded at a given rate depends on how soon the consumer
//   gets a CPU on a busy machine: that is a benchmark figure (bench/), not
//   a test; the second of slack is what keeps this one true under load.
#include "child_process.hpp"
#include "sandbox.hpp"
#include "trace_counts.hpp"
#include "tracectl_clients.hpp"

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

using namespace tracectl::test;

namespace {

std::string demoApp() {
    const char* p = std::getenv("TRACECTL_DEMO_APP");
    return p != nullptr ? p : "tracectl-demo-app";
}

/// /proc/loadavg's first three fields: a discard is most often another
/// process holding the CPUs when the consumer should run.
std::string loadAverage() {
    std::ifstream in("/proc/loadavg");
    std::string one, five, fifteen;
    in >> one >> five >> fifteen;
    return one + " " + five + " " + fifteen;
}

class Throughput : public ::testing::Test {
protected:
    static void SetUpTestSuite() { sandbox_ = Sandbox::tryCreate(error_); }
    static void TearDownTestSuite() { sandbox_.reset(); }

    void SetUp() override {
        ASSERT_TRUE(sandbox_) << error_;
        bus_ = sdbus::createSystemBusConnection();
        manager_ = std::make_unique<ManagerClient>(*bus_);
    }

    std::string output(const std::string& name) { return sandbox_->dir() + "/traces/" + name; }

    /// Records `app` (which must exit 0) in a fresh session, with the
    /// default channel or channel0 made with `channel` if that is not
    /// empty, and returns count_events.py's JSON of the trace.
    nlohmann::json traceOf(const std::string& name, const std::vector<std::string>& app,
                           const std::map<std::string, sdbus::Variant>& channel = {}) {
        const std::string dir = output(name);
        SessionClient s(*bus_,
                        manager_->CreateSession(name, {{"output-path", sdbus::Variant(dir)}}));
        if (!channel.empty())
            s.AddChannel("ust", "channel0", channel);
        s.EnableEvents("ust", "", "tracectl_demo:*", {});
        s.Start({});
        const auto begin = std::chrono::steady_clock::now();
        int status = -1;
        {
            ChildProcess child(app, {}, sandbox_->dir() + "/log/apps.log");
            status = child.wait(120000);
        }
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
        s.Stop({});
        EXPECT_EQ(status, 0) << app[0];
        EXPECT_EQ(s.State(), "stopped");
        RecordProperty("app_seconds", std::to_string(seconds));

        RunOptions options;
        options.timeout = std::chrono::minutes(3); // python3-bt2 reads ~150 k events/s
        const RunResult r = run(countEventsCommand(dir), options);
        s.Destroy({});
        EXPECT_EQ(r.exitCode, 0) << r.describe();
        if (r.exitCode != 0)
            return {};
        auto counts = nlohmann::json::parse(r.out);
        std::cout << name << ": the app ran " << seconds
                  << " s (registration included), load average " << loadAverage() << " on "
                  << std::thread::hardware_concurrency() << " CPUs; read back: " << r.out;
        RecordProperty("discarded", std::to_string(counts["discarded"].get<std::uint64_t>()));
        return counts;
    }

    static inline std::unique_ptr<Sandbox> sandbox_;
    static inline std::string error_;
    std::unique_ptr<sdbus::IConnection> bus_;
    std::unique_ptr<ManagerClient> manager_;
};

/// tracectl-bench-emitter (bench/rate_emitter.c): tracectl_demo:tick at a
/// fixed rate, paced on CLOCK_MONOTONIC.
std::string benchEmitter() {
    const char* p = std::getenv("TRACECTL_BENCH_EMITTER");
    return p != nullptr ? p : "tracectl-bench-emitter";
}

} // namespace

TEST_F(Throughput, AtFullSpeedEveryEventIsRecordedOnceOrCountedAsDiscarded) {
    // The demo app emits a tick and a debug_note per iteration, then one
    // done: 500,000 iterations are 1,000,001 events, ~45 MB of trace, in
    // about 0.2 s (5 M events/s) on the 2-core build VMs: faster than the
    // consumer is sure to drain 2 MiB per CPU when other work holds the CPUs.
    constexpr std::uint64_t kIterations = 500'000;
    constexpr std::uint64_t kEvents = 2 * kIterations + 1;
    // Interval 0: no pause between events, the app's full speed.
    const auto counts = traceOf("full-speed", {demoApp(), std::to_string(kIterations), "0"});
    ASSERT_FALSE(counts.empty());

    // Every discarded-events message carries its count, and every event is
    // either on disk or counted as discarded: recorded + discarded = emitted.
    EXPECT_EQ(counts["discarded_unknown"].get<std::uint64_t>(), 0u);
    const auto recorded = counts["total"].get<std::uint64_t>();
    const auto discarded = counts["discarded"].get<std::uint64_t>();
    EXPECT_EQ(recorded + discarded, kEvents)
        << recorded << " recorded, " << discarded << " discarded, " << kEvents << " emitted";
    const auto& byName = counts["events"];
    const std::uint64_t ticks = byName.value("tracectl_demo:tick", 0u);
    const std::uint64_t notes = byName.value("tracectl_demo:debug_note", 0u);
    const std::uint64_t done = byName.value("tracectl_demo:done", 0u);
    EXPECT_EQ(ticks + notes + done, recorded) << "events the app does not emit: " << byName;
    EXPECT_LE(ticks, kIterations);
    EXPECT_LE(notes, kIterations);
    EXPECT_LE(done, 1u);
    // No tick twice, none with a sequence number the app never used, and
    // the ticks missing are among the events counted as discarded.
    const auto& seq = counts["seq"];
    EXPECT_EQ(seq["duplicates"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(seq["distinct"].get<std::uint64_t>(), ticks);
    if (ticks > 0) {
        EXPECT_LE(seq["last"].get<std::uint64_t>(), kIterations - 1);
        EXPECT_LE(kIterations - ticks, discarded);
    }
}

TEST_F(Throughput, AtATenthOfTheLossFreeRateNothingIsDiscarded) {
    // bench/run finds tracectl loss-free up to 2,000,000 events/s or more
    // on the 2-core build VMs (bench/README.md; 4,555,153 with 2 emitters
    // in one run at load average 2.3): a tenth of the lower figure, 200,000
    // tick events/s for 2.5 s, paced every millisecond, about 20 MB. With
    // the default channel (2 MiB per CPU, ~140 ms of this rate) it failed
    // once in CI, 2,606 of 500,000 discarded, in an exclusive lane: a
    // consumer kept off the CPUs or blocked in write(2) for longer than
    // that, which is the machine's doing, not a lost event. 4 sub-buffers
    // of 2 MiB per CPU hold a second of this rate: the consumer must still
    // drain ~2.5 times what they hold while the app writes.
    constexpr std::uint64_t kRate = 200'000;
    constexpr std::uint64_t kDurationMs = 2'500;
    constexpr std::uint64_t kTicks = kRate * kDurationMs / 1000;
    const auto counts =
        traceOf("tenth-rate", {benchEmitter(), std::to_string(kRate), std::to_string(kDurationMs)},
                {{"subbuf-size", sdbus::Variant(std::uint64_t{2} << 20)},
                 {"subbuf-count", sdbus::Variant(std::uint64_t{4})}});
    ASSERT_FALSE(counts.empty());

    EXPECT_EQ(counts["discarded_unknown"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(counts["discarded"].get<std::uint64_t>(), 0u)
        << "the consumer did not drain the ring buffers in time (load average " << loadAverage()
        << " on " << std::thread::hardware_concurrency() << " CPUs)";
    EXPECT_EQ(counts["total"].get<std::uint64_t>(), kTicks + 1);
    const auto& byName = counts["events"];
    EXPECT_EQ(byName.value("tracectl_demo:tick", 0u), kTicks);
    EXPECT_EQ(byName.value("tracectl_demo:done", 0u), 1u);
    // The tick sequence numbers are exactly 0..N-1: none missing, none twice.
    const auto& seq = counts["seq"];
    ASSERT_FALSE(seq["first"].is_null()) << "no tick at all";
    EXPECT_EQ(seq["first"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(seq["last"].get<std::uint64_t>(), kTicks - 1);
    EXPECT_EQ(seq["missing"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(seq["duplicates"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(seq["distinct"].get<std::uint64_t>(), kTicks);
}
