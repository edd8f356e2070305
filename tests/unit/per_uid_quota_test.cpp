#include "apps/per_uid_quota.hpp"

#include <gtest/gtest.h>
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
