// PacketBuilder (consumer/kernel/packet_builder.hpp) byte for byte against
// kernel_records.hpp's layout, and ConversionTable.
#include "conversion_table.hpp"
#include "kernel_test_support.hpp"
#include "packet_builder.hpp"

#include <deque>
#include <gtest/gtest.h>

using namespace tracectl::consumer;
using namespace tracectl::consumer::kernel;
using namespace tracectl::kernel_records;
using ktest::Bytes;
using ktest::getLe;
using ktest::putLe;
using ktest::Record;

namespace {

Uuid testUuid() {
    Uuid u;
    for (std::size_t i = 0; i < u.size(); ++i)
        u[i] = static_cast<std::byte>(0xA0 + i);
    return u;
}

// A sched_switch-like record with every step kind:
//   8  char comm[16]; 24 i32 tid; 28 __data_loc char[] s; 32 __rel_loc
//   char[] r; 36 __data_loc u16[] seq; 40.. dynamic bytes
EventConversion conversion() {
    EventConversion c;
    c.ftraceId = 300;
    c.ctfId = 7;
    c.minSize = 40;
    c.steps = {{StepKind::Copy, 8, 20, 1},
               {StepKind::DataLocString, 28, 4, 1},
               {StepKind::RelLocString, 32, 4, 1},
               {StepKind::DataLocSequence, 36, 4, 2}};
    return c;
}

Record record(std::uint32_t sLoc, std::uint32_t rLoc, std::uint32_t seqLoc) {
    Record r(300, 4242);
    r.text("bash", 16).le(77, 4).le(sLoc, 4).le(rLoc, 4).le(seqLoc, 4);
    r.raw(std::string_view("hello\0", 6));       // 40: "hello" + NUL
    r.raw("ab");                                 // 46: no NUL
    r.le(0x1111, 2).le(0x2222, 2).le(0x3333, 2); // 48: three u16
    return r;                                    // 54 bytes
}

Record goodRecord() {
    return record((6u << 16) | 40, (2u << 16) | (46 - 36), (6u << 16) | 48);
}

ContextValues context() {
    ContextValues v;
    v.tid = 4242;
    v.pid = 4200;
    std::memcpy(v.procname, "bash", 4);
    v.prio = 20;
    v.cpuId = 3;
    return v;
}

Bytes expectedContext(std::uint32_t mask) {
    Bytes b;
    const ContextValues v = context();
    if (mask & ContextTid)
        putLe(b, static_cast<std::uint32_t>(v.tid), 4);
    if (mask & ContextPid)
        putLe(b, static_cast<std::uint32_t>(v.pid), 4);
    if (mask & ContextProcname)
        for (char c : v.procname)
            b.push_back(static_cast<std::byte>(c));
    if (mask & ContextPrio)
        putLe(b, static_cast<std::uint32_t>(v.prio), 4);
    if (mask & ContextCpuId)
        putLe(b, static_cast<std::uint32_t>(v.cpuId), 4);
    // The call stacks: empty sequences (their length alone).
    if (mask & ContextCallstackKernel)
        putLe(b, 0, 4);
    if (mask & ContextCallstackUser)
        putLe(b, 0, 4);
    return b;
}

Bytes bytesOf(std::span<const std::byte> s) {
    return Bytes(s.begin(), s.end());
}

} // namespace

