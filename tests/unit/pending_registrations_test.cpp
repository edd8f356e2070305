#include "apps/pending_registrations.hpp"
#include "apps/ust_app_registrar.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>

using namespace tracectl;
using Clock = PendingRegistrations::Clock;

namespace {

/// One end of a fresh socketpair, so the halves own real descriptors.
UniqueFd someFd() {
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    close(sv[1]);
    return UniqueFd(sv[0]);
}

PendingRegistrations::Half half(pid_t pid, bool notify, const char* name = "app") {
    PendingRegistrations::Half h;
    h.info.pid = pid;
    h.info.name = name;
    h.isNotify = notify;
    h.fd = someFd();
    return h;
}

} // namespace

TEST(PendingRegistrations, PairsCommandAndNotifyInEitherOrder) {
    PendingRegistrations p;
    const auto now = Clock::now();
    EXPECT_FALSE(p.add(half(10, false), now));
    EXPECT_FALSE(p.add(half(20, true), now));
    EXPECT_EQ(p.size(), 2u);
    auto a = p.add(half(10, true), now);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->info.pid, 10);
    EXPECT_TRUE(a->command);
    EXPECT_TRUE(a->notify);
    auto b = p.add(half(20, false, "second"), now);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->info.name, "second"); // the command socket's message names the app
    EXPECT_EQ(p.size(), 0u);
}

TEST(PendingRegistrations, ARepeatedHalfReplacesTheFirst) {
    PendingRegistrations p;
    const auto now = Clock::now();
    EXPECT_FALSE(p.add(half(10, false, "old"), now));
    EXPECT_FALSE(p.add(half(10, false, "new"), now));
    auto a = p.add(half(10, true), now);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->info.name, "new");
}

TEST(PendingRegistrations, ExpiresLonelyHalves) {
    PendingRegistrations p;
    const auto t0 = Clock::now();
    p.add(half(10, false), t0);
    p.add(half(11, true), t0 + std::chrono::seconds(4));
    EXPECT_EQ(p.expire(t0 + std::chrono::seconds(6), std::chrono::seconds(5)),
              std::vector<pid_t>{10});
    EXPECT_EQ(p.size(), 1u);
}

TEST(PrintableProcessName, KeepsPrintableAsciiOnly) {
    EXPECT_EQ(printableProcessName("demo", 16), "demo");
    EXPECT_EQ(printableProcessName("a\nb\xff\x01", 16), "a?b??");
    const char unterminated[4] = {'a', 'b', 'c', 'd'};
    EXPECT_EQ(printableProcessName(unterminated, 4), "abcd");
}
