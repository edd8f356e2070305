// Unit tests of tracectl's rendering of sessions (tables, details, JSON, messages).
#include "cli/output_format.hpp"

#include <cstdlib>
#include <ctime>
#include <gtest/gtest.h>

using namespace tracectl::cli;
using nlohmann::json;

namespace {

class CliOutputFormat : public ::testing::Test {
protected:
    void SetUp() override {
        ::setenv("TZ", "UTC", 1);
        ::tzset();
    }
};

std::optional<std::string> fakeUserName(std::uint32_t uid) {
    if (uid == 1000) {
        return "alice";
    }
    return std::nullopt;
}

SessionView session(const std::string& name, std::uint32_t owner, std::uint64_t created,
                    const std::string& state = "created") {
    return sessionViewFromProperties(
        "/org/tracectl/Tracing1/session/" + name,
        {
            {"Id", json("0123abcd-0000-4000-8000-00000000000" + std::to_string(owner % 10))},
            {"Name", json(name)},
            {"Owner", json(owner)},
            {"State", json(state)},
            {"Mode", json("normal")},
            {"OutputPath", json("/traces/" + name)},
            {"BufferOwnership", json("per-uid")},
            {"CreationTime", json(created)},
        });
}

/// A session with the statistics properties as variant_json gives them.
SessionView sessionWithStatistics(const std::string& name, std::uint64_t discarded,
                                  std::uint64_t lost) {
    SessionView view = session(name, 1000, 1, "active");
    view.properties["Statistics"] =
        json{{"events-recorded", 123456}, {"events-discarded", discarded},
             {"packets-lost", lost},      {"bytes-written", (12u << 20) + (512u << 10)},
             {"chunk-bytes", 1536},       {"sampled-at", 77000000}};
    view.properties["ChannelStatistics"] =
        json::array({json::array({"ust", "channel0",
                                  json{{"events-recorded", 123000},
                                       {"events-discarded", discarded},
                                       {"packets-lost", lost},
                                       {"bytes-written", 12u << 20},
                                       {"chunk-bytes", 1024}}}),
                     json::array({"ust", "big",
                                  json{{"events-recorded", 456}, {"bytes-written", 512u << 10}}})});
    return sessionViewFromProperties(view.objectPath, view.properties);
}

} // namespace

TEST_F(CliOutputFormat, EmptyListSaysSo) {
    EXPECT_EQ(formatSessionTable({}, fakeUserName), "No sessions.\n");
}

TEST_F(CliOutputFormat, TableIsAlignedWithUserNamesOrUids) {
    const std::vector<SessionView> sessions{session("web", 1000, 1, "active"),
                                            session("database-io", 4242, 2)};
    EXPECT_EQ(formatSessionTable(sessions, fakeUserName),
              "NAME         STATE    MODE    OWNER  DISCARDED  LOST  OUTPUT\n"
              "web          active   normal  alice  -          -     /traces/web\n"
              "database-io  created  normal  4242   -          -     /traces/database-io\n");
}

TEST_F(CliOutputFormat, TableWidthCountsCodePoints) {
    const std::vector<SessionView> sessions{session("\xC3\xA9t\xC3\xA9", 1000, 1)};
    const std::string table = formatSessionTable(sessions, nullptr);
    EXPECT_NE(table.find("NAME  STATE"), std::string::npos) << table;
    EXPECT_NE(table.find("\xC3\xA9t\xC3\xA9   created"), std::string::npos) << table;
}

TEST_F(CliOutputFormat, OwnerFallsBackToUid) {
    EXPECT_EQ(formatOwner(1000, fakeUserName), "alice");
    EXPECT_EQ(formatOwner(7, fakeUserName), "7");
    EXPECT_EQ(formatOwner(7, nullptr), "7");
}

TEST_F(CliOutputFormat, TimestampIsLocalTime) {
    EXPECT_EQ(formatTimestamp(1714557600123456), "2024-05-01 10:00:00 UTC");
}

