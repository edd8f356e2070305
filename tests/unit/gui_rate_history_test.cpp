// Unit tests of tracectl-gui's rate history (the rate graph's points): one point per
// Statistics sample, events/s while counted and MB/s otherwise, the last minute only, a fall
// to 0 once the daemon went silent, and a fresh start when the clock goes back (restart).
#include "gui/rate_history.hpp"

#include <gtest/gtest.h>

using namespace tracectl::gui;
using tracectl::cli::Counters;

namespace {

constexpr std::uint64_t kS = 1'000'000; // one second in µs

Counters counted(std::uint64_t events, std::uint64_t bytes) {
    return Counters{.eventsRecorded = events, .bytesWritten = bytes};
}

} // namespace

TEST(GuiRateHistory, OnePointPerSampleAfterTheFirst) {
    RateHistory h;
    h.add(counted(0, 0), 100 * kS);
    EXPECT_TRUE(h.points(100 * kS).empty());
    h.add(counted(2000, 4'000'000), 101 * kS);
    h.add(counted(5000, 6'000'000), 102 * kS);
    EXPECT_EQ(h.unit(), "events/s");
    const auto points = h.points(102 * kS);
    ASSERT_EQ(points.size(), 2u);
    EXPECT_EQ(points[0], (RatePoint{1.0, 2000.0}));
    EXPECT_EQ(points[1], (RatePoint{0.0, 3000.0}));
}

TEST(GuiRateHistory, UncountedSessionsGraphMegabytesPerSecond) {
    RateHistory h;
    h.add(Counters{.bytesWritten = 0}, 10 * kS);
    h.add(Counters{.bytesWritten = 3'000'000}, 12 * kS);
    EXPECT_EQ(h.unit(), "MB/s");
    const auto points = h.points(12 * kS);
    ASSERT_EQ(points.size(), 1u);
    EXPECT_DOUBLE_EQ(points[0].value, 1.5);
}

TEST(GuiRateHistory, KeepsTheLastMinuteOnly) {
    RateHistory h;
    for (std::uint64_t t = 0; t <= 120; ++t) {
        h.add(counted(t * 10, t * 100), (1000 + t) * kS);
    }
    const auto points = h.points(1120 * kS);
    ASSERT_FALSE(points.empty());
    EXPECT_LE(points.front().secondsAgo, RateHistory::kWindowS);
    EXPECT_EQ(points.size(), 61u);
    for (const RatePoint& p : points) {
        EXPECT_DOUBLE_EQ(p.value, 10.0);
    }
}

TEST(GuiRateHistory, FallsToZeroOnceTheDaemonWentSilent) {
    RateHistory h;
    h.add(counted(0, 0), 10 * kS);
    h.add(counted(100, 100), 11 * kS);
    EXPECT_EQ(h.points(12 * kS).size(), 1u); // within three missed announcements
    const auto points = h.points(20 * kS);
    ASSERT_EQ(points.size(), 3u);
    EXPECT_EQ(points[1], (RatePoint{8.0, 0.0})); // one announcement after the last
    EXPECT_EQ(points[2], (RatePoint{0.0, 0.0}));
}

TEST(GuiRateHistory, AClockThatGoesBackStartsOver) {
    RateHistory h;
    h.add(counted(0, 0), 500 * kS);
    h.add(counted(100, 100), 501 * kS);
    h.add(counted(0, 0), 3 * kS); // a restarted daemon
    EXPECT_TRUE(h.points(3 * kS).empty());
    h.add(counted(50, 50), 4 * kS);
    ASSERT_EQ(h.points(4 * kS).size(), 1u);
    EXPECT_DOUBLE_EQ(h.points(4 * kS)[0].value, 50.0);
}
