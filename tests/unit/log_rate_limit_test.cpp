#include "common/log_rate_limit.hpp"

#include <gtest/gtest.h>

using tracectl::log::RateLimit;
using namespace std::chrono_literals;

TEST(LogRateLimit, HoldsBackBeyondTheBurstAndSaysHowManyLater) {
    RateLimit limit(2, 10s);
    const auto t0 = RateLimit::Clock::now();
    EXPECT_EQ(limit.pass("a", t0), "a");
    EXPECT_EQ(limit.pass("b", t0 + 1s), "b");
    EXPECT_EQ(limit.pass("c", t0 + 2s), "");
    EXPECT_EQ(limit.pass("d", t0 + 3s), "");
    EXPECT_EQ(limit.pass("e", t0 + 11s), "e (2 similar lines were not logged)");
    EXPECT_EQ(limit.pass("f", t0 + 12s), "f");
    EXPECT_EQ(limit.pass("g", t0 + 13s), "");
}