TEST_F(CliOutputFormat, DetailsMarkDisabledChannelsAndRules) {
    SessionView view = session("web", 1000, 1714557600123456, "active");
    view.properties.emplace(
        "Channels", json::parse(R"([["c0",4096,2,false,0,0,false],["c1",4096,2,false,0,0,true]])"));
    // Two rules of one pattern told apart by their filter (the 7th member).
    view.properties.emplace("Events", json::parse(R"([["c1","a:x","all",-1,[],false,""],)"
                                                  R"(["c1","a:x","all",-1,[],false,"seq < 5"],)"
                                                  R"(["c1","a:y","all",-1,[],true,""]])"));
    const std::string details = formatSessionDetails(view, fakeUserName);
    EXPECT_NE(details.find("true]]  [disabled: c0]\n"), std::string::npos) << details;
    EXPECT_NE(details.find("\"\"]]  [disabled: c1/a:x, c1/a:x (filter: seq < 5)]\n"),
              std::string::npos)
        << details;
    // Nothing disabled: no note.
    SessionView all = session("web", 1000, 1714557600123456, "active");
    all.properties.emplace("Channels", json::parse(R"([["c1",4096,2,false,0,0,true]])"));
    EXPECT_EQ(formatSessionDetails(all, fakeUserName).find("[disabled"), std::string::npos);
}

TEST_F(CliOutputFormat, DetailsListWellKnownPropertiesFirst) {
    SessionView view = session("web", 1000, 1714557600123456, "active");
    view.properties.emplace("Channels", json::parse(R"([["ust","channel0"]])"));
    view.properties.emplace("BytesWritten", json(std::uint64_t{4096}));
    EXPECT_EQ(formatSessionDetails(view, fakeUserName),
              "Name:            web\n"
              "Id:              0123abcd-0000-4000-8000-000000000000\n"
              "State:           active\n"
              "Mode:            normal\n"
              "Owner:           1000 (alice)\n"
              "OutputPath:      /traces/web\n"
              "BufferOwnership: per-uid\n"
              "CreationTime:    2024-05-01 10:00:00 UTC\n"
              "BytesWritten:    4096\n"
              "Channels:        [[\"ust\",\"channel0\"]]\n");
}

TEST_F(CliOutputFormat, DetailsShowUnresolvableOwnerAsUid) {
    const std::string details = formatSessionDetails(session("s", 4242, 0), fakeUserName);
    EXPECT_NE(details.find("Owner:           4242\n"), std::string::npos) << details;
}

TEST_F(CliOutputFormat, DetailsNeverFailOnUnexpectedTypes) {
    const SessionView view =
        sessionViewFromProperties("/p", {{"Owner", json("not a uid")},
                                         {"CreationTime", json::parse(R"({"a":1})")},
                                         {"Weird", json(nullptr)},
                                         {"Flag", json(true)}});
    EXPECT_EQ(formatSessionDetails(view, fakeUserName), "Owner:        not a uid\n"
                                                        "CreationTime: {\"a\":1}\n"
                                                        "Flag:         true\n"
                                                        "Weird:        \n");
}

TEST_F(CliOutputFormat, PropertyValuesForPeople) {
    EXPECT_EQ(formatPropertyValue(json("text")), "text");
    EXPECT_EQ(formatPropertyValue(json(12)), "12");
    EXPECT_EQ(formatPropertyValue(json(false)), "false");
    EXPECT_EQ(formatPropertyValue(json(nullptr)), "");
    EXPECT_EQ(formatPropertyValue(json::parse(R"({"k":[1,2]})")), R"({"k":[1,2]})");
}

TEST_F(CliOutputFormat, SessionJsonHasTypedProperties) {
    const json parsed = json::parse(formatSessionJson(session("web", 1000, 1714557600123456)));
    ASSERT_TRUE(parsed.is_object());
    EXPECT_EQ(parsed.size(), 8U);
    EXPECT_EQ(parsed.at("Name"), "web");
    EXPECT_TRUE(parsed.at("Owner").is_number_unsigned());
    EXPECT_EQ(parsed.at("Owner").get<std::uint32_t>(), 1000U);
    EXPECT_TRUE(parsed.at("CreationTime").is_number_unsigned());
    EXPECT_EQ(parsed.at("CreationTime").get<std::uint64_t>(), 1714557600123456U);
}

TEST_F(CliOutputFormat, SessionsJsonIsAnArrayInOrder) {
    const json parsed =
        json::parse(formatSessionsJson({session("a", 1000, 1), session("b", 0, 2)}));
    ASSERT_TRUE(parsed.is_array());
    ASSERT_EQ(parsed.size(), 2U);
    EXPECT_EQ(parsed[0].at("Name"), "a");
    EXPECT_EQ(parsed[1].at("Name"), "b");
    EXPECT_EQ(formatSessionsJson({}), "[]\n");
}

