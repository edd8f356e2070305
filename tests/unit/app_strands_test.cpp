// AppStrands: the jobs of one app run one at a time and in order, those of
// different apps in parallel (a hung app delays no other app), a step holds
// its app's strand until it says it is finished, and destruction drops the
// jobs not started.
#include "apps/app_strands.hpp"
#include "gate.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <gtest/gtest.h>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace tracectl;
using namespace std::chrono_literals;
using tracectl::testing::Gate;

namespace {} // namespace

TEST(AppStrands, JobsOfOneAppRunOneAtATimeInOrder) {
    std::mutex mutex;
    std::vector<int> order;
    std::atomic<int> running{0};
    std::atomic<int> overlaps{0};
    Gate all;
    {
        AppStrands strands(4, "test-strands");
        for (int i = 0; i < 200; ++i)
            strands.submit(7, [&, i] {
                if (running.fetch_add(1) != 0)
                    ++overlaps;
                std::this_thread::sleep_for(50us);
                {
                    std::lock_guard lock(mutex);
                    order.push_back(i);
                    if (order.size() == 200)
                        all.open();
                }
                running.fetch_sub(1);
            });
        ASSERT_TRUE(all.wait());
    }
    EXPECT_EQ(overlaps.load(), 0);
    ASSERT_EQ(order.size(), 200u);
    for (int i = 0; i < 200; ++i)
        EXPECT_EQ(order[i], i);
}

TEST(AppStrands, AHungAppDelaysNoOtherApp) {
    Gate release;
    Gate hung;
    Gate otherDone;
    AppStrands strands(2, "test-strands");
    strands.submit(1, [&] {
        hung.open();
        release.wait(); // an app that does not answer
    });
    ASSERT_TRUE(hung.wait());
    // Many jobs of other apps, and more of the hung one queued behind it.
    std::atomic<int> others{0};
    for (int pid = 2; pid < 40; ++pid)
        strands.submit(pid, [&] {
            if (++others == 38)
                otherDone.open();
        });
    strands.submit(1, [] {});
    EXPECT_TRUE(otherDone.wait(3s)) << others.load() << " of 38 other apps served";
    EXPECT_EQ(strands.pending(1), 2u); // its own second job still waits
    release.open();
}

// More apps hung at once than the first threads: each other app still
// gets a thread (one more starts), up to the maximum (issue 40, C13).
TEST(AppStrands, AppsHungOnEveryThreadDelayNoOtherAppUpToTheMaximum) {
    Gate release;
    std::atomic<int> hungCount{0};
    Gate allHung;
    Gate otherDone;
    {
        AppStrands strands(1, "test-strands", 4);
        struct Release { // before the strands go, whatever the outcome
            Gate& g;
            ~Release() { g.open(); }
        } releaseAtEnd{release};
        for (int pid = 1; pid <= 3; ++pid)
            strands.submit(pid, [&] {
                if (++hungCount == 3)
                    allHung.open();
                release.wait(); // apps that do not answer
            });
        ASSERT_TRUE(allHung.wait(10s)) << hungCount.load() << " of 3 hung apps got a thread";
        strands.submit(4, [&] {
            otherDone.open();
            release.wait(); // it hangs too: every thread is now held
        });
        EXPECT_TRUE(otherDone.wait(10s)) << "the fourth app waited for a hung one";
        // At the maximum, a fifth app waits for a thread to come free.
        Gate fifth;
        strands.submit(5, [&] { fifth.open(); });
        EXPECT_FALSE(fifth.wait(100ms)) << "more threads than the maximum";
        release.open();
        EXPECT_TRUE(fifth.wait(10s));
    }
}

TEST(AppStrands, AStepHoldsItsStrandUntilFinished) {
    AppStrands strands(2, "test-strands");
    std::mutex mutex;
    AppStrands::Finished finish;
    Gate started;
    Gate next;
    strands.submitStep(3, [&](AppStrands::Finished f) {
        std::lock_guard lock(mutex);
        finish = std::move(f); // finished later, from another thread
        started.open();
    });
    ASSERT_TRUE(started.wait());
    strands.submit(3, [&] { next.open(); });
    EXPECT_FALSE(next.wait(200ms)); // the step is not finished
    {
        std::lock_guard lock(mutex);
        finish();
        finish(); // a second call is harmless
    }
    EXPECT_TRUE(next.wait());
}

TEST(AppStrands, AJobThatThrowsLetsTheNextOneRun) {
    AppStrands strands(1, "test-strands");
    Gate next;
    strands.submit(4, [] { throw std::runtime_error("refused"); });
    strands.submit(4, [&] { next.open(); });
    EXPECT_TRUE(next.wait());
}

TEST(AppStrands, DestructionDropsJobsNotStarted) {
    std::atomic<int> ran{0};
    Gate first;
    Gate release;
    {
        AppStrands strands(1, "test-strands");
        strands.submit(5, [&] {
            ++ran;
            first.open();
            release.wait(500ms);
        });
        for (int i = 0; i < 10; ++i)
            strands.submit(5, [&] { ++ran; });
        ASSERT_TRUE(first.wait());
    } // waits for the running job only
    EXPECT_EQ(ran.load(), 1);
}
