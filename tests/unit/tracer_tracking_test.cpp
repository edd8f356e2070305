// UstTracer's process attribute trackers (ust_tracking.cpp) with a fake
// AppCommands and the real consumer (tracer_harness.hpp): an app untracked
// while the session runs is stopped, tracked again it is started again; an
// app that registers untracked is never set up (no buffers), and joins once
// tracked; a stopped session's next start leaves untracked apps stopped.
#include "tracer_harness.hpp"

#include <sys/stat.h>

using namespace tracectl;
using namespace tracectl::testing;
using namespace std::chrono_literals;

namespace {

class TracerTracking : public TracerHarness {
protected:
    void start() {
        snapshot_ = session("00112233445566778899aabbccddeeff", "tracking");
        TracerHarness::start(snapshot_);
    }

    /// setProcessTrackers() with the vpid tracker holding only `pids`, and
    /// its answer.
    void trackOnly(std::vector<uint32_t> pids) {
        ProcessTrackers t;
        if (pids.empty())
            t.untrack(ProcessAttribute::Vpid, {}, true);
        else
            t.track(ProcessAttribute::Vpid, pids, false);
        set(t);
    }
    void set(const ProcessTrackers& t) {
        Answers answered;
        thread_.run(
            [&] { tracer_->setProcessTrackers(snapshot_.idHex, t, false, answered.done()); });
        ASSERT_TRUE(answered.wait());
        EXPECT_FALSE(answered.at().error);
    }

    SessionSnapshot snapshot_;
};

} // namespace

TEST_F(TracerTracking, AnAppUntrackedWhileActiveStopsAndStartsAgainWhenTracked) {
    start();
    const pid_t a = kFirstPid + 20, b = kFirstPid + 21;
    Gate readyA, readyB;
    registerApp(fakeApp(a, peers_), readyA);
    registerApp(fakeApp(b, peers_), readyB);
    ASSERT_TRUE(readyA.wait());
    ASSERT_TRUE(readyB.wait());
    ASSERT_TRUE(called(a, "start"));
    ASSERT_TRUE(called(b, "start"));
    // Only a: b stops before the answer; a is left as it is.
    trackOnly({static_cast<uint32_t>(a)});
    EXPECT_EQ(count(b, "stop"), 1u);
    EXPECT_EQ(count(a, "stop"), 0u);
    // Nothing: a stops too.
    trackOnly({});
    EXPECT_EQ(count(a, "stop"), 1u);
    EXPECT_EQ(count(b, "stop"), 1u);
    // Every process again: both start again, without a new set-up.
    set(ProcessTrackers{});
    EXPECT_EQ(count(a, "start"), 2u);
    EXPECT_EQ(count(b, "start"), 2u);
    EXPECT_EQ(count(a, "create_session"), 1u);
    // Stop stops each once more.
    EXPECT_FALSE(stop(snapshot_.idHex));
    EXPECT_EQ(count(a, "stop"), 2u);
    EXPECT_EQ(count(b, "stop"), 2u);
    EXPECT_EQ(failureCount(), 0u);
}

TEST_F(TracerTracking, AnAppRegisteringUntrackedIsNotSetUpUntilTracked) {
    start();
    trackOnly({static_cast<uint32_t>(kFirstPid + 30)});
    const pid_t other = kFirstPid + 31;
    Gate ready;
    registerApp(fakeApp(other, peers_), ready);
    ASSERT_TRUE(ready.wait());
    ASSERT_TRUE(strandIdle(other));
    EXPECT_EQ(count(other, "create_session"), 0u);
    EXPECT_EQ(count(other, "start"), 0u);
    // Tracked now: it joins (set up, started) before the answer.
    trackOnly({static_cast<uint32_t>(kFirstPid + 30), static_cast<uint32_t>(other)});
    EXPECT_EQ(count(other, "create_session"), 1u);
    EXPECT_EQ(count(other, "start"), 1u);
}

TEST_F(TracerTracking, AStoppedSessionStartsOnlyItsTrackedApps) {
    start();
    const pid_t a = kFirstPid + 40;
    Gate ready;
    registerApp(fakeApp(a, peers_), ready);
    ASSERT_TRUE(ready.wait());
    ASSERT_TRUE(called(a, "start"));
    EXPECT_FALSE(stop(snapshot_.idHex));
    EXPECT_EQ(count(a, "stop"), 1u);
    trackOnly({}); // while stopped: nothing to do now
    EXPECT_EQ(count(a, "stop"), 1u);
    // Started again: the tracer goes by the trackers it was given last
    // (a start of a session it knows takes nothing from the snapshot).
    Answers restarted;
    thread_.run([&] { startSession(snapshot_, restarted.done()); });
    ASSERT_TRUE(restarted.wait());
    EXPECT_FALSE(restarted.at().error);
    ASSERT_TRUE(strandIdle(a));
    EXPECT_EQ(count(a, "start"), 1u);
}

TEST_F(TracerTracking, TheOwnersRightStillDecidesWhateverIsTracked) {
    snapshot_ = session("ffeeddccbbaa99887766554433221100", "owned");
    snapshot_.owner = 1000;
    // The folder maker runs as the owner: it must reach the output.
    ASSERT_EQ(chmod(dir_.c_str(), 0777), 0);
    snapshot_.trackers.track(ProcessAttribute::Vuid, {1000, 2000}, false);
    TracerHarness::start(snapshot_);
    const pid_t mine = kFirstPid + 50, theirs = kFirstPid + 51;
    Gate readyMine, readyTheirs;
    registerApp(fakeApp(mine, peers_, 1000), readyMine);
    registerApp(fakeApp(theirs, peers_, 2000), readyTheirs);
    ASSERT_TRUE(readyMine.wait());
    ASSERT_TRUE(readyTheirs.wait());
    ASSERT_TRUE(called(mine, "start"));
    ASSERT_TRUE(strandIdle(theirs));
    EXPECT_EQ(count(theirs, "create_session"), 0u) << "uid 2000 tracked, but the owner is 1000";
    // Once the session traces every user, the tracked uid joins.
    Answers answered;
    thread_.run([&] {
        tracer_->setProcessTrackers(snapshot_.idHex, snapshot_.trackers, true, answered.done());
    });
    ASSERT_TRUE(answered.wait());
    EXPECT_EQ(count(theirs, "start"), 1u);
}