TEST_F(CliOutputFormat, JsonNeverFailsOnInvalidUtf8) {
    const SessionView view = sessionViewFromProperties("/p", {{"Name", json("bad\xFF")}});
    EXPECT_NO_THROW((void)formatSessionJson(view));
}

TEST_F(CliOutputFormat, OneLineMessages) {
    EXPECT_EQ(
        formatCreated(session("web", 1000, 1)),
        "Session web created (id 0123abcd-0000-4000-8000-000000000000, output /traces/web)\n");
    EXPECT_EQ(formatStarted("web"), "Tracing started for session web.\n");
    EXPECT_EQ(formatStopped("web"), "Tracing stopped for session web.\n");
    EXPECT_EQ(formatDestroyed("web"), "Session web destroyed.\n");
    EXPECT_EQ(formatNothingDestroyed(), "No sessions to destroy.\n");
}

TEST_F(CliOutputFormat, TableShowsDiscardedAndLostTotals) {
    const std::vector<SessionView> sessions{sessionWithStatistics("web", 120, 3),
                                            sessionWithStatistics("db", 0, 0)};
    EXPECT_EQ(formatSessionTable(sessions, fakeUserName),
              "NAME  STATE   MODE    OWNER  DISCARDED  LOST  OUTPUT\n"
              "web   active  normal  alice  120        3     /traces/web\n"
              "db    active  normal  alice  0          0     /traces/db\n");
}

TEST_F(CliOutputFormat, DetailsEndWithTheStatisticsSection) {
    const std::string details =
        formatSessionDetails(sessionWithStatistics("web", 120, 3), fakeUserName);
    EXPECT_EQ(details.find("Statistics:        {"), std::string::npos) << details;
    EXPECT_EQ(details.find("ChannelStatistics:"), std::string::npos) << details;
    const std::string section = "CreationTime:    1970-01-01 00:00:00 UTC\n"
                                "\n"
                                "Statistics:\n"
                                "  Events recorded:   123456\n"
                                "  Events discarded:  120\n"
                                "  Packets lost:      3\n"
                                "  Bytes written:     12.5 MiB\n"
                                "  Current chunk:     1.5 KiB\n"
                                "  DOMAIN  CHANNEL   RECORDED  DISCARDED  LOST    WRITTEN\n"
                                "  ust     channel0    123000        120     3   12.0 MiB\n"
                                "  ust     big            456          0     0  512.0 KiB\n";
    EXPECT_NE(details.find(section), std::string::npos) << details;
}

// Found by a fresh-user pass: apps refused for want of fds were only in --json.
TEST_F(CliOutputFormat, DetailsSayHowManyAppsWereRefused) {
    SessionView view = sessionWithStatistics("web", 0, 0);
    EXPECT_EQ(formatSessionDetails(view, fakeUserName).find("Apps refused"), std::string::npos);
    view.properties["Statistics"]["apps-refused"] = 2;
    view = sessionViewFromProperties(view.objectPath, view.properties);
    EXPECT_NE(formatSessionDetails(view, fakeUserName)
                  .find("  Current chunk:     1.5 KiB\n  Apps refused:      2 (the consumer had "
                        "no file descriptors for their buffers)\n"),
              std::string::npos)
        << formatSessionDetails(view, fakeUserName);
}

TEST_F(CliOutputFormat, DetailsSayWhenNothingWasSampledYet) {
    SessionView view = session("web", 1000, 1);
    view.properties["Statistics"] = json{{"sampled-at", 0}};
    const std::string details = formatSessionDetails(view, fakeUserName);
    // No events-recorded key: the session does not count events.
    EXPECT_NE(details.find("Statistics (not sampled yet):\n  Events recorded:   not counted\n"),
              std::string::npos)
        << details;
    EXPECT_EQ(details.find("DOMAIN"), std::string::npos) << details; // no channel, no table
}

TEST_F(CliOutputFormat, JsonHasStatisticsAsObjects) {
    const json parsed = json::parse(formatSessionJson(sessionWithStatistics("web", 120, 3)));
    EXPECT_EQ(parsed.at("Statistics").at("events-discarded"), 120);
    EXPECT_EQ(parsed.at("Statistics").at("sampled-at"), 77000000);
    const json& channels = parsed.at("ChannelStatistics");
    ASSERT_TRUE(channels.is_array());
    ASSERT_EQ(channels.size(), 2U);
    EXPECT_EQ(channels[0].at("domain"), "ust");
    EXPECT_EQ(channels[0].at("channel"), "channel0");
    EXPECT_EQ(channels[0].at("events-recorded"), 123000);
    EXPECT_EQ(channels[0].at("packets-lost"), 3);
    EXPECT_EQ(channels[1].at("channel"), "big");
    EXPECT_FALSE(channels[1].contains("packets-lost")); // what the daemon left out stays out
    const json listed = json::parse(formatSessionsJson({sessionWithStatistics("a", 1, 0)}));
    EXPECT_EQ(listed[0].at("ChannelStatistics")[0].at("channel"), "channel0");
}

