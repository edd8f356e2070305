// Unit tests of tracectl-gui's sessions model: rows from what the daemon announced (GetAll,
// then PropertiesChanged carrying only what changed), rates from two Statistics samples,
// sessions that do not count events, ordering, removal.
#include "gui/sessions_model.hpp"

#include <gtest/gtest.h>

using namespace tracectl::gui;
using nlohmann::json;
using tracectl::cli::PropertyMap;

namespace {

constexpr const char* kFirst = "/org/tracectl/Tracing1/session/01";
constexpr const char* kSecond = "/org/tracectl/Tracing1/session/02";
constexpr std::uint64_t kS = 1'000'000; // one second in µs

PropertyMap allProperties(const std::string& name, std::uint64_t created) {
    return {{"Name", json(name)},
            {"State", json("created")},
            {"Mode", json("normal")},
            {"Owner", json(1000)},
            {"OutputPath", json("/home/u/lttng-traces/" + name)},
            {"OutputUrl", json("")},
            {"ErrorReason", json("")},
            {"CreationTime", json(created)},
            {"Statistics",
             json::object({{"events-discarded", 0}, {"bytes-written", 0}, {"sampled-at", 0}})}};
}

PropertyMap statistics(std::uint64_t atUs, std::optional<std::uint64_t> recorded,
                       std::uint64_t written, std::uint64_t discarded = 0) {
    json totals{{"events-discarded", discarded}, {"bytes-written", written}, {"sampled-at", atUs}};
    if (recorded) {
        totals["events-recorded"] = *recorded;
    }
    return {{"Statistics", totals}};
}

SessionsModel model() {
    return SessionsModel([](std::uint32_t uid) { return "user" + std::to_string(uid); });
}

} // namespace

TEST(GuiSessionsModel, ARowShowsTheSessionsProperties) {
    SessionsModel m = model();
    m.update(kFirst, allProperties("web", 10));
    const auto rows = m.rows(0);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].path, kFirst);
    EXPECT_EQ(rows[0].name, "web");
    EXPECT_EQ(rows[0].state, "created");
    EXPECT_EQ(rows[0].mode, "normal");
    EXPECT_EQ(rows[0].owner, "user1000");
    EXPECT_EQ(rows[0].output, "/home/u/lttng-traces/web");
    EXPECT_EQ(rows[0].eventsPerSecond, kUnknownFigure);
    EXPECT_EQ(rows[0].megabytesPerSecond, kUnknownFigure);
    EXPECT_EQ(rows[0].discarded, "0");
}

TEST(GuiSessionsModel, ANetworkSessionShowsItsRelay) {
    SessionsModel m = model();
    PropertyMap p = allProperties("net", 10);
    p["OutputPath"] = "";
    p["OutputUrl"] = "net://relay:5342:5343";
    m.update(kFirst, p);
    EXPECT_EQ(m.rows(0)[0].output, "net://relay:5342:5343");
}

TEST(GuiSessionsModel, PropertiesChangedMergesOnlyWhatChanged) {
    SessionsModel m = model();
    m.update(kFirst, allProperties("web", 10));
    m.update(kFirst, {{"State", json("error")}, {"ErrorReason", json("the consumer died")}});
    const SessionRow row = m.rows(0)[0];
    EXPECT_EQ(row.state, "error");
    EXPECT_EQ(row.errorReason, "the consumer died");
    EXPECT_EQ(row.name, "web");
    EXPECT_EQ(row.mode, "normal");
}

TEST(GuiSessionsModel, RatesComeFromTheLastTwoSamples) {
    SessionsModel m = model();
    m.update(kFirst, allProperties("web", 10));
    m.update(kFirst, statistics(10 * kS, 1000, 1'000'000, 3));
    EXPECT_EQ(m.rows(10 * kS)[0].eventsPerSecond, kUnknownFigure); // one sample: no rate
    m.update(kFirst, statistics(12 * kS, 5000, 6'000'000, 7));
    const SessionRow row = m.rows(12 * kS)[0];
    EXPECT_EQ(row.eventsPerSecond, "2000");
    EXPECT_EQ(row.megabytesPerSecond, "2.50");
    EXPECT_EQ(row.discarded, "7");
}

