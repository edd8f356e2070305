#include "common/error.hpp"
#include "session/context_type.hpp"
#include "session/session.hpp"

#include <gtest/gtest.h>
#include <set>

using namespace tracectl;

namespace {

Session makeSession() {
    SessionConfig c;
    c.name = "s";
    c.owner = 1000;
    c.outputPath = "/tmp/s";
    return Session(SessionId::random(), c, std::chrono::system_clock::now());
}

/// Starts `s` with no domain (answered at once), with channel0 first if it
/// has no channel (Start refuses a session without any).
void start(Session& s) {
    if (s.channels().empty() && !s.everStarted()) {
        ChannelConfig c;
        c.name = std::string(kDefaultChannelName);
        s.addChannel(c);
    }
    bool answered = false;
    s.start([&](std::optional<Error> e) {
        answered = true;
        EXPECT_FALSE(e.has_value());
    });
    EXPECT_TRUE(answered);
}

void stop(Session& s) {
    bool answered = false;
    s.stop([&](std::optional<Error> e) {
        answered = true;
        EXPECT_FALSE(e.has_value());
    });
    EXPECT_TRUE(answered);
}

void startCall(Session& s) {
    s.start([](std::optional<Error>) { ADD_FAILURE() << "answered"; });
}

void stopCall(Session& s) {
    s.stop([](std::optional<Error>) { ADD_FAILURE() << "answered"; });
}

ErrorCode failureOf(void (*transition)(Session&), Session& s) {
    try {
        transition(s);
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

TEST(Session, TracesOnlyItsOwnersAppsUntilGrantedAllUsers) {
    Session s = makeSession();
    EXPECT_FALSE(s.tracesAllUsers());
    EXPECT_TRUE(s.traceAllUsers()); // new
    EXPECT_TRUE(s.tracesAllUsers());
    EXPECT_FALSE(s.traceAllUsers()); // already so: nothing to announce
    EXPECT_TRUE(s.tracesAllUsers());

    SessionConfig c;
    c.name = "r";
    c.owner = 0;
    c.outputPath = "/tmp/r";
    Session root(SessionId::random(), c, std::chrono::system_clock::now());
    EXPECT_TRUE(root.tracesAllUsers());
    EXPECT_FALSE(root.traceAllUsers());
}

TEST(Session, FollowsTheLifeCycle) {
    Session s = makeSession();
    start(s);
    EXPECT_EQ(s.state(), SessionState::Active);
    stop(s);
    EXPECT_EQ(s.state(), SessionState::Stopped);
    start(s);
    EXPECT_EQ(s.state(), SessionState::Active);
}

TEST(Session, RefusesTransitionsThatDoNotFitAndKeepsItsState) {
    Session s = makeSession();
    EXPECT_EQ(failureOf(&stopCall, s), ErrorCode::WrongState);
    EXPECT_EQ(s.state(), SessionState::Created);
    start(s);
    EXPECT_EQ(failureOf(&startCall, s), ErrorCode::WrongState);
    EXPECT_EQ(s.state(), SessionState::Active);
    stop(s);
    EXPECT_EQ(failureOf(&stopCall, s), ErrorCode::WrongState);
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

namespace {

Session makeSession(SessionMode mode) {
    SessionConfig c;
    c.name = "s";
    c.owner = 1000;
    c.outputPath = "/tmp/s";
    c.mode = mode;
    return Session(SessionId::random(), c, std::chrono::system_clock::now());
}

template <class F>
ErrorCode codeOf(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.code();
    }
    return ErrorCode::Failed;
}

EventRule rule(std::string channel, std::string pattern) {
    EventRule r;
    r.channel = std::move(channel);
    r.pattern = std::move(pattern);
    return r;
}

} // namespace

TEST(SessionChannels, FirstEnableCreatesChannel0AsLttngDoes) {
    Session s = makeSession(SessionMode::Normal);
    EXPECT_TRUE(s.enableEvents(rule("", "tracectl_demo:*")));
    ASSERT_EQ(s.channels().size(), 1u);
    EXPECT_EQ(s.channels()[0].name, "channel0");
    EXPECT_FALSE(s.channels()[0].overwrite);
    EXPECT_FALSE(s.enableEvents(rule("", "other:*")));
    EXPECT_EQ(s.eventRules().size(), 2u);
    EXPECT_EQ(s.eventRules()[1].channel, "channel0");
}

TEST(SessionChannels, SnapshotSessionsOverwrite) {
    Session s = makeSession(SessionMode::Snapshot);
    s.enableEvents(rule("", "*"));
    EXPECT_TRUE(s.channels()[0].overwrite);
    ChannelConfig discard;
    discard.name = "d";
    EXPECT_EQ(codeOf([&] { s.addChannel(discard); }), ErrorCode::InvalidArgument);
}

TEST(SessionChannels, RejectsBadChannelsAndRules) {
    Session s = makeSession(SessionMode::Normal);
    ChannelConfig c;
    c.name = "mine";
    s.addChannel(c);
    EXPECT_EQ(codeOf([&] { s.addChannel(c); }), ErrorCode::InvalidArgument); // duplicate
    ChannelConfig bad = c;
    bad.name = "x";
    bad.subbufSize = 3000;
    EXPECT_EQ(codeOf([&] { s.addChannel(bad); }), ErrorCode::InvalidArgument);
    bad.subbufSize = 4096;
    bad.subbufCount = 3;
    EXPECT_EQ(codeOf([&] { s.addChannel(bad); }), ErrorCode::InvalidArgument);
    bad.subbufCount = 2;
    bad.name = "../x";
    EXPECT_EQ(codeOf([&] { s.addChannel(bad); }), ErrorCode::InvalidName);
    // With a channel present, channel0 is not made implicitly.
    EXPECT_EQ(codeOf([&] { s.enableEvents(rule("", "*")); }), ErrorCode::InvalidArgument);
    EXPECT_EQ(codeOf([&] { s.enableEvents(rule("nope", "*")); }), ErrorCode::InvalidArgument);
    EXPECT_EQ(codeOf([&] { s.enableEvents(rule("mine", "a*b")); }), ErrorCode::InvalidArgument);
    EXPECT_EQ(codeOf([&] { s.enableEvents(rule("mine", "")); }), ErrorCode::InvalidArgument);
    EXPECT_NO_THROW(s.enableEvents(rule("mine", "prov:ev")));
}

TEST(SessionChannels, NoNewChannelsAfterTheFirstStart) {
    Session s = makeSession(SessionMode::Normal);
    ChannelConfig mine;
    mine.name = "mine";
    s.addChannel(mine);
    start(s);
    ChannelConfig c;
    c.name = "late";
    EXPECT_EQ(codeOf([&] { s.addChannel(c); }), ErrorCode::WrongState);
    // Nor channel0, made by the first rule only before the first start.
    EXPECT_EQ(codeOf([&] { s.enableEvents(rule("", "*")); }), ErrorCode::InvalidArgument);
}

TEST(EventPatterns, MatchLikeLttng) {
    EXPECT_TRUE(patternMatches("*", "a:b"));
    EXPECT_TRUE(patternMatches("prov:*", "prov:ev"));
    EXPECT_FALSE(patternMatches("prov:*", "pro:ev"));
    EXPECT_TRUE(patternMatches("prov:ev", "prov:ev"));
    EXPECT_FALSE(patternMatches("prov:ev", "prov:eve"));
}

TEST(Loglevels, NamesMapToLttngUstNumbers) {
    EXPECT_EQ(loglevelFromName("TRACE_EMERG"), 0);
    EXPECT_EQ(loglevelFromName("info"), 6);
    EXPECT_EQ(loglevelFromName("TRACE_DEBUG_LINE"), 13);
    EXPECT_EQ(loglevelFromName("debug"), 14);
    EXPECT_EQ(loglevelFromName("verbose"), std::nullopt);
    // Numbers too, as tracectl(1) and lttng-enable-event(1) document (the
    // CLI passes them as text: "--loglevel 3" was refused).
    EXPECT_EQ(loglevelFromName("3"), 3);
    EXPECT_EQ(loglevelFromName("0"), 0);
    EXPECT_EQ(loglevelFromName("14"), 14);
    EXPECT_EQ(loglevelFromName("15"), std::nullopt);
    EXPECT_EQ(loglevelFromName("-1"), std::nullopt);
    EXPECT_EQ(loglevelFromName("007"), std::nullopt);
}

TEST(Session, AFailedSessionAcceptsNoStartOrStop) {
    Session s = makeSession();
    start(s);
    s.fail("the consumer died");
    EXPECT_EQ(s.state(), SessionState::Error);
    EXPECT_EQ(toString(s.state()), "error");
    EXPECT_EQ(s.errorReason(), "the consumer died");
    EXPECT_EQ(failureOf(&startCall, s), ErrorCode::WrongState);
    EXPECT_EQ(failureOf(&stopCall, s), ErrorCode::WrongState);
    EXPECT_EQ(s.state(), SessionState::Error);
}

namespace {

ErrorCode addContextFailure(Session& s, const std::string& channel, const std::string& type) {
    try {
        s.addContext(channel, type);
    } catch (const Error& e) {
        return e.code();
    }
    ADD_FAILURE() << "context '" << type << "' accepted on '" << channel << "'";
    return ErrorCode::Failed;
}

} // namespace

TEST(SessionContexts, WithoutChannelsChannel0IsMadeAsLttngDoes) {
    Session s = makeSession();
    EXPECT_TRUE(s.addContext("", "vpid"));
    ASSERT_EQ(s.channels().size(), 1u);
    EXPECT_EQ(s.channels()[0].name, "channel0");
    EXPECT_EQ(s.channels()[0].contexts, std::vector<std::string>{"vpid"});
    EXPECT_FALSE(s.addContext("channel0", "procname"));
    EXPECT_EQ(s.channels()[0].contexts, (std::vector<std::string>{"vpid", "procname"}));
}

TEST(SessionContexts, AnEmptyChannelMeansEveryChannel) {
    Session s = makeSession();
    for (const char* name : {"a", "b"}) {
        ChannelConfig c;
        c.name = name;
        s.addChannel(c);
    }
    EXPECT_FALSE(s.addContext("b", "vtid"));
    EXPECT_FALSE(s.addContext("", "vpid"));
    EXPECT_EQ(s.channels()[0].contexts, std::vector<std::string>{"vpid"});
    EXPECT_EQ(s.channels()[1].contexts, (std::vector<std::string>{"vtid", "vpid"}));
    // "vtid" is on b already: the whole call is refused, a is left alone.
    EXPECT_EQ(addContextFailure(s, "", "vtid"), ErrorCode::InvalidArgument);
    EXPECT_EQ(s.channels()[0].contexts, std::vector<std::string>{"vpid"});
}

TEST(SessionContexts, BadTypesChannelsAndLateCallsAreRefused) {
    Session s = makeSession();
    EXPECT_EQ(addContextFailure(s, "", "perf:cpu:cycles"), ErrorCode::InvalidArgument);
    EXPECT_EQ(addContextFailure(s, "", "VPID"), ErrorCode::InvalidArgument);
    EXPECT_EQ(addContextFailure(s, "", ""), ErrorCode::InvalidArgument);
    EXPECT_TRUE(s.channels().empty()) << "a refused call made channel0";
    EXPECT_EQ(addContextFailure(s, "nope", "vpid"), ErrorCode::InvalidArgument);
    s.addContext("", "vpid");
    EXPECT_EQ(addContextFailure(s, "", "vpid"), ErrorCode::InvalidArgument);
    start(s);
    EXPECT_EQ(addContextFailure(s, "", "vtid"), ErrorCode::WrongState);
}

TEST(SessionContexts, EveryNameMapsToItsOwnUstType) {
    std::set<int> types;
    for (const auto name : contextTypeNames()) {
        const auto type = ustContextType(name);
        ASSERT_TRUE(type) << name;
        EXPECT_TRUE(types.insert(*type).second) << name;
    }
    EXPECT_EQ(ustContextType("vpid"), 1); // LTTNG_UST_ABI_CONTEXT_VPID, lttng/ust-abi.h
    EXPECT_FALSE(ustContextType("perf_thread_counter"));
}

TEST(SessionChannels, AFailedSessionTakesNoNewRules) {
    Session s = makeSession();
    EventRule r;
    r.pattern = "a:*";
    s.enableEvents(r);
    start(s);
    r.pattern = "b:*";
    s.enableEvents(r); // an active session takes rules
    s.fail("consumer gone");
    r.pattern = "c:*";
    try {
        s.enableEvents(r);
        ADD_FAILURE() << "a failed session took a rule";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::WrongState);
    }
    EXPECT_EQ(s.eventRules().size(), 2u);
}

TEST(SessionChannels, RefusesTheMetadataNameExactExclusionsAndHugeBuffers) {
    Session s = makeSession();
    ChannelConfig meta;
    meta.name = "metadata";
    EXPECT_THROW(s.addChannel(meta), Error);
    ChannelConfig huge;
    huge.name = "huge";
    huge.subbufSize = 1ull << 32;
    huge.subbufCount = 1ull << 20;
    try {
        s.addChannel(huge);
        ADD_FAILURE() << "a channel bigger than the machine was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
        EXPECT_NE(std::string(e.what()).find("more than half of this machine's memory"),
                  std::string::npos);
    }
    EXPECT_TRUE(s.channels().empty());
    EventRule exact;
    exact.pattern = "a:b";
    exact.exclusions = {"a:c"};
    EXPECT_THROW(s.enableEvents(exact), Error);
    exact.pattern = "a:*";
    EXPECT_TRUE(s.enableEvents(exact));
}

TEST(SessionChannels, TheSameRuleTwiceIsRefusedAsLttngDoes) {
    Session s = makeSession(SessionMode::Normal);
    ChannelConfig other;
    other.name = "other";
    s.addChannel(other);
    ChannelConfig c0;
    c0.name = "channel0";
    s.addChannel(c0);
    EXPECT_FALSE(s.enableEvents(rule("", "tracectl_demo:*")));
    // "" is channel0: the same rule, however the channel is spelt.
    for (const char* channel : {"", "channel0"}) {
        try {
            s.enableEvents(rule(channel, "tracectl_demo:*"));
            ADD_FAILURE() << "the same rule was taken twice (channel '" << channel << "')";
        } catch (const Error& e) {
            EXPECT_EQ(e.code(), ErrorCode::EventRuleExists);
            EXPECT_EQ(std::string(e.what()),
                      "session 's' already has the event rule 'tracectl_demo:*' in channel "
                      "'channel0'");
        }
    }
    EXPECT_EQ(s.eventRules().size(), 1u);
    // Another channel, pattern, log level or set of exclusions is another rule.
    EXPECT_NO_THROW(s.enableEvents(rule("other", "tracectl_demo:*")));
    EXPECT_NO_THROW(s.enableEvents(rule("", "tracectl_demo:tick")));
    EventRule r = rule("", "tracectl_demo:*");
    r.loglevelMatch = LoglevelMatch::AtLeastAsSevere;
    r.loglevel = 6;
    EXPECT_NO_THROW(s.enableEvents(r));
    r.loglevel = 7;
    EXPECT_NO_THROW(s.enableEvents(r));
    r.loglevelMatch = LoglevelMatch::Exactly;
    EXPECT_NO_THROW(s.enableEvents(r));
    r.loglevelMatch = LoglevelMatch::AtLeastAsSevere;
    r.loglevel = 6;
    try {
        s.enableEvents(r);
        ADD_FAILURE() << "the same log level rule was taken twice";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::EventRuleExists);
        EXPECT_NE(std::string(e.what()).find("log level TRACE_INFO or more severe"),
                  std::string::npos)
            << e.what();
    }
    r = rule("", "tracectl_demo:*");
    r.exclusions = {"tracectl_demo:done", "tracectl_demo:debug_note"};
    EXPECT_NO_THROW(s.enableEvents(r));
    r.exclusions = {"tracectl_demo:done"};
    EXPECT_NO_THROW(s.enableEvents(r));
    // Exclusions are a set: the same names in another order are the same rule.
    r.exclusions = {"tracectl_demo:debug_note", "tracectl_demo:done"};
    EXPECT_EQ(codeOf([&] { s.enableEvents(r); }), ErrorCode::EventRuleExists);
    EXPECT_EQ(s.eventRules().size(), 8u);
    // Still refused once tracing, where a rule goes to every app.
    start(s);
    EXPECT_EQ(codeOf([&] { s.enableEvents(rule("other", "tracectl_demo:*")); }),
              ErrorCode::EventRuleExists);
    EXPECT_NO_THROW(s.enableEvents(rule("other", "tracectl_demo:tick")));
    EXPECT_EQ(s.eventRules().size(), 9u);
}

TEST(EventRules, TheFilterExpressionTellsRulesApart) {
    EventRule a = rule("channel0", "tracectl_demo:*");
    EventRule b = a;
    EXPECT_TRUE(sameEventRule(a, b));
    b.filter = "seq & 1 == 0";
    EXPECT_FALSE(sameEventRule(a, b)); // as lttng-sessiond: the same rule with a filter is another
    a.filter = "seq & 1 == 0";
    EXPECT_TRUE(sameEventRule(a, b));
    EXPECT_NE(describeEventRule(a).find("filter 'seq & 1 == 0'"), std::string::npos)
        << describeEventRule(a);
}