namespace {

/// A session of a daemon with OutputUrl and LiveTimer: local when `url` is "", else
/// streaming to it (OutputPath ""), live when `live_us` > 0.
SessionView sessionWithUrl(const std::string& name, const std::string& url,
                           std::uint64_t liveUs = 0) {
    SessionView view = session(name, 1000, 1714557600123456);
    view.properties["Mode"] = json(liveUs > 0 ? "live" : "normal");
    view.properties["OutputUrl"] = json(url);
    view.properties["LiveTimer"] = json(liveUs);
    if (!url.empty()) {
        view.properties["OutputPath"] = json("");
    }
    return sessionViewFromProperties(view.objectPath, view.properties);
}

} // namespace

TEST_F(CliOutputFormat, CreatedNetworkSessionSaysWhereAsLttngCreate) {
    EXPECT_EQ(formatCreated(sessionWithUrl("web", "net://10.0.0.5:5342:5343")),
              "Session web created.\n"
              "Traces will be output to net://10.0.0.5:5342:5343\n");
    EXPECT_EQ(formatCreated(sessionWithUrl("web", "tcp://10.0.0.5:5342 tcp://10.0.0.6:5343")),
              "Session web created.\n"
              "Traces will be output to tcp://10.0.0.5:5342 tcp://10.0.0.6:5343\n");
}

TEST_F(CliOutputFormat, CreatedLiveSessionGivesItsTimer) {
    EXPECT_EQ(formatCreated(sessionWithUrl("web", "net://[::1]:5342:5343", 1000000)),
              "Session web created.\n"
              "Traces will be output to net://[::1]:5342:5343\n"
              "Live timer interval set to 1000000 us\n");
}

TEST_F(CliOutputFormat, CreatedLocalSessionIsUnchangedWithOrWithoutOutputUrl) {
    const std::string local =
        "Session web created (id 0123abcd-0000-4000-8000-000000000000, output /traces/web)\n";
    EXPECT_EQ(formatCreated(sessionWithUrl("web", "")), local);
    EXPECT_EQ(formatCreated(session("web", 1000, 1)), local); // an older daemon
}

TEST_F(CliOutputFormat, TableShowsTheRelayWhereItShowsTheFolder) {
    const std::vector<SessionView> sessions{
        sessionWithUrl("local", ""), sessionWithUrl("net", "net://relay:5342:5343"),
        sessionWithUrl("live", "net://[::1]:5342:5343", 250000)};
    EXPECT_EQ(formatSessionTable(sessions, fakeUserName),
              "NAME   STATE    MODE    OWNER  DISCARDED  LOST  OUTPUT\n"
              "local  created  normal  alice  -          -     /traces/local\n"
              "net    created  normal  alice  -          -     net://relay:5342:5343\n"
              "live   created  live    alice  -          -     net://[::1]:5342:5343\n");
}

TEST_F(CliOutputFormat, DetailsOfALiveSessionGiveItsRelayAndTimer) {
    EXPECT_EQ(
        formatSessionDetails(sessionWithUrl("web", "net://[::1]:5342:5343", 250000), fakeUserName),
        "Name:            web\n"
        "Id:              0123abcd-0000-4000-8000-000000000000\n"
        "State:           created\n"
        "Mode:            live\n"
        "Owner:           1000 (alice)\n"
        "OutputUrl:       net://[::1]:5342:5343\n"
        "LiveTimer:       250000 us\n"
        "BufferOwnership: per-uid\n"
        "CreationTime:    2024-05-01 10:00:00 UTC\n");
}

