// N events in, N events out: the bundled LTTng-UST app emitting as fast as it
// can into a session with the default channel (per-UID, 4 sub-buffers of
// 512 KiB per CPU), its consumer running as a systemd transient unit, and
// every event read back with babeltrace2 (python3-bt2, count_events.py):
// none discarded by the tracer, none lost or duplicated on the way to disk.
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

    static inline std::unique_ptr<Sandbox> sandbox_;
    static inline std::string error_;
    std::unique_ptr<sdbus::IConnection> bus_;
    std::unique_ptr<ManagerClient> manager_;
};

/// /proc/loadavg's first three fields: a discard is most often another
/// process holding the CPUs when the consumer should run.
std::string loadAverage() {
    std::ifstream in("/proc/loadavg");
    std::string one, five, fifteen;
    in >> one >> five >> fifteen;
    return one + " " + five + " " + fifteen;
}

} // namespace

TEST_F(Throughput, AMillionEventsAtFullSpeedAreAllRecorded) {
    // The demo app emits a tick and a debug_note per iteration, then one
    // done: 500,000 iterations are 1,000,001 events, ~45 MB of trace, in
    // about 0.2 s (5 M events/s) on the 2-core build VMs.
    constexpr std::uint64_t iterations = 500'000;
    constexpr std::uint64_t events = 2 * iterations + 1;
    const std::string dir = output("throughput");
    SessionClient s(*bus_,
                    manager_->CreateSession("throughput", {{"output-path", sdbus::Variant(dir)}}));
    s.EnableEvents("ust", "", "tracectl_demo:*", {}); // the default channel
    s.Start({});
    const auto begin = std::chrono::steady_clock::now();
    {
        // Interval 0: no pause between events, the app's full speed.
        ChildProcess app({demoApp(), std::to_string(iterations), "0"}, {},
                         sandbox_->dir() + "/log/apps.log");
        ASSERT_EQ(app.wait(120000), 0);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    s.Stop({});
    ASSERT_EQ(s.State(), "stopped");
    RecordProperty("app_seconds", std::to_string(seconds));

    RunOptions options;
    options.timeout = std::chrono::minutes(3); // python3-bt2 reads ~150 k events/s
    const RunResult r = run(countEventsCommand(dir), options);
    ASSERT_EQ(r.exitCode, 0) << r.describe();
    const auto counts = nlohmann::json::parse(r.out);
    std::cout << "app ran " << seconds << " s (registration included, "
              << static_cast<double>(events) / seconds / 1e6
              << " M events/s or more); read back: " << r.out;

    // Nothing discarded by the tracer (a full ring buffer), and every event
    // the app emitted is in the trace, exactly once.
    EXPECT_EQ(counts["discarded_unknown"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(counts["discarded"].get<std::uint64_t>(), 0u)
        << "the consumer did not drain the ring buffers in time (load average " << loadAverage()
        << " on " << std::thread::hardware_concurrency() << " CPUs)";
    EXPECT_EQ(counts["total"].get<std::uint64_t>(), events);
    const auto& byName = counts["events"];
    EXPECT_EQ(byName.value("tracectl_demo:tick", 0u), iterations);
    EXPECT_EQ(byName.value("tracectl_demo:debug_note", 0u), iterations);
    EXPECT_EQ(byName.value("tracectl_demo:done", 0u), 1u);
    // The tick sequence numbers are exactly 0..N-1: none missing, none twice.
    const auto& seq = counts["seq"];
    ASSERT_FALSE(seq["first"].is_null()) << "no tick at all";
    EXPECT_EQ(seq["first"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(seq["last"].get<std::uint64_t>(), iterations - 1);
    EXPECT_EQ(seq["missing"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(seq["duplicates"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(seq["distinct"].get<std::uint64_t>(), iterations);
    s.Destroy({});
}
