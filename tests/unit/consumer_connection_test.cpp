// ConsumerConnection against a stand-in consumer: the test holds the other
// end of the socketpair and speaks the protocol with the codec, one frame at
// a time, while the connection's loop is pumped on the test thread.
#include "common/consumer_protocol.hpp"
#include "common/event_loop.hpp"
#include "common/executor.hpp"
#include "common/fd_passing.hpp"
#include "recording/consumer_connection.hpp"

#include <chrono>
#include <gtest/gtest.h>
#include <optional>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <system_error>
#include <vector>

using namespace std::chrono_literals;
using tracectl::ConsumerConnection;
using tracectl::Error;
using tracectl::EventLoop;
using tracectl::Executor;
using tracectl::UniqueFd;
namespace cp = tracectl::consumer_protocol;

namespace {

/// Outcome of one request, once its callback ran.
struct Outcome {
    bool called = false;
    std::optional<Error> error;
    ConsumerConnection::Done done() {
        return [this](std::optional<Error> e) {
            EXPECT_FALSE(called) << "a callback ran twice";
            called = true;
            error = std::move(e);
        };
    }
};

class ConsumerConnectionTest : public ::testing::Test {
protected:
    void SetUp() override {
        int sv[2];
        ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        consumer_.reset(sv[1]);
        ConsumerConnection::Handlers h;
        h.rotationCompleted = [this](cp::RotationCompleted d) { completed_.push_back(d); };
        h.lost = [this](const std::string& why) { lost_.push_back(why); };
        h.statistics = [this](cp::Statistics st) { statistics_.push_back(st); };
        h.metadataFailed = [this](const Error& e) { metadataFailed_.push_back(e.what()); };
        conn_.emplace(loop_, executor_, UniqueFd(sv[0]), std::move(h), 200ms);
    }

