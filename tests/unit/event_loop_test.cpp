#include "common/event_loop.hpp"

#include <csignal>
#include <gtest/gtest.h>
#include <thread>
#include <vector>

using tracectl::EventLoop;

TEST(EventLoop, RunsDeferredWorkInOrderThenExits) {
    EventLoop loop;
    std::vector<int> seen;
    loop.defer([&] { seen.push_back(1); });
    loop.defer([&] {
        seen.push_back(2);
        loop.defer([&] { // work deferred from deferred work runs on a later iteration
            seen.push_back(3);
            loop.exit(7);
        });
    });
    EXPECT_EQ(loop.run(), 7);
    EXPECT_EQ(seen, (std::vector<int>{1, 2, 3}));
}

TEST(EventLoop, DeliversSignalsThroughTheLoop) {
    EventLoop loop;
    int got = 0;
    loop.onSignals({SIGUSR1}, [&](int sig) {
        got = sig;
        loop.exit(0);
    });
    loop.defer([] { raise(SIGUSR1); });
    EXPECT_EQ(loop.run(), 0);
    EXPECT_EQ(got, SIGUSR1);
}

TEST(EventLoop, SurvivesThrowingDeferredWork) {
    EventLoop loop;
    bool after = false;
    loop.defer([] { throw std::runtime_error("boom"); });
    loop.defer([&] {
        after = true;
        loop.exit(0);
    });
    EXPECT_EQ(loop.run(), 0);
    EXPECT_TRUE(after);
}

TEST(EventLoop, RunsWorkPostedFromOtherThreadsOnItsOwnThread) {
    EventLoop loop;
    const auto loopThread = std::this_thread::get_id();
    int done = 0;
    std::vector<std::thread> workers;
    for (int i = 0; i < 4; ++i)
        workers.emplace_back([&] {
            for (int k = 0; k < 100; ++k)
                loop.post([&] {
                    EXPECT_EQ(std::this_thread::get_id(), loopThread);
                    if (++done == 400)
                        loop.exit(0);
                });
        });
    EXPECT_EQ(loop.run(), 0);
    for (auto& w : workers)
        w.join();
    EXPECT_EQ(done, 400);
}
