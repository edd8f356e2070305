#include "apps/fair_queue.hpp"
#include "apps/per_uid_quota.hpp"

#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <utility>
#include <vector>

using namespace tracectl;

namespace {

/// Pops everything `q` lets start, each taking a unit of `running`; returns
/// "uid:item" in the order served.
std::vector<std::string> drain(FairQueue<int>& q, PerUidQuota& running,
                               std::vector<PerUidQuota::Slot>& held) {
    std::vector<std::string> order;
    while (auto next = q.pop([&](uid_t uid) { return running.fits(uid); })) {
        held.push_back(running.tryAcquire(next->first));
        order.push_back(std::to_string(next->first) + ":" + std::to_string(next->second));
    }
    return order;
}

} // namespace

TEST(FairQueue, ItemsOfOneUidAreServedInOrder) {
    FairQueue<int> q;
    for (int i = 0; i < 5; ++i)
        q.push(7, i);
    EXPECT_EQ(q.size(), 5u);
    EXPECT_EQ(q.size(7), 5u);
    for (int i = 0; i < 5; ++i) {
        const auto next = q.pop([](uid_t) { return true; });
        ASSERT_TRUE(next);
        EXPECT_EQ(next->first, 7u);
        EXPECT_EQ(next->second, i);
    }
    EXPECT_FALSE(q.pop([](uid_t) { return true; }));
    EXPECT_TRUE(q.empty());
}

TEST(FairQueue, UidsTakeTurnsWhateverTheOrderTheirItemsCameIn) {
    FairQueue<int> q;
    // One uid's burst first, then one item each of two others.
    for (int i = 0; i < 4; ++i)
        q.push(1000, i);
    q.push(0, 100);
    q.push(65534, 200);
    PerUidQuota running(10, 10);
    std::vector<PerUidQuota::Slot> held;
    EXPECT_EQ(drain(q, running, held), (std::vector<std::string>{"0:100", "1000:0", "65534:200",
                                                                 "1000:1", "1000:2", "1000:3"}));
}

TEST(FairQueue, AUidAtItsLimitWaitsWithoutHoldingUpTheOthers) {
    FairQueue<int> q;
    for (int i = 0; i < 6; ++i)
        q.push(1, i);
    q.push(2, 10);
    q.push(2, 11);
    PerUidQuota running(2, 3); // two at once per uid, three in all
    std::vector<PerUidQuota::Slot> held;
    EXPECT_EQ(drain(q, running, held), (std::vector<std::string>{"1:0", "2:10", "1:1"}));
    // Nothing more until one finishes; uid 2's next is not passed over.
    EXPECT_TRUE(drain(q, running, held).empty());
    held.erase(held.begin() + 1); // uid 2's query ends
    EXPECT_EQ(drain(q, running, held), (std::vector<std::string>{"2:11"}));
    held.clear();
    EXPECT_EQ(drain(q, running, held), (std::vector<std::string>{"1:2", "1:3"}));
}

TEST(FairQueue, AnErasedItemIsGoneAndTheRestKeepTheirOrder) {
    FairQueue<std::unique_ptr<int>> q;
    const auto a = q.push(5, std::make_unique<int>(1));
    const auto b = q.push(5, std::make_unique<int>(2));
    const auto c = q.push(5, std::make_unique<int>(3));
    ASSERT_NE(q.find(b), nullptr);
    EXPECT_EQ(**q.find(b), 2);
    EXPECT_TRUE(q.erase(b));
    EXPECT_FALSE(q.erase(b));
    EXPECT_EQ(q.find(b), nullptr);
    EXPECT_EQ(q.size(5), 2u);
    auto first = q.pop([](uid_t) { return true; });
    ASSERT_TRUE(first);
    EXPECT_EQ(*first->second, 1);
    EXPECT_EQ(q.find(a), nullptr); // popped: not waiting any more
    EXPECT_TRUE(q.erase(c));
    EXPECT_TRUE(q.empty());
    EXPECT_FALSE(q.pop([](uid_t) { return true; }));
}

// The burst of issue 13: 1000 apps of one uid arriving 20 at a time, with
// at most 16 version queries of a uid at once. Before, every app past the
// 16th of a moment was closed ("16 apps of uid 0 are registering already");
// now each waits for its turn, and all 1000 are served, in order.
TEST(FairQueue, ABurstOfOneUidIsServedInFullAndInOrder) {
    FairQueue<int> q;
    PerUidQuota running(16, 64);
    PerUidQuota fds(waitingFdShares(1024).perUid, waitingFdShares(1024).total);
    std::vector<std::pair<PerUidQuota::Slot, int>> inFlight;
    std::vector<PerUidQuota::Slot> waitingFds;
    std::vector<int> served;
    int arrived = 0;
    while (static_cast<int>(served.size()) < 1000) {
        // Up to 20 apps live at once: those waiting and those being served.
        while (arrived < 1000 && static_cast<int>(q.size() + inFlight.size()) < 20) {
            auto slot = fds.tryAcquire(0, 2);
            ASSERT_TRUE(slot) << "app " << arrived << " refused";
            waitingFds.push_back(std::move(slot));
            q.push(0, arrived++);
        }
        while (auto next = q.pop([&](uid_t uid) { return running.fits(uid); })) {
            waitingFds.pop_back(); // its fds go with it to its query
            inFlight.emplace_back(running.tryAcquire(next->first), next->second);
        }
        ASSERT_FALSE(inFlight.empty());
        ASSERT_LE(inFlight.size(), 16u);
        served.push_back(inFlight.front().second); // the oldest query ends
        inFlight.erase(inFlight.begin());
    }
    for (int i = 0; i < 1000; ++i)
        ASSERT_EQ(served[static_cast<std::size_t>(i)], i);
}
