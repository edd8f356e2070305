#include "common/error.hpp"
#include "session.hpp"

#include <gtest/gtest.h>

using namespace tracectl;

namespace {

Session makeSession() {
    SessionConfig c;
    c.name = "s";
    c.owner = 1000;
    c.outputPath = "/tmp/s";
    return Session(SessionId::random(), c, std::chrono::system_clock::now());
}

ErrorCode failureOf(void (Session::*transition)(), Session& s) {
    try {
        (s.*transition)();
    } catch (const Error& e) {
        return e.code();
    }
    ADD_FAILURE() << "transition accepted in state " << toString(s.state());
    return ErrorCode::Failed;
}

} // namespace

TEST(Session, StartsInCreated) {
    EXPECT_EQ(makeSession().state(), SessionState::Created);
}

TEST(Session, FollowsTheLifeCycle) {
    Session s = makeSession();
    s.start();
    EXPECT_EQ(s.state(), SessionState::Active);
    s.stop();
    EXPECT_EQ(s.state(), SessionState::Stopped);
    s.start();
    EXPECT_EQ(s.state(), SessionState::Active);
}

TEST(Session, RefusesTransitionsThatDoNotFitAndKeepsItsState) {
    Session s = makeSession();
    EXPECT_EQ(failureOf(&Session::stop, s), ErrorCode::WrongState);
    EXPECT_EQ(s.state(), SessionState::Created);
    s.start();
    EXPECT_EQ(failureOf(&Session::start, s), ErrorCode::WrongState);
    EXPECT_EQ(s.state(), SessionState::Active);
    s.stop();
    EXPECT_EQ(failureOf(&Session::stop, s), ErrorCode::WrongState);
    EXPECT_EQ(s.state(), SessionState::Stopped);
}

TEST(SessionId, FormatsAsHexAndUuid) {
    const SessionId id = SessionId::random();
    const std::string hex = id.hex();
    const std::string uuid = id.uuid();
    ASSERT_EQ(hex.size(), 32u);
    ASSERT_EQ(uuid.size(), 36u);
    std::string stripped;
    for (char c : uuid)
        if (c != '-')
            stripped += c;
    EXPECT_EQ(stripped, hex);
    EXPECT_EQ(uuid[14], '4'); // RFC 4122 version 4
    SessionId parsed = SessionId::random();
    ASSERT_TRUE(SessionId::fromHex(hex, parsed));
    EXPECT_EQ(parsed, id);
    EXPECT_FALSE(SessionId::fromHex("xyz", parsed));
    EXPECT_FALSE(SessionId::fromHex(std::string(32, 'g'), parsed));
}

TEST(SessionId, IsRandom) {
    EXPECT_FALSE(SessionId::random() == SessionId::random());
}
