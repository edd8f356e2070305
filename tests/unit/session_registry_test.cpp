#include "common/error.hpp"
#include "session/session_registry.hpp"
#include "session/channel_config.hpp"

#include <gtest/gtest.h>

using namespace tracectl;

namespace {

SessionRegistry makeRegistry() {
    return SessionRegistry([](uid_t uid) -> std::optional<std::string> {
        if (uid == 4242)
            return std::nullopt;
        return "/home/u" + std::to_string(uid);
    });
}

SessionRequest named(std::string name) {
    SessionRequest r;
    r.name = std::move(name);
    return r;
}

ErrorCode failureOf(SessionRegistry& reg, const SessionRequest& req, uid_t owner) {
    try {
        reg.create(req, owner);
    } catch (const Error& e) {
        return e.code();
    }
    ADD_FAILURE() << "created " << req.name;
    return ErrorCode::Failed;
}

} // namespace

TEST(SessionRegistry, CreatesWithDefaults) {
    auto reg = makeRegistry();
    Session& s = reg.create(named("s1"), 1000);
    EXPECT_EQ(s.config().owner, 1000u);
    EXPECT_EQ(s.config().mode, SessionMode::Normal);
    EXPECT_EQ(s.config().bufferOwnership, BufferOwnership::PerUid);
    EXPECT_EQ(s.config().outputPath.rfind("/home/u1000/lttng-traces/s1-", 0), 0u)
        << s.config().outputPath;
    EXPECT_EQ(reg.findByName(1000, "s1"), &s);
    EXPECT_EQ(reg.findById(s.id()), &s);
}

TEST(SessionRegistry, NamesAreUniquePerOwner) {
    auto reg = makeRegistry();
    reg.create(named("s"), 1000);
    EXPECT_EQ(failureOf(reg, named("s"), 1000), ErrorCode::SessionExists);
    EXPECT_NO_THROW(reg.create(named("s"), 1001));
    EXPECT_EQ(reg.size(), 2u);
}

TEST(SessionRegistry, RejectsBadRequestsAndKeepsNothing) {
    auto reg = makeRegistry();
    EXPECT_EQ(failureOf(reg, named("a/b"), 1000), ErrorCode::InvalidName);
    SessionRequest mode = named("m");
    mode.mode = "flight";
    EXPECT_EQ(failureOf(reg, mode, 1000), ErrorCode::InvalidArgument);
    SessionRequest buffers = named("b");
    buffers.bufferOwnership = "per-cpu";
    EXPECT_EQ(failureOf(reg, buffers, 1000), ErrorCode::InvalidArgument);
    SessionRequest out = named("o");
    out.outputPath = "../escape";
    EXPECT_EQ(failureOf(reg, out, 1000), ErrorCode::InvalidArgument);
    EXPECT_EQ(failureOf(reg, named("nohome"), 4242), ErrorCode::InvalidArgument);
    EXPECT_EQ(reg.size(), 0u);
}

// A live timer below a millisecond is refused, saying the floor, as the
// channels' timers are (issue 40 B11's class: the consumer flushes every
// stream each period, and at 1 µs it would use a whole core).
TEST(SessionRegistry, ALiveTimerBelowOneMillisecondIsRefused) {
    auto reg = makeRegistry();
    SessionRequest live = named("lv");
    live.mode = "live";
    live.liveTimerUs = 1;
    try {
        reg.create(live, 1000);
        ADD_FAILURE() << "1 µs accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
        EXPECT_NE(std::string(e.what()).find("from 1000 to 4294967295 µs, not 1 µs"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(reg.size(), 0u);
    live.liveTimerUs = kMinTimerUs;
    EXPECT_EQ(reg.create(live, 1000).config().liveTimerUs, kMinTimerUs);
}

TEST(SessionRegistry, KeepsExplicitOutputAndMode) {
    auto reg = makeRegistry();
    SessionRequest r = named("snap");
    r.outputPath = "/var/tmp/x/";
    r.mode = "normal";
    Session& s = reg.create(r, 1000);
    EXPECT_EQ(s.config().outputPath, "/var/tmp/x");
    EXPECT_EQ(s.config().mode, SessionMode::Normal);
    SessionRequest snap = named("snap2");
    snap.mode = "snapshot";
    EXPECT_EQ(reg.create(snap, 1000).config().mode, SessionMode::Snapshot);
}

// lttng create --snapshot --set-url: a snapshot session whose snapshots go
// to a relay, with no local output folder.
TEST(SessionRegistry, ASnapshotSessionMayHaveANetworkOutput) {
    auto reg = makeRegistry();
    SessionRequest r = named("net-snap");
    r.mode = "snapshot";
    r.url = "net://127.0.0.1:5342:5343";
    const Session& s = reg.create(r, 1000);
    EXPECT_EQ(s.config().mode, SessionMode::Snapshot);
    ASSERT_TRUE(s.config().relay.has_value());
    EXPECT_EQ(s.config().relay->url(), "net://127.0.0.1:5342:5343");
    EXPECT_EQ(s.config().outputPath, "");
}

TEST(SessionRegistry, ListsWhatAViewerMaySeeInCreationOrder) {
    auto reg = makeRegistry();
    Session& a = reg.create(named("a"), 1000);
    Session& b = reg.create(named("b"), 1001);
    Session& c = reg.create(named("c"), 1000);
    EXPECT_EQ(reg.visibleTo(1000, false), (std::vector<Session*>{&a, &c}));
    EXPECT_EQ(reg.visibleTo(1001, false), (std::vector<Session*>{&b}));
    EXPECT_EQ(reg.visibleTo(0, true), (std::vector<Session*>{&a, &b, &c}));
}

TEST(SessionRegistry, RemoveHandsTheSessionOver) {
    auto reg = makeRegistry();
    const SessionId id = reg.create(named("a"), 1000).id();
    auto removed = reg.remove(id);
    ASSERT_NE(removed, nullptr);
    EXPECT_EQ(removed->config().name, "a");
    EXPECT_EQ(reg.findByName(1000, "a"), nullptr);
    EXPECT_EQ(reg.remove(id), nullptr);
    EXPECT_NO_THROW(reg.create(named("a"), 1000)); // the name is free again
}

TEST(SessionRegistry, BoundsSessionsPerOwner) {
    auto reg = makeRegistry();
    for (std::size_t i = 0; i < kMaxSessionsPerOwner; ++i)
        reg.create(named("s" + std::to_string(i)), 1000);
    EXPECT_EQ(failureOf(reg, named("one-more"), 1000), ErrorCode::LimitExceeded);
    EXPECT_NO_THROW(reg.create(named("other-user"), 1001));
}

TEST(SessionRegistry, TellsTheDefaultOutputPathCreateWouldChoose) {
    auto reg = makeRegistry();
    const std::string path = reg.defaultOutputPathOf(1000, "s1");
    EXPECT_EQ(path.rfind("/home/u1000/lttng-traces/s1-", 0), 0u) << path;
    EXPECT_EQ(path.size(), std::string("/home/u1000/lttng-traces/s1-YYYYmmdd-HHMMSS").size());
    EXPECT_EQ(reg.size(), 0u); // nothing made
    const auto codeOf = [&](uid_t owner, const std::string& name) {
        try {
            reg.defaultOutputPathOf(owner, name);
        } catch (const Error& e) {
            return e.code();
        }
        return ErrorCode::Failed;
    };
    EXPECT_EQ(codeOf(1000, "a/b"), ErrorCode::InvalidName);
    EXPECT_EQ(codeOf(4242, "s1"), ErrorCode::InvalidArgument); // no home folder
}
