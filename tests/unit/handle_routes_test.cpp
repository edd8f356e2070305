// HandleRoutes, the RCU hash table of app handles: map semantics, and the
// lifetime rule readers rely on (erase, synchronize, then free), checked
// with threads reading while a writer replaces and frees targets; under
// AddressSanitizer a broken rule shows as a use after free.
#include "ust/handle_routes.hpp"

#include <atomic>
#include <chrono>
#include <gtest/gtest.h>
#include <memory>
#include <set>
#include <thread>
#include <vector>

using namespace tracectl;

TEST(HandleRoutes, SetFindReplaceErase) {
    HandleRoutes routes;
    int session = 0, trace = 0, other = 0;
    EXPECT_FALSE(routes.find(10, 1));
    routes.set(10, 1, Route{&session, &trace, false, 0});
    routes.set(10, 2, Route{&session, &trace, true, 7});
    routes.set(11, 1, Route{&other, &other, false, 0});
    const auto r = routes.find(10, 2);
    ASSERT_TRUE(r);
    EXPECT_TRUE(r->isChannel);
    EXPECT_EQ(r->chanId, 7u);
    EXPECT_EQ(routes.find(11, 1)->session, &other);
    EXPECT_EQ(routes.find(10, 1)->session, &session);
    routes.set(10, 2, Route{&session, &trace, true, 9}); // replaced, not added
    EXPECT_EQ(routes.find(10, 2)->chanId, 9u);
    routes.erase(10, 2);
    routes.erase(10, 2); // erasing twice is harmless
    EXPECT_FALSE(routes.find(10, 2));
    EXPECT_TRUE(routes.find(10, 1));
    EXPECT_FALSE(routes.find(-1, -1));
}

TEST(HandleRoutes, ManyKeysSurviveResizes) {
    HandleRoutes routes;
    int target = 0;
    for (int pid = 1; pid <= 200; ++pid)
        for (int handle = 0; handle < 50; ++handle)
            routes.set(pid, handle, Route{&target, &target, true, static_cast<uint32_t>(handle)});
    for (int pid = 1; pid <= 200; ++pid)
        for (int handle = 0; handle < 50; ++handle) {
            const auto r = routes.find(pid, handle);
            ASSERT_TRUE(r) << pid << ' ' << handle;
            EXPECT_EQ(r->chanId, static_cast<uint32_t>(handle));
        }
    for (int pid = 1; pid <= 200; pid += 2)
        for (int handle = 0; handle < 50; ++handle)
            routes.erase(pid, handle);
    EXPECT_FALSE(routes.find(1, 0));
    EXPECT_TRUE(routes.find(2, 0));
}

TEST(HandleRoutes, ReadersNeverSeeAFreedTarget) {
    struct Target {
        std::atomic<int> alive{1};
    };
    HandleRoutes routes;
    auto current = std::make_unique<Target>();
    routes.set(1, 1, Route{current.get(), current.get(), false, 0});
    std::atomic<bool> stop{false};
    std::atomic<long> reads{0};
    std::vector<std::thread> readers;
    for (int i = 0; i < 3; ++i)
        readers.emplace_back([&] {
            while (!stop.load()) {
                RcuReadSection read;
                if (const auto r = routes.find(1, 1)) {
                    // Freed targets would be a use after free (ASan) or read 0.
                    EXPECT_EQ(static_cast<Target*>(r->session)->alive.load(), 1);
                    reads.fetch_add(1);
                }
            }
        });
    while (reads.load() < 100) // the readers are running before the writer starts
        std::this_thread::yield();
    const long before = reads.load();
    // At least 300 replacements, and on until the readers have read through
    // many of them (bounded: a starved machine still ends the test).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (int round = 0; (round < 300 || reads.load() < before + 200) &&
                        std::chrono::steady_clock::now() < deadline;
         ++round) {
        auto next = std::make_unique<Target>();
        routes.erase(1, 1);
        HandleRoutes::synchronize();
        current->alive = 0;
        current = std::move(next);
        routes.set(1, 1, Route{current.get(), current.get(), false, 0});
    }
    stop = true;
    for (auto& t : readers)
        t.join();
    EXPECT_GT(reads.load(), before);
}

TEST(HandleRoutes, KeysOfManyAppsSpreadOverTheLowBits) {
    // Regression: the identity hash put handle h of every app into one
    // bucket (the bucket is chosen by the low bits), and the table's resize
    // worker doubled it without end: the daemon grew by 350 MB/s with five
    // traced apps (break-it pass).
    for (const int handle : {0, 1, 2, 7}) {
        std::set<unsigned long> buckets;
        for (pid_t pid = 1000; pid < 2024; ++pid)
            buckets.insert(routeHash(pid, handle) & 1023);
        EXPECT_GT(buckets.size(), 500u) << "handle " << handle;
    }
    std::set<unsigned long> buckets;
    for (int handle = 0; handle < 1024; ++handle)
        buckets.insert(routeHash(4242, handle) & 1023);
    EXPECT_GT(buckets.size(), 500u);
}
