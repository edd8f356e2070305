// The session state machine (session/session.hpp) against fake domain
// backends that answer when, and how, each test says: operations in
// flight, their answers racing each other, answers after the session was
// freed, and several domains answering one operation.
#include "session/channel_config.hpp"
#include "session/session.hpp"

#include <deque>
#include <gtest/gtest.h>
#include <memory>

using namespace tracectl;

namespace {

/// A domain that keeps every callback until the test answers it; also the
/// session's recorder (makeSession() makes the first domain with
/// `records` so), whose rotations, clears, snapshots and schedule the test
/// answers likewise, and which starts and ends recordings at once.
class FakeDomain final : public DomainBackend, public SessionRecorder {
public:
    using Done = DomainBackend::Done;
    using PathDone = DomainBackend::PathDone;
    explicit FakeDomain(std::string name = "fake") : domainName(std::move(name)) {}
    std::string_view name() const noexcept override { return domainName; }
    void startRecording(SessionSnapshot, Done done) override {
        ++recordingsStarted;
        done(std::nullopt);
    }
    void resumeRecording(SessionSnapshot, Done done) override { done(std::nullopt); }
    void setRecordingActive(std::string, bool active) override { recordingActive = active; }
    void recordingEnding(std::string) override {}
    void endRecording(std::string, Done done) override {
        ++recordingsEnded;
        done(std::nullopt);
    }
    void start(SessionSnapshot s, Done done) override {
        startSnapshots.push_back(std::move(s));
        starts.push_back(std::move(done));
    }
    void stop(std::string, Done done) override { stops.push_back(std::move(done)); }
    void destroy(std::string, Done done) override { destroys.push_back(std::move(done)); }
    void enableEvents(std::string, EventRule rule, bool, Done done) override {
        rules.push_back(rule);
        done(refuseRules);
    }
    void setEventRulesEnabled(std::string, std::vector<EventRule> r, bool enabled,
                              Done done) override {
        for (auto& rule : r)
            toggledRules.emplace_back(std::move(rule), enabled);
        toggles.push_back(std::move(done));
    }
    void setChannelEnabled(std::string, TracingDomain, std::string channel, bool enabled,
                           Done done) override {
        toggledChannels.emplace_back(std::move(channel), enabled);
        toggles.push_back(std::move(done));
    }
    void setProcessTrackers(std::string, ProcessTrackers t, bool allUsers, Done done) override {
        trackers.push_back(std::move(t));
        trackersAllUsers.push_back(allUsers);
        done(refuseTrackers);
    }
    void rotate(std::string, PathDone begun, PathDone completed) override {
        rotationsStarted.push_back(std::move(begun));
        rotationsCompleted.push_back(std::move(completed));
    }
    void recordSnapshot(std::string, uint64_t, PathDone done) override {
        snapshots.push_back(std::move(done));
    }
    void clear(std::string, Done done) override { clears.push_back(std::move(done)); }
    void setRotationSchedule(std::string, RotationSchedule, PathDone begun, PathDone completed,
                             Done done) override {
        scheduledStarted = std::move(begun);
        scheduledCompleted = std::move(completed);
        ++schedulesSet;
        done(std::nullopt);
    }

    /// Answers the oldest call of `calls` with `error`.
    template <class Calls>
    static void answer(Calls& calls, std::optional<Error> error = {}) {
        ASSERT_FALSE(calls.empty());
        auto f = std::move(calls.front());
        calls.pop_front();
        f(std::move(error));
    }
    template <class Calls>
    static void answerPath(Calls& calls, std::string path, std::optional<Error> error = {}) {
        ASSERT_FALSE(calls.empty());
        auto f = std::move(calls.front());
        calls.pop_front();
        f(std::move(error), std::move(path));
    }

    std::string domainName;
    std::deque<SessionSnapshot> startSnapshots; ///< what each start was given
    std::deque<Done> starts, stops, destroys, clears;
    std::deque<EventRule> rules;
    std::deque<std::pair<EventRule, bool>> toggledRules;      ///< setEventRulesEnabled()
    std::deque<std::pair<std::string, bool>> toggledChannels; ///< setChannelEnabled()
    std::deque<Done> toggles;                                 ///< both, unanswered
    std::deque<PathDone> rotationsStarted, rotationsCompleted, snapshots;
    PathDone scheduledStarted, scheduledCompleted;
    std::optional<Error> refuseRules;     ///< what enableEvents() answers
    std::deque<ProcessTrackers> trackers; ///< what each setProcessTrackers() was given
    std::deque<bool> trackersAllUsers;
    std::optional<Error> refuseTrackers; ///< what setProcessTrackers() answers
    bool records = true;                 ///< makeSession() makes it the recorder
    int recordingsStarted = 0, recordingsEnded = 0, schedulesSet = 0;
    bool recordingActive = false;
};

/// Records what the session tells its view.
struct Recorder final : SessionListener {
    void changed(const std::vector<SessionChange>& what) override {
        for (auto c : what)
            changes.push_back(c);
    }
    void rotationEnded(const std::optional<Error>& error, const std::string& path) override {
        ended.emplace_back(error ? error->what() : "", path);
    }
    void snapshotRecorded(const std::string& path) override { recorded.push_back(path); }
    std::size_t count(SessionChange c) const {
        return static_cast<std::size_t>(std::count(changes.begin(), changes.end(), c));
    }
    std::vector<SessionChange> changes;
    std::vector<std::pair<std::string, std::string>> ended; // (error, path)
    std::vector<std::string> recorded;
};

/// The outcome of one operation, once it answered.
struct Outcome {
    bool answered = false;
    std::optional<Error> error;
    std::string path;
    Session::Done done() {
        return [this](std::optional<Error> e) {
            EXPECT_FALSE(answered) << "answered twice";
            answered = true;
            error = std::move(e);
        };
    }
    Session::PathDone pathDone() {
        return [this](std::optional<Error> e, std::string p) {
            EXPECT_FALSE(answered) << "answered twice";
            answered = true;
            error = std::move(e);
            path = std::move(p);
        };
    }
    ErrorCode code() const { return error ? error->code() : ErrorCode::Failed; }
};

std::unique_ptr<Session> makeSession(std::vector<DomainBackend*> domains,
                                     SessionMode mode = SessionMode::Normal) {
    SessionConfig c;
    c.name = "s";
    c.owner = 1000;
    c.outputPath = "/tmp/s";
    c.mode = mode;
    SessionRecorder* recorder = nullptr;
    for (DomainBackend* d : domains)
        if (auto* fake = dynamic_cast<FakeDomain*>(d);
            fake != nullptr && fake->records && !recorder)
            recorder = fake;
    auto s = std::make_unique<Session>(SessionId::random(), c, std::chrono::system_clock::now(),
                                       std::move(domains), recorder);
    ChannelConfig ch;
    ch.name = "channel0";
    ch.overwrite = mode == SessionMode::Snapshot;
    s->addChannel(ch);
    return s;
}

template <class F>
ErrorCode refusal(F f) {
    try {
        f();
    } catch (const Error& e) {
        return e.code();
    }
    ADD_FAILURE() << "accepted";
    return ErrorCode::Failed;
}

/// Starts `s`, its one domain `d` answering at once.
void started(Session& s, FakeDomain& d) {
    Outcome o;
    s.start(o.done());
    FakeDomain::answer(d.starts);
    ASSERT_TRUE(o.answered);
    ASSERT_FALSE(o.error);
}

} // namespace