TEST(PacketBuilder, HeaderContextAndEventBytes) {
    PacketBuilder b(testUuid(), 5, 3, 3, 4096, kAllContexts);
    b.open(1000);
    const Record r = goodRecord();
    ASSERT_TRUE(b.append(1500, conversion(), r.bytes().data(), static_cast<std::uint32_t>(r.size()),
                         context()));
    const ClosedPacket p = b.close(2000);

    Bytes want;
    putLe(want, kPacketMagic, 4);
    for (std::byte x : testUuid())
        want.push_back(x);
    putLe(want, 5, 4);                                               // stream_id
    putLe(want, 3, 8);                                               // stream_instance_id
    const std::size_t eventBytes = 10 + 32 + 8 + 20 + 6 + 3 + 4 + 6; // + two empty stacks
    const std::uint64_t bits = (84 + eventBytes) * 8;
    putLe(want, 1000, 8); // timestamp_begin (open's, before the first event)
    putLe(want, 2000, 8); // timestamp_end
    putLe(want, bits, 8); // content_size
    putLe(want, bits, 8); // packet_size
    putLe(want, 0, 8);    // packet_seq_num
    putLe(want, 0, 8);    // events_discarded
    putLe(want, 3, 4);    // cpu_id
    putLe(want, 7, 2);    // event id
    putLe(want, 1500, 8); // timestamp
    const Bytes ctx = expectedContext(kAllContexts);
    want.insert(want.end(), ctx.begin(), ctx.end());
    want.insert(want.end(), r.bytes().begin() + 8, r.bytes().begin() + 28); // Copy
    for (char c : std::string_view("hello\0ab\0", 9))
        want.push_back(static_cast<std::byte>(c));
    putLe(want, 3, 4); // sequence length
    putLe(want, 0x1111, 2);
    putLe(want, 0x2222, 2);
    putLe(want, 0x3333, 2);
    EXPECT_EQ(bytesOf(p.bytes), want);

    EXPECT_EQ(p.index.offset, 0u);
    EXPECT_EQ(p.index.packetSizeBits, bits);
    EXPECT_EQ(p.index.contentSizeBits, bits);
    EXPECT_EQ(p.index.timestampBegin, 1000u);
    EXPECT_EQ(p.index.timestampEnd, 2000u);
    EXPECT_EQ(p.index.eventsDiscarded, 0u);
    EXPECT_EQ(p.index.streamId, 5u);
    EXPECT_EQ(p.index.streamInstanceId, 3u);
    EXPECT_EQ(p.index.packetSeqNum, 0u);
}

TEST(PacketBuilder, ContextMaskSelectsFields) {
    const std::uint32_t masks[] = {0u, ContextTid, ContextProcname | ContextCpuId, ContextPrio,
                                   ContextPid | ContextPrio};
    for (std::uint32_t mask : masks) {
        PacketBuilder b(testUuid(), 1, 0, 0, 4096, mask);
        const Record r = goodRecord();
        ASSERT_TRUE(b.append(5, conversion(), r.bytes().data(),
                             static_cast<std::uint32_t>(r.size()), context()));
        const ClosedPacket p = b.close(5);
        const Bytes got = bytesOf(p.bytes);
        const Bytes ctx = expectedContext(mask);
        ASSERT_EQ(got.size(), 84 + 10 + ctx.size() + 39) << mask;
        EXPECT_EQ(Bytes(got.begin() + 94, got.begin() + 94 + static_cast<long>(ctx.size())), ctx)
            << mask;
        EXPECT_EQ(contextSize(mask), ctx.size());
    }
}

TEST(PacketBuilder, LocationsOutsideTheRecordWriteEmpty) {
    // String past the end, relative string whose offset overflows, sequence
    // 2 bytes too long: an empty string, an empty string, count 0.
    const Record r = record((10u << 16) | 50, (1u << 16) | 0xffff, (8u << 16) | 48);
    PacketBuilder b(testUuid(), 1, 0, 0, 4096, 0);
    ASSERT_TRUE(b.append(5, conversion(), r.bytes().data(), static_cast<std::uint32_t>(r.size()),
                         context()));
    const Bytes got = bytesOf(b.close(5).bytes);
    Bytes want(r.bytes().begin() + 8, r.bytes().begin() + 28);
    want.push_back(std::byte{0});
    want.push_back(std::byte{0});
    putLe(want, 0, 4);
    ASSERT_EQ(got.size(), 84 + 10 + want.size());
    EXPECT_EQ(Bytes(got.begin() + 94, got.end()), want);
}

TEST(PacketBuilder, StringStopsAtItsLengthOrNul) {
    // "hel" of "hello" (length 3), then a sequence of odd length: 5 bytes of
    // 2-byte elements is 2 elements.
    const Record r = record((3u << 16) | 40, (0u << 16) | 10, (5u << 16) | 48);
    PacketBuilder b(testUuid(), 1, 0, 0, 4096, 0);
    ASSERT_TRUE(b.append(5, conversion(), r.bytes().data(), static_cast<std::uint32_t>(r.size()),
                         context()));
    const Bytes got = bytesOf(b.close(5).bytes);
    const Bytes tail(got.begin() + 94 + 20, got.end());
    Bytes want;
    for (char c : std::string_view("hel\0\0", 5))
        want.push_back(static_cast<std::byte>(c));
    putLe(want, 2, 4);
    putLe(want, 0x1111, 2);
    putLe(want, 0x2222, 2);
    EXPECT_EQ(tail, want);
}

