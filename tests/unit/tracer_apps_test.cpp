// UstTracer's app logic with a fake AppCommands (fake_app_commands.hpp) and
// the real consumer (tracectl-consumerd, started by fork/exec): one app's
// hung set-up delays no other app's, an app that leaves mid-set-up is
// never started or stopped, a rule enabled while an app is being set up
// reaches it once, and Stop waits for its apps' stop.
#include "tracer_harness.hpp"

using namespace tracectl;
using namespace tracectl::testing;
using namespace std::chrono_literals;

namespace {

class TracerApps : public TracerHarness {
protected:
    /// Starts the session (one channel, one rule) and waits for Start's answer.
    void start() {
        snapshot_ = session("0123456789abcdef0123456789abcdef", "apps");
        TracerHarness::start(snapshot_);
    }

    SessionSnapshot snapshot_;
};

} // namespace

TEST_F(TracerApps, AHungAppDoesNotDelayAnotherAppsSetUp) {
    start();
    const pid_t slow = kFirstPid, quick = kFirstPid + 1;
    hang(slow, "create_session");
    Gate slowReady, quickReady;
    registerApp(fakeApp(slow, peers_), slowReady);
    ASSERT_TRUE(hung_.wait());
    registerApp(fakeApp(quick, peers_), quickReady);
    // Set up, started and told register_done while the other one hangs.
    EXPECT_TRUE(quickReady.wait(3s));
    EXPECT_EQ(count(quick, "create_event first:*"), 1u);
    EXPECT_EQ(count(quick, "start"), 1u);
    EXPECT_FALSE(slowReady.wait(100ms));
    released_.open();
    EXPECT_TRUE(slowReady.wait());
}

TEST_F(TracerApps, AnAppThatLeavesMidSetUpIsNeitherStartedNorStopped) {
    start();
    const pid_t leaving = kFirstPid + 2;
    hang(leaving, "send_stream");
    Gate ready;
    registerApp(fakeApp(leaving, peers_), ready);
    ASSERT_TRUE(hung_.wait());
    thread_.run([&] { tracer_->onAppGone(leaving); });
    released_.open();
    EXPECT_TRUE(ready.wait()); // told, so that its registration ends
    std::promise<void> stopped;
    thread_.run([&] { tracer_->stop(snapshot_.idHex, [&](auto) { stopped.set_value(); }); });
    ASSERT_EQ(stopped.get_future().wait_for(20s), std::future_status::ready);
    // The job made no call after the app left.
    EXPECT_EQ(count(leaving, "create_event first:*"), 0u);
    EXPECT_EQ(count(leaving, "start"), 0u);
    EXPECT_EQ(count(leaving, "stop"), 0u);
    EXPECT_EQ(failureCount(), 0u);
}

TEST_F(TracerApps, ARuleEnabledDuringASetUpReachesTheAppOnce) {
    start();
    const pid_t app = kFirstPid + 3;
    hang(app, "create_session");
    Gate ready;
    registerApp(fakeApp(app, peers_), ready);
    ASSERT_TRUE(hung_.wait());
    EventRule later;
    later.channel = "channel0";
    later.pattern = "later:*";
    std::promise<void> enabled;
    thread_.run(
        [&] { tracer_->enableEvents(snapshot_.idHex, later, [&](auto) { enabled.set_value(); }); });
    released_.open();
    ASSERT_TRUE(ready.wait());
    ASSERT_EQ(enabled.get_future().wait_for(10s), std::future_status::ready);
    // Once more through the strand: every job queued before has run.
    std::promise<void> idle;
    thread_.run([&] { tracer_->withApp(app, [&] { idle.set_value(); }); });
    ASSERT_EQ(idle.get_future().wait_for(10s), std::future_status::ready);
    EXPECT_EQ(count(app, "create_event first:*"), 1u);
    EXPECT_EQ(count(app, "create_event later:*"), 1u);
    EXPECT_EQ(count(app, "start"), 1u);
}

TEST_F(TracerApps, StopAnswersAfterItsAppsStopped) {
    start();
    const pid_t app = kFirstPid + 4;
    Gate ready;
    registerApp(fakeApp(app, peers_), ready);
    ASSERT_TRUE(ready.wait());
    hang(app, "stop");
    std::promise<void> stopped;
    thread_.run([&] { tracer_->stop(snapshot_.idHex, [&](auto) { stopped.set_value(); }); });
    ASSERT_TRUE(hung_.wait());
    auto f = stopped.get_future();
    EXPECT_EQ(f.wait_for(200ms), std::future_status::timeout);
    released_.open();
    EXPECT_EQ(f.wait_for(20s), std::future_status::ready);
    EXPECT_EQ(count(app, "stop"), 1u);
}