// An exclusion that leaves the rule nothing to record is refused, as
// lttng-enable-event(1) refuses it ("p:* excludes all events from p:*");
// one that excludes a part, or nothing, is taken.
TEST(EventRuleCheck, AnExclusionOfEveryEventThePatternMatchesIsRefused) {
    EXPECT_TRUE(excludesWholePattern("p:*", "p:*"));
    EXPECT_TRUE(excludesWholePattern("p:ab*", "p:a*"));
    EXPECT_TRUE(excludesWholePattern("p:ab*", "*"));
    EXPECT_FALSE(excludesWholePattern("p:a*", "p:ab*"));
    EXPECT_FALSE(excludesWholePattern("p:*", "p:x"));
    EXPECT_FALSE(excludesWholePattern("p:*", "q:*"));
    EXPECT_FALSE(excludesWholePattern("p\\*:*", "p*"));
    EXPECT_TRUE(excludesWholePattern("p\\*:*", "p\\**"));
    EventRule r;
    r.domain = TracingDomain::Ust;
    r.pattern = "p:*";
    r.exclusions = {"p:x", "p:*"};
    try {
        checkNewEventRule(r);
        ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
        EXPECT_NE(std::string(e.what()).find("excludes every event"), std::string::npos)
            << e.what();
    }
    r.exclusions = {"p:x", "p:y*"};
    EXPECT_NO_THROW(checkNewEventRule(r));
    // An escaped '*' is a name's, not a wildcard: no exclusion applies to
    // it (lttng-enable-event(1): "Exclusions can only be used with a
    // globbing pattern"); an escaped backslash before it leaves it one.
    r.exclusions = {"p:a*"};
    r.pattern = "p:a\\*";
    EXPECT_THROW(checkNewEventRule(r), Error);
    r.pattern = "p:a\\\\*";
    r.exclusions = {"p:a\\\\x"};
    EXPECT_NO_THROW(checkNewEventRule(r));
}

// Timers shorter than a millisecond are refused, saying the floor (issue
// 40 B11: 1 µs was accepted and its consumer took a whole core).
TEST(ChannelCheck, ASwitchOrReadTimerBelowOneMillisecondIsRefused) {
    ChannelConfig c;
    c.name = "t";
    for (uint32_t ChannelConfig::*timer :
         {&ChannelConfig::switchTimerUs, &ChannelConfig::readTimerUs}) {
        ChannelConfig tiny = c;
        tiny.*timer = 1;
        try {
            checkNewChannel(tiny);
            ADD_FAILURE() << "1 µs accepted";
        } catch (const Error& e) {
            EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
            EXPECT_NE(std::string(e.what()).find("at least 1000 µs"), std::string::npos)
                << e.what();
        }
        tiny.*timer = kMinTimerUs;
        EXPECT_NO_THROW(checkNewChannel(tiny));
        tiny.*timer = 0;
        EXPECT_NO_THROW(checkNewChannel(tiny)) << "0: off";
    }
}

TEST(SessionMachine, StartIsActiveOnlyOnceTheDomainHasStartedAndBusyUntilThen) {
    FakeDomain d;
    auto s = makeSession({&d});
    Recorder r;
    s->setListener(&r);
    Outcome o;
    s->start(o.done());
    ASSERT_EQ(d.startSnapshots.size(), 1u);
    EXPECT_EQ(d.startSnapshots[0].channels.size(), 1u);
    EXPECT_EQ(s->operation(), SessionOperation::Starting);
    EXPECT_EQ(s->state(), SessionState::Created);
    EXPECT_EQ(refusal([&] { s->start(Outcome().done()); }), ErrorCode::WrongState);
    EXPECT_EQ(refusal([&] { s->stop(Outcome().done()); }), ErrorCode::WrongState);
    EXPECT_EQ(refusal([&] { s->destroy(Outcome().done()); }), ErrorCode::WrongState);
    EXPECT_FALSE(o.answered);
    FakeDomain::answer(d.starts);
    EXPECT_TRUE(o.answered);
    EXPECT_FALSE(o.error);
    EXPECT_EQ(s->state(), SessionState::Active);
    EXPECT_EQ(s->operation(), SessionOperation::None);
    EXPECT_EQ(r.count(SessionChange::State), 1u);
}

TEST(SessionMachine, AStartTheDomainRefusesLeavesTheStateAndSaysWhy) {
    FakeDomain d;
    auto s = makeSession({&d});
    Outcome o;
    s->start(o.done());
    FakeDomain::answer(d.starts, Error(ErrorCode::Failed, "the consumer could not be started"));
    ASSERT_TRUE(o.answered);
    EXPECT_EQ(o.code(), ErrorCode::Failed);
    EXPECT_EQ(s->state(), SessionState::Created);
    EXPECT_EQ(s->operation(), SessionOperation::None);
    // And it may be started again.
    started(*s, d);
    EXPECT_EQ(s->state(), SessionState::Active);
}

TEST(SessionMachine, ASessionFailedWhileStartingStaysFailed) {
    FakeDomain d;
    auto s = makeSession({&d});
    Outcome o;
    s->start(o.done());
    s->fail("the consumer died");
    FakeDomain::answer(d.starts);
    EXPECT_EQ(s->state(), SessionState::Error);
    EXPECT_EQ(s->errorReason(), "the consumer died");
    EXPECT_EQ(refusal([&] { s->start(Outcome().done()); }), ErrorCode::WrongState);
    Outcome destroyed;
    s->destroy(destroyed.done());
    FakeDomain::answer(d.destroys);
    EXPECT_TRUE(destroyed.answered);
}

TEST(SessionMachine, AFailedNetworkSessionStartsAgainAfterEveryDomainLetGo) {
    FakeDomain ust("ust"), kernel("kernel");
    SessionConfig c;
    c.name = "net";
    c.owner = 1000;
    c.relay = parseNetUrl("net://127.0.0.1:6000:6001");
    const auto created = std::chrono::system_clock::now() - std::chrono::hours(1);
    Session s(SessionId::random(), c, created, {&ust, &kernel});
    ChannelConfig ch;
    ch.name = "channel0";
    s.addChannel(ch);
    Outcome first;
    s.start(first.done());
    FakeDomain::answer(ust.starts);
    FakeDomain::answer(kernel.starts);
    ASSERT_TRUE(first.answered);
    EXPECT_EQ(ust.startSnapshots[0].relayCreationTime, ust.startSnapshots[0].creationTime);
    s.fail("the session's output failed: the relay: connection reset");
    Recorder r;
    s.setListener(&r);

    Outcome again;
    s.start(again.done());
    // Nothing starts before both domains let go of the failed run.
    EXPECT_EQ(s.operation(), SessionOperation::Starting);
    ASSERT_EQ(ust.destroys.size(), 1u);
    ASSERT_EQ(kernel.destroys.size(), 1u);
    EXPECT_TRUE(ust.starts.empty());
    EXPECT_EQ(refusal([&] { s.stop(Outcome().done()); }), ErrorCode::WrongState);
    FakeDomain::answer(ust.destroys);
    EXPECT_TRUE(ust.starts.empty());
    FakeDomain::answer(kernel.destroys);
    ASSERT_EQ(ust.starts.size(), 1u);
    ASSERT_EQ(kernel.starts.size(), 1u);
    EXPECT_EQ(s.errorReason(), "");
    // The relay is told another creation time: a new folder, beside the
    // first run's.
    EXPECT_GT(ust.startSnapshots[1].relayCreationTime, ust.startSnapshots[1].creationTime);
    FakeDomain::answer(ust.starts);
    FakeDomain::answer(kernel.starts);
    ASSERT_TRUE(again.answered);
    EXPECT_FALSE(again.error);
    EXPECT_EQ(s.state(), SessionState::Active);
    EXPECT_GE(r.count(SessionChange::ErrorReason), 1u);
}