TEST(PacketBuilder, RelativeLocationAtTheRecordEnd) {
    // A __rel_loc whose u32 is the record's last bytes: offset 0, length 0.
    EventConversion c;
    c.ctfId = 9;
    c.minSize = 12;
    c.steps = {{StepKind::RelLocSequence, 8, 4, 1}, {StepKind::RelLocString, 8, 4, 1}};
    Record r(1, 1);
    r.le(0, 4);
    PacketBuilder b(testUuid(), 1, 0, 0, 4096, 0);
    ASSERT_TRUE(b.append(5, c, r.bytes().data(), 12, context()));
    const Bytes got = bytesOf(b.close(5).bytes);
    EXPECT_EQ(Bytes(got.begin() + 94, got.end()),
              (Bytes{std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0}}));
}

TEST(PacketBuilder, CopyPastTheRecordIsZeroFilled) {
    EventConversion c;
    c.ctfId = 9;
    c.minSize = 8; // at odds with the step: the record ends at 10
    c.steps = {{StepKind::Copy, 8, 4, 1}, {StepKind::Copy, 100, 2, 1}};
    Record r(1, 1);
    r.le(0xBEEF, 2);
    PacketBuilder b(testUuid(), 1, 0, 0, 4096, 0);
    ASSERT_TRUE(b.append(5, c, r.bytes().data(), 10, context()));
    const Bytes got = bytesOf(b.close(5).bytes);
    EXPECT_EQ(Bytes(got.begin() + 94, got.end()),
              (Bytes{std::byte{0xEF}, std::byte{0xBE}, std::byte{0}, std::byte{0}, std::byte{0},
                     std::byte{0}}));
}

TEST(PacketBuilder, ShortRecordIsSkippedAndCounted) {
    PacketBuilder b(testUuid(), 1, 0, 0, 4096, 0);
    const Record r = goodRecord();
    EXPECT_TRUE(b.append(5, conversion(), r.bytes().data(), 39, context()));
    EXPECT_EQ(b.malformedRecords(), 1u);
    EXPECT_EQ(b.eventsInPacket(), 0u);
    EXPECT_EQ(b.close(5).bytes.size(), 84u);
}

TEST(PacketBuilder, RefusesWhatDoesNotFitAndWritesNothing) {
    const Record r = goodRecord();
    const std::size_t event = 10 + 39;
    PacketBuilder b(testUuid(), 1, 0, 0, 84 + 2 * event + 1, 0);
    const auto add = [&](std::uint64_t ts) {
        return b.append(ts, conversion(), r.bytes().data(), static_cast<std::uint32_t>(r.size()),
                        context());
    };
    EXPECT_TRUE(add(1));
    EXPECT_TRUE(add(2));
    const std::size_t before = b.size();
    EXPECT_FALSE(add(3));
    EXPECT_EQ(b.size(), before);
    EXPECT_EQ(b.eventsInPacket(), 2u);
    const ClosedPacket p = b.close(3);
    EXPECT_EQ(p.bytes.size(), 84 + 2 * event);
    EXPECT_EQ(p.index.timestampEnd, 3u);
    EXPECT_THROW(PacketBuilder(testUuid(), 1, 0, 0, 83, 0), std::invalid_argument);
    // A packet of exactly the preamble holds no event.
    PacketBuilder tiny(testUuid(), 1, 0, 0, 84, 0);
    EXPECT_FALSE(tiny.appendRaw(0, 1, context(), {}));
    EXPECT_EQ(tiny.eventsInPacket(), 0u);
}

