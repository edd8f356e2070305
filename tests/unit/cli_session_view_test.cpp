// Unit tests of tracectl's property map -> SessionView conversion.
#include "cli/session_view.hpp"

#include <gtest/gtest.h>

using namespace tracectl::cli;
using nlohmann::json;

namespace {

PropertyMap fullProperties() {
    return {
        {"Id", json("0123abcd-0000-4000-8000-000000000001")},
        {"Name", json("web")},
        {"Owner", json(1000U)},
        {"State", json("active")},
        {"Mode", json("snapshot")},
        {"OutputPath", json("/home/alice/traces/web")},
        {"BufferOwnership", json("per-uid")},
        {"CreationTime", json(std::uint64_t{1714557600123456})},
    };
}

SessionView createdAt(std::string name, std::uint64_t usec) {
    return sessionViewFromProperties("/org/tracectl/Tracing1/session/" + name,
                                     {{"Name", json(name)}, {"CreationTime", json(usec)}});
}

} // namespace

TEST(CliSessionView, CopiesTheWellKnownProperties) {
    const SessionView view =
        sessionViewFromProperties("/org/tracectl/Tracing1/session/01", fullProperties());
    EXPECT_EQ(view.objectPath, "/org/tracectl/Tracing1/session/01");
    EXPECT_EQ(view.id, "0123abcd-0000-4000-8000-000000000001");
    EXPECT_EQ(view.name, "web");
    EXPECT_EQ(view.owner, 1000U);
    EXPECT_EQ(view.state, "active");
    EXPECT_EQ(view.mode, "snapshot");
    EXPECT_EQ(view.outputPath, "/home/alice/traces/web");
    EXPECT_EQ(view.bufferOwnership, "per-uid");
    EXPECT_EQ(view.creationTimeUs, 1714557600123456U);
    EXPECT_EQ(view.properties, fullProperties());
}

TEST(CliSessionView, KeepsUnknownProperties) {
    PropertyMap properties = fullProperties();
    properties.emplace("Channels", json::parse(R"([["ust","channel0"]])"));
    const SessionView view = sessionViewFromProperties("/p", properties);
    EXPECT_EQ(view.properties.at("Channels"), json::parse(R"([["ust","channel0"]])"));
}

TEST(CliSessionView, MissingOrMistypedPropertiesGiveDefaults) {
    const SessionView view = sessionViewFromProperties(
        "/p", {{"Name", json(42)}, {"Owner", json("root")}, {"CreationTime", json(-5)}});
    EXPECT_EQ(view.name, "");
    EXPECT_EQ(view.owner, 0U);
    EXPECT_EQ(view.creationTimeUs, 0U);
    EXPECT_EQ(view.state, "");
    EXPECT_EQ(view.properties.size(), 3U);
}

TEST(CliSessionView, OwnerOutOfRangeGivesDefault) {
    const SessionView view =
        sessionViewFromProperties("/p", {{"Owner", json(std::uint64_t{1} << 40)}});
    EXPECT_EQ(view.owner, 0U);
}

TEST(CliSessionView, SortsOldestFirstThenByName) {
    std::vector<SessionView> sessions{createdAt("c", 30), createdAt("b", 10), createdAt("a", 30)};
    sortByCreationTime(sessions);
    ASSERT_EQ(sessions.size(), 3U);
    EXPECT_EQ(sessions[0].name, "b");
    EXPECT_EQ(sessions[1].name, "a");
    EXPECT_EQ(sessions[2].name, "c");
}

TEST(CliSessionView, CopiesOutputUrlAndLiveTimer) {
    PropertyMap properties = fullProperties();
    properties["Mode"] = json("live");
    properties["OutputPath"] = json("");
    properties["OutputUrl"] = json("net://[::1]:5342:5343");
    properties["LiveTimer"] = json(std::uint64_t{250000});
    const SessionView view = sessionViewFromProperties("/p", properties);
    EXPECT_EQ(view.outputUrl, "net://[::1]:5342:5343");
    EXPECT_EQ(view.liveTimerUs, 250000U);
    EXPECT_EQ(view.outputPath, "");
    EXPECT_EQ(outputLocation(view), "net://[::1]:5342:5343");
}

TEST(CliSessionView, AnOlderDaemonWithoutOutputUrlIsALocalSession) {
    const SessionView view = sessionViewFromProperties("/p", fullProperties());
    EXPECT_EQ(view.outputUrl, "");
    EXPECT_EQ(view.liveTimerUs, 0U);
    EXPECT_EQ(outputLocation(view), "/home/alice/traces/web");
    EXPECT_EQ(remoteTraceNote(view), std::nullopt);
}

TEST(CliSessionView, MistypedOutputUrlAndLiveTimerGiveDefaults) {
    PropertyMap properties = fullProperties();
    properties["OutputUrl"] = json(7);
    properties["LiveTimer"] = json("1s");
    const SessionView view = sessionViewFromProperties("/p", properties);
    EXPECT_EQ(view.outputUrl, "");
    EXPECT_EQ(view.liveTimerUs, 0U);
    EXPECT_EQ(outputLocation(view), "/home/alice/traces/web");
}

TEST(CliSessionView, ANetworkSessionsTraceIsOnTheRelay) {
    PropertyMap properties = fullProperties();
    properties["Mode"] = json("normal");
    properties["OutputPath"] = json("");
    properties["OutputUrl"] = json("net://relay:5342:5343");
    EXPECT_EQ(remoteTraceNote(sessionViewFromProperties("/p", properties)),
              "session web streams to net://relay:5342:5343: its trace is written by that "
              "lttng-relayd, under its output folder");
    properties["Mode"] = json("live");
    EXPECT_EQ(remoteTraceNote(sessionViewFromProperties("/p", properties)),
              "session web streams to net://relay:5342:5343: its trace is written by that "
              "lttng-relayd, under its output folder; read it live with babeltrace2 "
              "--input-format=lttng-live net://RELAY_HOST/host/HOSTNAME/web");
}
