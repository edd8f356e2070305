// The ftrace page walker (consumer/kernel/ftrace_page.hpp) on synthetic
// pages: each type_len, time records, padding, missed-event flags, and
// hostile pages (random bytes, every truncation) that must never make it
// read outside the page.
#include "ftrace_page.hpp"
#include "kernel_test_support.hpp"

#include <gtest/gtest.h>
#include <random>

using namespace tracectl::consumer::kernel;
using ktest::Bytes;
using ktest::PageWriter;
using ktest::Record;

namespace {

struct Seen {
    std::uint64_t ts;
    std::uint32_t length;
    std::uint16_t type;
};

PageWalk walk(const Bytes& page, std::vector<Seen>& seen, const PageFormat& f = {}) {
    return walkPage(page.data(), page.size(), f, [&](const FtraceRecord& r) {
        std::uint16_t type = 0;
        if (r.length >= 2)
            std::memcpy(&type, r.payload, 2);
        // The payload must lie inside the page.
        EXPECT_GE(r.payload, page.data());
        EXPECT_LE(r.payload + r.length, page.data() + page.size());
        seen.push_back({r.timestamp, r.length, type});
    });
}

Record rec(std::uint16_t type, std::size_t extra) {
    Record r(type, 42);
    for (std::size_t i = 0; i < extra; ++i)
        r.le(i & 0xff, 1);
    return r;
}

} // namespace

TEST(FtracePage, HeaderFields) {
    PageWriter w(1000);
    w.record(5, rec(1, 8));
    const Bytes page = w.finish();
    const auto h = readPageHeader(page.data(), page.size(), PageFormat{});
    ASSERT_TRUE(h);
    EXPECT_EQ(h->timestamp, 1000u);
    EXPECT_EQ(h->dataLength, 4u + 16u);
    EXPECT_FALSE(h->missedEvents);
    EXPECT_FALSE(h->missedStored);
}

TEST(FtracePage, EverySmallTypeLen) {
    std::vector<Seen> seen;
    // type_len 1 cannot hold the 8 common bytes: give it 4 bytes raw.
    PageWriter w2(100);
    Bytes four{std::byte{1}, std::byte{0}, std::byte{0}, std::byte{0}};
    w2.record(1, four);
    for (std::uint32_t t = 2; t <= 28; ++t)
        w2.record(t, rec(static_cast<std::uint16_t>(t), 4 * t - 8));
    const PageWalk r = walk(w2.finish(), seen);
    EXPECT_FALSE(r.malformed);
    ASSERT_EQ(seen.size(), 28u);
    std::uint64_t ts = 100;
    for (std::uint32_t t = 1; t <= 28; ++t) {
        ts += t;
        EXPECT_EQ(seen[t - 1].length, 4 * t) << t;
        EXPECT_EQ(seen[t - 1].ts, ts) << t;
        EXPECT_EQ(seen[t - 1].type, t) << t;
    }
    EXPECT_EQ(r.records, 28u);
    EXPECT_EQ(r.endTimestamp, ts);
}

TEST(FtracePage, TypeLenZeroLengthCountsItself) {
    PageWriter w(0);
    w.record(7, rec(9, 3), true); // 11 bytes: length word 15, padded to 12
    w.record(1, rec(10, 200));    // 208 bytes: too big for type_len, type 0
    w.record(1, rec(11, 0));      // and a small one after: alignment kept
    std::vector<Seen> seen;
    const PageWalk r = walk(w.finish(), seen);
    EXPECT_FALSE(r.malformed);
    ASSERT_EQ(seen.size(), 3u);
    EXPECT_EQ(seen[0].length, 11u);
    EXPECT_EQ(seen[0].type, 9u);
    EXPECT_EQ(seen[0].ts, 7u);
    EXPECT_EQ(seen[1].length, 208u);
    EXPECT_EQ(seen[1].type, 10u);
    EXPECT_EQ(seen[2].length, 8u);
    EXPECT_EQ(seen[2].type, 11u);
    EXPECT_EQ(seen[2].ts, 9u);
}

TEST(FtracePage, TypeLenZeroShorterThanItsWordIsMalformed) {
    PageWriter w(0);
    w.record(1, rec(1, 0));
    w.u32(PageWriter::header(0, 1));
    w.u32(3);
    w.record(1, rec(2, 0));
    std::vector<Seen> seen;
    const PageWalk r = walk(w.finish(), seen);
    EXPECT_TRUE(r.malformed);
    ASSERT_EQ(seen.size(), 1u);
}

TEST(FtracePage, TimeExtendAddsHighBitsAndDelta) {
    PageWriter w(1000);
    w.extend(3, 2); // += (2 << 27) + 3
    w.record(4, rec(1, 0));
    std::vector<Seen> seen;
    walk(w.finish(), seen);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].ts, 1000u + (2ull << 27) + 3 + 4);
}