// The failed run's recording ended with its schedule: the new one gets it
// again, or a network session started again would never rotate.
TEST(SessionMachine, ASessionStartedAgainAfterItsFailureKeepsRotatingOnItsSchedule) {
    FakeDomain d;
    SessionConfig c;
    c.name = "net";
    c.owner = 1000;
    c.relay = parseNetUrl("net://127.0.0.1:6000:6001");
    auto s = std::make_unique<Session>(SessionId::random(), c, std::chrono::system_clock::now(),
                                       std::vector<DomainBackend*>{&d}, &d);
    ChannelConfig ch;
    ch.name = "channel0";
    s->addChannel(ch);
    Outcome set;
    s->setRotationSchedule(RotationSchedule{1'000'000, 0}, set.done());
    ASSERT_TRUE(set.answered);
    EXPECT_EQ(d.schedulesSet, 1);
    Outcome first;
    s->start(first.done());
    FakeDomain::answer(d.starts);
    s->fail("the relay went away");
    Outcome again;
    s->start(again.done());
    FakeDomain::answer(d.destroys);
    EXPECT_EQ(d.recordingsEnded, 1);
    EXPECT_EQ(d.schedulesSet, 2) << "the new recording has no schedule";
    FakeDomain::answer(d.starts);
    ASSERT_TRUE(again.answered);
    EXPECT_FALSE(again.error);
    ASSERT_TRUE(static_cast<bool>(d.scheduledStarted));
    d.scheduledStarted(std::nullopt, "/relay/archives/a-b-0");
    EXPECT_TRUE(s->rotating());
}

TEST(SessionMachine, ALiveSessionDoesNotRotateAndDestroySaysWhatWasLost) {
    FakeDomain d;
    SessionConfig c;
    c.name = "live";
    c.owner = 1000;
    c.mode = SessionMode::Live;
    c.relay = parseNetUrl("net://127.0.0.1");
    c.liveTimerUs = 1'000'000;
    Session s(SessionId::random(), c, std::chrono::system_clock::now(), {&d});
    ChannelConfig ch;
    ch.name = "channel0";
    s.addChannel(ch);
    started(s, d);
    EXPECT_EQ(refusal([&] { s.rotate([](std::optional<Error>, std::string) {}); }),
              ErrorCode::WrongState);
    EXPECT_TRUE(d.rotationsStarted.empty());
    RotationSchedule every;
    every.timerUs = 1'000'000;
    EXPECT_EQ(refusal([&] { s.setRotationSchedule(every, [](std::optional<Error>) {}); }),
              ErrorCode::WrongState);
    Outcome cleared;
    s.setRotationSchedule({}, cleared.done()); // none is fine
    EXPECT_TRUE(cleared.answered);
    // A domain whose relay did not get everything: Destroy says so.
    Outcome destroyed;
    s.destroy(destroyed.done());
    FakeDomain::answer(d.destroys, Error(ErrorCode::RelayUnavailable, "the relay at ... lost"));
    ASSERT_TRUE(destroyed.answered);
    EXPECT_EQ(destroyed.code(), ErrorCode::RelayUnavailable);
}

TEST(SessionMachine, AFailedLocalSessionIsNotStartedAgain) {
    FakeDomain d;
    auto s = makeSession({&d});
    started(*s, d);
    s->fail("the consumer died");
    EXPECT_EQ(refusal([&] { s->start(Outcome().done()); }), ErrorCode::WrongState);
    EXPECT_TRUE(d.destroys.empty());
}

TEST(SessionMachine, StopRacingASnapshotIsRefusedUntilTheSnapshotAnswers) {
    FakeDomain d;
    auto s = makeSession({&d}, SessionMode::Snapshot);
    Recorder r;
    s->setListener(&r);
    started(*s, d);
    Outcome snap;
    s->recordSnapshot(0, snap.pathDone());
    EXPECT_TRUE(s->recordingSnapshot());
    try {
        s->stop(Outcome().done());
        ADD_FAILURE() << "Stop accepted during a snapshot";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::WrongState);
        EXPECT_NE(std::string(e.what()).find("recording a snapshot"), std::string::npos);
    }
    EXPECT_EQ(refusal([&] { s->recordSnapshot(0, Outcome().pathDone()); }), ErrorCode::WrongState);
    EXPECT_TRUE(d.stops.empty());
    FakeDomain::answerPath(d.snapshots, "/tmp/s/snapshot-1-x-0");
    EXPECT_EQ(snap.path, "/tmp/s/snapshot-1-x-0");
    EXPECT_EQ(r.recorded, std::vector<std::string>{"/tmp/s/snapshot-1-x-0"});
    Outcome stopped;
    s->stop(stopped.done());
    FakeDomain::answer(d.stops);
    EXPECT_FALSE(stopped.error);
    EXPECT_EQ(s->state(), SessionState::Stopped);
}

TEST(SessionMachine, ADestroyOvertakesASnapshotWhichAnswersDestroyed) {
    FakeDomain d;
    auto s = makeSession({&d}, SessionMode::Snapshot);
    Recorder r;
    s->setListener(&r);
    started(*s, d);
    Outcome snap, destroyed;
    s->recordSnapshot(0, snap.pathDone());
    s->destroy(destroyed.done()); // accepted during a snapshot
    // The backend fails the snapshot because of the Destroy.
    FakeDomain::answerPath(d.snapshots, "", Error(ErrorCode::Failed, "consumer shut down"));
    EXPECT_EQ(snap.code(), ErrorCode::NoSuchSession);
    EXPECT_TRUE(r.recorded.empty());
    FakeDomain::answer(d.destroys);
    EXPECT_TRUE(destroyed.answered);
}

TEST(SessionMachine, DestroyDuringARotationEndsTheRotationThenTheSession) {
    FakeDomain d;
    auto s = makeSession({&d});
    Recorder r;
    s->setListener(&r);
    started(*s, d);
    Outcome rot;
    s->rotate(rot.pathDone());
    EXPECT_EQ(s->stateName(), "rotating");
    EXPECT_EQ(refusal([&] { s->rotate(Outcome().pathDone()); }), ErrorCode::WrongState);
    FakeDomain::answerPath(d.rotationsStarted, "/tmp/s/archives/a-b-0");
    EXPECT_EQ(rot.path, "/tmp/s/archives/a-b-0");
    Outcome destroyed;
    s->destroy(destroyed.done()); // a rotation does not hold a Destroy up
    EXPECT_EQ(s->operation(), SessionOperation::Destroying);
    // The backend abandons the rotation first, then ends the session.
    FakeDomain::answerPath(d.rotationsCompleted, "/tmp/s/archives/a-b-0",
                           Error(ErrorCode::Failed, "the session was destroyed"));
    ASSERT_EQ(r.ended.size(), 1u);
    EXPECT_EQ(r.ended[0].second, "/tmp/s/archives/a-b-0");
    EXPECT_NE(r.ended[0].first.find("destroyed"), std::string::npos);
    EXPECT_FALSE(s->rotating());
    FakeDomain::answer(d.destroys);
    EXPECT_TRUE(destroyed.answered);
}

