// The system-call string program against the real kernel (root, BPF):
// loaded by the daemon's loader (kernel/syscall_string_probes.hpp),
// attached to syscalls:sys_enter_openat, read by the consumer's reader
// (kernel/syscall_string_ring.hpp) into its table. Strings come whole, an
// unreadable pointer is an empty copy flagged as a fault, a disabled
// program records nothing, and a call it is not attached to costs nothing.
#include "kernel/syscall_string_probes.hpp"
#include "kernel/syscall_string_ring.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <string>
#include <sys/syscall.h>
#include <unistd.h>

using namespace tracectl;
using namespace tracectl::consumer::kernel;

namespace {

UniqueFd dupOf(int fd) {
    return UniqueFd(::fcntl(fd, F_DUPFD_CLOEXEC, 3));
}

class SyscallStringsLive : public ::testing::Test {
protected:
    void SetUp() override {
        if (::geteuid() != 0)
            GTEST_SKIP() << "needs root (BPF)";
    }
};

std::int32_t tid() {
    return static_cast<std::int32_t>(::gettid());
}

} // namespace

TEST_F(SyscallStringsLive, CopiesOpenatsFilenameAndFlagsAFault) {
    tracectl::kernel::SyscallStringProbes probes(1 << 20);
    probes.attach("sys_enter_openat", 1u << 1); // filename is argument 1
    probes.setEnabled(true);
    SyscallStringRing ring(dupOf(probes.ringFd()), dupOf(probes.countersFd()));
    UserStringTable table;

    const std::string name = "/nonexistent/tracectl test \xC3\xA9/" + std::string(3000, 'x');
    EXPECT_EQ(::openat(AT_FDCWD, name.c_str(), O_RDONLY | O_CLOEXEC), -1);
    EXPECT_EQ(::syscall(SYS_openat, AT_FDCWD, reinterpret_cast<const char*>(8), O_RDONLY), -1);
    ring.drainInto(table);

    UserStringQuery q;
    q.tid = tid();
    q.nr = SYS_openat;
    q.arg = 1;
    q.pointer = reinterpret_cast<std::uintptr_t>(name.c_str());
    // The record's time is not known here: the copy's own is within the
    // window of any time taken now.
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    q.timestamp = static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
                  static_cast<std::uint64_t>(ts.tv_nsec);
    EXPECT_EQ(table.take(q), name);
    q.pointer = 8;
    EXPECT_EQ(table.take(q), "");
    EXPECT_EQ(table.counters().faults, 1u);
    EXPECT_EQ(table.counters().matched, 2u);
    EXPECT_EQ(ring.dropped(), 0u);

    // Disabled: nothing more of this thread's calls. (The program is the
    // whole system's: other processes' calls copied before the switch may
    // still be in the ring, so the check is on this call's own string.)
    const auto copied = [&](const std::string& path) {
        UserStringQuery mine = q;
        mine.pointer = reinterpret_cast<std::uintptr_t>(path.c_str());
        ::clock_gettime(CLOCK_MONOTONIC, &ts);
        mine.timestamp = static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
                         static_cast<std::uint64_t>(ts.tv_nsec);
        return table.take(mine) == path;
    };
    probes.setEnabled(false);
    const std::string off = "/nonexistent/off";
    EXPECT_EQ(::openat(AT_FDCWD, off.c_str(), O_RDONLY | O_CLOEXEC), -1);
    ring.drainInto(table);
    EXPECT_FALSE(copied(off));

    // Detached: nothing either, even enabled.
    probes.setEnabled(true);
    probes.detach("sys_enter_openat");
    const std::string detached = "/nonexistent/detached";
    EXPECT_EQ(::openat(AT_FDCWD, detached.c_str(), O_RDONLY | O_CLOEXEC), -1);
    ring.drainInto(table);
    EXPECT_FALSE(copied(detached));
}

TEST_F(SyscallStringsLive, AnEventWithoutSuchTracepointIsRefused) {
    tracectl::kernel::SyscallStringProbes probes(4096);
    EXPECT_THROW(probes.attach("sys_enter_nosuchcall", 1),
                 tracectl::kernel::SyscallStringProbeError);
}

// A ring buffer without room: every copy is either in the ring or counted
// as dropped (the consumer adds those to the channel's discarded events).
TEST_F(SyscallStringsLive, ARingWithoutRoomCountsWhatItLost) {
    tracectl::kernel::SyscallStringProbes probes(4096); // one page
    probes.attach("sys_enter_truncate", 1u << 0);       // truncate(path, length)
    probes.setEnabled(true);
    SyscallStringRing ring(dupOf(probes.ringFd()), dupOf(probes.countersFd()));
    UserStringTable table;
    constexpr int kCalls = 500;
    const std::string path = "/nonexistent/tracectl/" + std::string(100, 'r');
    for (int i = 0; i < kCalls; ++i)
        EXPECT_EQ(::truncate(path.c_str(), 0), -1);
    ring.drainInto(table);
    // Mine are whole; others' truncate(2) calls may add to both counts.
    std::size_t mine = 0;
    UserStringQuery q;
    q.tid = tid();
    q.nr = SYS_truncate;
    q.arg = 0;
    q.pointer = reinterpret_cast<std::uintptr_t>(path.c_str());
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    q.timestamp = static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
                  static_cast<std::uint64_t>(ts.tv_nsec);
    while (table.take(q) == path)
        ++mine;
    EXPECT_GT(mine, 0u);
    EXPECT_LT(mine, static_cast<std::size_t>(kCalls)) << "a page holds fewer";
    EXPECT_GE(mine + ring.dropped(), static_cast<std::size_t>(kCalls));
    EXPECT_GT(ring.dropped(), 0u);
}