TEST(FtracePage, AbsoluteTimestampKeepsTheTopBits) {
    const std::uint64_t base = (0x1Bull << 59) | 12345; // top 5 bits set
    PageWriter w(base);
    w.record(1, rec(1, 0));
    const std::uint64_t abs = (5ull << 40) | 777; // below bit 59
    w.absolute(abs);
    w.record(10, rec(2, 0));
    std::vector<Seen> seen;
    const PageWalk r = walk(w.finish(), seen);
    EXPECT_FALSE(r.malformed);
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0].ts, base + 1);
    EXPECT_EQ(seen[1].ts, ((0x1Bull << 59) | abs) + 10);
}

TEST(FtracePage, PaddingIsSkippedNotDelivered) {
    PageWriter w(50);
    w.record(1, rec(1, 0));
    w.padding(5, 20); // a discarded event: 4 + 20 bytes, delta counted
    w.record(2, rec(2, 0));
    std::vector<Seen> seen;
    const PageWalk r = walk(w.finish(), seen);
    EXPECT_FALSE(r.malformed);
    EXPECT_EQ(r.paddings, 1u);
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[1].type, 2u);
    EXPECT_EQ(seen[1].ts, 50u + 1 + 5 + 2);
}

TEST(FtracePage, NullPaddingEndsThePage) {
    PageWriter w(0);
    w.record(1, rec(1, 0));
    w.nullPadding();
    w.record(1, rec(2, 0)); // inside the commit, but after the null padding
    std::vector<Seen> seen;
    const PageWalk r = walk(w.finish(), seen);
    EXPECT_FALSE(r.malformed);
    ASSERT_EQ(seen.size(), 1u);
}

TEST(FtracePage, NullPaddingAsTheLastWord) {
    PageWriter w(0);
    w.record(1, rec(1, 0));
    w.nullPadding();
    std::vector<Seen> seen;
    EXPECT_FALSE(walk(w.finish(), seen).malformed);
    EXPECT_EQ(seen.size(), 1u);
}

TEST(FtracePage, PaddingOfZeroOrPastTheDataIsMalformed) {
    for (std::uint32_t length : {0u, 400u}) {
        PageWriter w(0);
        w.record(1, rec(1, 0));
        w.u32(PageWriter::header(29, 3));
        w.u32(length);
        std::vector<Seen> seen;
        EXPECT_TRUE(walk(w.finish(), seen).malformed) << length;
        EXPECT_EQ(seen.size(), 1u);
    }
}

TEST(FtracePage, MissedEventsWithStoredCount) {
    PageWriter w(0);
    w.record(1, rec(1, 0));
    const Bytes page = w.finish(0, 1234);
    const auto h = readPageHeader(page.data(), page.size(), PageFormat{});
    ASSERT_TRUE(h);
    EXPECT_TRUE(h->missedEvents);
    EXPECT_TRUE(h->missedStored);
    EXPECT_EQ(h->missedCount, 1234u);
    EXPECT_EQ(h->dataLength, 12u); // the count is not data
    std::vector<Seen> seen;
    EXPECT_FALSE(walk(page, seen).malformed);
    EXPECT_EQ(seen.size(), 1u);
}

TEST(FtracePage, MissedEventsWithoutCount) {
    PageWriter w(0);
    w.record(1, rec(1, 0));
    const Bytes page = w.finish(1ull << 31);
    const auto h = readPageHeader(page.data(), page.size(), PageFormat{});
    ASSERT_TRUE(h);
    EXPECT_TRUE(h->missedEvents);
    EXPECT_FALSE(h->missedStored);
    EXPECT_EQ(h->missedCount, 0u);
}

TEST(FtracePage, StoredFlagWithoutRoomIsNotStored) {
    // A 64-byte page: 48 bytes of data room, 44 used, no room for a u64.
    Bytes page(64, std::byte{0});
    ktest::Bytes hdr;
    ktest::putLe(hdr, 0, 8);
    ktest::putLe(hdr, 44 | (1ull << 31) | (1ull << 30), 8); // 44 data bytes + 8 > 48
    std::copy(hdr.begin(), hdr.end(), page.begin());
    PageFormat f;
    f.pageSize = 64;
    const auto h = readPageHeader(page.data(), page.size(), f);
    ASSERT_TRUE(h);
    EXPECT_TRUE(h->missedEvents);
    EXPECT_FALSE(h->missedStored);
}

TEST(FtracePage, DataLengthPastThePageIsRejected) {
    PageWriter w(0);
    w.record(1, rec(1, 0));
    Bytes page = w.finish();
    const std::uint64_t commit = 4096 - 16 + 1;
    std::memcpy(page.data() + 8, &commit, 8);
    std::vector<Seen> seen;
    EXPECT_TRUE(walk(page, seen).malformed);
    EXPECT_TRUE(seen.empty());
    EXPECT_FALSE(readPageHeader(page.data(), page.size(), PageFormat{}));
    // Exactly the page is fine.
    const std::uint64_t full = 4096 - 16;
    std::memcpy(page.data() + 8, &full, 8);
    EXPECT_TRUE(readPageHeader(page.data(), page.size(), PageFormat{}));
}

TEST(FtracePage, RecordPastTheDataIsMalformed) {
    PageWriter w(0);
    w.record(1, rec(1, 0));
    w.u32(PageWriter::header(20, 1)); // 80 bytes announced, none follow
    std::vector<Seen> seen;
    EXPECT_TRUE(walk(w.finish(), seen).malformed);
    EXPECT_EQ(seen.size(), 1u);
}