TEST(SessionMachine, AnswersAfterTheSessionWasFreedSayDestroyedAndTouchNothing) {
    FakeDomain d;
    auto s = makeSession({&d}, SessionMode::Snapshot);
    Recorder r;
    s->setListener(&r);
    Outcome start;
    s->start(start.done());
    s.reset();
    FakeDomain::answer(d.starts);
    EXPECT_EQ(start.code(), ErrorCode::NoSuchSession);
    EXPECT_TRUE(r.changes.empty());
}

TEST(SessionMachine, ARotationThatDoesNotBeginLeavesNoRotationUnderWay) {
    FakeDomain d;
    auto s = makeSession({&d});
    Recorder r;
    s->setListener(&r);
    started(*s, d);
    Outcome rot;
    s->rotate(rot.pathDone());
    FakeDomain::answerPath(d.rotationsStarted, "",
                           Error(ErrorCode::Failed, "the consumer refused the rotation"));
    EXPECT_EQ(rot.code(), ErrorCode::Failed);
    EXPECT_FALSE(s->rotating());
    EXPECT_EQ(s->stateName(), "active");
    EXPECT_TRUE(r.ended.empty()); // no RotationCompleted/Failed for what never began
    Outcome again;
    s->rotate(again.pathDone()); // and the next one is accepted
    EXPECT_TRUE(s->rotating());
}

TEST(SessionMachine, EveryDomainAnswersBeforeTheSessionDoesAndTheFirstErrorWins) {
    FakeDomain ust("ust"), kernel("kernel");
    auto s = makeSession({&ust, &kernel});
    Outcome o;
    s->start(o.done());
    ASSERT_EQ(ust.starts.size(), 1u);
    ASSERT_EQ(kernel.starts.size(), 1u);
    FakeDomain::answer(ust.starts);
    EXPECT_FALSE(o.answered);
    FakeDomain::answer(kernel.starts);
    EXPECT_TRUE(o.answered);
    EXPECT_EQ(s->state(), SessionState::Active);

    Outcome stopped;
    s->stop(stopped.done());
    FakeDomain::answer(kernel.stops, Error(ErrorCode::Failed, "flush failed"));
    FakeDomain::answer(ust.stops);
    EXPECT_EQ(stopped.code(), ErrorCode::Failed);
    EXPECT_EQ(s->state(), SessionState::Active); // not stopped: a domain did not
}

TEST(SessionMachine, ScheduledRotationsShowAsRotatingUntilTheyEnd) {
    FakeDomain d;
    auto s = makeSession({&d});
    Recorder r;
    s->setListener(&r);
    Outcome set;
    s->setRotationSchedule({1'000'000, 0}, set.done());
    EXPECT_TRUE(set.answered);
    EXPECT_EQ(s->rotationSchedule().timerUs, 1'000'000u);
    started(*s, d);
    d.scheduledStarted(std::nullopt, "/tmp/s/archives/a-b-0");
    EXPECT_EQ(s->stateName(), "rotating");
    d.scheduledCompleted(std::nullopt, "/tmp/s/archives/a-b-0");
    EXPECT_EQ(s->stateName(), "active");
    ASSERT_EQ(r.ended.size(), 1u);
    EXPECT_EQ(r.ended[0], std::make_pair(std::string(), std::string("/tmp/s/archives/a-b-0")));
    // A snapshot session has no chunk to rotate.
    auto snap = makeSession({&d}, SessionMode::Snapshot);
    EXPECT_EQ(refusal([&] {
                  snap->setRotationSchedule({1, 0}, Outcome().done());
              }),
              ErrorCode::WrongState);
}

TEST(SessionMachine, ARuleGoesToEveryDomainWithTheSessionsUsers) {
    FakeDomain d;
    auto s = makeSession({&d});
    Outcome o;
    EventRule rule;
    rule.pattern = "prov:*";
    s->enableEvents(rule, o.done());
    EXPECT_TRUE(o.answered);
    ASSERT_EQ(d.rules.size(), 1u);
    EXPECT_EQ(d.rules[0].channel, "channel0");
    EXPECT_EQ(s->eventRules().size(), 1u);
    // A refused rule goes nowhere.
    EXPECT_EQ(refusal([&] { s->enableEvents(rule, Outcome().done()); }),
              ErrorCode::EventRuleExists);
    EXPECT_EQ(d.rules.size(), 1u);
}

TEST(SessionMachine, EachDomainsChannelsAndRulesAreToldApart) {
    FakeDomain d;
    Recorder r;
    auto s = makeSession({&d});
    s->setListener(&r);
    // The same name in both domains: two channels.
    s->addChannel(defaultKernelChannel("channel0"), TracingDomain::Kernel);
    EXPECT_EQ(r.count(SessionChange::KernelChannels), 1u);
    EXPECT_EQ(r.count(SessionChange::Channels), 0u) << "only what changed is told";
    EventRule k;
    k.domain = TracingDomain::Kernel;
    k.pattern = "sched:sched_*";
    s->enableEvents(k);
    EXPECT_EQ(r.count(SessionChange::KernelEvents), 1u);
    EXPECT_EQ(r.count(SessionChange::Events), 0u);
    ASSERT_EQ(s->kernelEventRules().size(), 1u);
    EXPECT_TRUE(s->eventRules().empty());
    EXPECT_EQ(s->kernelChannels().front().contexts, std::vector<std::string>{"tid"});
    s->addContext(TracingDomain::Kernel, "", "procname");
    EXPECT_EQ(r.count(SessionChange::KernelContexts), 1u);
    EXPECT_EQ(refusal([&] { s->addContext(TracingDomain::Kernel, "", "vpid"); }),
              ErrorCode::InvalidArgument)
        << "a UST context type is not a kernel one";
    const SessionSnapshot snap = s->snapshot();
    EXPECT_EQ(snap.kernelChannels.size(), 1u);
    EXPECT_EQ(snap.kernelRules.size(), 1u);
    EXPECT_EQ(snap.channels.size(), 1u);
}

TEST(SessionMachine, ARuleADomainRefusesIsTakenBackWithTheChannelItMade) {
    FakeDomain d;
    Recorder r;
    SessionConfig c;
    c.name = "s";
    c.owner = 1000;
    c.outputPath = "/tmp/s";
    Session s(SessionId::random(), c, std::chrono::system_clock::now(), {&d});
    s.setListener(&r);
    d.refuseRules = Error(ErrorCode::InvalidArgument, "no kernel tracepoint matches 'x:y'");
    EventRule k;
    k.domain = TracingDomain::Kernel;
    k.pattern = "x:y";
    Outcome o;
    EXPECT_TRUE(s.enableEvents(k, o.done())) << "channel0 was made for it";
    ASSERT_TRUE(o.answered);
    EXPECT_EQ(o.code(), ErrorCode::InvalidArgument);
    EXPECT_TRUE(s.kernelEventRules().empty());
    EXPECT_TRUE(s.kernelChannels().empty()) << "nothing is changed by a failed call";
    EXPECT_EQ(r.count(SessionChange::KernelEvents), 2u); // added, then taken back
    // The same rule, once accepted, stays; a refused one after it goes alone.
    d.refuseRules.reset();
    k.pattern = "sched:*";
    s.enableEvents(k);
    d.refuseRules = Error(ErrorCode::InvalidArgument, "refused");
    k.pattern = "net:*";
    s.enableEvents(k);
    ASSERT_EQ(s.kernelEventRules().size(), 1u);
    EXPECT_EQ(s.kernelEventRules().front().pattern, "sched:*");
    EXPECT_EQ(s.kernelChannels().size(), 1u);
}

