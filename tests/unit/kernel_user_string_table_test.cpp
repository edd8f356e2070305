// UserStringTable (consumer/kernel/user_string_table.hpp): the system call
// strings copied at sys_enter matched with ftrace's records of the same
// calls: per thread, by number, argument, pointer and nearest time; taken
// once; "" and counted when none; old and surplus strings dropped and
// counted; malformed ring samples refused.
#include "user_string_table.hpp"

#include <cstring>
#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace tracectl::consumer::kernel;

namespace {

constexpr std::int32_t kOpenat = 257;
constexpr std::int32_t kUnlinkat = 263;

tracectl_syscall_string head(std::uint32_t tid, std::int32_t nr, std::uint8_t arg,
                             std::uint64_t pointer, std::uint64_t ts) {
    tracectl_syscall_string h{};
    h.tid = tid;
    h.nr = nr;
    h.arg = arg;
    h.pointer = pointer;
    h.timestamp = ts;
    return h;
}

UserStringQuery query(std::int32_t tid, std::int32_t nr, std::uint8_t arg, std::uint64_t pointer,
                      std::uint64_t ts) {
    UserStringQuery q;
    q.tid = tid;
    q.nr = nr;
    q.arg = arg;
    q.pointer = pointer;
    q.timestamp = ts;
    return q;
}

// A ring sample: the header, then the text.
std::vector<std::byte> sample(tracectl_syscall_string h, std::string_view text) {
    h.length = static_cast<std::uint16_t>(text.size());
    std::vector<std::byte> out(sizeof h + text.size());
    std::memcpy(out.data(), &h, sizeof h);
    std::memcpy(out.data() + sizeof h, text.data(), text.size());
    return out;
}

void add(UserStringTable& t, tracectl_syscall_string h, std::string_view text) {
    t.addSample(sample(h, text));
}

} // namespace

TEST(UserStringTable, EachThreadGetsItsOwnStrings) {
    UserStringTable t;
    add(t, head(10, kOpenat, 1, 0x1000, 100), "/ten/a");
    add(t, head(11, kOpenat, 1, 0x1000, 101), "/eleven/a");
    add(t, head(10, kUnlinkat, 1, 0x2000, 102), "/ten/b");
    // Records converted in another order than the strings came (another CPU).
    EXPECT_EQ(t.take(query(11, kOpenat, 1, 0x1000, 101)), "/eleven/a");
    EXPECT_EQ(t.take(query(10, kUnlinkat, 1, 0x2000, 102)), "/ten/b");
    EXPECT_EQ(t.take(query(10, kOpenat, 1, 0x1000, 100)), "/ten/a");
    EXPECT_EQ(t.counters().matched, 3u);
    EXPECT_EQ(t.counters().unmatched, 0u);
    EXPECT_EQ(t.size(), 0u) << "taken strings are freed";
}

