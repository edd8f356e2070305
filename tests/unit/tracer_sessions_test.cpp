// UstTracer's sessions against their real consumers (tracectl-consumerd,
// fork/exec) in trouble, with fake apps (fake_app_commands.hpp): a
// consumer that never answers (stopped) fails its own session only; one
// killed mid-rotation completes it with an error; a reply after its
// deadline is not taken for a later request's; an app that registers
// during Start is set up and started once; Destroy during a rotation
// completes it first; Stop racing a snapshot. Issue 12, item 7.
#include "tracer_harness.hpp"

#include <csignal>
#include <filesystem>

using namespace tracectl;
using namespace tracectl::testing;
using namespace std::chrono_literals;

namespace {

const std::string kIdA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const std::string kIdB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

std::string unitOf(const std::string& idHex) {
    return "tracectl-consumer-" + idHex + ".service";
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

/// The tracer with the default deadline on consumer requests.
class TracerSessions : public TracerHarness {
protected:
    /// Registers app `pid` (uid 0) and waits until it runs in every active
    /// session (`sessions` of them): their buffers of uid 0 exist then.
    void registerTraced(pid_t pid, std::size_t sessions = 1) {
        Gate ready;
        registerApp(fakeApp(pid, peers_), ready);
        ASSERT_TRUE(ready.wait());
        ASSERT_TRUE(called(pid, "start", sessions));
    }
};

/// Consumer requests time out after 1 s: short for a test, still generous
/// for a consumer on this machine (it answers in milliseconds), so only
/// the stopped one misses its deadlines.
class TracerSessionsShortDeadline : public TracerSessions {
protected:
    TracerSessionsShortDeadline() { consumerTimeout_ = 1000ms; }
};

} // namespace

// A consumer that never answers: its session's Stop answers with an error
// once its requests' deadlines pass, the session is reported failed naming
// that consumer, and another session's consumer serves on meanwhile (a new
// app is set up and started in it while the first consumer hangs).
TEST_F(TracerSessionsShortDeadline, AConsumerThatNeverAnswersFailsItsOwnSessionOnly) {
    const auto hung = session(kIdA, "hung");
    const auto alive = session(kIdB, "alive");
    start(hung);
    start(alive);
    const pid_t first = kFirstPid, second = kFirstPid + 1;
    registerTraced(first, 2);
    Process consumer(consumerOf(hung.outputPath));
    ASSERT_TRUE(consumer.valid());
    ASSERT_NE(consumerOf(alive.outputPath), consumer.pid());
    {
        StoppedWhileInScope stopped(consumer);
        ASSERT_TRUE(stopped.stopped());
        Answers stopHung;
        thread_.run([&] { tracer_->stop(kIdA, stopHung.done()); });
        // Another uid: both sessions need new buffers from their consumer.
        Gate secondReady;
        registerApp(fakeApp(second, peers_, 1000), secondReady);
        // Set up and started in the other session while this consumer hangs.
        EXPECT_TRUE(called(second, "start"));
        EXPECT_TRUE(secondReady.wait());
        ASSERT_TRUE(stopHung.wait());
        ASSERT_TRUE(stopHung.at().error.has_value());
        EXPECT_EQ(stopHung.at().error->code(), ErrorCode::Failed);
        const std::string why = awaitFailure(kIdA);
        EXPECT_TRUE(contains(why, unitOf(kIdA))) << why;
        EXPECT_TRUE(contains(why, "did not answer")) << why;
    } // SIGCONT: it gets the SIGTERM the tracer sent when failing the session
    EXPECT_TRUE(consumer.exited());
    EXPECT_TRUE(failuresOf(kIdB).empty());
    // The failed session refuses at once; the other one stops and starts.
    const auto refused = stop(kIdA);
    ASSERT_TRUE(refused.has_value());
    EXPECT_EQ(refused->code(), ErrorCode::WrongState);
    EXPECT_FALSE(stop(kIdB));
    start(alive);
    ASSERT_TRUE(strandIdle(first));
    ASSERT_TRUE(strandIdle(second));
    EXPECT_EQ(count(second, "create_session"), 1u); // never set up in the failed session
    EXPECT_EQ(count(second, "stop"), 1u);
    EXPECT_EQ(count(second, "start"), 2u);
    EXPECT_EQ(count(first, "start"), 3u); // twice at first, once more in `alive`
    EXPECT_TRUE(failuresOf(kIdB).empty());
}

// A consumer that never answers while its session runs: an app registering
// then is told register_done without waiting for it, and set up and started
// in the other session; the buffers it needs from the stopped consumer miss
// their deadline, which fails that session, naming its consumer; its Stop
// answers with an error, the other session stops and starts.
TEST_F(TracerSessionsShortDeadline, AnAppRegisteringWhileAConsumerHangsIsTracedByTheOthers) {
    const auto hung = session(kIdA, "hung");
    const auto alive = session(kIdB, "alive");
    start(hung);
    start(alive);
    Process consumer(consumerOf(hung.outputPath));
    ASSERT_TRUE(consumer.valid());
    const pid_t app = kFirstPid + 5;
    {
        StoppedWhileInScope stopped(consumer);
        ASSERT_TRUE(stopped.stopped());
        Gate ready;
        registerApp(fakeApp(app, peers_), ready);
        EXPECT_TRUE(called(app, "start"));
        EXPECT_TRUE(ready.wait());
        const std::string why = awaitFailure(kIdA);
        EXPECT_TRUE(contains(why, unitOf(kIdA))) << why;
        EXPECT_TRUE(contains(why, "did not answer CreateChannel")) << why;
        const auto refused = stop(kIdA);
        EXPECT_TRUE(refused.has_value());
    }
    EXPECT_TRUE(consumer.exited());
    EXPECT_FALSE(stop(kIdB));
    start(alive);
    ASSERT_TRUE(strandIdle(app));
    EXPECT_EQ(count(app, "create_session"), 1u); // never set up in the failed session
    EXPECT_EQ(count(app, "start"), 2u);
    EXPECT_EQ(count(app, "stop"), 1u);
    EXPECT_TRUE(failuresOf(kIdB).empty());
    EXPECT_EQ(failuresOf(kIdA).size(), 1u);
}

// The consumer dies (SIGKILL) after Rotate's Ok and before it could
// complete the rotation (it waits for RotateMetadata, which the tracer sends
// once `started` returns): `completed` gets an error, the session fails
// naming its consumer, and Destroy answers.
TEST_F(TracerSessions, AConsumerKilledMidRotationCompletesItWithAnError) {
    const auto s = session(kIdA, "rotated");
    start(s);
    registerTraced(kFirstPid + 10);
    auto consumer = std::make_shared<Process>(consumerOf(s.outputPath));
    ASSERT_TRUE(consumer->valid());
    Answers started, completed;
    auto killedBefore = std::make_shared<std::atomic<bool>>(false);
    thread_.run([&] {
        recordings_->rotate(
            kIdA,
            [consumer, killedBefore, record = started.withPath()](std::optional<Error> e,
                                                                  const std::string& path) {
                if (!e) {
                    // Dead before the loop goes on: it never reads RotateMetadata.
                    consumer->signal(SIGKILL);
                    *killedBefore = consumer->exited();
                }
                record(std::move(e), path);
            },
            completed.withPath());
    });
    ASSERT_TRUE(started.wait());
    ASSERT_FALSE(started.at().error) << started.at().error->what();
    ASSERT_TRUE(killedBefore->load());
    ASSERT_TRUE(completed.wait());
    ASSERT_TRUE(completed.at().error.has_value());
    EXPECT_TRUE(contains(completed.at().error->what(), started.at().path))
        << completed.at().error->what();
    const std::string why = awaitFailure(kIdA);
    EXPECT_TRUE(contains(why, unitOf(kIdA))) << why;
    Answers destroyed;
    thread_.run([&] { destroySession(kIdA, destroyed.done()); });
    ASSERT_TRUE(destroyed.wait());
    EXPECT_FALSE(destroyed.at().error);
    EXPECT_EQ(started.count(), 1u);
    EXPECT_EQ(completed.count(), 1u);
    EXPECT_EQ(failuresOf(kIdA).size(), 1u);
}

// Rotate reaches a stopped consumer and misses its deadline: `started` gets
// the timeout, and, since the consumer may carry the rotation out all the
// same, the session fails (naming the consumer) rather than take whatever
// the consumer says later for an answer. Resumed, the consumer may still
// answer Rotate: that reply starts nothing, completes nothing and fails
// nothing again, and the next calls are refused at once (no request they
// would pair it with is sent). A rotation that never began is never
// completed (Recordings::rotate()).
TEST_F(TracerSessionsShortDeadline, AReplyAfterItsDeadlineIsTakenForNoOtherRequest) {
    const auto s = session(kIdA, "late");
    start(s);
    registerTraced(kFirstPid + 20);
    Process consumer(consumerOf(s.outputPath));
    ASSERT_TRUE(consumer.valid());
    Answers started, completed;
    {
        StoppedWhileInScope stopped(consumer);
        ASSERT_TRUE(stopped.stopped());
        thread_.run([&] { recordings_->rotate(kIdA, started.withPath(), completed.withPath()); });
        ASSERT_TRUE(started.wait());
        ASSERT_TRUE(started.at().error.has_value());
        EXPECT_TRUE(contains(started.at().error->what(), "did not answer Rotate"))
            << started.at().error->what();
        const std::string why = awaitFailure(kIdA);
        EXPECT_TRUE(contains(why, unitOf(kIdA))) << why;
        EXPECT_TRUE(contains(why, "rotation")) << why;
    } // SIGCONT: it reads Rotate (and may answer it), and the SIGTERM
    EXPECT_TRUE(consumer.exited());
    Answers again, againCompleted;
    thread_.run([&] { recordings_->rotate(kIdA, again.withPath(), againCompleted.withPath()); });
    ASSERT_TRUE(again.wait());
    ASSERT_TRUE(again.at().error.has_value());
    EXPECT_EQ(again.at().error->code(), ErrorCode::WrongState);
    const auto refused = stop(kIdA);
    ASSERT_TRUE(refused.has_value());
    EXPECT_EQ(refused->code(), ErrorCode::WrongState);
    Answers destroyed;
    thread_.run([&] { destroySession(kIdA, destroyed.done()); });
    ASSERT_TRUE(destroyed.wait());
    // Final: the session and its connection are gone.
    EXPECT_EQ(started.count(), 1u);
    EXPECT_EQ(completed.count(), 0u) << completed.at().error.value_or(Error{{}, "ok"}).what();
    EXPECT_EQ(again.count(), 1u);
    EXPECT_EQ(againCompleted.count(), 0u);
    EXPECT_EQ(failuresOf(kIdA).size(), 1u);
}

// An app registers while Start is in flight, its consumer still being
// launched: Start's joins take it, once; it is started once, with the
// session, and stopped once.
TEST_F(TracerSessions, AnAppRegisteringWhileTheConsumerComesUpIsStartedOnce) {
    const auto s = session(kIdA, "coming-up");
    const pid_t app = kFirstPid + 30;
    auto registered = fakeApp(app, peers_);
    Answers started;
    Gate ready;
    bool inFlight = false;
    started_.push_back(s.idHex);
    thread_.run([&] {
        startSession(s, started.done());
        tracer_->onAppRegistered(registered, [&ready] { ready.open(); });
        inFlight = started.count() == 0; // the launcher answers from the loop, later
    });
    EXPECT_TRUE(inFlight);
    ASSERT_TRUE(started.wait());
    ASSERT_FALSE(started.at().error) << started.at().error->what();
    EXPECT_TRUE(ready.wait());
    ASSERT_TRUE(strandIdle(app));
    EXPECT_EQ(count(app, "create_session"), 1u);
    EXPECT_EQ(count(app, "create_event first:*"), 1u);
    EXPECT_EQ(count(app, "start"), 1u);
    EXPECT_FALSE(stop(kIdA));
    ASSERT_TRUE(strandIdle(app));
    EXPECT_EQ(count(app, "stop"), 1u);
    EXPECT_EQ(count(app, "start"), 1u);
    EXPECT_EQ(started.count(), 1u);
}

// An app registers while Start is joining the apps there were (one hangs in
// its set-up): it joins at once, is started with the others once Start's
// joins are over, once, and stopped once.
TEST_F(TracerSessions, AnAppRegisteringWhileStartJoinsAppsIsStartedOnce) {
    const auto s = session(kIdA, "joining");
    const pid_t first = kFirstPid + 40, second = kFirstPid + 41;
    Gate firstReady, secondReady;
    registerApp(fakeApp(first, peers_), firstReady);
    ASSERT_TRUE(firstReady.wait()); // no session yet
    hang(first, "create_session");
    Answers started;
    beginStart(s, started);
    ASSERT_TRUE(hung_.wait()); // Start waits for `first`'s set-up
    registerApp(fakeApp(second, peers_), secondReady);
    EXPECT_TRUE(secondReady.wait());
    EXPECT_EQ(count(second, "create_session"), 1u);
    EXPECT_EQ(count(second, "start"), 0u); // not before the others
    EXPECT_EQ(started.count(), 0u);
    released_.open();
    ASSERT_TRUE(started.wait());
    ASSERT_FALSE(started.at().error) << started.at().error->what();
    ASSERT_TRUE(strandIdle(first));
    ASSERT_TRUE(strandIdle(second));
    for (const pid_t app : {first, second}) {
        EXPECT_EQ(count(app, "create_session"), 1u) << app;
        EXPECT_EQ(count(app, "start"), 1u) << app;
    }
    EXPECT_FALSE(stop(kIdA));
    for (const pid_t app : {first, second}) {
        ASSERT_TRUE(strandIdle(app));
        EXPECT_EQ(count(app, "stop"), 1u) << app;
        EXPECT_EQ(count(app, "start"), 1u) << app;
    }
}

// Destroy while a rotation is under way (called from its `started`: the
// consumer cannot have completed it yet, it waits for RotateMetadata): the
// rotation's `completed` comes first, then Destroy's `done`, each once.
TEST_F(TracerSessions, DestroyDuringARotationCompletesItFirst) {
    const auto s = session(kIdA, "destroyed");
    start(s);
    registerTraced(kFirstPid + 50);
    Answers started, completed, destroyed;
    thread_.run([&] {
        recordings_->rotate(
            kIdA,
            [this, record = started.withPath(),
             destroy = destroyed.done()](std::optional<Error> e, const std::string& path) {
                const bool begun = !e;
                record(std::move(e), path);
                if (begun)
                    destroySession(kIdA, destroy);
            },
            completed.withPath());
    });
    ASSERT_TRUE(started.wait());
    ASSERT_FALSE(started.at().error) << started.at().error->what();
    ASSERT_TRUE(destroyed.wait());
    ASSERT_EQ(completed.count(), 1u);
    EXPECT_LT(completed.at().rank, destroyed.at().rank);
    EXPECT_EQ(started.count(), 1u);
    EXPECT_EQ(destroyed.count(), 1u);
    EXPECT_FALSE(destroyed.at().error);
    started_.clear(); // destroyed already
}

// Destroy right behind Rotate, before the consumer has answered it: Rotate's
// `started` answers; if the rotation began, its `completed` comes before
// Destroy's `done`; each once.
TEST_F(TracerSessions, DestroyRightBehindRotateAnswersBoth) {
    const auto s = session(kIdA, "destroyed-early");
    start(s);
    registerTraced(kFirstPid + 51);
    Answers started, completed, destroyed;
    thread_.run([&] {
        recordings_->rotate(kIdA, started.withPath(), completed.withPath());
        destroySession(kIdA, destroyed.done());
    });
    ASSERT_TRUE(destroyed.wait());
    ASSERT_TRUE(started.wait());
    EXPECT_EQ(started.count(), 1u);
    EXPECT_EQ(destroyed.count(), 1u);
    if (!started.at().error) {
        ASSERT_EQ(completed.count(), 1u);
        EXPECT_LT(completed.at().rank, destroyed.at().rank);
    } else {
        EXPECT_EQ(completed.count(), 0u); // never began, never completes
    }
    started_.clear();
}

// Found by a fresh user: a snapshot overtaken by Destroy answered success
// with a folder holding stream files and no metadata (the consumer had
// closed the metadata channels before SnapshotMetadata came), so no reader
// could open it. A snapshot that is not whole says so.
TEST_F(TracerSessions, ASnapshotOvertakenByDestroyIsNeverReportedWhole) {
    const auto s = session(kIdA, "flight-destroyed", true);
    start(s);
    registerTraced(kFirstPid + 70);
    // Stopped: Destroy closes the channels at once, right behind the
    // snapshot's request.
    ASSERT_FALSE(stop(kIdA));
    Answers snapshot, destroyed;
    thread_.run([&] {
        recordings_->recordSnapshot(kIdA, 0, snapshot.withPath());
        destroySession(kIdA, destroyed.done());
    });
    ASSERT_TRUE(destroyed.wait());
    ASSERT_TRUE(snapshot.wait());
    const auto taken = snapshot.at();
    std::cout << "snapshot: " << (taken.error ? taken.error->what() : taken.path) << std::endl;
    if (!taken.error) {
        EXPECT_TRUE(std::filesystem::exists(taken.path + "/ust/uid/0/64-bit/metadata"))
            << "reported whole without its metadata: " << taken.path;
    } else {
        EXPECT_NE(std::string(taken.error->what()).find("destroyed"), std::string::npos)
            << taken.error->what();
    }
    EXPECT_EQ(snapshot.count(), 1u);
    started_.clear();
}

// RecordSnapshot and Stop at once, in either order, on a snapshot session:
// each answers once, with success; the snapshot is written (its folder
// holds the trace's metadata), and the session stays usable (a snapshot of
// the stopped session is written).
class TracerSnapshotStop : public TracerSessions, public ::testing::WithParamInterface<bool> {};

TEST_P(TracerSnapshotStop, StopRacingASnapshotAnswersBothOnce) {
    const bool snapshotFirst = GetParam();
    const auto s = session(kIdA, "flight", true);
    start(s);
    const pid_t app = kFirstPid + 60;
    registerTraced(app);
    Answers snapshot, stopped;
    thread_.run([&] {
        if (snapshotFirst)
            recordings_->recordSnapshot(kIdA, 0, snapshot.withPath());
        tracer_->stop(kIdA, stopped.done());
        if (!snapshotFirst)
            recordings_->recordSnapshot(kIdA, 0, snapshot.withPath());
    });
    ASSERT_TRUE(snapshot.wait());
    ASSERT_TRUE(stopped.wait());
    EXPECT_FALSE(stopped.at().error) << stopped.at().error->what();
    // Active or stopped, a snapshot session's buffers are there to copy:
    // whichever the consumer sees first, the snapshot is whole.
    const auto taken = snapshot.at();
    ASSERT_FALSE(taken.error) << taken.error->what();
    EXPECT_TRUE(std::filesystem::is_directory(taken.path)) << taken.path;
    EXPECT_TRUE(std::filesystem::exists(taken.path + "/ust/uid/0/64-bit/metadata")) << taken.path;
    ASSERT_TRUE(strandIdle(app));
    EXPECT_EQ(count(app, "stop"), 1u);
    // Stopped, it still takes snapshots (the race left it consistent).
    Answers later;
    thread_.run([&] { recordings_->recordSnapshot(kIdA, 0, later.withPath()); });
    ASSERT_TRUE(later.wait());
    ASSERT_FALSE(later.at().error) << later.at().error->what();
    EXPECT_TRUE(std::filesystem::exists(later.at().path + "/ust/uid/0/64-bit/metadata"));
    EXPECT_NE(later.at().path, taken.path);
    EXPECT_EQ(snapshot.count(), 1u);
    EXPECT_EQ(stopped.count(), 1u);
    EXPECT_EQ(failureCount(), 0u);
}

INSTANTIATE_TEST_SUITE_P(EitherOrder, TracerSnapshotStop, ::testing::Bool(), [](const auto& param) {
    return param.param ? "SnapshotThenStop" : "StopThenSnapshot";
});

// A rotation asked for while an app of the session is being started waits
// for that start: lttng-ust registers its channels in start_session, so a
// chunk closed before that could hold packets of a stream class its
// metadata lacks (seen as an unreadable archive in a per-PID burst).
TEST_F(TracerSessions, ARotationWaitsForTheStartOfAnAppBeingJoined) {
    const auto s = session(kIdA, "rotating-while-joining");
    start(s);
    const pid_t app = kFirstPid + 70;
    hang(app, "start");
    Gate ready;
    registerApp(fakeApp(app, peers_), ready);
    ASSERT_TRUE(hung_.wait()); // its start_session is under way
    Answers started, completed;
    thread_.run([&] { recordings_->rotate(kIdA, started.withPath(), completed.withPath()); });
    // Without the wait, the consumer begins it within a round trip; under
    // load that may take longer than this, which only lets a broken tracer
    // pass, never a working one fail.
    EXPECT_FALSE(started.wait(1, 300ms)) << "the rotation began before the app had started";
    released_.open();
    ASSERT_TRUE(started.wait());
    EXPECT_FALSE(started.at().error) << started.at().error->what();
    ASSERT_TRUE(completed.wait());
    EXPECT_FALSE(completed.at().error) << completed.at().error->what();
    EXPECT_EQ(count(app, "start"), 1u);
    EXPECT_TRUE(ready.wait());
}

// An app that dies while it is being set up, the only one of its uid, has
// registered no channel: the per-UID trace made for it stays, and the
// consumer writes an (empty) packet of each of its streams at the next
// chunk boundary. That chunk's metadata must still describe the stream
// class, or babeltrace2 refuses the whole chunk (found by killing apps
// while they registered).
TEST_F(TracerSessions, AChunkWhoseOnlyAppDiedBeforeRegisteringStaysReadable) {
    const auto s = session(kIdA, "orphan");
    start(s);
    const pid_t app = kFirstPid + 80;
    commands_->before = [app](pid_t p, const std::string& name) {
        if (p == app && name == "send_stream")
            throw Error(ErrorCode::Failed, "sending a stream: Broken pipe");
    };
    Gate ready;
    registerApp(fakeApp(app, peers_), ready);
    ASSERT_TRUE(ready.wait());
    Answers started, completed;
    thread_.run([&] { recordings_->rotate(kIdA, started.withPath(), completed.withPath()); });
    ASSERT_TRUE(completed.wait());
    ASSERT_FALSE(completed.at().error) << completed.at().error->what();
    const std::string metadata = completed.at().path + "/ust/uid/0/64-bit/metadata";
    std::ifstream in(metadata, std::ios::binary);
    ASSERT_TRUE(in) << metadata;
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    // Packetized metadata: the stream block is in it, as plain text.
    EXPECT_NE(text.find("stream {"), std::string::npos) << "no stream class in " << metadata;
}
