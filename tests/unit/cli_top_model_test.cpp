// Unit tests of `tracectl top`'s model: rates from two samples, missing keys, counters going
// backwards, sessions appearing and vanishing, and the frame's layout.
#include "cli/text_table.hpp"
#include "cli/top_model.hpp"

#include <gtest/gtest.h>

using namespace tracectl::cli;
using nlohmann::json;

namespace {

constexpr const char* kWeb = "/org/tracectl/Tracing1/session/01";
constexpr const char* kDb = "/org/tracectl/Tracing1/session/02";

PropertyMap identity(const std::string& name, std::uint64_t created, const std::string& state) {
    return {{"Name", json(name)}, {"CreationTime", json(created)}, {"State", json(state)}};
}

/// A PropertiesChanged's content: the totals and one channel with the same figures.
PropertyMap sample(std::uint64_t atUs, std::uint64_t recorded, std::uint64_t written,
                   std::uint64_t discarded = 0, std::uint64_t lost = 0) {
    const json figures{{"events-recorded", recorded},
                       {"events-discarded", discarded},
                       {"packets-lost", lost},
                       {"bytes-written", written}};
    json totals = figures;
    totals["sampled-at"] = atUs;
    return {{"Statistics", totals},
            {"ChannelStatistics", json::array({json::array({"ust", "channel0", figures})})}};
}

constexpr std::uint64_t kS = 1'000'000; // one second in µs

} // namespace

TEST(CliTopModel, OneSampleHasNoRateYet) {
    TopModel model;
    model.update(kWeb, identity("web", 1, "active"));
    model.update(kWeb, sample(10 * kS, 100, 1000));
    const auto rows = model.rows(10 * kS);
    ASSERT_EQ(rows.size(), 2U);
    EXPECT_EQ(rows[0], (TopRow{false, "web", "active", std::nullopt, std::nullopt, 0, 0}));
    EXPECT_EQ(rows[1], (TopRow{true, "ust/channel0", "", std::nullopt, std::nullopt, 0, 0}));
}

TEST(CliTopModel, RatesAreTheDifferenceOverTheSampledAtDifference) {
    TopModel model;
    model.update(kWeb, identity("web", 1, "active"));
    model.update(kWeb, sample(10 * kS, 100, 1'000'000, 5, 1));
    model.update(kWeb, sample(12 * kS, 2100, 5'000'000, 7, 2)); // 2 s later
    const auto rows = model.rows(12 * kS + 100);
    ASSERT_EQ(rows.size(), 2U);
    EXPECT_DOUBLE_EQ(rows[0].eventsPerS.value(), 1000.0);
    EXPECT_DOUBLE_EQ(rows[0].bytesPerS.value(), 2'000'000.0);
    EXPECT_EQ(rows[0].discarded, 7U);
    EXPECT_EQ(rows[0].lost, 2U);
    EXPECT_DOUBLE_EQ(rows[1].eventsPerS.value(), 1000.0);
    // Only the last two samples count.
    model.update(kWeb, sample(13 * kS, 2600, 5'000'000, 7, 2));
    EXPECT_DOUBLE_EQ(model.rows(13 * kS).front().eventsPerS.value(), 500.0);
    EXPECT_DOUBLE_EQ(model.rows(13 * kS).front().bytesPerS.value(), 0.0);
}

/// A sample of a daemon that reports bytes-produced (the ring buffers sampled live).
PropertyMap producedSample(std::uint64_t atUs, std::uint64_t recorded, std::uint64_t written,
                           std::uint64_t produced) {
    PropertyMap p = sample(atUs, recorded, written);
    p["Statistics"]["bytes-produced"] = produced;
    p["ChannelStatistics"][0][2]["bytes-produced"] = produced;
    return p;
}