TEST(PacketBuilder, SeqNumDiscardedAndTimestamps) {
    PacketBuilder b(testUuid(), 1, 0, 2, 4096, 0);
    // Implicit open: timestamp_begin is the first event's.
    ASSERT_TRUE(b.appendRaw(1, 500, context(), {}));
    ASSERT_TRUE(b.appendRaw(1, 700, context(), {}));
    b.addDiscarded(4);
    ClosedPacket p = b.close(600); // end below the last event: the event's
    EXPECT_EQ(getLe(p.bytes, 32, 8), 500u);
    EXPECT_EQ(getLe(p.bytes, 40, 8), 700u);
    EXPECT_EQ(getLe(p.bytes, 64, 8), 0u);
    EXPECT_EQ(getLe(p.bytes, 72, 8), 4u);
    EXPECT_EQ(getLe(p.bytes, 80, 4), 2u);

    // open() later than the first event: lowered to it.
    b.open(900);
    ASSERT_TRUE(b.appendRaw(1, 800, context(), {}));
    b.addDiscarded(3);
    p = b.close(1000);
    EXPECT_EQ(p.index.timestampBegin, 800u);
    EXPECT_EQ(p.index.timestampEnd, 1000u);
    EXPECT_EQ(p.index.packetSeqNum, 1u);
    EXPECT_EQ(p.index.eventsDiscarded, 7u); // running count
    EXPECT_EQ(getLe(p.bytes, 64, 8), 1u);
    EXPECT_EQ(getLe(p.bytes, 72, 8), 7u);

    // Closing without an open packet: an empty one at the end.
    p = b.close(1200);
    EXPECT_EQ(p.bytes.size(), 84u);
    EXPECT_EQ(p.index.timestampBegin, 1200u);
    EXPECT_EQ(p.index.timestampEnd, 1200u);
    EXPECT_EQ(p.index.packetSeqNum, 2u);
    EXPECT_EQ(p.index.contentSizeBits, 84u * 8);
    EXPECT_EQ(b.nextSeqNum(), 3u);
}

TEST(PacketBuilder, AppendRawWritesFieldsAsIs) {
    PacketBuilder b(testUuid(), 1, 0, 0, 4096, ContextTid);
    const Bytes fields{std::byte{1}, std::byte{2}, std::byte{3}};
    ASSERT_TRUE(b.appendRaw(kStatedumpEndId, 42, context(), fields));
    const ClosedPacket p = b.close(42);
    Bytes want;
    putLe(want, kStatedumpEndId, 2);
    putLe(want, 42, 8);
    putLe(want, 4242, 4);
    want.insert(want.end(), fields.begin(), fields.end());
    EXPECT_EQ(Bytes(p.bytes.begin() + 84, p.bytes.end()), want);
    EXPECT_EQ(getLe(p.bytes, 24, 8), 0u);
}

TEST(ConversionTable, FindsAddsAndReplaces) {
    ConversionTable t;
    EXPECT_EQ(t.find(0), nullptr);
    EXPECT_EQ(t.find(65535), nullptr);
    EventConversion a = conversion();
    a.ftraceId = 10;
    a.ctfId = 4;
    EventConversion b = conversion();
    b.ftraceId = 65535;
    b.ctfId = 5;
    t.add({a, b});
    ASSERT_NE(t.find(10), nullptr);
    EXPECT_EQ(t.find(10)->ctfId, 4u);
    EXPECT_EQ(t.find(65535)->ctfId, 5u);
    EXPECT_EQ(t.find(11), nullptr);
    EXPECT_EQ(t.size(), 2u);

    const EventConversion* old = t.find(10);
    EventConversion c = a;
    c.ctfId = 6;
    EventConversion d = a;
    d.ftraceId = 20;
    d.ctfId = 8;
    t.add({c, d}); // later: replaces 10, adds 20, keeps 65535
    EXPECT_EQ(t.find(10)->ctfId, 6u);
    EXPECT_EQ(t.find(20)->ctfId, 8u);
    EXPECT_EQ(t.find(65535)->ctfId, 5u);
    EXPECT_EQ(t.size(), 3u);
    EXPECT_EQ(old->ctfId, 4u); // the replaced one is still alive
    EXPECT_EQ(old->steps, a.steps);
}

