// The state document a restarted tracectld reads back (restart/session_record):
// every setting survives the round trip, and each kind of document the
// daemon must refuse is refused with a reason.
#include "filter/event_filter.hpp"
#include "restart/session_record.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace tracectl {
namespace {

/// A session with a bit of everything a client can set.
std::unique_ptr<Session> richSession() {
    SessionConfig c;
    c.name = "rich";
    c.owner = 1000;
    c.outputPath = "/home/u/traces/rich";
    c.bufferOwnership = BufferOwnership::PerPid;
    c.countEvents = true;
    auto s = std::make_unique<Session>(
        SessionId::random(), c,
        std::chrono::system_clock::time_point(std::chrono::microseconds(1'700'000'000'123'456)));
    ChannelConfig ch;
    ch.name = "fast";
    ch.subbufSize = 16384;
    ch.subbufCount = 8;
    ch.switchTimerUs = 200000;
    s->addChannel(ch);
    s->addContext("fast", "vpid");
    EventRule r;
    r.channel = "fast";
    r.pattern = "prov:*";
    r.loglevelMatch = LoglevelMatch::AtLeastAsSevere;
    r.loglevel = 6;
    r.exclusions = {"prov:no"};
    setEventFilter(r, "seq < 5");
    s->enableEvents(r);
    EventRule off;
    off.channel = "fast";
    off.pattern = "prov:off";
    s->enableEvents(off);
    s->disableEvents(TracingDomain::Ust, "fast", "prov:off");
    s->trackProcessAttribute(TracingDomain::Ust, ProcessAttribute::Vuid, {1000, 1001}, false);
    s->setRotationSchedule({3'600'000'000, 1 << 30}, [](std::optional<Error>) {});
    return s;
}

TEST(SessionRecord, EverySettingSurvivesTheRoundTrip) {
    const auto s = richSession();
    const SessionRecord back = fromStateDocument(toStateDocument(recordOf(*s)));
    EXPECT_EQ(back.id, s->id());
    EXPECT_EQ(back.config.name, "rich");
    EXPECT_EQ(back.config.owner, 1000u);
    EXPECT_EQ(back.config.outputPath, "/home/u/traces/rich");
    EXPECT_EQ(back.config.bufferOwnership, BufferOwnership::PerPid);
    EXPECT_TRUE(back.config.countEvents);
    EXPECT_EQ(back.created, s->creationTime());
    const RestoredSession& r = back.restored;
    EXPECT_EQ(r.state, SessionState::Created);
    ASSERT_EQ(r.channels.size(), 1u);
    EXPECT_EQ(r.channels[0].subbufSize, 16384u);
    EXPECT_EQ(r.channels[0].subbufCount, 8u);
    EXPECT_EQ(r.channels[0].switchTimerUs, 200000u);
    EXPECT_EQ(r.channels[0].contexts, std::vector<std::string>{"vpid"});
    ASSERT_EQ(r.rules.size(), 2u);
    EXPECT_EQ(r.rules[0].pattern, "prov:*");
    EXPECT_EQ(r.rules[0].loglevelMatch, LoglevelMatch::AtLeastAsSevere);
    EXPECT_EQ(r.rules[0].loglevel, 6);
    EXPECT_EQ(r.rules[0].exclusions, std::vector<std::string>{"prov:no"});
    EXPECT_EQ(r.rules[0].filter, "seq < 5");
    EXPECT_FALSE(r.rules[0].filterBytecode.empty());
    EXPECT_EQ(r.rules[0].filterBytecode, s->eventRules()[0].filterBytecode)
        << "the filter is compiled again, to the same bytecode";
    EXPECT_TRUE(r.rules[0].enabled);
    EXPECT_FALSE(r.rules[1].enabled);
    EXPECT_FALSE(r.trackers.of(ProcessAttribute::Vuid).all);
    EXPECT_EQ(r.trackers.of(ProcessAttribute::Vuid).values, (std::set<uint32_t>{1000, 1001}));
    EXPECT_TRUE(r.trackers.of(ProcessAttribute::Vpid).all);
    EXPECT_EQ(r.schedule.timerUs, 3'600'000'000u);
    EXPECT_EQ(r.schedule.sizeBytes, 1u << 30);
    EXPECT_EQ(back.consumerUnit, "") << "never started: no consumer unit";
}

TEST(SessionRecord, ANetworkSessionKeepsItsRelay) {
    SessionConfig c;
    c.name = "net";
    c.relay = relayAddressOf(std::string("net://[::1]:6000:6001"), std::nullopt, std::nullopt);
    c.mode = SessionMode::Live;
    c.liveTimerUs = 2'000'000;
    const Session s(SessionId::random(), c, std::chrono::system_clock::now());
    const SessionRecord back = fromStateDocument(toStateDocument(recordOf(s)));
    ASSERT_TRUE(back.config.relay);
    EXPECT_EQ(*back.config.relay, *c.relay);
    EXPECT_EQ(back.config.mode, SessionMode::Live);
    EXPECT_EQ(back.config.liveTimerUs, 2'000'000u);
    EXPECT_EQ(back.config.outputPath, "");
}

/// The document of richSession() with `edit` applied.
std::string edited(const std::function<void(nlohmann::json&)>& edit) {
    auto doc = nlohmann::json::parse(toStateDocument(recordOf(*richSession())));
    edit(doc);
    return doc.dump();
}

// What this daemon refuses to a client now but an earlier one took (timers
// below kMinTimerUs, an exclusion of every event the pattern matches: issue
// 40 B8 and B11) is read back as it was: its consumer runs it already, and
// a restart, or an upgrade, must not drop the session.
TEST(SessionRecord, WhatAnEarlierDaemonAcceptedIsReadBack) {
    const SessionRecord back = fromStateDocument(edited([](auto& d) {
        d["channels"][0]["switch_timer_us"] = 1;
        d["channels"][0]["read_timer_us"] = 1;
        d["rules"][0]["exclusions"] = {"prov:*"};
    }));
    ASSERT_EQ(back.restored.channels.size(), 1u);
    EXPECT_EQ(back.restored.channels[0].switchTimerUs, 1u);
    EXPECT_EQ(back.restored.channels[0].readTimerUs, 1u);
    EXPECT_EQ(back.restored.rules[0].exclusions, std::vector<std::string>{"prov:*"});
}

TEST(SessionRecord, WhatTheDaemonWouldRefuseFromAClientIsRefused) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"{\"format\":", "not JSON"},
        {"[]", "not a tracectl session state document"},
        {edited([](auto& d) { d["version"] = 2; }), "version 2"},
        {edited([](auto& d) { d.erase("owner"); }), "no member \"owner\""},
        {edited([](auto& d) { d["owner"] = -1; }), "\"owner\""},
        {edited([](auto& d) { d["owner"] = "root"; }), "\"owner\""},
        {edited([](auto& d) { d["id"] = "not-hex"; }), "32 hex digits"},
        {edited([](auto& d) { d["name"] = "../escape"; }), "invalid session name"},
        {edited([](auto& d) { d["output_path"] = "/home/u/../../etc"; }), "'..'"},
        {edited([](auto& d) { d["output_path"] = "relative/path"; }), "absolute"},
        {edited([](auto& d) { d["mode"] = "turbo"; }), "unknown mode"},
        {edited([](auto& d) { d["state"] = "sleeping"; }), "unknown state"},
        {edited([](auto& d) { d["channels"][0]["subbuf_size"] = 3; }), "channel"},
        {edited([](auto& d) { d["channels"][0]["contexts"] = {"perf:cycles"}; }),
         "unknown context"},
        {edited([](auto& d) { d["rules"][0]["filter"] = "seq <<< 3"; }), "event rule"},
        {edited([](auto& d) { d["rules"][0]["channel"] = "elsewhere"; }), "does not have"},
        {edited([](auto& d) {
             d["trackers"][0]["values"] = {1, 1};
         }),
         "tracker"},
        {edited([](auto& d) { d["consumer_unit"] = "ssh.service"; }), "not this session's"},
        {edited([](auto& d) {
             d["relay"] = {{"control", "tcp://h:1"}};
         }),
         "no member \"data\""},
    };
    for (const auto& [doc, why] : cases) {
        SCOPED_TRACE(why);
        try {
            fromStateDocument(doc);
            ADD_FAILURE() << "accepted: " << doc;
        } catch (const StateFileError& e) {
            EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
        }
    }
}

} // namespace
} // namespace tracectl