// Found by the rotation suite once the kernel domain came: a domain whose
// buffers another domain's consumer rotates was asked to rotate too, and
// answered "begun" with no archive; a Rotate the other domain refused then
// ended in RotationCompleted with an empty path. Now only the session's
// recorder rotates, and no domain is asked.
TEST(SessionMachine, OnlyTheRecorderIsAskedToRotateOrSnapshot) {
    FakeDomain ust("ust"), kernel("kernel");
    kernel.records = false;
    auto s = makeSession({&kernel, &ust});
    Recorder r;
    s->setListener(&r);
    Outcome start;
    s->start(start.done());
    FakeDomain::answer(kernel.starts);
    FakeDomain::answer(ust.starts);
    ASSERT_TRUE(start.answered);
    Outcome refused;
    s->rotate(refused.pathDone());
    EXPECT_TRUE(kernel.rotationsStarted.empty());
    FakeDomain::answerPath(ust.rotationsStarted, "", Error(ErrorCode::WrongState, "busy"));
    ASSERT_TRUE(refused.answered);
    EXPECT_EQ(refused.code(), ErrorCode::WrongState);
    EXPECT_TRUE(r.ended.empty()) << "a rotation that never began does not end";
    EXPECT_FALSE(s->rotating());
    ust.rotationsCompleted.pop_front(); // a refused rotation never completes
    Outcome rot;
    s->rotate(rot.pathDone());
    FakeDomain::answerPath(ust.rotationsStarted, "/tmp/s/archives/a-b-0");
    FakeDomain::answerPath(ust.rotationsCompleted, "/tmp/s/archives/a-b-0");
    ASSERT_EQ(r.ended.size(), 1u);
    EXPECT_EQ(r.ended[0].second, "/tmp/s/archives/a-b-0");
    Outcome schedule;
    s->setRotationSchedule(RotationSchedule{1000000, 0}, schedule.done());
    EXPECT_TRUE(schedule.answered);
    EXPECT_FALSE(static_cast<bool>(kernel.scheduledStarted));
    EXPECT_TRUE(static_cast<bool>(ust.scheduledStarted));
}

// Session::clear (lttng-clear(1); lttng-tools 2.13 clear.c).

TEST(SessionClear, BeforeTheFirstStartThereIsNothingToClearAndNoDomainIsAsked) {
    FakeDomain d;
    auto s = makeSession({&d});
    Outcome o;
    s->clear(o.done());
    ASSERT_TRUE(o.answered);
    EXPECT_FALSE(o.error);
    EXPECT_TRUE(d.clears.empty());
}

TEST(SessionClear, AnActiveSessionIsClearedByItsRecorderOnlyAndStaysActive) {
    FakeDomain ust("ust"), kernel("kernel");
    kernel.records = false;
    auto s = makeSession({&ust, &kernel});
    Recorder r;
    s->setListener(&r);
    Outcome st;
    s->start(st.done());
    FakeDomain::answer(ust.starts);
    FakeDomain::answer(kernel.starts);
    ASSERT_TRUE(st.answered);
    const std::size_t stateChanges = r.count(SessionChange::State);
    Outcome o;
    s->clear(o.done());
    EXPECT_TRUE(s->clearing());
    EXPECT_TRUE(kernel.clears.empty());
    ASSERT_EQ(ust.clears.size(), 1u);
    EXPECT_FALSE(o.answered);
    FakeDomain::answer(ust.clears);
    ASSERT_TRUE(o.answered);
    EXPECT_FALSE(o.error);
    EXPECT_FALSE(s->clearing());
    EXPECT_EQ(s->state(), SessionState::Active);
    EXPECT_EQ(s->stateName(), "active");
    // No state change, and no rotation told: no archive was made.
    EXPECT_EQ(r.count(SessionChange::State), stateChanges);
    EXPECT_TRUE(r.ended.empty());
}

TEST(SessionClear, RefusedWhileARotationIsUnderWayAndNothingIsAsked) {
    FakeDomain d;
    auto s = makeSession({&d});
    started(*s, d);
    Outcome rot;
    s->rotate(rot.pathDone());
    EXPECT_EQ(refusal([&] { s->clear(Outcome().done()); }), ErrorCode::WrongState);
    EXPECT_TRUE(d.clears.empty());
    FakeDomain::answerPath(d.rotationsStarted, "/tmp/s/archives/a-b-0");
    EXPECT_EQ(refusal([&] { s->clear(Outcome().done()); }), ErrorCode::WrongState);
    FakeDomain::answerPath(d.rotationsCompleted, "/tmp/s/archives/a-b-0");
    EXPECT_FALSE(s->rotating());
    Outcome o;
    s->clear(o.done());
    EXPECT_EQ(d.clears.size(), 1u);
}

TEST(SessionClear, WhileAClearRunsStartStopRotateSnapshotAndClearAreRefusedDestroyIsNot) {
    FakeDomain d;
    auto s = makeSession({&d});
    started(*s, d);
    Outcome o;
    s->clear(o.done());
    EXPECT_EQ(refusal([&] { s->clear(Outcome().done()); }), ErrorCode::WrongState);
    EXPECT_EQ(refusal([&] { s->stop(Outcome().done()); }), ErrorCode::WrongState);
    EXPECT_EQ(refusal([&] { s->rotate(Outcome().pathDone()); }), ErrorCode::WrongState);
    EXPECT_EQ(d.clears.size(), 1u);
    EXPECT_TRUE(d.stops.empty());
    EXPECT_TRUE(d.rotationsStarted.empty());
    Outcome destroyed;
    s->destroy(destroyed.done());
    FakeDomain::answer(d.clears, Error(ErrorCode::Failed, "the consumer is gone"));
    ASSERT_TRUE(o.answered);
    EXPECT_EQ(o.code(), ErrorCode::NoSuchSession); // "the session was destroyed"
    FakeDomain::answer(d.destroys);
    EXPECT_TRUE(destroyed.answered);
}

TEST(SessionClear, RefusedDuringStartStopOrASnapshotAndInError) {
    FakeDomain d;
    auto s = makeSession({&d});
    Outcome st;
    s->start(st.done());
    EXPECT_EQ(refusal([&] { s->clear(Outcome().done()); }), ErrorCode::WrongState);
    FakeDomain::answer(d.starts);
    Outcome sp;
    s->stop(sp.done());
    EXPECT_EQ(refusal([&] { s->clear(Outcome().done()); }), ErrorCode::WrongState);
    FakeDomain::answer(d.stops);
    s->fail("the consumer died");
    EXPECT_EQ(refusal([&] { s->clear(Outcome().done()); }), ErrorCode::WrongState);
    EXPECT_TRUE(d.clears.empty());

    FakeDomain snap;
    auto flight = makeSession({&snap}, SessionMode::Snapshot);
    started(*flight, snap);
    Outcome rec;
    flight->recordSnapshot(0, rec.pathDone());
    EXPECT_EQ(refusal([&] { flight->clear(Outcome().done()); }), ErrorCode::WrongState);
    FakeDomain::answerPath(snap.snapshots, "/tmp/s/snapshot-1");
    Outcome o;
    flight->clear(o.done()); // a snapshot session clears its buffers
    FakeDomain::answer(snap.clears);
    EXPECT_TRUE(o.answered);
    EXPECT_FALSE(o.error);
}