TEST_F(CliOutputFormat, DetailsLeaveOutWhatDoesNotApply) {
    // A network session that is not live: no LiveTimer line, no empty OutputPath.
    const std::string network =
        formatSessionDetails(sessionWithUrl("web", "net://relay:5342:5343"), fakeUserName);
    EXPECT_NE(network.find("OutputUrl:       net://relay:5342:5343\n"), std::string::npos)
        << network;
    EXPECT_EQ(network.find("LiveTimer"), std::string::npos) << network;
    EXPECT_EQ(network.find("OutputPath"), std::string::npos) << network;
    // A local session: its folder, no OutputUrl or LiveTimer line.
    const std::string local = formatSessionDetails(sessionWithUrl("web", ""), fakeUserName);
    EXPECT_NE(local.find("OutputPath:      /traces/web\n"), std::string::npos) << local;
    EXPECT_EQ(local.find("OutputUrl"), std::string::npos) << local;
    EXPECT_EQ(local.find("LiveTimer"), std::string::npos) << local;
}

TEST_F(CliOutputFormat, DetailsOfAKernelOnlySessionLeaveOutTheEmptyUstLines) {
    SessionView view = session("ksnap", 0, 1, "active");
    view.properties["Mode"] = json("snapshot");
    view.properties["Channels"] = json::array();
    view.properties["Events"] = json::array();
    view.properties["Contexts"] = json::array();
    view.properties["RingBufferSize"] = json(0);
    view.properties["KernelChannels"] =
        json::array({json::array({"kchan", 4096, 4, true, 0, 0, true})});
    view.properties["KernelEvents"] =
        json::array({json::array({"kchan", "sched_switch", false, "", true})});
    const std::string kernel = formatSessionDetails(
        sessionViewFromProperties(view.objectPath, view.properties), fakeUserName);
    EXPECT_EQ(kernel.find("Channels: "), std::string::npos) << kernel;
    EXPECT_EQ(kernel.find("\nEvents:"), std::string::npos) << kernel;
    EXPECT_EQ(kernel.find("Contexts:"), std::string::npos) << kernel;
    EXPECT_EQ(kernel.find("RingBufferSize"), std::string::npos) << kernel;
    EXPECT_NE(kernel.find("Kernel domain:\n"), std::string::npos) << kernel;
    EXPECT_NE(kernel.find("kchan"), std::string::npos) << kernel;
    // A session with UST channels too, or none yet, keeps them.
    view.properties["RingBufferSize"] = json(4096);
    view.properties["Channels"] =
        json::array({json::array({"channel0", 4096, 4, true, 0, 0, true})});
    const std::string both = formatSessionDetails(
        sessionViewFromProperties(view.objectPath, view.properties), fakeUserName);
    EXPECT_NE(both.find("\nChannels: "), std::string::npos) << both;
    EXPECT_NE(both.find("\nRingBufferSize: "), std::string::npos) << both;
    EXPECT_NE(both.find("\nEvents: "), std::string::npos) << both;
    view.properties.erase("KernelChannels");
    view.properties.erase("KernelEvents");
    view.properties["Channels"] = json::array();
    const std::string none = formatSessionDetails(
        sessionViewFromProperties(view.objectPath, view.properties), fakeUserName);
    EXPECT_NE(none.find("\nChannels: "), std::string::npos) << none;
}

TEST_F(CliOutputFormat, DetailsShowMistypedNetworkPropertiesAsTheyCame) {
    SessionView view = session("web", 1000, 1);
    view.properties["OutputUrl"] = json(42);
    view.properties["LiveTimer"] = json("soon");
    view = sessionViewFromProperties(view.objectPath, view.properties);
    const std::string details = formatSessionDetails(view, fakeUserName);
    EXPECT_NE(details.find("OutputUrl:       42\n"), std::string::npos) << details;
    EXPECT_NE(details.find("LiveTimer:       soon\n"), std::string::npos) << details;
    EXPECT_EQ(
        formatCreated(view),
        "Session web created (id 0123abcd-0000-4000-8000-000000000000, output /traces/web)\n");
}

TEST_F(CliOutputFormat, JsonCarriesOutputUrlAndLiveTimerTyped) {
    const json parsed =
        json::parse(formatSessionJson(sessionWithUrl("web", "net://[::1]:5342:5343", 250000)));
    EXPECT_EQ(parsed.at("OutputUrl"), "net://[::1]:5342:5343");
    EXPECT_EQ(parsed.at("OutputPath"), "");
    ASSERT_TRUE(parsed.at("LiveTimer").is_number_unsigned());
    EXPECT_EQ(parsed.at("LiveTimer").get<std::uint64_t>(), 250000U);
    EXPECT_EQ(parsed.at("Mode"), "live");
    const json local = json::parse(formatSessionJson(sessionWithUrl("web", "")));
    EXPECT_EQ(local.at("OutputUrl"), "");
    EXPECT_EQ(local.at("LiveTimer"), 0);
}
