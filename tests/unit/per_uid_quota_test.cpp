#include "apps/per_uid_quota.hpp"

#include <gtest/gtest.h>
#include <optional>
#include <utility>
#include <vector>

using namespace tracectl;

TEST(PerUidQuota, OneUidIsRefusedAtItsShareAndOthersAreNot) {
    PerUidQuota q(3, 10);
    std::vector<PerUidQuota::Slot> bob;
    for (int i = 0; i < 3; ++i) {
        bob.push_back(q.tryAcquire(1001));
        EXPECT_TRUE(bob.back());
    }
    EXPECT_FALSE(q.tryAcquire(1001));
    EXPECT_EQ(q.held(1001), 3u);
    const auto alice = q.tryAcquire(1000);
    EXPECT_TRUE(alice);
    EXPECT_EQ(q.held(1000), 1u);
    EXPECT_EQ(q.held(), 4u);
}

TEST(PerUidQuota, TheTotalBoundsAllUidsTogether) {
    PerUidQuota q(2, 5);
    std::vector<PerUidQuota::Slot> slots;
    for (uid_t uid = 1; uid <= 3; ++uid)
        for (int i = 0; i < 2; ++i)
            if (auto s = q.tryAcquire(uid))
                slots.push_back(std::move(s));
    EXPECT_EQ(slots.size(), 5u);
    EXPECT_EQ(q.held(), 5u);
    EXPECT_FALSE(q.tryAcquire(4)); // a fresh uid too
    slots.pop_back();
    EXPECT_TRUE(q.tryAcquire(4)); // a temporary: given back at once
    EXPECT_EQ(q.held(), 4u);
}

TEST(PerUidQuota, SlotsGiveTheirUnitBackOnceWhenDestroyedOrMovedOver) {
    PerUidQuota q(1, 10);
    {
        auto a = q.tryAcquire(7);
        ASSERT_TRUE(a);
        auto b = std::move(a);
        EXPECT_FALSE(a); // NOLINT(bugprone-use-after-move): moved-from is empty
        EXPECT_TRUE(b);
        EXPECT_EQ(q.held(7), 1u);
        PerUidQuota::Slot c;
        c = std::move(b);
        EXPECT_EQ(q.held(7), 1u);
        c = q.tryAcquire(7); // refused: c's unit is still held; c's is given back
        EXPECT_FALSE(c);
        EXPECT_EQ(q.held(7), 0u);
        c = q.tryAcquire(7);
        EXPECT_TRUE(c);
    }
    EXPECT_EQ(q.held(7), 0u);
    EXPECT_EQ(q.held(), 0u);
    EXPECT_TRUE(q.tryAcquire(7));
}

TEST(PerUidQuota, ASlotMayHoldSeveralUnitsAndGivesThemAllBack) {
    PerUidQuota q(4, 6);
    auto two = q.tryAcquire(1, 2);
    ASSERT_TRUE(two);
    EXPECT_EQ(two.units(), 2u);
    EXPECT_EQ(q.held(1), 2u);
    EXPECT_TRUE(q.fits(1, 2));
    EXPECT_FALSE(q.fits(1, 3)); // over the uid's share of 4
    EXPECT_FALSE(q.tryAcquire(1, 3));
    auto other = q.tryAcquire(2, 4);
    ASSERT_TRUE(other);
    EXPECT_FALSE(q.fits(3, 1)); // the total of 6 is held
    EXPECT_EQ(q.largestHolder(), std::optional<uid_t>(2));
    other = PerUidQuota::Slot{};
    EXPECT_EQ(q.held(), 2u);
    EXPECT_EQ(q.largestHolder(), std::optional<uid_t>(1));
    two = PerUidQuota::Slot{};
    EXPECT_EQ(q.held(), 0u);
    EXPECT_EQ(q.largestHolder(), std::nullopt);
}

TEST(PerUidQuota, WaitingFdSharesAreHalfTheOpenFilesLimitAndAQuarterOfThatPerUid) {
    // tracectld.service's LimitNOFILE=65536.
    EXPECT_EQ(waitingFdShares(65536).total, 32768u);
    EXPECT_EQ(waitingFdShares(65536).perUid, 8192u);
    // A default soft limit: still far above a burst of apps of one uid
    // (two fds per app waiting), and no uid can take more than a quarter.
    EXPECT_EQ(waitingFdShares(1024).total, 512u);
    EXPECT_EQ(waitingFdShares(1024).perUid, 128u);
    EXPECT_EQ(waitingFdShares(10).total, 128u); // a floor
    EXPECT_EQ(waitingFdShares(RLIM_INFINITY).total, std::size_t{1} << 19);
}
