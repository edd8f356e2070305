// PolkitAuthority (src/daemon/auth/polkit_authority.cpp) against a stand-in
// for polkitd: a direct peer-to-peer sd-bus connection over a socketpair
// (sd_bus_set_server(3)) serving CheckAuthorization, whose calls the test
// answers when it chooses. Both ends are pumped from the test's thread.
// What is checked: checks of one sender and action made while one is in
// flight share its answer instead of each asking polkitd (a client
// pipelining many first calls made the daemon exhaust the bus's pending
// replies towards polkitd, failing everyone's checks); at most
// kMaxQuestionsInFlight questions are in flight, the others wait in order
// (many connections did the same); a caller that leaves the bus while polkitd
// is still deciding (forget() before the answer) leaves nothing cached behind, for each kind of
// answer; without that, every client that hangs up during its first call (held by the
// VisibilityGate) left entries that nothing removed.
#include "auth/polkit_authority.hpp"
#include "bus_message_test_support.hpp"

#include <chrono>
#include <functional>
#include <gtest/gtest.h>
#include <optional>
#include <sys/socket.h>
#include <systemd/sd-id128.h>
#include <vector>

using namespace tracectl;
using namespace tracectl::bus::test;

namespace {

constexpr const char* kSender = ":1.42";

/// polkitd's answer: CheckAuthorization -> (is_authorized b, is_challenge b, details a{ss}).
struct Answer {
    bool authorized;
    bool challenge;
};

/// The calls the stand-in polkitd received and has not answered yet.
using Pending = std::vector<bus::MessagePtr>;

int onCheckAuthorization(sd_bus_message* m, void* userdata, sd_bus_error*) {
    static_cast<Pending*>(userdata)->emplace_back(sd_bus_message_ref(m));
    return 1; // answered later, by the test
}

const sd_bus_vtable kPolkitVtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("CheckAuthorization", "(sa{sv})sa{ss}us", "(bba{ss})", &onCheckAuthorization,
                  SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_VTABLE_END,
};

class PolkitAuthorityTest : public ::testing::Test {
protected:
    void SetUp() override {
        ConnectedPeers peers = connectedPeers();
        polkitd_ = std::move(peers.server);
        daemon_ = std::move(peers.client);
        sd_bus_slot* slot = nullptr;
        ASSERT_GE(sd_bus_add_object_vtable(
                      polkitd_.get(), &slot, "/org/freedesktop/PolicyKit1/Authority",
                      "org.freedesktop.PolicyKit1.Authority", kPolkitVtable, &pending_),
                  0);
        vtable_.reset(slot);
    }

    void TearDown() override {
        vtable_.reset();
        pending_.clear();
    }

    /// Processes both ends until `done()` holds; false after 5 s.
    bool pumpUntil(const std::function<bool()>& done) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (!done()) {
            if (std::chrono::steady_clock::now() > deadline)
                return false;
            int worked = 0;
            for (sd_bus* b : {polkitd_.get(), daemon_.get()}) {
                const int r = sd_bus_process(b, nullptr);
                if (r < 0)
                    return false;
                worked += r;
            }
            if (worked == 0)
                sd_bus_wait(daemon_.get(), 1000);
        }
        return true;
    }

    /// Answers the oldest unanswered CheckAuthorization.
    void answer(Answer a) {
        ASSERT_FALSE(pending_.empty());
        bus::MessagePtr call = std::move(pending_.front());
        pending_.erase(pending_.begin());
        ASSERT_GE(sd_bus_reply_method_return(call.get(), "(bba{ss})", a.authorized ? 1 : 0,
                                             a.challenge ? 1 : 0, 0),
                  0);
    }

    /// check() for kSender, answered with `a`; `forgetFirst`: the sender
    /// leaves the bus between the question and the answer. Returns whether
    /// `done` ran, with the outcome in `outcome`.
    bool checkAnswered(auth::PolkitAuthority& authority, Answer a, bool forgetFirst,
                       std::optional<std::optional<sdbus::Error>>& outcome) {
        authority.check(auth::Caller{kSender, 1002}, auth::Action::ManageAllSessions, false,
                        [&outcome](std::optional<sdbus::Error> e) { outcome = std::move(e); });
        if (!pumpUntil([this] { return !pending_.empty(); }))
            return false;
        if (forgetFirst)
            authority.forget(kSender);
        answer(a);
        return pumpUntil([&outcome] { return outcome.has_value(); });
    }