TEST(SessionClear, AStoppedSessionIsClearedOnceUntilItStartsAgainAsAfterARotation) {
    FakeDomain d;
    auto s = makeSession({&d});
    started(*s, d);
    Outcome sp;
    s->stop(sp.done());
    FakeDomain::answer(d.stops);
    Outcome first;
    s->clear(first.done());
    FakeDomain::answer(d.clears);
    ASSERT_TRUE(first.answered);
    // Nothing was recorded since: LTTng's cleared_after_last_stop.
    Outcome second;
    s->clear(second.done());
    EXPECT_TRUE(second.answered);
    EXPECT_FALSE(second.error);
    EXPECT_TRUE(d.clears.empty());
    started(*s, d);
    Outcome sp2;
    s->stop(sp2.done());
    FakeDomain::answer(d.stops);
    // A rotation while stopped leaves an empty chunk too
    // (rotated_after_last_stop).
    Outcome rot;
    s->rotate(rot.pathDone());
    FakeDomain::answerPath(d.rotationsStarted, "/tmp/s/archives/a-b-1");
    FakeDomain::answerPath(d.rotationsCompleted, "/tmp/s/archives/a-b-1");
    Outcome third;
    s->clear(third.done());
    EXPECT_TRUE(third.answered);
    EXPECT_TRUE(d.clears.empty());
}

TEST(SessionClear, ARotationWhileStoppedThatDidNotBeginLeavesSomethingToClear) {
    FakeDomain d;
    auto s = makeSession({&d});
    started(*s, d);
    Outcome sp;
    s->stop(sp.done());
    FakeDomain::answer(d.stops);
    Outcome rot;
    s->rotate(rot.pathDone());
    FakeDomain::answerPath(d.rotationsStarted, "", Error(ErrorCode::Failed, "refused"));
    ASSERT_TRUE(rot.answered);
    ASSERT_FALSE(s->rotating());
    Outcome o;
    s->clear(o.done());
    EXPECT_EQ(d.clears.size(), 1u) << "the chunk still holds what was recorded";
}

TEST(SessionClear, ADomainsErrorIsAnsweredAndTheSessionCanClearAgain) {
    FakeDomain d;
    auto s = makeSession({&d});
    started(*s, d);
    Outcome o;
    s->clear(o.done());
    FakeDomain::answer(d.clears, Error(ErrorCode::Failed, "deleting the chunk: EACCES"));
    ASSERT_TRUE(o.answered);
    EXPECT_EQ(o.code(), ErrorCode::Failed);
    EXPECT_FALSE(s->clearing());
    EXPECT_EQ(s->state(), SessionState::Active);
    Outcome again;
    s->clear(again.done());
    EXPECT_EQ(d.clears.size(), 1u);
}

TEST(SessionClear, AnAnswerAfterTheSessionWasFreedSaysDestroyed) {
    FakeDomain d;
    auto s = makeSession({&d});
    started(*s, d);
    Outcome o;
    s->clear(o.done());
    s.reset();
    FakeDomain::answer(d.clears);
    ASSERT_TRUE(o.answered);
    EXPECT_EQ(o.code(), ErrorCode::NoSuchSession);
}

// Disable and re-enable (session_disable.cpp; lttng-disable-event(1),
// lttng-disable-channel(1)).

namespace {

EventRule ustRule(std::string pattern, std::string filter = {}) {
    EventRule r;
    r.pattern = std::move(pattern);
    r.filter = std::move(filter);
    return r;
}

} // namespace