// A thread reusing one buffer: each record gets the copy nearest in time,
// whichever CPU's page is converted first.
TEST(UserStringTable, ABufferReusedByOneThreadMatchesByTime) {
    UserStringTable t;
    add(t, head(7, kOpenat, 1, 0xAA, 1'000), "/first");
    add(t, head(7, kOpenat, 1, 0xAA, 5'000), "/second");
    add(t, head(7, kOpenat, 1, 0xAA, 9'000), "/third");
    EXPECT_EQ(t.take(query(7, kOpenat, 1, 0xAA, 5'010)), "/second");
    EXPECT_EQ(t.take(query(7, kOpenat, 1, 0xAA, 990)), "/first");
    EXPECT_EQ(t.take(query(7, kOpenat, 1, 0xAA, 9'020)), "/third");
}

TEST(UserStringTable, ArgumentNumberAndPointerMustAgree) {
    UserStringTable t;
    add(t, head(5, kOpenat, 1, 0x10, 50), "/x");
    EXPECT_EQ(t.take(query(5, kUnlinkat, 1, 0x10, 50)), "");
    EXPECT_EQ(t.take(query(5, kOpenat, 2, 0x10, 50)), "");
    EXPECT_EQ(t.take(query(5, kOpenat, 1, 0x11, 50)), "");
    EXPECT_EQ(t.take(query(6, kOpenat, 1, 0x10, 50)), "");
    EXPECT_EQ(t.counters().unmatched, 4u);
    EXPECT_EQ(t.take(query(5, kOpenat, 1, 0x10, 50)), "/x");
}

// Two string arguments of one call (renameat's oldname and newname).
TEST(UserStringTable, TwoArgumentsOfOneCall) {
    UserStringTable t;
    add(t, head(5, 264, 1, 0x10, 50), "old name");
    add(t, head(5, 264, 3, 0x20, 50), "new name");
    EXPECT_EQ(t.take(query(5, 264, 3, 0x20, 52)), "new name");
    EXPECT_EQ(t.take(query(5, 264, 1, 0x10, 52)), "old name");
}

TEST(UserStringTable, AStringIsTakenOnce) {
    UserStringTable t;
    add(t, head(5, kOpenat, 1, 0x10, 50), "/once");
    EXPECT_EQ(t.take(query(5, kOpenat, 1, 0x10, 50)), "/once");
    EXPECT_EQ(t.take(query(5, kOpenat, 1, 0x10, 50)), "");
    EXPECT_EQ(t.counters().unmatched, 1u);
}

// The copy was lost (the ring was full) or never made: the record gets ""
// and is counted; a copy farther than the window is some other call's.
TEST(UserStringTable, LostOrFarCopiesAreUnmatched) {
    UserStringTable t;
    EXPECT_EQ(t.take(query(5, kOpenat, 1, 0x10, 50)), "") << "an empty table";
    add(t, head(5, kOpenat, 1, 0x10, 1'000), "/old");
    EXPECT_EQ(t.take(query(5, kOpenat, 1, 0x10, 1'000 + UserStringTable::kMatchWindowNs + 1)), "");
    EXPECT_EQ(t.counters().unmatched, 2u);
    EXPECT_EQ(t.counters().matched, 0u);
}

// An unreadable pointer: the program sends an empty, flagged copy; the
// record gets "".
TEST(UserStringTable, AFaultIsAnEmptyString) {
    UserStringTable t;
    tracectl_syscall_string h = head(5, kOpenat, 1, 0x1, 50);
    h.flags = TRACECTL_SYSCALL_STRING_FAULT;
    add(t, h, "");
    EXPECT_EQ(t.take(query(5, kOpenat, 1, 0x1, 50)), "");
    EXPECT_EQ(t.counters().faults, 1u);
    EXPECT_EQ(t.counters().matched, 1u);
}

// Strings whose records never come (filtered out, lost) are dropped, and
// counted, once older than the limit; newer ones stay.
TEST(UserStringTable, OrphansAreDroppedByAge) {
    UserStringTable t;
    add(t, head(5, kOpenat, 1, 0x10, 100), "/filtered out");
    add(t, head(5, kOpenat, 1, 0x10, 200), "/taken");
    add(t, head(6, kOpenat, 1, 0x10, 300), "/recent");
    EXPECT_EQ(t.take(query(5, kOpenat, 1, 0x10, 200)), "/taken");
    t.dropOlderThan(250);
    EXPECT_EQ(t.counters().orphaned, 1u);
    EXPECT_EQ(t.size(), 1u);
    EXPECT_EQ(t.take(query(5, kOpenat, 1, 0x10, 100)), "");
    EXPECT_EQ(t.take(query(6, kOpenat, 1, 0x10, 300)), "/recent");
}

// A full table drops its oldest strings for new ones; long strings wrap
// around its text memory without corrupting each other.
TEST(UserStringTable, FullTableDropsTheOldestAndLongStringsStayWhole) {
    UserStringTable t(8, 2 * TRACECTL_SYSCALL_STRING_MAX);
    std::vector<std::string> texts;
    for (int i = 0; i < 40; ++i)
        texts.push_back(std::string(1000 + 97 * static_cast<std::size_t>(i) % 3000,
                                    static_cast<char>('a' + i % 26)));
    for (int i = 0; i < 40; ++i) {
        add(t,
            head(1, kOpenat, 1, 0x100 + static_cast<std::uint64_t>(i),
                 static_cast<std::uint64_t>(i) * 10),
            texts[static_cast<std::size_t>(i)]);
        ASSERT_LE(t.size(), 8u);
    }
    // The newest one or two are still whole (2 x 4096 bytes of text).
    EXPECT_EQ(t.take(query(1, kOpenat, 1, 0x100 + 39, 390)), texts[39]);
    EXPECT_EQ(t.take(query(1, kOpenat, 1, 0x100 + 0, 0)), "") << "dropped long ago";
    EXPECT_EQ(t.counters().added, 40u);
    EXPECT_GE(t.counters().orphaned, 30u);
    // Many rounds of taking as they come: nothing is ever dropped.
    UserStringTable u(64, 2 * TRACECTL_SYSCALL_STRING_MAX);
    for (int i = 0; i < 1000; ++i) {
        const std::string& text = texts[static_cast<std::size_t>(i % 40)];
        add(u, head(2, kOpenat, 1, 0x10, static_cast<std::uint64_t>(i)), text);
        ASSERT_EQ(u.take(query(2, kOpenat, 1, 0x10, static_cast<std::uint64_t>(i))), text) << i;
    }
    EXPECT_EQ(u.counters().orphaned, 0u);
    EXPECT_EQ(u.size(), 0u);
}

// Many threads come and go: their FIFOs are found and removed again.
TEST(UserStringTable, ManyThreads) {
    UserStringTable t(4096);
    for (std::uint32_t tid = 1; tid <= 3000; ++tid)
        add(t, head(tid, kOpenat, 1, tid, tid), "/t" + std::to_string(tid));
    for (std::uint32_t tid = 3000; tid >= 1; tid -= 2)
        ASSERT_EQ(t.take(query(static_cast<std::int32_t>(tid), kOpenat, 1, tid, tid)),
                  "/t" + std::to_string(tid));
    for (std::uint32_t tid = 1; tid <= 3000; tid += 2)
        ASSERT_EQ(t.take(query(static_cast<std::int32_t>(tid), kOpenat, 1, tid, tid)),
                  "/t" + std::to_string(tid));
    EXPECT_EQ(t.counters().unmatched, 0u);
    EXPECT_EQ(t.size(), 0u);
}

TEST(UserStringTable, MalformedSamplesAreRefused) {
    UserStringTable t;
    const std::vector<std::byte> good = sample(head(5, kOpenat, 1, 0x10, 50), "/ok");
    t.addSample(std::span<const std::byte>(good.data(), sizeof(tracectl_syscall_string) - 1));
    std::vector<std::byte> longer = good;
    tracectl_syscall_string h = head(5, kOpenat, 1, 0x10, 50);
    h.length = 100; // more than the sample holds
    std::memcpy(longer.data(), &h, sizeof h);
    t.addSample(longer);
    const std::vector<std::byte> badArg = sample(head(5, kOpenat, 6, 0x10, 50), "/x");
    t.addSample(badArg);
    EXPECT_EQ(t.counters().malformed, 3u);
    EXPECT_EQ(t.size(), 0u);
    t.addSample(good);
    EXPECT_EQ(t.take(query(5, kOpenat, 1, 0x10, 50)), "/ok");
}

// Found by the kernel suite: an openat given an unreadable address (its
// copy empty, flagged as a fault) after the thread's other openats.
TEST(UserStringTable, AFaultAfterOtherStringsOfItsThreadIsEmpty) {
    UserStringTable t;
    for (std::uint64_t i = 1; i <= 20; ++i) {
        add(t, head(9, kOpenat, 1, 0x5000 + i, i * 100), "/path/" + std::to_string(i));
        EXPECT_EQ(t.take(query(9, kOpenat, 1, 0x5000 + i, i * 100)), "/path/" + std::to_string(i));
    }
    for (std::uint64_t i = 0; i < 3; ++i) {
        tracectl_syscall_string h = head(9, kOpenat, 1, 8, 5000 + i);
        h.flags = TRACECTL_SYSCALL_STRING_FAULT;
        add(t, h, "");
    }
    for (std::uint64_t i = 0; i < 3; ++i)
        EXPECT_EQ(t.take(query(9, kOpenat, 1, 8, 5000 + i)), "") << i;
}

// Many threads with strings waiting at once: each finds its own.
TEST(UserStringTable, FortyThousandThreadsWaiting) {
    UserStringTable t(100000);
    for (std::uint32_t tid = 1; tid <= 40000; ++tid)
        add(t, head(tid, kOpenat, 1, 0x10, tid), "/t" + std::to_string(tid));
    for (std::uint32_t tid = 40000; tid >= 1; --tid)
        ASSERT_EQ(t.take(query(static_cast<std::int32_t>(tid), kOpenat, 1, 0x10, tid)),
                  "/t" + std::to_string(tid));
    EXPECT_EQ(t.counters().orphaned, 0u);
    EXPECT_EQ(t.size(), 0u);
}

// Limits given after construction hold until the first string.
TEST(UserStringTable, LimitsAreSetBeforeTheFirstString) {
    UserStringTable t(4);
    t.setLimits(100, 1 << 20);
    EXPECT_EQ(t.maxEntries(), 100u);
    for (std::uint32_t i = 0; i < 50; ++i)
        add(t, head(1, kOpenat, 1, i, i), "/x");
    EXPECT_EQ(t.size(), 50u);
    t.setLimits(2, 1 << 20);
    EXPECT_EQ(t.maxEntries(), 100u) << "ignored once strings came";
}

// Found under load (500,000 openat/s of one thread, one buffer, the
// thread moving between CPUs): its strings waiting for the other CPU's
// records, or for records ftrace lost, were walked past by every query of
// the first CPU (95 % of the consumer's time, and ftrace dropped most of
// the trace). Queries now find their time by binary search: records of two
// CPUs converted one CPU after the other, and strings never taken, cost
// nothing to the others.
TEST(UserStringTable, RecordsOfTwoCpusAndLostRecordsAreFoundWhateverTheOrder) {
    UserStringTable t(200000, 8 << 20);
    constexpr std::uint64_t kCalls = 100000;
    for (std::uint64_t i = 0; i < kCalls; ++i)
        add(t, head(3, kOpenat, 1, 0x42, 1000 + 10 * i), "/n" + std::to_string(i));
    // CPU 0 had the even calls, CPU 1 the odd ones; every tenth record was lost.
    for (std::uint64_t cpu = 0; cpu < 2; ++cpu)
        for (std::uint64_t i = cpu; i < kCalls; i += 2) {
            if (i % 10 == 9)
                continue;
            ASSERT_EQ(t.take(query(3, kOpenat, 1, 0x42, 1000 + 10 * i + 3)),
                      "/n" + std::to_string(i));
        }
    EXPECT_EQ(t.counters().unmatched, 0u);
    t.dropOlderThan(1000 + 10 * kCalls);
    EXPECT_EQ(t.counters().orphaned, kCalls / 10);
    EXPECT_EQ(t.size(), 0u);
}