    /// Runs the loop until `cond` holds (or 5 s pass: a failure).
    template <typename Cond>
    void pumpUntil(Cond cond) {
        const auto deadline = std::chrono::steady_clock::now() + 5s;
        while (!cond()) {
            ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "condition never held";
            ASSERT_GE(sd_event_run(loop_.get(), 10'000), 0);
        }
    }
    /// Runs the loop for `d`, whatever happens.
    void pumpFor(std::chrono::milliseconds d) {
        const auto end = std::chrono::steady_clock::now() + d;
        while (std::chrono::steady_clock::now() < end)
            ASSERT_GE(sd_event_run(loop_.get(), 5'000), 0);
    }
    /// The next request the daemon sent (the loop is pumped until it is written).
    cp::Frame nextRequest() {
        std::optional<cp::Frame> f;
        for (int i = 0; i < 500 && !f; ++i) {
            pumpFor(1ms);
            pollfd p{consumer_.get(), POLLIN, 0};
            if (poll(&p, 1, 0) == 1)
                f = cp::readFrame(consumer_.get());
        }
        if (!f)
            throw std::runtime_error("no request came");
        return std::move(*f);
    }
    void reply(uint32_t request, const cp::Message& m) {
        cp::writeMessage(consumer_.get(), m, request);
    }

    EventLoop loop_;
    Executor executor_{1, "test-objects"};
    UniqueFd consumer_;
    std::vector<cp::RotationCompleted> completed_;
    std::vector<std::string> lost_;
    std::vector<cp::Statistics> statistics_;
    std::vector<std::string> metadataFailed_;
    std::optional<ConsumerConnection> conn_;
};

} // namespace

TEST_F(ConsumerConnectionTest, ARequestGetsTheReplyWithItsOwnId) {
    Outcome flushed;
    conn_->flushChannel(7, flushed.done());
    EXPECT_FALSE(flushed.called) << "never answered from inside the call";
    const cp::Frame req = nextRequest();
    EXPECT_NE(req.request, 0u);
    EXPECT_EQ(req.message, cp::Message(cp::FlushChannel{7}));
    reply(req.request, cp::Ok{});
    pumpUntil([&] { return flushed.called; });
    EXPECT_FALSE(flushed.error);
    EXPECT_EQ(conn_->inFlight(), 0u);
}

TEST_F(ConsumerConnectionTest, ALateReplyIsNotTakenForTheNextRequestsAnswer) {
    Outcome first;
    conn_->flushChannel(1, first.done());
    const cp::Frame r1 = nextRequest();
    // The stand-in consumer stalls: the first request's deadline passes.
    pumpUntil([&] { return first.called; });
    ASSERT_TRUE(first.error);
    EXPECT_NE(std::string(first.error->what()).find("did not answer FlushChannel within 400 ms"),
              std::string::npos)
        << first.error->what();

    Outcome second;
    conn_->destroyChannel(2, second.done());
    const cp::Frame r2 = nextRequest();
    EXPECT_NE(r1.request, r2.request);
    // It wakes up and answers both, the late one first (and differently, so
    // that taking it for the second's answer would show).
    reply(r1.request, cp::ErrorReply{cp::ErrorKind::UnknownChannel, "no channel 1"});
    reply(r2.request, cp::Ok{});
    pumpUntil([&] { return second.called; });
    EXPECT_FALSE(second.error) << second.error->what();
    EXPECT_EQ(conn_->lateReplies(), 1u);
    EXPECT_TRUE(conn_->usable());
    EXPECT_TRUE(lost_.empty());
}

TEST_F(ConsumerConnectionTest, RequestsArePipelinedAndAnsweredInAnyOrderOfArrival) {
    Outcome a, b, c;
    conn_->flushChannel(1, a.done());
    conn_->flushChannel(2, b.done());
    conn_->rotate(cp::Rotate{9, "", "n", "a/b"}, c.done());
    // All three are on the wire before any answer.
    const cp::Frame ra = nextRequest();
    const cp::Frame rb = nextRequest();
    const cp::Frame rc = nextRequest();
    EXPECT_EQ(conn_->inFlight(), 3u);
    reply(rb.request, cp::ErrorReply{cp::ErrorKind::Io, "disk full"});
    reply(rc.request, cp::Ok{});
    reply(ra.request, cp::Ok{});
    pumpUntil([&] { return a.called && b.called && c.called; });
    EXPECT_FALSE(a.error);
    ASSERT_TRUE(b.error);
    EXPECT_NE(std::string(b.error->what()).find("disk full"), std::string::npos);
    EXPECT_FALSE(c.error);
}

// A registration burst (one push per event class) costs the consumer one
// push per channel per round trip: what comes while a push of the channel
// is in flight is held and goes as one, or before any other request, in
// order (issue 40, C13: another app's CreateChannel waited behind 100,000
// pushes).
TEST_F(ConsumerConnectionTest, PushesWhileOneIsInFlightGoAsOneAndBeforeTheNextRequest) {
    Outcome first, second, third;
    conn_->pushMetadata(4, 0, "aa", first.done());
    const cp::Frame r1 = nextRequest();
    EXPECT_EQ(r1.message, cp::Message(cp::PushMetadata{4, 0, "aa"}));
    conn_->pushMetadata(4, 2, "bb", second.done());
    for (int i = 0; i < 100; ++i)
        conn_->enqueueMetadata(4, 4 + i, "c");
    conn_->pushMetadata(4, 104, "dd", third.done());
    // Another channel's metadata is not held behind this one's.
    conn_->enqueueMetadata(5, 0, "other");
    const cp::Frame other = nextRequest();
    EXPECT_EQ(other.message, cp::Message(cp::PushMetadata{5, 0, "other"}));
    reply(other.request, cp::Ok{});
    reply(r1.request, cp::Ok{});
    const cp::Frame r2 = nextRequest();
    EXPECT_EQ(r2.message, cp::Message(cp::PushMetadata{4, 2, "bb" + std::string(100, 'c') + "dd"}));
    pumpUntil([&] { return first.called; });
    EXPECT_FALSE(second.called) << "answered before its bytes were";
    reply(r2.request, cp::Ok{});
    pumpUntil([&] { return second.called && third.called; });
    EXPECT_FALSE(second.error);
    EXPECT_FALSE(third.error);

    // Held bytes go before a request that must find them in the consumer.
    Outcome pushed, rotated;
    conn_->pushMetadata(4, 106, "e", pushed.done());
    const cp::Frame r3 = nextRequest();
    conn_->enqueueMetadata(4, 107, "f");
    conn_->rotate(cp::Rotate{9, "", "n", "a/b"}, rotated.done());
    const cp::Frame r4 = nextRequest();
    EXPECT_EQ(r4.message, cp::Message(cp::PushMetadata{4, 107, "f"}));
    const cp::Frame r5 = nextRequest();
    EXPECT_TRUE(std::holds_alternative<cp::Rotate>(r5.message));
    for (const auto& r : {r3, r4, r5})
        reply(r.request, cp::Ok{});
    pumpUntil([&] { return pushed.called && rotated.called; });
    EXPECT_TRUE(metadataFailed_.empty());
}

// A held push whose connection is lost fails like one in flight.
TEST_F(ConsumerConnectionTest, HeldPushesFailWhenTheConnectionIsLost) {
    Outcome first, held;
    conn_->pushMetadata(4, 0, "aa", first.done());
    (void)nextRequest();
    conn_->pushMetadata(4, 2, "bb", held.done());
    consumer_.reset();
    pumpUntil([&] { return first.called && held.called; });
    ASSERT_TRUE(held.error);
    EXPECT_NE(std::string(held.error->what()).find("lost"), std::string::npos)
        << held.error->what();
}

// A request waiting behind others while the consumer answers steadily is
// not failed at its deadline: the consumer is busy, not stopped (a fresh-user
// pass: a Start of 400 apps' per-PID buffers failed the session with
// "did not answer CreateChannel within 10 s" while the consumer worked
// through them). Once the consumer falls silent, it fails.
TEST_F(ConsumerConnectionTest, ARequestBehindOthersOfABusyConsumerWaitsItsTurn) {
    Outcome waiting;
    conn_->flushChannel(3, waiting.done());
    const cp::Frame r = nextRequest();
    // Busy: something every 50 ms, for four of its 200 ms deadlines (it
    // gets kMaxDeadlineExtensions more, six in all).
    for (int i = 0; i < 16; ++i) {
        cp::writeMessage(consumer_.get(), cp::Statistics{}, 0);
        pumpFor(50ms);
    }
    EXPECT_FALSE(waiting.called) << waiting.error->what();
    // Silent from now on: it fails, saying how long it waited.
    pumpUntil([&] { return waiting.called; });
    ASSERT_TRUE(waiting.error);
    EXPECT_NE(std::string(waiting.error->what()).find("busy"), std::string::npos)
        << waiting.error->what();
    (void)r;
}

TEST_F(ConsumerConnectionTest, AConsumerThatNeverAnswersFailsEachRequestAtItsOwnDeadline) {
    Outcome quick, slow;
    conn_->flushChannel(1, quick.done());
    conn_->shutdown(false, slow.done()); // a long request: kLongRequestFactor times the deadline
    nextRequest();
    nextRequest();
    pumpUntil([&] { return quick.called; });
    EXPECT_FALSE(slow.called);
    pumpUntil([&] { return slow.called; });
    ASSERT_TRUE(slow.error);
    EXPECT_NE(std::string(slow.error->what()).find("Shutdown within 400 ms"), std::string::npos)
        << slow.error->what();
    EXPECT_TRUE(conn_->usable()); // silence alone is the owner's to judge
}

TEST_F(ConsumerConnectionTest, AHangUpFailsEveryRequestInFlightAndLaterOnes) {
    Outcome a, b;
    conn_->flushChannel(1, a.done());
    conn_->pushMetadata(2, 0, "/* CTF 1.8 */", b.done());
    nextRequest();
    nextRequest();
    consumer_.reset(); // the consumer died
    pumpUntil([&] { return a.called && b.called; });
    ASSERT_TRUE(a.error);
    ASSERT_TRUE(b.error);
    EXPECT_NE(std::string(a.error->what()).find("closed its connection"), std::string::npos);
    ASSERT_EQ(lost_.size(), 1u);
    EXPECT_FALSE(conn_->usable());
    Outcome later;
    conn_->flushChannel(3, later.done());
    EXPECT_FALSE(later.called);
    pumpUntil([&] { return later.called; });
    ASSERT_TRUE(later.error);
    EXPECT_EQ(lost_.size(), 1u);
}

TEST_F(ConsumerConnectionTest, UnsolicitedRotationCompletedGoesToItsHandler) {
    Outcome rotated;
    conn_->rotate(cp::Rotate{4, "", "n", "a/b"}, rotated.done());
    const cp::Frame r = nextRequest();
    reply(r.request, cp::Ok{});
    reply(0, cp::RotationCompleted{4, true, ""});
    pumpUntil([&] { return completed_.size() == 1; });
    EXPECT_TRUE(rotated.called);
    EXPECT_EQ(completed_[0].id, 4u);
}

TEST_F(ConsumerConnectionTest, UnsolicitedStatisticsGoToTheirHandlerBeforeTheReplyTheyPrecede) {
    Outcome flushed;
    conn_->flushChannel(3, flushed.done());
    const cp::Frame r = nextRequest();
    const cp::Statistics figures{42, {cp::ChannelFigures{3, 10, 1, 0, 4096, 4096}}};
    reply(0, figures);
    reply(r.request, cp::Ok{});
    pumpUntil([&] { return flushed.called; });
    // Read in order: the figures were there when the Ok was told.
    ASSERT_EQ(statistics_.size(), 1u);
    EXPECT_EQ(statistics_[0], figures);
    EXPECT_TRUE(conn_->usable());
}

TEST_F(ConsumerConnectionTest, QueuedLayoutsTheConsumerRefusesFailNothingElse) {
    // As the notify thread queues them with a registration's metadata.
    conn_->enqueueLayouts(cp::DeclareLayouts{5, cp::LayoutAbi{}, "x"});
    conn_->enqueueMetadata(6, 0, "/* CTF */");
    const cp::Frame layouts = nextRequest();
    EXPECT_TRUE(std::holds_alternative<cp::DeclareLayouts>(layouts.message));
    const cp::Frame metadata = nextRequest();
    EXPECT_TRUE(std::holds_alternative<cp::PushMetadata>(metadata.message));
    reply(layouts.request, cp::ErrorReply{cp::ErrorKind::InvalidArgument, "layouts refused"});
    reply(metadata.request, cp::ErrorReply{cp::ErrorKind::Io, "disk full"});
    pumpUntil([&] { return !metadataFailed_.empty(); });
    pumpFor(50ms);
    // The metadata's failure is told (it fails the session); the layouts'
    // is only logged: the statistics miss a count, the trace nothing.
    ASSERT_EQ(metadataFailed_.size(), 1u);
    EXPECT_NE(metadataFailed_[0].find("disk full"), std::string::npos) << metadataFailed_[0];
    EXPECT_TRUE(conn_->usable());
}

TEST_F(ConsumerConnectionTest, AReplyToARequestNeverSentBreaksTheConnection) {
    Outcome a;
    conn_->flushChannel(1, a.done());
    const cp::Frame r = nextRequest();
    reply(r.request + 1000, cp::Ok{});
    pumpUntil([&] { return !lost_.empty(); });
    EXPECT_NE(lost_[0].find("not in flight"), std::string::npos) << lost_[0];
    EXPECT_TRUE(a.called);
    EXPECT_TRUE(a.error);
}

TEST_F(ConsumerConnectionTest, ARefusedCreateChannelFailsAndClosesItsObjectsSocket) {
    bool called = false;
    std::optional<Error> error;
    cp::CreateChannel req;
    req.key = 5;
    req.kind = cp::ChannelKind::Metadata;
    req.outputDir = "ust/uid/0/64-bit";
    req.name = "metadata";
    req.subbufSize = 4096;
    req.subbufCount = 2;
    conn_->createChannel(req, [&](std::optional<Error> e, tracectl::ConsumerChannel) {
        called = true;
        error = std::move(e);
    });
    const cp::Frame r = nextRequest();
    EXPECT_EQ(r.message, cp::Message(req));
    // The objects socket follows on one byte.
    std::byte marker{};
    std::vector<UniqueFd> fds;
    ASSERT_EQ(tracectl::recvExactWithFds(consumer_.get(), std::span<std::byte>(&marker, 1), fds, 1),
              1u);
    ASSERT_EQ(fds.size(), 1u);
    fds.clear(); // closed unused, as a consumer that refuses does
    reply(r.request, cp::ErrorReply{cp::ErrorKind::InvalidArgument, "bad geometry"});
    pumpUntil([&] { return called; });
    ASSERT_TRUE(error);
    EXPECT_NE(std::string(error->what()).find("bad geometry"), std::string::npos);
    EXPECT_TRUE(conn_->usable());
}

TEST_F(ConsumerConnectionTest, AdoptDropsWhatTheConsumerStillHadForThePreviousDaemon) {
    std::optional<cp::AdoptReply> adopted;
    std::optional<Error> adoptError;
    bool called = false;
    conn_->adopt("9.9", [&](std::optional<Error> e, cp::AdoptReply r) {
        called = true;
        adoptError = std::move(e);
        adopted = r;
    });
    const cp::Frame req = nextRequest();
    EXPECT_EQ(req.message, cp::Message(cp::Adopt{cp::kVersion, "9.9"}));
    // Ids far from the ones a previous daemon used (from 1 on).
    EXPECT_GE(req.request, 0x80000000u);
    // Answers meant for the previous daemon, queued before the reply: its
    // requests 1 and 2, figures and a rotation of its own.
    reply(1, cp::Ok{});
    reply(2, cp::ErrorReply{cp::ErrorKind::UnknownChannel, "no channel 3"});
    reply(0, cp::Statistics{5, {}});
    reply(0, cp::RotationCompleted{1, true, ""});
    const cp::AdoptReply answer{cp::kVersion, 77, "9.9", 12, 2, "20261204T203000+0000-2",
                                1796162300,   4,  ""};
    reply(req.request, answer);
    pumpUntil([&] { return called; });
    EXPECT_FALSE(adoptError);
    EXPECT_EQ(adopted, answer);
    EXPECT_TRUE(statistics_.empty());
    EXPECT_TRUE(completed_.empty());
    EXPECT_TRUE(lost_.empty());
    EXPECT_TRUE(conn_->usable());
    // From then on, as any connection: an unknown id breaks it.
    reply(3, cp::Ok{});
    pumpUntil([&] { return !lost_.empty(); });
}

TEST_F(ConsumerConnectionTest, AdoptAnsweredWithAnErrorFailsWithTheConsumersWords) {
    std::optional<Error> adoptError;
    bool called = false;
    conn_->adopt("9.9", [&](std::optional<Error> e, cp::AdoptReply) {
        called = true;
        adoptError = std::move(e);
    });
    const cp::Frame req = nextRequest();
    reply(req.request, cp::ErrorReply{cp::ErrorKind::InvalidArgument,
                                      "a snapshot session's consumer cannot be taken over"});
    pumpUntil([&] { return called; });
    ASSERT_TRUE(adoptError);
    EXPECT_NE(std::string(adoptError->what()).find("cannot be taken over"), std::string::npos);
}