// Issue 40 E1: no sub-buffer read yet (bytes-written 0), but the apps write: MB/s is known.
TEST(CliTopModel, BytesPerSecondAreThoseProducedWhenTheDaemonSamplesThem) {
    TopModel model;
    model.update(kWeb, identity("web", 1, "active"));
    model.update(kWeb, producedSample(10 * kS, 0, 0, 4096));
    model.update(kWeb, producedSample(11 * kS, 0, 0, 36'864)); // 32 KiB more, nothing read
    const auto rows = model.rows(11 * kS);
    ASSERT_EQ(rows.size(), 2U);
    EXPECT_DOUBLE_EQ(rows[0].bytesPerS.value(), 32'768.0);
    EXPECT_DOUBLE_EQ(rows[1].bytesPerS.value(), 32'768.0);
    // No sub-buffer read: events-recorded has not moved, its rate is unknown, not 0.
    EXPECT_EQ(rows[0].eventsPerS, std::nullopt);
    const auto frame = formatTopFrame(rows, 1);
    ASSERT_GE(frame.size(), 4U);
    EXPECT_NE(frame[3].find("0.03"), std::string::npos) << frame[3]; // MB/s
    EXPECT_NE(frame[3].find(" - "), std::string::npos) << frame[3];  // events/s
}

// Events/s spans the samples in which events-recorded moved (a sub-buffer was read), not the
// once-a-second samples of the bytes produced in between.
TEST(CliTopModel, EventsPerSecondSpanTheSamplesWhereTheCountMoved) {
    TopModel model;
    model.update(kWeb, identity("web", 1, "active"));
    model.update(kWeb, producedSample(10 * kS, 0, 0, 1000));
    model.update(kWeb, producedSample(11 * kS, 0, 0, 33'000));
    model.update(kWeb, producedSample(12 * kS, 2000, 65'536, 66'000)); // a sub-buffer read
    model.update(kWeb, producedSample(13 * kS, 2000, 65'536, 99'000));
    model.update(kWeb, producedSample(14 * kS, 4000, 131'072, 132'000)); // the next one
    const auto rows = model.rows(14 * kS);
    EXPECT_DOUBLE_EQ(rows[0].eventsPerS.value(), 1000.0); // 2000 events in 2 s
    EXPECT_DOUBLE_EQ(rows[0].bytesPerS.value(), 33'000.0);
    model.update(kWeb, producedSample(15 * kS, 4000, 131'072, 165'000));
    EXPECT_DOUBLE_EQ(model.rows(15 * kS)[0].eventsPerS.value(), 1000.0); // still the last
}

TEST(CliTopModel, TheSameSampleAnnouncedAgainKeepsTheRate) {
    TopModel model;
    model.update(kWeb, sample(10 * kS, 0, 0));
    model.update(kWeb, sample(11 * kS, 100, 0));
    model.update(kWeb, sample(11 * kS, 100, 0)); // e.g. a State change announced with it
    EXPECT_DOUBLE_EQ(model.rows(11 * kS).front().eventsPerS.value(), 100.0);
}

TEST(CliTopModel, SilenceMeansZeroRate) {
    // The daemon announces only changes: no signal for a while means nothing was recorded.
    TopModel model;
    model.update(kWeb, sample(10 * kS, 0, 0));
    model.update(kWeb, sample(11 * kS, 100, 4096));
    EXPECT_DOUBLE_EQ(model.rows(13 * kS).front().eventsPerS.value(), 100.0);
    const auto later = model.rows(11 * kS + RateTracker::kStaleAfterUs + 1);
    EXPECT_DOUBLE_EQ(later.front().eventsPerS.value(), 0.0);
    EXPECT_DOUBLE_EQ(later.front().bytesPerS.value(), 0.0);
    EXPECT_DOUBLE_EQ(later.back().eventsPerS.value(), 0.0); // the channel too
}

TEST(CliTopModel, MissingKeysAreZeroButEventsRecordedIsUnknown) {
    TopModel model;
    model.update(kWeb, {{"Statistics", json{{"sampled-at", 1 * kS}}}});
    model.update(kWeb, {{"Statistics", json{{"sampled-at", 2 * kS}, {"events-recorded", 50}}},
                        {"Unknown", json("kept but unused")}});
    auto rows = model.rows(2 * kS);
    ASSERT_EQ(rows.size(), 1U); // no ChannelStatistics: no channel rows
    EXPECT_EQ(rows[0].name, "");
    // Not counted in the first sample (a session without count-events
    // leaves the key out): no events rate, never a made-up one.
    EXPECT_EQ(rows[0].eventsPerS, std::nullopt);
    EXPECT_DOUBLE_EQ(rows[0].bytesPerS.value(), 0.0);
    model.update(kWeb, {{"Statistics", json{{"sampled-at", 3 * kS}, {"events-recorded", 80}}}});
    rows = model.rows(3 * kS);
    EXPECT_DOUBLE_EQ(rows[0].eventsPerS.value(), 30.0);
    // A Statistics without sampled-at is "never sampled": no rate from it.
    model.update(kWeb, {{"Statistics", json{{"events-recorded", 60}}}});
    EXPECT_EQ(model.rows(2 * kS)[0].eventsPerS, std::nullopt);
}

TEST(CliTopModel, ACounterGoingBackwardsGivesNoRateThenRecovers) {
    TopModel model;
    model.update(kWeb, sample(10 * kS, 1000, 1000));
    model.update(kWeb, sample(11 * kS, 10, 2000)); // events reset, bytes went on
    auto rows = model.rows(11 * kS);
    EXPECT_EQ(rows[0].eventsPerS, std::nullopt); // never a negative or huge rate
    EXPECT_DOUBLE_EQ(rows[0].bytesPerS.value(), 1000.0);
    // Still no made-up 0 once stale: the interval is unusable.
    EXPECT_EQ(model.rows(20 * kS)[0].eventsPerS, std::nullopt);
    model.update(kWeb, sample(12 * kS, 110, 3000));
    EXPECT_DOUBLE_EQ(model.rows(12 * kS)[0].eventsPerS.value(), 100.0);
}

TEST(CliTopModel, SampledAtGoingBackwardsStartsTheSeriesOver) {
    // The daemon restarted: its samples start again from another clock reading.
    TopModel model;
    model.update(kWeb, sample(100 * kS, 1000, 1000));
    model.update(kWeb, sample(101 * kS, 2000, 2000));
    model.update(kWeb, sample(5 * kS, 10, 10));
    EXPECT_EQ(model.rows(5 * kS)[0].eventsPerS, std::nullopt);
    model.update(kWeb, sample(6 * kS, 20, 10));
    EXPECT_DOUBLE_EQ(model.rows(6 * kS)[0].eventsPerS.value(), 10.0);
}

TEST(CliTopModel, SessionsAppearSortedAndVanish) {
    TopModel model;
    model.update(kDb, identity("db", 2, "stopped"));
    model.update(kWeb, identity("web", 1, "active"));
    EXPECT_EQ(model.size(), 2U);
    auto rows = model.rows(0);
    ASSERT_EQ(rows.size(), 2U);
    EXPECT_EQ(rows[0].name, "web"); // oldest first
    EXPECT_EQ(rows[1].name, "db");
    EXPECT_EQ(rows[1].state, "stopped");
    model.update(kDb, {{"State", json("active")}}); // a PropertiesChanged carries only changes
    EXPECT_EQ(model.rows(0)[1].state, "active");
    EXPECT_EQ(model.rows(0)[1].name, "db");
    model.remove(kWeb);
    model.remove("/never/seen");
    EXPECT_FALSE(model.contains(kWeb));
    rows = model.rows(0);
    ASSERT_EQ(rows.size(), 1U);
    EXPECT_EQ(rows[0].name, "db");
    // A session that comes back is a new series.
    model.update(kWeb, identity("web", 3, "created"));
    model.update(kWeb, sample(1 * kS, 5, 5));
    EXPECT_EQ(model.rows(1 * kS).back().eventsPerS, std::nullopt);
}

TEST(CliTopModel, ChannelsFollowChannelStatistics) {
    TopModel model;
    model.update(kWeb, identity("web", 1, "active"));
    model.update(kWeb, sample(1 * kS, 0, 0));
    const json one{{"events-recorded", 10}};
    model.update(kWeb, {{"Statistics", json{{"sampled-at", 2 * kS}, {"events-recorded", 10}}},
                        {"ChannelStatistics", json::array({json::array({"ust", "channel0", one}),
                                                           json::array({"ust", "extra", one})})}});
    auto rows = model.rows(2 * kS);
    ASSERT_EQ(rows.size(), 3U);
    EXPECT_DOUBLE_EQ(rows[1].eventsPerS.value(), 10.0);
    EXPECT_EQ(rows[2].name, "ust/extra");
    EXPECT_EQ(rows[2].eventsPerS, std::nullopt); // new channel: one sample
    model.update(kWeb, {{"ChannelStatistics", json::array()}});
    EXPECT_EQ(model.rows(2 * kS).size(), 1U);
}

TEST(CliTopModel, FrameLayout) {
    const std::vector<TopRow> rows{
        {false, "web", "active", 12345.4, 1'234'567.0, 120, 3},
        {true, "ust/channel0", "", 12345.4, 1'234'567.0, 120, 3},
        {false, "db", "created", std::nullopt, std::nullopt, 0, 0},
    };
    EXPECT_EQ(formatTopFrame(rows, 2),
              (std::vector<std::string>{
                  "tracectl top: 2 sessions, every second; q to quit",
                  "",
                  "SESSION         STATE    EVENTS/S  MB/S  DISCARDED  LOST",
                  "web             active      12345  1.23        120     3",
                  "  ust/channel0              12345  1.23        120     3",
                  "db              created         -     -          0     0",
              }));
    EXPECT_EQ(formatTopFrame({}, 0),
              (std::vector<std::string>{"tracectl top: 0 sessions, every second; q to quit", "",
                                        "No sessions."}));
}

TEST(CliTextTable, ClipsByCodePoints) {
    EXPECT_EQ(clipToWidth("abcdef", 3), "abc");
    EXPECT_EQ(clipToWidth("ab", 3), "ab");
    EXPECT_EQ(clipToWidth("\xC3\xA9t\xC3\xA9!", 3), "\xC3\xA9t\xC3\xA9");
    EXPECT_EQ(clipToWidth("x", 0), "");
}