namespace {

// A source that hands out one string per query and remembers the queries.
class FakeStrings final : public UserStringSource {
public:
    std::string_view take(const UserStringQuery& q) noexcept override {
        queries.push_back(q);
        handedOut.push_back(text); // stays valid, as the table's strings do
        return handedOut.back();
    }
    std::string text = "/etc/passwd";
    std::vector<UserStringQuery> queries;
    std::deque<std::string> handedOut;
};

// A sys_enter_openat record: nr at 8, dfd at 16, filename at 24, flags at 32.
Record openatRecord(std::uint64_t filename) {
    Record r(782, 4242);
    r.le(257, 4).le(0, 4).le(static_cast<std::uint64_t>(-100), 8).le(filename, 8).le(0, 8);
    return r; // 40 bytes
}

EventConversion openatConversion() {
    EventConversion c;
    c.ftraceId = 782;
    c.ctfId = 11;
    c.minSize = 40;
    c.steps = {
        {StepKind::Copy, 16, 8, 1}, {StepKind::UserString, 24, 8, 1}, {StepKind::Copy, 32, 8, 1}};
    return c;
}

Bytes text(std::string_view s) {
    Bytes b;
    for (char c : s)
        b.push_back(static_cast<std::byte>(c));
    return b;
}

} // namespace

TEST(PacketBuilder, UserStringWritesTheCopyItsCallGets) {
    FakeStrings strings;
    PacketBuilder b(testUuid(), 1, 0, 0, 4096, 0);
    b.setUserStrings(&strings);
    const Record r = openatRecord(0x7ffd1234);
    ASSERT_TRUE(b.append(77, openatConversion(), r.bytes().data(), 40, context()));
    const Bytes got = bytesOf(b.close(77).bytes);
    Bytes want;
    putLe(want, static_cast<std::uint64_t>(-100), 8);
    const Bytes s = text(std::string_view("/etc/passwd\0", 12));
    want.insert(want.end(), s.begin(), s.end());
    putLe(want, 0, 8);
    EXPECT_EQ(Bytes(got.begin() + 94, got.end()), want);
    ASSERT_EQ(strings.queries.size(), 1u);
    EXPECT_EQ(strings.queries[0].tid, 4242);
    EXPECT_EQ(strings.queries[0].nr, 257);
    EXPECT_EQ(strings.queries[0].arg, 1);
    EXPECT_EQ(strings.queries[0].pointer, 0x7ffd1234u);
    EXPECT_EQ(strings.queries[0].timestamp, 77u);
}

TEST(PacketBuilder, UserStringWithoutSourceOrArgumentIsEmpty) {
    PacketBuilder b(testUuid(), 1, 0, 0, 4096, 0);
    const Record r = openatRecord(0x10);
    ASSERT_TRUE(b.append(5, openatConversion(), r.bytes().data(), 40, context()));
    Bytes got = bytesOf(b.close(5).bytes);
    EXPECT_EQ(got[94 + 8], std::byte{0}) << "no source: \"\"";
    // A conversion whose minSize is short of the argument: "" too.
    FakeStrings strings;
    b.setUserStrings(&strings);
    EventConversion c = openatConversion();
    c.minSize = 24;
    c.steps = {{StepKind::UserString, 24, 8, 1}};
    ASSERT_TRUE(b.append(5, c, r.bytes().data(), 24, context()));
    got = bytesOf(b.close(5).bytes);
    EXPECT_EQ(Bytes(got.begin() + 94, got.end()), Bytes{std::byte{0}});
    EXPECT_TRUE(strings.queries.empty());
}

// An event that does not fit is appended again in the next packet: with the
// string it took the first time (a source hands each string out once).
TEST(PacketBuilder, UserStringIsTakenOnceWhenTheEventGoesToTheNextPacket) {
    FakeStrings strings;
    const std::size_t event = 10 + 8 + 12 + 8;
    PacketBuilder b(testUuid(), 1, 0, 0, 84 + event + 4, 0);
    b.setUserStrings(&strings);
    const Record first = openatRecord(0x10);
    const Record second = openatRecord(0x20);
    ASSERT_TRUE(b.append(5, openatConversion(), first.bytes().data(), 40, context()));
    strings.text = "/etc/shadow";
    EXPECT_FALSE(b.append(6, openatConversion(), second.bytes().data(), 40, context()));
    b.close(6);
    b.open(6);
    strings.text = "wrong";
    ASSERT_TRUE(b.append(6, openatConversion(), second.bytes().data(), 40, context()));
    EXPECT_EQ(strings.queries.size(), 2u);
    const Bytes got = bytesOf(b.close(6).bytes);
    EXPECT_EQ(Bytes(got.begin() + 94 + 8, got.begin() + 94 + 20),
              text(std::string_view("/etc/shadow\0", 12)));
}
