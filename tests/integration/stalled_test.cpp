// An app killed inside a reservation (issue 40, A.1): lttng-ust reserved
// its record and died copying a field (the demo app's
// TRACECTL_DEMO_FAULT_AT: a sequence read from a page it may not read), so
// the sub-buffer's commit count never becomes whole. Without a fix-up that
// sub-buffer is never delivered and the reader never gets past it: the
// dead app's earlier events are lost, and in per-UID buffers so is every
// event any other app writes on that CPU afterwards, with nothing counted
// as discarded. The consumer delivers such a sub-buffer with the records
// committed before the dead one, and counts that one as discarded.
#include "child_process.hpp"
#include "eventually.hpp"
#include "sandbox.hpp"
#include "sandbox_suite.hpp"
#include "trace_counts.hpp"
#include "tracectl_clients.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <gtest/gtest.h>
#include <map>
#include <string>
#include <sys/types.h>

using namespace std::chrono_literals;
using namespace tracectl::test;

namespace {

class Stalled : public SandboxSuite {
protected:
    std::string appLog() const { return sandbox_->dir() + "/log/apps.log"; }

    /// Runs the app that writes `before` ticks on CPU 0, then dies of
    /// SIGSEGV inside the reservation of the next one; returns its pid.
    pid_t runDyingApp(std::uint64_t before) {
        ChildProcess a({"taskset", "-c", "0", demoApp(), std::to_string(before + 10), "0"},
                       {"TRACECTL_DEMO_FAULT_AT=" + std::to_string(before),
                        "LTTNG_UST_REGISTER_TIMEOUT=30000"},
                       appLog());
        const pid_t pid = a.pid();
        EXPECT_EQ(a.wait(30000), -1); // a signal, not an exit
        EXPECT_EQ(::kill(pid, 0), -1) << "the faulting app did not die";
        return pid;
    }

    /// Then another app writes `ticks` on the same CPU, and ends normally.
    void runOtherApp(std::uint64_t ticks) {
        ChildProcess b({"taskset", "-c", "0", demoApp(), std::to_string(ticks), "0"},
                       {"LTTNG_UST_REGISTER_TIMEOUT=30000"}, appLog());
        ASSERT_EQ(b.wait(60000), 0);
    }

    static std::uint64_t figure(SessionClient& s, const std::string& name) {
        return s.Statistics().at(name).get<std::uint64_t>();
    }

    /// Whether, while the session records on, its consumer comes to have
    /// read `recorded` events and counted `discarded` (a count-events
    /// session): the stalled sub-buffer was delivered with no Stop.
    bool readWhileActive(SessionClient& s, std::uint64_t recorded, std::uint64_t discarded) {
        const bool read = eventually(
            [&] {
                return figure(s, "events-recorded") == recorded &&
                       figure(s, "events-discarded") == discarded;
            },
            20s);
        EXPECT_EQ(s.State(), "active");
        return read;
    }

    bool daemonSaid(const std::string& what) {
        return eventually(
            [&] { return sandbox_->readLog("tracectld").find(what) != std::string::npos; }, 20s);
    }

    /// After a Stop: babeltrace2 reads `ticks` ticks and 1 discarded event
    /// in the session's output, and its statistics agree.
    void expectTrace(SessionClient& s, const std::string& name, long ticks) {
        const std::string dir = output(name);
        EXPECT_EQ(countTicks(dir), ticks);
        const auto counts = countEvents(dir);
        EXPECT_EQ(counts.value("discarded", std::uint64_t{0}), 1u) << counts.dump();
        EXPECT_EQ(figure(s, "events-recorded"), static_cast<std::uint64_t>(ticks));
        EXPECT_EQ(figure(s, "events-discarded"), 1u);
    }

    const std::map<std::string, sdbus::Variant> countEvents_{
        {"count-events", sdbus::Variant(true)}};
};

// Per-UID buffers are shared: the dead app's sub-buffer held up every
// packet after it, the other app's 10,001 ticks included. Once the app has
// exited, the daemon tells the consumer, which closes the packets under way
// (the live app goes on in the next sub-buffer) and, once their commit
// counts stood still for its grace period, delivers the stalled one while
// the session records on.
TEST_F(Stalled, PerUidAnAppKilledInsideAReservationLosesOnlyThatEvent) {
    auto s = startTickSession("stalled-uid", countEvents_, false, {});
    const pid_t dead = runDyingApp(10);
    // Records another app writes from then on go into the next sub-buffer.
    // (One written before then, right behind the dead record, would be
    // cut with it: the consumer cannot tell where it begins.)
    EXPECT_TRUE(daemonSaid("app " + std::to_string(dead) +
                           " exited: the packets under way in its per-UID buffers are closed"))
        << sandbox_->readLog("tracectld");
    runOtherApp(10001);
    EXPECT_TRUE(readWhileActive(*s, 10 + 10001, 1))
        << figure(*s, "events-recorded") << " recorded, " << figure(*s, "events-discarded")
        << " discarded";
    s->Stop({});
    expectTrace(*s, "stalled-uid", 10 + 10001);
}

// Per-PID buffers are the app's own: once it is gone (its buffers hang
// up), no writer is left, and the consumer delivers its stalled sub-buffer
// before closing the stream.
TEST_F(Stalled, PerPidAnAppKilledInsideAReservationKeepsItsEarlierEvents) {
    auto s = startTickSession("stalled-pid", countEvents_, true, {});
    runDyingApp(10);
    runOtherApp(101);
    EXPECT_TRUE(readWhileActive(*s, 10 + 101, 1)) << figure(*s, "events-recorded") << " recorded, "
                                                  << figure(*s, "events-discarded") << " discarded";
    s->Stop({});
    expectTrace(*s, "stalled-pid", 10 + 101);
}

} // namespace