TEST(SessionDisable, UnknownPatternOrChannelIsRefusedAndNothingChanges) {
    FakeDomain d;
    auto s = makeSession({&d});
    s->enableEvents(ustRule("a:x"));
    Recorder r;
    s->setListener(&r);
    EXPECT_EQ(refusal([&] { s->disableEvents(TracingDomain::Ust, "", "a:y"); }),
              ErrorCode::NoSuchEventRule);
    EXPECT_EQ(refusal([&] { s->disableEvents(TracingDomain::Ust, "nope", "a:x"); }),
              ErrorCode::InvalidArgument);
    EXPECT_EQ(refusal([&] { s->disableEvents(TracingDomain::Kernel, "", "a:x"); }),
              ErrorCode::InvalidArgument); // no kernel channel0
    EXPECT_EQ(refusal([&] { s->disableChannel(TracingDomain::Ust, "nope"); }),
              ErrorCode::InvalidArgument);
    try {
        s->disableEvents(TracingDomain::Ust, "channel0", "a:y");
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("'a:y'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("channel0"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(r.changes.empty());
    EXPECT_TRUE(d.toggles.empty());
    EXPECT_TRUE(s->eventRules().front().enabled);
}

TEST(SessionDisable, EveryRuleOfThePatternIsDisabledAndTheDomainsToldBeforeTheAnswer) {
    FakeDomain d;
    auto s = makeSession({&d});
    s->enableEvents(ustRule("a:x"));
    s->enableEvents(ustRule("a:x", "v > 1")); // another rule, same pattern
    s->enableEvents(ustRule("a:y"));
    Recorder r;
    s->setListener(&r);
    Outcome o;
    s->disableEvents(TracingDomain::Ust, "", "a:x", o.done());
    EXPECT_FALSE(o.answered); // waits for the domain
    EXPECT_FALSE(s->eventRules()[0].enabled);
    EXPECT_FALSE(s->eventRules()[1].enabled);
    EXPECT_TRUE(s->eventRules()[2].enabled);
    ASSERT_EQ(d.toggledRules.size(), 2u);
    EXPECT_EQ(d.toggledRules[0].first.pattern, "a:x");
    EXPECT_FALSE(d.toggledRules[0].second);
    EXPECT_EQ(r.count(SessionChange::Events), 1u);
    FakeDomain::answer(d.toggles);
    EXPECT_TRUE(o.answered);
    EXPECT_FALSE(o.error);

    // Disabled already: found, nothing to do (as LTTng 2.13).
    Outcome again;
    s->disableEvents(TracingDomain::Ust, "", "a:x", again.done());
    EXPECT_TRUE(again.answered);
    EXPECT_FALSE(again.error);
    EXPECT_TRUE(d.toggles.empty());

    // An empty pattern: every rule of the channel.
    s->disableEvents(TracingDomain::Ust, "", "");
    EXPECT_FALSE(s->eventRules()[2].enabled);
    ASSERT_EQ(d.toggledRules.size(), 3u);
    EXPECT_EQ(d.toggledRules[2].first.pattern, "a:y");
}

TEST(SessionDisable, TheSameEnableEventsTurnsADisabledRuleBackOnOnce) {
    FakeDomain d;
    auto s = makeSession({&d});
    started(*s, d);
    s->enableEvents(ustRule("a:x", "v > 1"));
    ASSERT_EQ(d.rules.size(), 1u);
    s->disableEvents(TracingDomain::Ust, "", "a:x");
    FakeDomain::answer(d.toggles);
    Outcome o;
    EXPECT_FALSE(s->enableEvents(ustRule("a:x", "v > 1"), o.done()));
    EXPECT_EQ(d.rules.size(), 1u); // not a new rule
    ASSERT_EQ(d.toggledRules.size(), 2u);
    EXPECT_TRUE(d.toggledRules[1].second);
    FakeDomain::answer(d.toggles);
    EXPECT_TRUE(o.answered);
    EXPECT_FALSE(o.error);
    EXPECT_EQ(s->eventRules().size(), 1u);
    EXPECT_TRUE(s->eventRules().front().enabled);
    // Enabled now: the same rule again is refused, as before.
    EXPECT_EQ(refusal([&] { s->enableEvents(ustRule("a:x", "v > 1")); }),
              ErrorCode::EventRuleExists);
}

TEST(SessionDisable, AChannelIsDisabledOnceAndReEnabledWithItsOwnAttributesAfterTheStart) {
    FakeDomain d;
    auto s = makeSession({&d});
    started(*s, d);
    Recorder r;
    s->setListener(&r);
    Outcome o;
    s->disableChannel(TracingDomain::Ust, "channel0", o.done());
    EXPECT_FALSE(s->channels().front().enabled);
    ASSERT_EQ(d.toggledChannels.size(), 1u);
    EXPECT_EQ(d.toggledChannels[0], std::make_pair(std::string("channel0"), false));
    EXPECT_EQ(r.count(SessionChange::Channels), 1u);
    FakeDomain::answer(d.toggles);
    EXPECT_TRUE(o.answered);
    s->disableChannel(TracingDomain::Ust, "channel0"); // disabled already: fine
    EXPECT_TRUE(d.toggles.empty());

    ChannelConfig other = s->channels().front();
    other.subbufCount = 8;
    EXPECT_EQ(refusal([&] { s->reenableChannel(TracingDomain::Ust, "channel0", other); }),
              ErrorCode::InvalidArgument);
    EXPECT_FALSE(s->channels().front().enabled);
    Outcome back;
    s->reenableChannel(TracingDomain::Ust, "channel0", s->channels().front(), back.done());
    EXPECT_TRUE(s->channels().front().enabled);
    EXPECT_EQ(d.toggledChannels.back(), std::make_pair(std::string("channel0"), true));
    FakeDomain::answer(d.toggles);
    EXPECT_TRUE(back.answered);
    // Enabled: a channel of that name exists.
    EXPECT_EQ(refusal([&] { s->reenableChannel(TracingDomain::Ust, "channel0", std::nullopt); }),
              ErrorCode::InvalidArgument);
}

TEST(SessionDisable, TheNextStartIsGivenTheFlagsAndAFailedSessionRefuses) {
    FakeDomain d;
    auto s = makeSession({&d});
    s->enableEvents(ustRule("a:x"));
    s->disableEvents(TracingDomain::Ust, "", "a:x");
    FakeDomain::answer(d.toggles);
    s->disableChannel(TracingDomain::Ust, "channel0");
    FakeDomain::answer(d.toggles);
    started(*s, d);
    ASSERT_EQ(d.startSnapshots.size(), 1u);
    EXPECT_FALSE(d.startSnapshots[0].rules.front().enabled);
    EXPECT_FALSE(d.startSnapshots[0].channels.front().enabled);

    // Busy with a Stop: refused.
    Outcome stopping;
    s->stop(stopping.done());
    EXPECT_EQ(refusal([&] { s->disableChannel(TracingDomain::Ust, "channel0"); }),
              ErrorCode::WrongState);
    FakeDomain::answer(d.stops);
    s->fail("the consumer died");
    EXPECT_EQ(refusal([&] { s->disableEvents(TracingDomain::Ust, "", "a:x"); }),
              ErrorCode::WrongState);
    EXPECT_EQ(refusal([&] { s->reenableChannel(TracingDomain::Ust, "channel0", std::nullopt); }),
              ErrorCode::WrongState);
    EXPECT_EQ(refusal([&] { s->enableEvents(ustRule("a:x")); }), ErrorCode::WrongState);
}

TEST(SessionMachine, TrackersChangeAtOnceGoToEveryDomainAndAreInTheSnapshot) {
    FakeDomain ust("ust"), kernel("kernel");
    Recorder r;
    auto s = makeSession({&ust, &kernel});
    s->setListener(&r);
    Outcome o;
    s->trackProcessAttribute(TracingDomain::Ust, ProcessAttribute::Vpid, {42}, false, o.done());
    EXPECT_TRUE(o.answered);
    EXPECT_FALSE(o.error);
    EXPECT_EQ(r.changes, std::vector<SessionChange>{SessionChange::ProcessAttributeTrackers});
    ASSERT_EQ(ust.trackers.size(), 1u);
    ASSERT_EQ(kernel.trackers.size(), 1u);
    EXPECT_FALSE(ust.trackers[0].of(ProcessAttribute::Vpid).all);
    EXPECT_EQ(ust.trackers[0], s->processTrackers());
    EXPECT_FALSE(ust.trackersAllUsers[0]);
    // A later start carries them.
    Outcome started;
    s->start(started.done());
    FakeDomain::answer(ust.starts);
    FakeDomain::answer(kernel.starts);
    ASSERT_TRUE(started.answered);
    EXPECT_EQ(ust.startSnapshots.back().trackers, s->processTrackers());
    // While active: accepted, and told at once.
    Outcome untracked;
    s->untrackProcessAttribute(TracingDomain::Ust, ProcessAttribute::Vpid, {42}, false,
                               untracked.done());
    EXPECT_TRUE(untracked.answered);
    ASSERT_EQ(ust.trackers.size(), 2u);
    EXPECT_TRUE(ust.trackers[1].of(ProcessAttribute::Vpid).values.empty());
    EXPECT_FALSE(ust.trackers[1].admitsUst(42, 0, 0));
}

TEST(SessionMachine, TrackersTellDomainsWhetherTheSessionTracesAllUsers) {
    FakeDomain d;
    auto s = makeSession({&d});
    s->traceAllUsers();
    s->trackProcessAttribute(TracingDomain::Ust, ProcessAttribute::Vuid, {1001}, false);
    ASSERT_EQ(d.trackersAllUsers.size(), 1u);
    EXPECT_TRUE(d.trackersAllUsers[0]);
}

TEST(SessionMachine, RefusedTrackerChangesChangeNothingAndGoNowhere) {
    FakeDomain d;
    Recorder r;
    auto s = makeSession({&d});
    s->setListener(&r);
    const ProcessTrackers before = s->processTrackers();
    // An attribute of the other domain.
    EXPECT_EQ(refusal([&] {
                  s->trackProcessAttribute(TracingDomain::Ust, ProcessAttribute::Pid, {1}, false);
              }),
              ErrorCode::InvalidArgument);
    EXPECT_EQ(refusal([&] {
                  s->trackProcessAttribute(TracingDomain::Kernel, ProcessAttribute::Vpid, {1},
                                           false);
              }),
              ErrorCode::InvalidArgument);
    // Kernel trackers: tracefs cannot apply them (see session.hpp).
    for (const auto a : {ProcessAttribute::Pid, ProcessAttribute::Uid, ProcessAttribute::Gid})
        EXPECT_EQ(refusal([&] { s->trackProcessAttribute(TracingDomain::Kernel, a, {1}, false); }),
                  ErrorCode::InvalidArgument);
    // Untracking a value while every process is tracked, or one not tracked.
    EXPECT_EQ(refusal([&] {
                  s->untrackProcessAttribute(TracingDomain::Ust, ProcessAttribute::Vpid, {1},
                                             false);
              }),
              ErrorCode::InvalidArgument);
    s->trackProcessAttribute(TracingDomain::Ust, ProcessAttribute::Vpid, {1}, false);
    r.changes.clear();
    const ProcessTrackers tracked = s->processTrackers();
    EXPECT_EQ(refusal([&] {
                  s->untrackProcessAttribute(TracingDomain::Ust, ProcessAttribute::Vpid, {2},
                                             false);
              }),
              ErrorCode::InvalidArgument);
    EXPECT_EQ(s->processTrackers(), tracked);
    EXPECT_NE(s->processTrackers(), before);
    EXPECT_TRUE(r.changes.empty());
    EXPECT_EQ(d.trackers.size(), 1u);
}

TEST(SessionMachine, TrackersAreRefusedWhileBusyAndInError) {
    FakeDomain d;
    auto s = makeSession({&d});
    Outcome o;
    s->start(o.done());
    // A Start in flight.
    EXPECT_EQ(refusal([&] {
                  s->trackProcessAttribute(TracingDomain::Ust, ProcessAttribute::Vpid, {1}, false);
              }),
              ErrorCode::WrongState);
    FakeDomain::answer(d.starts);
    s->fail("the consumer died");
    EXPECT_EQ(refusal([&] {
                  s->trackProcessAttribute(TracingDomain::Ust, ProcessAttribute::Vpid, {1}, false);
              }),
              ErrorCode::WrongState);
    EXPECT_TRUE(s->processTrackers().of(ProcessAttribute::Vpid).all);
    EXPECT_TRUE(d.trackers.empty());
}

TEST(SessionMachine, ADomainThatRefusesTrackersSaysSo) {
    FakeDomain d;
    d.refuseTrackers = Error(ErrorCode::InvalidArgument, "no");
    auto s = makeSession({&d});
    Outcome o;
    s->trackProcessAttribute(TracingDomain::Ust, ProcessAttribute::Vgid, {3}, false, o.done());
    ASSERT_TRUE(o.answered);
    EXPECT_EQ(o.code(), ErrorCode::InvalidArgument);
}

namespace {

/// A recorder whose answers the test gives, to see the session's order.
struct OrderedRecorder final : SessionRecorder {
    void startRecording(SessionSnapshot, Done done) override { starts.push_back(std::move(done)); }
    void resumeRecording(SessionSnapshot, Done done) override {
        resumes.push_back(std::move(done));
    }
    void setRecordingActive(std::string, bool a) override { active = a; }
    void recordingEnding(std::string) override { ++endings; }
    void endRecording(std::string, Done done) override { ends.push_back(std::move(done)); }
    void rotate(std::string, PathDone, PathDone) override {}
    void clear(std::string, Done) override {}
    void recordSnapshot(std::string, uint64_t, PathDone) override {}
    void setRotationSchedule(std::string, RotationSchedule, PathDone, PathDone,
                             Done done) override {
        done(std::nullopt);
    }
    std::deque<Done> starts, resumes, ends;
    bool active = false;
    int endings = 0;
};

/// Session "s" with channel0, driving `domains` and recording into `recorder`.
std::unique_ptr<Session> recordedSession(std::vector<DomainBackend*> domains,
                                         SessionRecorder& recorder) {
    SessionConfig c;
    c.name = "s";
    c.owner = 1000;
    c.outputPath = "/tmp/s";
    auto s = std::make_unique<Session>(SessionId::random(), c, std::chrono::system_clock::now(),
                                       std::move(domains), &recorder);
    ChannelConfig ch;
    ch.name = "channel0";
    s->addChannel(ch);
    return s;
}

} // namespace

// The recording is what the domains' channels go into: it starts before
// any domain is asked, and ends only once every domain closed its own.
TEST(SessionRecording, StartsBeforeTheDomainsAndEndsAfterThem) {
    FakeDomain ust("ust"), kernel("kernel");
    OrderedRecorder recorder;
    auto owned = recordedSession({&ust, &kernel}, recorder);
    Session& s = *owned;
    Outcome started;
    s.start(started.done());
    ASSERT_EQ(recorder.starts.size(), 1u);
    EXPECT_TRUE(ust.starts.empty() && kernel.starts.empty()) << "a domain started first";
    FakeDomain::answer(recorder.starts);
    ASSERT_EQ(ust.starts.size(), 1u);
    ASSERT_EQ(kernel.starts.size(), 1u);
    EXPECT_FALSE(recorder.active);
    FakeDomain::answer(ust.starts);
    FakeDomain::answer(kernel.starts);
    ASSERT_TRUE(started.answered);
    EXPECT_TRUE(recorder.active) << "an active session's schedule must tick";

    Outcome stopped;
    s.stop(stopped.done());
    EXPECT_FALSE(recorder.active) << "a stopping session rotates on its schedule no more";
    FakeDomain::answer(ust.stops);
    FakeDomain::answer(kernel.stops);
    ASSERT_TRUE(stopped.answered);

    Outcome destroyed;
    s.destroy(destroyed.done());
    EXPECT_EQ(recorder.endings, 1) << "not told before the domains close their channels";
    FakeDomain::answer(ust.destroys);
    EXPECT_TRUE(recorder.ends.empty()) << "ended before the kernel closed its channels";
    FakeDomain::answer(kernel.destroys);
    ASSERT_EQ(recorder.ends.size(), 1u);
    EXPECT_FALSE(destroyed.answered);
    FakeDomain::answer(recorder.ends, Error(ErrorCode::RelayUnavailable, "relay gone"));
    ASSERT_TRUE(destroyed.answered);
    EXPECT_EQ(destroyed.code(), ErrorCode::RelayUnavailable);
}

TEST(SessionRecording, ARecordingThatCannotStartStartsNoDomain) {
    FakeDomain ust("ust");
    OrderedRecorder recorder;
    auto owned = recordedSession({&ust}, recorder);
    Session& s = *owned;
    Outcome started;
    s.start(started.done());
    FakeDomain::answer(recorder.starts, Error(ErrorCode::Failed, "no consumer"));
    ASSERT_TRUE(started.answered);
    EXPECT_EQ(started.code(), ErrorCode::Failed);
    EXPECT_TRUE(ust.starts.empty());
    EXPECT_EQ(s.state(), SessionState::Created);
    EXPECT_EQ(s.operation(), SessionOperation::None);
}

TEST(SessionRecording, ADomainThatRefusesTheStartStopsItBeforeAnythingIsMade) {
    struct Refusing final : DomainBackend {
        std::string_view name() const noexcept override { return "ust"; }
        std::optional<Error> refuseStart(const SessionSnapshot&) override {
            return Error(ErrorCode::InvalidArgument, "ring buffers too big");
        }
        void start(SessionSnapshot, Done) override { ADD_FAILURE() << "started"; }
        void stop(std::string, Done done) override { done(std::nullopt); }
        void destroy(std::string, Done done) override { done(std::nullopt); }
        void enableEvents(std::string, EventRule, bool, Done done) override { done(std::nullopt); }
        void setEventRulesEnabled(std::string, std::vector<EventRule>, bool, Done done) override {
            done(std::nullopt);
        }
        void setChannelEnabled(std::string, TracingDomain, std::string, bool, Done done) override {
            done(std::nullopt);
        }
        void setProcessTrackers(std::string, ProcessTrackers, bool, Done done) override {
            done(std::nullopt);
        }
    } refusing;
    OrderedRecorder recorder;
    auto owned = recordedSession({&refusing}, recorder);
    Session& s = *owned;
    try {
        s.start([](std::optional<Error>) { ADD_FAILURE() << "answered"; });
        ADD_FAILURE() << "not refused";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    }
    EXPECT_TRUE(recorder.starts.empty()) << "a consumer was started for a refused session";
    EXPECT_EQ(s.operation(), SessionOperation::None);
}