TEST(FtracePage, StrayBytesAtTheEndAreMalformed) {
    PageWriter w(0);
    w.record(1, rec(1, 0));
    Bytes page = w.finish();
    const std::uint64_t commit = 12 + 2;
    std::memcpy(page.data() + 8, &commit, 8);
    std::vector<Seen> seen;
    EXPECT_TRUE(walk(page, seen).malformed);
    EXPECT_EQ(seen.size(), 1u);
}

TEST(FtracePage, OtherFormats) {
    // A 32-bit kernel's header: u64 timestamp, u32 commit, data at 12.
    PageFormat f;
    f.commitSize = 4;
    f.dataOffset = 12;
    f.pageSize = 8192;
    Bytes page;
    ktest::putLe(page, 77, 8);
    ktest::putLe(page, 12, 4);
    ktest::putLe(page, PageWriter::header(2, 3), 4);
    const Record r = rec(5, 0);
    page.insert(page.end(), r.bytes().begin(), r.bytes().end());
    page.resize(8192);
    std::vector<Seen> seen;
    EXPECT_FALSE(walk(page, seen, f).malformed);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].ts, 80u);
    EXPECT_EQ(seen[0].type, 5u);

    for (PageFormat bad : {PageFormat{4096, 0, 4, 8, 8, 16}, PageFormat{4096, 0, 8, 8, 2, 16},
                           PageFormat{4096, 0, 8, 8, 8, 12}, PageFormat{16, 0, 8, 8, 8, 16}}) {
        EXPECT_FALSE(validPageFormat(bad));
        EXPECT_TRUE(walk(page, seen, bad).malformed);
    }
}

TEST(FtracePage, ShortBufferUsesOnlyWhatIsThere) {
    PageWriter w(0);
    w.record(1, rec(1, 0));
    const Bytes page = w.finish();
    std::vector<Seen> seen;
    // The commit (12) fits in 28 bytes but not 27.
    EXPECT_FALSE(walkPage(page.data(), 28, PageFormat{}, [](const FtraceRecord&) {}).malformed);
    EXPECT_TRUE(walkPage(page.data(), 27, PageFormat{}, [](const FtraceRecord&) {}).malformed);
    EXPECT_TRUE(walkPage(page.data(), 15, PageFormat{}, [](const FtraceRecord&) {}).malformed);
    EXPECT_TRUE(walkPage(page.data(), 0, PageFormat{}, [](const FtraceRecord&) {}).malformed);
}

// Random garbage and every truncation of a valid page: the walk ends,
// records stay inside the buffer (checked in walk()), and under ASan no
// read leaves it. Each buffer is its own allocation of exactly its size.
TEST(FtracePage, HostileBytesNeverReadOutside) {
    std::mt19937_64 rng(20261201);
    for (int i = 0; i < 3000; ++i) {
        const std::size_t size = rng() % 4200;
        Bytes page(size);
        for (auto& b : page)
            b = static_cast<std::byte>(rng());
        if (size >= 16 && (i % 2 == 0)) { // a plausible commit, to walk further
            const std::uint64_t commit = (rng() % (size - 15)) | (rng() & (3ull << 30));
            std::memcpy(page.data() + 8, &commit, 8);
        }
        std::vector<Seen> seen;
        PageFormat f;
        f.pageSize = static_cast<std::uint32_t>(4096 + (i % 3) * 100);
        walk(page, seen, f);
    }

    PageWriter w(0);
    w.record(1, rec(1, 0));
    w.record(2, rec(2, 300));
    w.extend(1, 1);
    w.absolute(12345678);
    w.padding(2, 12);
    w.record(3, rec(3, 20), true);
    const Bytes full = w.finish(0, 99);
    const std::size_t used = 16 + w.dataSize() + 8;
    for (std::size_t n = 0; n <= used + 4; ++n) {
        Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
        std::vector<Seen> seen;
        const PageWalk r = walk(cut, seen);
        if (n < 16 + w.dataSize())
            EXPECT_TRUE(r.malformed) << n;
        else
            EXPECT_EQ(seen.size(), 3u) << n;
    }
}

TEST(FtracePage, TimeRecordsCutAtTheDataEndAreMalformed) {
    for (std::uint32_t type : {0u, 29u, 30u, 31u}) {
        PageWriter w(0);
        w.record(1, rec(1, 0));
        w.u32(PageWriter::header(type, 1)); // its u32 is past the commit
        std::vector<Seen> seen;
        const PageWalk r = walk(w.finish(), seen);
        EXPECT_TRUE(r.malformed) << type;
        EXPECT_EQ(seen.size(), 1u) << type;
    }
}

TEST(FtracePage, EmptyPage) {
    const Bytes page = PageWriter(5).finish();
    std::vector<Seen> seen;
    const PageWalk r = walk(page, seen);
    EXPECT_FALSE(r.malformed);
    EXPECT_EQ(r.records, 0u);
    EXPECT_EQ(r.endTimestamp, 5u);
}