    UnconnectedBusPtr polkitd_;
    UnconnectedBusPtr daemon_;
    bus::SlotPtr vtable_;
    Pending pending_;
};

TEST_F(PolkitAuthorityTest, AnswersAreCachedWhileTheSenderStays) {
    for (const Answer a : {Answer{true, false}, Answer{false, false}, Answer{false, true}}) {
        auth::PolkitAuthority authority(daemon_.get());
        std::optional<std::optional<sdbus::Error>> outcome;
        ASSERT_TRUE(checkAnswered(authority, a, false, outcome));
        EXPECT_EQ(outcome->has_value(), !a.authorized);
        EXPECT_EQ(authority.cachedForReading(kSender, auth::Action::ManageAllSessions),
                  std::optional<bool>(a.authorized))
            << a.authorized << a.challenge;
        authority.forget(kSender);
        EXPECT_EQ(authority.cacheSize() + authority.quietChallengeCount(), 0u);
    }
}

TEST_F(PolkitAuthorityTest, AnswerForASenderThatLeftMeanwhileIsNotCached) {
    for (const Answer a : {Answer{true, false}, Answer{false, false}, Answer{false, true}}) {
        auth::PolkitAuthority authority(daemon_.get());
        std::optional<std::optional<sdbus::Error>> outcome;
        ASSERT_TRUE(checkAnswered(authority, a, true, outcome));
        // The call still gets its answer...
        EXPECT_EQ(outcome->has_value(), !a.authorized);
        // ...but nothing stays about a name that will never call again.
        EXPECT_EQ(authority.cachedForReading(kSender, auth::Action::ManageAllSessions),
                  std::nullopt)
            << a.authorized << a.challenge;
        EXPECT_EQ(authority.cacheSize(), 0u);
        EXPECT_EQ(authority.quietChallengeCount(), 0u);
    }
}

TEST_F(PolkitAuthorityTest, ChecksOfOneSenderAndActionInFlightShareOneQuestion) {
    auth::PolkitAuthority authority(daemon_.get());
    const auth::Caller caller{kSender, 1002};
    constexpr int kCalls = 50;
    std::vector<std::optional<std::optional<sdbus::Error>>> outcomes(kCalls);
    for (auto& outcome : outcomes)
        authority.check(caller, auth::Action::ManageAllSessions, false,
                        [&outcome](std::optional<sdbus::Error> e) { outcome = std::move(e); });
    // Another action, and an interactive check, are questions of their own.
    std::optional<std::optional<sdbus::Error>> other;
    authority.check(caller, auth::Action::TraceAllUsers, false,
                    [&other](std::optional<sdbus::Error> e) { other = std::move(e); });
    std::optional<std::optional<sdbus::Error>> interactive;
    authority.check(caller, auth::Action::ManageAllSessions, true,
                    [&interactive](std::optional<sdbus::Error> e) { interactive = std::move(e); });
    ASSERT_TRUE(pumpUntil([this] { return pending_.size() >= 3; }));
    // Whatever else was sent has arrived by now.
    ASSERT_TRUE(pumpUntil([] { return true; }));
    for (int i = 0; i < 20; ++i)
        sd_bus_process(polkitd_.get(), nullptr);
    EXPECT_EQ(pending_.size(), 3u);

    answer(Answer{false, true}); // the first question: a challenge
    ASSERT_TRUE(pumpUntil([&outcomes] {
        for (const auto& o : outcomes)
            if (!o)
                return false;
        return true;
    }));
    for (const auto& o : outcomes) {
        ASSERT_TRUE(o->has_value());
        EXPECT_EQ(o->value().getName(),
                  "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired");
    }
    EXPECT_FALSE(other.has_value());
    EXPECT_FALSE(interactive.has_value());
    answer(Answer{true, false});
    answer(Answer{true, false});
    ASSERT_TRUE(pumpUntil([&] { return other.has_value() && interactive.has_value(); }));
    EXPECT_FALSE(other->has_value());
    EXPECT_FALSE(interactive->has_value());
}

