// bus::ChangeThrottle on a real sd-event loop: the first change is told at
// once, the changes within the next second are told once when it ends,
// and nothing is told without a change.
#include "bus/change_throttle.hpp"
#include "common/event_loop.hpp"

#include <chrono>
#include <gtest/gtest.h>

using namespace std::chrono_literals;
using tracectl::EventLoop;
using tracectl::bus::ChangeThrottle;

namespace {

/// Runs `loop` until `done()` or `limit` passed; returns done().
template <class F>
bool runUntil(EventLoop& loop, F done, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done() && std::chrono::steady_clock::now() < deadline)
        sd_event_run(loop.get(), 10'000); // up to 10 ms per turn
    return done();
}

} // namespace

TEST(ChangeThrottle, TellsTheFirstChangeAtOnceAndTheNextOnesOnceAPeriodLater) {
    EventLoop loop;
    int told = 0;
    std::chrono::steady_clock::time_point first, second;
    ChangeThrottle throttle(loop.get(), 300ms, [&] {
        (++told == 1 ? first : second) = std::chrono::steady_clock::now();
    });
    throttle.changed();
    EXPECT_EQ(told, 1); // at once, without running the loop
    for (int i = 0; i < 50; ++i)
        throttle.changed(); // within the period: one telling at its end
    EXPECT_EQ(told, 1);
    ASSERT_TRUE(runUntil(
        loop, [&] { return told == 2; }, 5000ms));
    EXPECT_GE(second - first, 300ms);
    // No change: nothing more, however long the loop runs.
    runUntil(
        loop, [] { return false; }, 700ms);
    EXPECT_EQ(told, 2);
    // A change after a quiet period is told at once again.
    throttle.changed();
    EXPECT_EQ(told, 3);
}

TEST(ChangeThrottle, CancelDropsThePendingTelling) {
    EventLoop loop;
    int told = 0;
    ChangeThrottle throttle(loop.get(), 200ms, [&] { ++told; });
    throttle.changed();
    throttle.changed();
    throttle.cancel();
    runUntil(
        loop, [] { return false; }, 500ms);
    EXPECT_EQ(told, 1);
}
