// PacketBuilder's lttng-modules steps (kernel_records.hpp kinds 5..10) byte
// for byte: the fields an event's conversion writes after the event header
// (no context), from records with every value in and out of bounds.
#include "kernel_test_support.hpp"
#include "packet_builder.hpp"

#include <gtest/gtest.h>
#include <map>

using namespace tracectl::consumer::kernel;
using namespace tracectl::kernel_records;
using ktest::Bytes;
using ktest::putLe;
using ktest::Record;

namespace {

constexpr std::size_t kFieldsAt = 84 + 10; // packet preamble + event header

// A ProcessInfo that answers from a table and counts its lookups.
class TableProcessInfo final : public ProcessInfo {
public:
    std::map<std::int32_t, ProcessDetails> threads;
    std::size_t lookups = 0;
    ProcessDetails lookup(std::int32_t tid) override {
        ++lookups;
        const auto it = threads.find(tid);
        if (it != threads.end())
            return it->second;
        ProcessDetails unknown;
        unknown.pid = tid;
        return unknown;
    }
};

// The fields `steps` write from `record` (minSize: the record's size unless given).
Bytes fields(const std::vector<Step>& steps, const Record& record, ProcessInfo* processes,
             std::uint16_t minSize = 8) {
    EventConversion c;
    c.ctfId = 9;
    c.minSize = minSize;
    c.steps = steps;
    PacketBuilder b(Uuid{}, 1, 0, 0, 4096, 0);
    EXPECT_TRUE(b.append(5, c, record.bytes().data(), static_cast<std::uint32_t>(record.size()),
                         ContextValues{}, processes));
    const auto p = b.close(5).bytes;
    return Bytes(p.begin() + kFieldsAt, p.end());
}

Bytes le(std::uint64_t v, std::size_t n) {
    Bytes b;
    putLe(b, v, n);
    return b;
}

Bytes cat(std::initializer_list<Bytes> parts) {
    Bytes out;
    for (const Bytes& p : parts)
        out.insert(out.end(), p.begin(), p.end());
    return out;
}

Bytes text(std::string_view s, std::size_t n) {
    Bytes b(n, std::byte{0});
    for (std::size_t i = 0; i < s.size() && i < n; ++i)
        b[i] = static_cast<std::byte>(s[i]);
    return b;
}

ProcessDetails details(std::int32_t pid, std::uint32_t inum, std::vector<std::int32_t> nsTids) {
    ProcessDetails d;
    d.pid = pid;
    d.pidNsInum = inum;
    d.nsLevels = static_cast<std::uint8_t>(nsTids.size());
    for (std::size_t i = 0; i < nsTids.size(); ++i)
        d.nsTids[i] = nsTids[i];
    return d;
}

} // namespace

TEST(LttngSteps, RwbsTextBecomesLttngBits) {
    // block_rq_issue's char rwbs[10] at 8: "FWS" then NULs; "RA" right after.
    Record r(1, 1);
    r.text("FWS", 10).text("RA", 10);
    EXPECT_EQ(
        fields({{StepKind::RwbsFlags, 8, 10, 1}, {StepKind::RwbsFlags, 18, 10, 1}}, r, nullptr),
        cat({le(RwbsPreflush | RwbsWrite | RwbsSync, 4), le(RwbsRead | RwbsRahead, 4)}));
}

TEST(LttngSteps, RwbsPastTheRecordReadsWhatIsThere) {
    // "WS" whose array would reach 8 bytes past the record: the 2 bytes there
    // count; an array wholly past it is an empty text (0).
    Record r(1, 1);
    r.raw("WS");
    EXPECT_EQ(
        fields({{StepKind::RwbsFlags, 8, 10, 1}, {StepKind::RwbsFlags, 200, 10, 1}}, r, nullptr),
        cat({le(RwbsWrite | RwbsSync, 4), le(0, 4)}));
}

TEST(LttngSteps, PrioLosesMaxRtPrio) {
    Record r(1, 1);
    r.le(120, 4).le(static_cast<std::uint32_t>(-1), 4).le(98, 4);
    EXPECT_EQ(
        fields({{StepKind::PrioFromKernel, 8, 4, 1},
                {StepKind::PrioFromKernel, 12, 4, 1},
                {StepKind::PrioFromKernel, 16, 4, 1},
                {StepKind::PrioFromKernel, 18, 4, 1}}, // 2 bytes past the end: 0
               r, nullptr),
        cat({le(20, 4), le(static_cast<std::uint32_t>(-101), 4),
             le(static_cast<std::uint32_t>(-2), 4), le(static_cast<std::uint32_t>(-100), 4)}));
}

TEST(LttngSteps, ForkFieldsAskTheProcessInfo) {
    // sched_process_fork as ftrace records it: parent tid 300 at 8, child
    // tid 301 at 12. 301 is a thread of 300's process in a nested pid
    // namespace (id 7 there).
    TableProcessInfo info;
    info.threads[300] = details(300, 4026531836u, {300});
    info.threads[301] = details(300, 4026532999u, {301, 7});
    Record r(1, 300);
    r.le(300, 4).le(301, 4);
    const std::vector<Step> steps = {{StepKind::Tgid, 8, 4, 1},
                                     {StepKind::PidNsInum, 8, 4, 1},
                                     {StepKind::Vtids, 12, 4, 1},
                                     {StepKind::Tgid, 12, 4, 1},
                                     {StepKind::PidNsInum, 12, 4, 1}};
    EXPECT_EQ(fields(steps, r, &info), cat({le(300, 4), le(4026531836u, 4), le(2, 1), le(301, 4),
                                            le(7, 4), le(300, 4), le(4026532999u, 4)}));
    EXPECT_EQ(info.lookups, 5u);
}