TEST_F(PolkitAuthorityTest, AtMostABoundedNumberOfQuestionsAreInFlight) {
    auth::PolkitAuthority authority(daemon_.get());
    constexpr std::size_t kMax = auth::PolkitAuthority::kMaxQuestionsInFlight;
    constexpr std::size_t kCallers = kMax + 5;
    std::vector<std::optional<std::optional<sdbus::Error>>> outcomes(kCallers);
    for (std::size_t i = 0; i < kCallers; ++i)
        authority.check(
            auth::Caller{":1." + std::to_string(100 + i), 1002}, auth::Action::TraceAllUsers, false,
            [&outcomes, i](std::optional<sdbus::Error> e) { outcomes[i] = std::move(e); });
    ASSERT_TRUE(pumpUntil([this] { return pending_.size() >= kMax; }));
    for (int i = 0; i < 50; ++i) {
        sd_bus_process(daemon_.get(), nullptr);
        sd_bus_process(polkitd_.get(), nullptr);
    }
    EXPECT_EQ(pending_.size(), kMax);
    // Each answer lets one waiting question go, until all were asked.
    std::size_t answered = 0;
    while (answered < kCallers) {
        ASSERT_FALSE(pending_.empty()) << answered << " answered";
        EXPECT_LE(pending_.size(), kMax);
        answer(Answer{true, false});
        ++answered;
        ASSERT_TRUE(pumpUntil([&] { return outcomes[answered - 1].has_value(); })) << answered;
        ASSERT_TRUE(pumpUntil([&] {
            return pending_.size() == std::min(kMax, kCallers - answered);
        })) << answered;
    }
    for (const auto& o : outcomes) {
        ASSERT_TRUE(o.has_value());
        EXPECT_FALSE(o->has_value());
    }
    EXPECT_EQ(authority.cacheSize(), kCallers);
}

TEST_F(PolkitAuthorityTest, WaitingQuestionsOfSendersThatLeftAreNotSent) {
    auth::PolkitAuthority authority(daemon_.get());
    constexpr std::size_t kMax = auth::PolkitAuthority::kMaxQuestionsInFlight;
    constexpr std::size_t kCallers = kMax + 5;
    std::vector<std::optional<std::optional<sdbus::Error>>> outcomes(kCallers);
    const auto sender = [](std::size_t i) { return ":1." + std::to_string(100 + i); };
    for (std::size_t i = 0; i < kCallers; ++i)
        authority.check(
            auth::Caller{sender(i), 1002}, auth::Action::TraceAllUsers, false,
            [&outcomes, i](std::optional<sdbus::Error> e) { outcomes[i] = std::move(e); });
    ASSERT_TRUE(pumpUntil([this] { return pending_.size() >= kMax; }));
    // The five waiting ones hang up (say, clients that sent one call and left).
    for (std::size_t i = kMax; i < kCallers; ++i)
        authority.forget(sender(i));
    answer(Answer{true, false});
    ASSERT_TRUE(pumpUntil([&] { return outcomes[0].has_value(); }));
    // Answered at once, refused, never asked of polkitd.
    for (std::size_t i = kMax; i < kCallers; ++i) {
        ASSERT_TRUE(outcomes[i].has_value()) << i;
        ASSERT_TRUE(outcomes[i]->has_value()) << i;
        EXPECT_NE(outcomes[i]->value().getMessage().find("the caller left the bus"),
                  std::string::npos);
    }
    for (int i = 0; i < 50; ++i) {
        sd_bus_process(daemon_.get(), nullptr);
        sd_bus_process(polkitd_.get(), nullptr);
    }
    EXPECT_EQ(pending_.size(), kMax - 1);
    EXPECT_EQ(authority.cacheSize(), 1u);
}

} // namespace

namespace {

// A polkitd that takes a question and never answers (hung, SIGSTOPped)
// must not hold callers for D-Bus's default 25 s: a question asked without
// interaction fails closed after the authority's quiet timeout.
TEST_F(PolkitAuthorityTest, AnUnansweredQuietQuestionFailsClosedAfterItsTimeout) {
    auth::PolkitAuthority authority(daemon_.get(), std::nullopt, std::chrono::milliseconds(200));
    std::optional<std::optional<sdbus::Error>> outcome;
    const auto begin = std::chrono::steady_clock::now();
    authority.check(auth::Caller{kSender, 1002}, auth::Action::ManageAllSessions, false,
                    [&outcome](std::optional<sdbus::Error> e) { outcome = std::move(e); });
    ASSERT_TRUE(pumpUntil([&outcome] { return outcome.has_value(); }));
    const auto waited = std::chrono::steady_clock::now() - begin;
    ASSERT_TRUE(outcome->has_value());
    EXPECT_EQ(outcome->value().getName(), "org.freedesktop.DBus.Error.AccessDenied");
    EXPECT_GE(waited, std::chrono::milliseconds(150));
    EXPECT_LT(waited, std::chrono::seconds(5));
    EXPECT_EQ(authority.cacheSize(), 0u) << "a timeout is not an answer";
}

} // namespace
