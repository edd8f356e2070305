// SocketDeadlines cuts off a socket whose exchange outlives its budget and
// leaves alone one disarmed in time.
#include "apps/socket_deadlines.hpp"

#include <chrono>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace tracectl;
using namespace std::chrono_literals;

namespace {

struct Pair {
    int fds[2] = {-1, -1};
    Pair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0); }
    ~Pair() {
        close(fds[0]);
        close(fds[1]);
    }
};

} // namespace

TEST(SocketDeadlines, ABlockedReadEndsWhenTheBudgetRunsOut) {
    SocketDeadlines deadlines;
    Pair p;
    const auto begin = SocketDeadlines::Clock::now();
    auto armed = deadlines.arm(p.fds[0], 200ms);
    char c = 0;
    // Nobody writes: without the watchdog this read would block for ever.
    EXPECT_EQ(read(p.fds[0], &c, 1), 0); // shut down: end of file
    EXPECT_GE(SocketDeadlines::Clock::now() - begin, 200ms);
    EXPECT_TRUE(armed.expired());
    EXPECT_EQ(send(p.fds[0], "x", 1, MSG_NOSIGNAL), -1) << "later calls must fail too";
}

TEST(SocketDeadlines, ADisarmedSocketIsLeftAlone) {
    SocketDeadlines deadlines;
    Pair p;
    {
        auto armed = deadlines.arm(p.fds[0], 50ms);
        EXPECT_FALSE(armed.expired());
    }
    usleep(150000);
    ASSERT_EQ(write(p.fds[1], "y", 1), 1);
    char c = 0;
    EXPECT_EQ(read(p.fds[0], &c, 1), 1);
    EXPECT_EQ(c, 'y');
}

TEST(SocketDeadlines, EachExchangeHasItsOwnBudget) {
    SocketDeadlines deadlines;
    Pair slow, fast;
    auto late = deadlines.arm(slow.fds[0], 100ms);
    {
        auto soon = deadlines.arm(fast.fds[0], 5000ms);
        char c = 0;
        EXPECT_EQ(read(slow.fds[0], &c, 1), 0);
        EXPECT_FALSE(soon.expired());
    }
    EXPECT_TRUE(late.expired());
}