TEST(LttngSteps, UnknownThreadsAndNoProcessInfo) {
    // A thread the ProcessInfo does not know (vanished): its own tgid,
    // namespace inode 0, vtids [tid]. Without a ProcessInfo: the same.
    TableProcessInfo info;
    Record r(1, 1);
    r.le(4242, 4);
    const std::vector<Step> steps = {
        {StepKind::Tgid, 8, 4, 1}, {StepKind::PidNsInum, 8, 4, 1}, {StepKind::Vtids, 8, 4, 1}};
    const Bytes want = cat({le(4242, 4), le(0, 4), le(1, 1), le(4242, 4)});
    EXPECT_EQ(fields(steps, r, &info), want);
    EXPECT_EQ(fields(steps, r, nullptr), want);
}

TEST(LttngSteps, TidPastTheRecordIsZero) {
    TableProcessInfo info;
    Record r(1, 1);
    r.le(5, 2); // 10 bytes: a tid at 8 would end at 12
    EXPECT_EQ(fields({{StepKind::Tgid, 8, 4, 1}, {StepKind::Vtids, 8, 4, 1}}, r, &info),
              cat({le(0, 4), le(1, 1), le(0, 4)}));
}

TEST(LttngSteps, VtidsAtMostMaxLevels) {
    TableProcessInfo info;
    ProcessDetails deep;
    deep.pid = 10;
    deep.nsLevels = 200; // more than the array holds: what it holds
    for (std::size_t i = 0; i < deep.nsTids.size(); ++i)
        deep.nsTids[i] = static_cast<std::int32_t>(10 + i);
    info.threads[10] = deep;
    Record r(1, 1);
    r.le(10, 4);
    Bytes want = le(kMaxPidNsLevels, 1);
    for (std::size_t i = 0; i < kMaxPidNsLevels; ++i)
        putLe(want, 10 + i, 4);
    EXPECT_EQ(fields({{StepKind::Vtids, 8, 4, 1}}, r, &info), want);
}

TEST(LttngSteps, DataLocStringBecomesFixedText) {
    // Three __data_loc char[] at 8, 12, 16: "bash" (with its NUL), a name
    // longer than 15 bytes, and one whose bytes fall outside the record.
    Record r(1, 1);
    r.le((5u << 16) | 20, 4).le((20u << 16) | 25, 4).le((4u << 16) | 400, 4);
    r.raw(std::string_view("bash\0", 5)); // 20
    r.raw("0123456789abcdefghij");        // 25: 20 bytes, no NUL
    const std::vector<Step> steps = {{StepKind::DataLocFixedText, 8, 4, 16},
                                     {StepKind::DataLocFixedText, 12, 4, 16},
                                     {StepKind::DataLocFixedText, 16, 4, 16},
                                     {StepKind::DataLocFixedText, 8, 4, 3}};
    EXPECT_EQ(fields(steps, r, nullptr),
              cat({text("bash", 16), text("0123456789abcde", 16), text("", 16), text("ba", 3)}));
}

TEST(LttngSteps, ShortRecordWritesNothing) {
    // Shorter than the conversion's minSize: skipped and counted, as every kind.
    EventConversion c;
    c.ctfId = 9;
    c.minSize = 28;
    c.steps = {{StepKind::RwbsFlags, 18, 10, 1}, {StepKind::Tgid, 8, 4, 1}};
    TableProcessInfo info;
    Record r(1, 1);
    r.le(1, 4).text("W", 10);
    PacketBuilder b(Uuid{}, 1, 0, 0, 4096, 0);
    EXPECT_TRUE(b.append(5, c, r.bytes().data(), static_cast<std::uint32_t>(r.size()),
                         ContextValues{}, &info));
    EXPECT_EQ(b.malformedRecords(), 1u);
    EXPECT_EQ(b.eventsInPacket(), 0u);
    EXPECT_EQ(info.lookups, 0u);
}

TEST(LttngSteps, WhatDoesNotFitIsRefusedWhole) {
    // 84 + 10 + 4 + 1 + 4 = 103 bytes; a 102-byte packet refuses the event.
    EventConversion c;
    c.ctfId = 9;
    c.steps = {{StepKind::Tgid, 8, 4, 1}, {StepKind::Vtids, 8, 4, 1}};
    Record r(1, 1);
    r.le(77, 4);
    PacketBuilder small(Uuid{}, 1, 0, 0, 102, 0);
    EXPECT_FALSE(small.append(5, c, r.bytes().data(), 12, ContextValues{}, nullptr));
    EXPECT_EQ(small.size(), 84u);
    PacketBuilder exact(Uuid{}, 1, 0, 0, 103, 0);
    EXPECT_TRUE(exact.append(5, c, r.bytes().data(), 12, ContextValues{}, nullptr));
    EXPECT_EQ(exact.size(), 103u);
}