TEST(GuiSessionsModel, RatesFallToZeroWhenTheDaemonFallsSilent) {
    SessionsModel m = model();
    m.update(kFirst, allProperties("web", 10));
    m.update(kFirst, statistics(10 * kS, 1000, 1000));
    m.update(kFirst, statistics(11 * kS, 2000, 2000));
    EXPECT_EQ(m.rows(11 * kS)[0].eventsPerSecond, "1000");
    EXPECT_EQ(m.rows(20 * kS)[0].eventsPerSecond, "0.00");
    EXPECT_EQ(m.rows(20 * kS)[0].megabytesPerSecond, "0.00");
}

TEST(GuiSessionsModel, ASessionThatCountsNoEventsHasNoEventRateButAByteRate) {
    SessionsModel m = model();
    m.update(kFirst, allProperties("web", 10));
    m.update(kFirst, statistics(10 * kS, std::nullopt, 0));
    m.update(kFirst, statistics(11 * kS, std::nullopt, 500'000));
    const SessionRow row = m.rows(11 * kS)[0];
    EXPECT_EQ(row.eventsPerSecond, kUnknownFigure);
    EXPECT_EQ(row.megabytesPerSecond, "0.50");
}

TEST(GuiSessionsModel, RowsAreOldestFirstAndRemovedSessionsGo) {
    SessionsModel m = model();
    m.update(kSecond, allProperties("later", 20));
    m.update(kFirst, allProperties("earlier", 10));
    auto rows = m.rows(0);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].name, "earlier");
    EXPECT_EQ(rows[1].name, "later");
    m.remove(kFirst);
    rows = m.rows(0);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].name, "later");
    m.remove("/unknown"); // no-op
    m.clear();
    EXPECT_TRUE(m.rows(0).empty());
}

TEST(GuiSessionsModel, FormatRateKeepsATrickleVisible) {
    EXPECT_EQ(formatRate(std::nullopt), kUnknownFigure);
    EXPECT_EQ(formatRate(0.0), "0.00");
    EXPECT_EQ(formatRate(0.031), "0.03");
    EXPECT_EQ(formatRate(42.25), "42.2");
    EXPECT_EQ(formatRate(1761.4), "1761");
    EXPECT_EQ(formatRate(2'500'000.0, 1e6), "2.50");
}

TEST(GuiSessionsModel, ARowListsTheEnabledRulesByPattern) {
    SessionsModel m = model();
    PropertyMap p = allProperties("web", 10);
    p["Events"] = json::array({
        json::array({"channel0", "demo:tick", "all", -1, json::array(), true, ""}),
        json::array({"small", "demo:*", "at-least", 4, json::array(), true, "x > 1"}),
        json::array({"channel0", "demo:off", "all", -1, json::array(), false, ""}),
    });
    p["KernelEvents"] = json::array({json::array({"k", "sched:sched_switch", false, "", true}),
                                     json::array({"k", "write", true, "", false})});
    m.update(kFirst, p);
    const SessionRow row = m.rows(0)[0];
    EXPECT_EQ(row.ustRules,
              (std::map<std::string, std::string>{{"demo:tick", "channel0"}, {"demo:*", "small"}}));
    EXPECT_EQ(row.kernelRules, (std::map<std::string, std::string>{{"sched:sched_switch", "k"}}));
}

TEST(GuiSessionsModel, RulesOfAnotherShapeAreLeftOut) {
    EXPECT_TRUE(enabledRules(json("x"), 5).empty());
    EXPECT_TRUE(enabledRules(json::array({json::array({"c", "p"})}), 5).empty());
}
