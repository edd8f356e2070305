// FtraceStream (consumer/kernel/ftrace_stream.hpp): pages in, packets out.
// Packets split at maxPacketBytes, sequence numbers, the running discarded
// count, timestamps that never go backward, contexts, and the counters.
#include "ftrace_stream.hpp"
#include "kernel_test_support.hpp"

#include <gtest/gtest.h>

using namespace tracectl::consumer;
using namespace tracectl::consumer::kernel;
using namespace tracectl::kernel_records;
using ktest::Bytes;
using ktest::getLe;
using ktest::PageWriter;
using ktest::Record;

namespace {

constexpr std::uint16_t kSwitchId = 316;
constexpr std::uint16_t kSwitchCtf = 4;
// One event: header 10 + fields 8 (tid, prio copied from 8..16).
constexpr std::size_t kEventBytes = 10 + 8;

struct Packet {
    Bytes bytes;
    IndexEntry index;
};

struct Fixture {
    explicit Fixture(std::size_t maxPacket, std::uint32_t mask = 0,
                     ProcessInfo* processes = nullptr, std::uint64_t begin = 0) {
        EventConversion c;
        c.ftraceId = kSwitchId;
        c.ctfId = kSwitchCtf;
        c.minSize = 16;
        c.steps = {{StepKind::Copy, 8, 8, 1}};
        table.add({c});
        FtraceStreamConfig cfg;
        cfg.uuid.fill(std::byte{0x11});
        cfg.streamId = 2;
        cfg.cpuId = 1;
        cfg.maxPacketBytes = maxPacket;
        cfg.contextMask = mask;
        cfg.beginTimestamp = begin;
        stream = std::make_unique<FtraceStream>(
            cfg, table, processes, [this](std::span<const std::byte> p, const IndexEntry& e) {
                packets.push_back({Bytes(p.begin(), p.end()), e});
            });
    }

    ConversionTable table;
    std::vector<Packet> packets;
    std::unique_ptr<FtraceStream> stream;
};

Record switchRecord(std::int32_t pid, std::uint32_t value) {
    Record r(kSwitchId, pid);
    r.le(value, 4).le(~value, 4);
    return r;
}

// Events of a packet of no-context kSwitchCtf events: (timestamp, value).
std::vector<std::pair<std::uint64_t, std::uint32_t>> events(const Packet& p,
                                                            std::size_t contextBytes = 0) {
    std::vector<std::pair<std::uint64_t, std::uint32_t>> out;
    const std::size_t step = kEventBytes + contextBytes;
    EXPECT_EQ((p.bytes.size() - 84) % step, 0u);
    for (std::size_t at = 84; at + step <= p.bytes.size(); at += step) {
        EXPECT_EQ(getLe(p.bytes, at, 2), kSwitchCtf);
        out.emplace_back(getLe(p.bytes, at + 2, 8),
                         static_cast<std::uint32_t>(getLe(p.bytes, at + 10 + contextBytes, 4)));
    }
    return out;
}

class FakeProcesses : public ProcessInfo {
public:
    ProcessDetails lookup(std::int32_t tid) override {
        ++lookups;
        ProcessDetails d;
        d.pid = tid / 10 * 10;
        std::memcpy(d.procname.data(), "worker", 6);
        d.prio = tid % 7;
        return d;
    }
    int lookups = 0;
};

} // namespace

TEST(FtraceStream, SplitsPacketsAtTheMaximum) {
    // Room for 3 events per packet.
    Fixture f(84 + 3 * kEventBytes + kEventBytes - 1);
    PageWriter w(1000);
    for (std::uint32_t i = 0; i < 10; ++i)
        w.record(10, switchRecord(100, i));
    f.stream->consumePage(w.finish());
    EXPECT_EQ(f.packets.size(), 3u); // 9 events closed, the 10th open
    f.stream->flush(5000);
    ASSERT_EQ(f.packets.size(), 4u);

    std::uint32_t expected = 0;
    std::uint64_t lastEnd = 0;
    for (std::size_t i = 0; i < f.packets.size(); ++i) {
        const Packet& p = f.packets[i];
        EXPECT_LE(p.bytes.size(), 84 + 4 * kEventBytes - 1);
        EXPECT_EQ(p.index.packetSeqNum, i);
        EXPECT_EQ(getLe(p.bytes, 64, 8), i);
        EXPECT_EQ(p.index.contentSizeBits, p.bytes.size() * 8);
        EXPECT_EQ(p.index.streamInstanceId, 1u);
        EXPECT_EQ(getLe(p.bytes, 80, 4), 1u);
        EXPECT_GE(p.index.timestampBegin, lastEnd);
        EXPECT_LE(p.index.timestampBegin, p.index.timestampEnd);
        for (const auto& [ts, value] : events(p)) {
            EXPECT_EQ(value, expected);
            EXPECT_EQ(ts, 1000 + 10 * (expected + 1));
            EXPECT_GE(ts, p.index.timestampBegin);
            EXPECT_LE(ts, p.index.timestampEnd);
            ++expected;
        }
        lastEnd = p.index.timestampEnd;
    }
    EXPECT_EQ(expected, 10u);
    EXPECT_EQ(f.packets.back().index.timestampEnd, 5000u);
    EXPECT_EQ(f.stream->counters().eventsWritten, 10u);
    EXPECT_EQ(f.stream->counters().packets, 4u);
}

TEST(FtraceStream, TimestampsNeverGoBackward) {
    Fixture f(4096);
    PageWriter a(10'000);
    a.record(5, switchRecord(1, 1));
    a.record(5, switchRecord(1, 2));
    f.stream->consumePage(a.finish());
    PageWriter b(9'000); // a page from before the last event
    b.record(1, switchRecord(1, 3));
    b.record(2'000, switchRecord(1, 4));
    f.stream->consumePage(b.finish());
    f.stream->flush(100); // now before the last event: the event's
    ASSERT_EQ(f.packets.size(), 1u);
    const auto ev = events(f.packets[0]);
    ASSERT_EQ(ev.size(), 4u);
    EXPECT_EQ(ev[0].first, 10'005u);
    EXPECT_EQ(ev[1].first, 10'010u);
    EXPECT_EQ(ev[2].first, 10'010u); // clamped
    EXPECT_EQ(ev[3].first, 11'001u);
    EXPECT_EQ(f.packets[0].index.timestampEnd, 11'001u);
    EXPECT_EQ(f.stream->lastTimestamp(), 11'001u);

    // After a flush at 20'000, an older event is clamped to the flush.
    f.stream->flush(20'000);
    PageWriter c(15'000);
    c.record(1, switchRecord(1, 5));
    f.stream->consumePage(c.finish());
    f.stream->flush(0);
    ASSERT_EQ(f.packets.size(), 3u);
    EXPECT_EQ(f.packets[1].index.timestampBegin, 11'001u); // the empty packet
    EXPECT_EQ(f.packets[1].index.timestampEnd, 20'000u);
    EXPECT_EQ(f.packets[1].bytes.size(), 84u);
    EXPECT_EQ(events(f.packets[2]).at(0).first, 20'000u);
    EXPECT_GE(f.packets[2].index.timestampBegin, f.packets[1].index.timestampEnd);
}

TEST(FtraceStream, MissedEventsAddUpInEventsDiscarded) {
    Fixture f(4096);
    PageWriter a(100);
    a.record(1, switchRecord(1, 1));
    f.stream->consumePage(a.finish(0, 5)); // 5 stored
    f.stream->flush(200);
    PageWriter b(300);
    b.record(1, switchRecord(1, 2));
    f.stream->consumePage(b.finish(1ull << 31)); // missed, count unknown: 1
    f.stream->flush(400);
    PageWriter c(500);
    c.record(1, switchRecord(1, 3));
    f.stream->consumePage(c.finish()); // nothing missed
    f.stream->flush(600);
    ASSERT_EQ(f.packets.size(), 3u);
    EXPECT_EQ(f.packets[0].index.eventsDiscarded, 5u);
    EXPECT_EQ(f.packets[1].index.eventsDiscarded, 6u);
    EXPECT_EQ(f.packets[2].index.eventsDiscarded, 6u);
    EXPECT_EQ(getLe(f.packets[1].bytes, 72, 8), 6u);
    const FtraceStreamCounters& n = f.stream->counters();
    EXPECT_EQ(n.eventsDiscarded, 6u);
    EXPECT_EQ(n.missedStored, 5u);
    EXPECT_EQ(n.missedUnknown, 1u);
    EXPECT_EQ(n.eventsWritten, 3u);
}

TEST(FtraceStream, DroppedEventsFromTheStatsAddWhatTheyGrewBy) {
    // Discard mode: ftrace's pages do not tell the events it dropped with
    // the buffer full; its stats do, as a running total.
    Fixture f(4096);
    PageWriter a(100);
    a.record(1, switchRecord(1, 1));
    f.stream->consumePage(a.finish());
    f.stream->setDropped(40);
    f.stream->flush(200);
    f.stream->setDropped(40); // no growth: nothing more
    f.stream->setDropped(7);  // never backward
    f.stream->flush(300);
    f.stream->setDropped(45);
    f.stream->flush(400);
    ASSERT_EQ(f.packets.size(), 3u);
    EXPECT_EQ(f.packets[0].index.eventsDiscarded, 40u);
    EXPECT_EQ(f.packets[1].index.eventsDiscarded, 40u);
    EXPECT_EQ(f.packets[2].index.eventsDiscarded, 45u);
    EXPECT_EQ(getLe(f.packets[2].bytes, 72, 8), 45u);
    EXPECT_EQ(f.stream->counters().eventsDiscarded, 45u);
}

TEST(FtraceStream, UnknownIdsMalformedRecordsAndPages) {
    Fixture f(4096);
    PageWriter w(100);
    w.record(1, switchRecord(1, 1));
    w.record(1, Record(999, 1).le(0, 8)); // no conversion
    w.record(1, Record(kSwitchId, 1));    // 8 bytes < minSize 16
    Bytes four{std::byte{1}, std::byte{0}, std::byte{0}, std::byte{0}};
    w.record(1, four);                // shorter than the common fields
    w.u32(PageWriter::header(20, 1)); // then a lie
    f.stream->consumePage(w.finish());
    Bytes garbage(100, std::byte{0xFF});
    f.stream->consumePage(garbage);
    f.stream->flush(1000);
    const FtraceStreamCounters& n = f.stream->counters();
    EXPECT_EQ(n.eventsWritten, 1u);
    EXPECT_EQ(n.unknownIds, 1u);
    EXPECT_EQ(n.malformedRecords, 2u);
    EXPECT_EQ(n.malformedPages, 2u);
    EXPECT_EQ(n.pages, 2u);
    ASSERT_EQ(f.packets.size(), 1u);
    EXPECT_EQ(events(f.packets[0]).size(), 1u);
}

TEST(FtraceStream, TooLargeEventIsDroppedAndDiscarded) {
    Fixture f(84 + kEventBytes - 1); // no event fits even an empty packet
    PageWriter w(100);
    w.record(1, switchRecord(1, 1));
    w.record(1, switchRecord(1, 2));
    f.stream->consumePage(w.finish());
    f.stream->flush(200);
    ASSERT_EQ(f.packets.size(), 1u);
    EXPECT_EQ(f.packets[0].bytes.size(), 84u);
    EXPECT_EQ(f.packets[0].index.eventsDiscarded, 2u);
    EXPECT_EQ(f.stream->counters().tooLarge, 2u);
    EXPECT_EQ(f.stream->counters().eventsWritten, 0u);
}

TEST(FtraceStream, FillsTheContext) {
    FakeProcesses procs;
    Fixture f(4096, kAllContexts, &procs);
    PageWriter w(100);
    w.record(1, switchRecord(1234, 9));
    f.stream->consumePage(w.finish());
    f.stream->flush(200);
    ASSERT_EQ(f.packets.size(), 1u);
    const Bytes& b = f.packets[0].bytes;
    ASSERT_EQ(b.size(), 84u + kEventBytes + 32 + 8); // + two empty call stacks
    EXPECT_EQ(getLe(b, 94, 4), 1234u);               // _tid: common_pid
    EXPECT_EQ(getLe(b, 98, 4), 1230u);               // _pid
    EXPECT_EQ(std::memcmp(b.data() + 102, "worker\0\0\0\0\0\0\0\0\0\0", 16), 0);
    EXPECT_EQ(getLe(b, 118, 4), 1234u % 7); // _prio
    EXPECT_EQ(getLe(b, 122, 4), 1u);        // _cpu_id: the stream's
    EXPECT_EQ(getLe(b, 126, 4), 0u);        // _callstack_kernel_length: no stack entry
    EXPECT_EQ(getLe(b, 130, 4), 0u);        // _callstack_user_length
    EXPECT_EQ(getLe(b, 134, 4), 9u);        // the first field
    EXPECT_EQ(procs.lookups, 1);

    // Without pid/procname/prio in the mask the lookup is not consulted.
    FakeProcesses unused;
    Fixture g(4096, ContextTid | ContextCpuId, &unused);
    g.stream->consumePage(w.finish());
    g.stream->flush(200);
    EXPECT_EQ(unused.lookups, 0);
    ASSERT_EQ(g.packets.size(), 1u);
    EXPECT_EQ(events(g.packets[0], 8).at(0).second, 9u);
}

TEST(FtraceStream, FlushWithoutEventsWritesAnEmptyPacket) {
    Fixture f(4096);
    f.stream->flush(777);
    f.stream->flush(888);
    ASSERT_EQ(f.packets.size(), 2u);
    EXPECT_EQ(f.packets[0].bytes.size(), 84u);
    EXPECT_EQ(f.packets[0].index.timestampBegin, 777u);
    EXPECT_EQ(f.packets[0].index.timestampEnd, 777u);
    EXPECT_EQ(f.packets[1].index.timestampBegin, 777u);
    EXPECT_EQ(f.packets[1].index.timestampEnd, 888u);
    EXPECT_EQ(f.packets[1].index.packetSeqNum, 1u);
}

TEST(FtraceStream, HostilePagesNeverCrash) {
    Fixture f(512);
    std::uint64_t seed = 88172645463325252ull;
    for (int i = 0; i < 2000; ++i) {
        Bytes page(static_cast<std::size_t>(seed % 4097));
        for (auto& b : page) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            b = static_cast<std::byte>(seed);
        }
        if (page.size() >= 16) {
            const std::uint64_t commit = seed % (page.size() - 15);
            std::memcpy(page.data() + 8, &commit, 8);
        }
        if (page.size() >= 24 && i % 3 == 0) { // a record of the known id
            const std::uint32_t hdr = PageWriter::header(4, 1);
            std::memcpy(page.data() + 16, &hdr, 4);
            const std::uint16_t id = kSwitchId;
            std::memcpy(page.data() + 20, &id, 2);
        }
        f.stream->consumePage(page);
    }
    f.stream->flush(0);
    std::uint64_t seq = 0;
    for (const Packet& p : f.packets) {
        EXPECT_LE(p.bytes.size(), 512u);
        EXPECT_EQ(p.index.packetSeqNum, seq++);
    }
}

// Found by a fresh-user pass (a channel of ip rules only: idle per-CPU
// streams): the first packet began at the first flush, a zero-length packet
// whose chunk babeltrace2 could not order against the next one.
TEST(FtraceStream, AnIdleStreamsFirstPacketBeginsAtTheStreamsBeginning) {
    Fixture f(4096, 0, nullptr, 700);
    f.stream->flush(1000);
    f.stream->flush(3000);
    ASSERT_EQ(f.packets.size(), 2u);
    EXPECT_EQ(f.packets[0].index.timestampBegin, 700u);
    EXPECT_EQ(f.packets[0].index.timestampEnd, 1000u);
    EXPECT_EQ(f.packets[1].index.timestampBegin, 1000u);
}

// The statedump's events go into the stream before its pages: they share
// its packets, its sequence numbers and its clock, and the pages' events
// follow in the same stream (no stream of its own covering one instant).
TEST(FtraceStream, AppendedEventsShareThePacketsOfThePagesThatFollow) {
    Fixture f(84 + 3 * kEventBytes, 0, nullptr, 900);
    const Bytes fields = {std::byte{1}, std::byte{0}, std::byte{0}, std::byte{0},
                          std::byte{2}, std::byte{0}, std::byte{0}, std::byte{0}};
    for (std::uint64_t ts : {950, 960, 955, 970})
        EXPECT_TRUE(f.stream->appendEvent(kSwitchCtf, ts, {}, fields));
    EXPECT_EQ(f.packets.size(), 1u); // 3 a packet: the 4th opened the next
    PageWriter w(1000);
    w.record(10, switchRecord(100, 7));
    f.stream->consumePage(w.finish());
    f.stream->flush(2000);
    ASSERT_EQ(f.packets.size(), 2u);
    const auto first = events(f.packets[0]);
    const auto second = events(f.packets[1]);
    ASSERT_EQ(first.size(), 3u);
    ASSERT_EQ(second.size(), 2u);
    EXPECT_EQ(first[0].first, 950u);
    EXPECT_EQ(first[2].first, 960u); // 955 raised to the stream's latest
    EXPECT_EQ(second[0].first, 970u);
    EXPECT_EQ(second[1], std::make_pair(std::uint64_t{1010}, 7u));
    EXPECT_EQ(f.packets[0].index.timestampBegin, 900u); // when the stream began
    EXPECT_EQ(f.packets[1].index.packetSeqNum, 1u);
    EXPECT_EQ(f.stream->counters().eventsWritten, 5u);

    // One no empty packet holds is refused and counted as discarded.
    const Bytes huge(4096);
    EXPECT_FALSE(f.stream->appendEvent(kSwitchCtf, 3000, {}, huge));
    EXPECT_EQ(f.stream->counters().tooLarge, 1u);
    EXPECT_EQ(f.stream->counters().eventsDiscarded, 1u);
}

namespace {

// sched_switch, sched_process_exec and task_rename as this kernel lays them
// out (events/*/format), each with its task role and no fields written.
constexpr std::uint16_t kRealSwitch = 320, kExec = 321, kRename = 322, kOther = 323;

struct TaskFixture {
    explicit TaskFixture(FakeProcesses* procs) {
        const auto conversion = [](std::uint16_t id, std::uint16_t minSize, TaskFields task) {
            EventConversion c;
            c.ftraceId = id;
            c.ctfId = static_cast<std::uint16_t>(id - 300);
            c.minSize = minSize;
            c.task = task;
            return c;
        };
        table.add({conversion(kRealSwitch, 64, {TaskRole::SchedSwitch, {24, 56, 40, 60}}),
                   conversion(kExec, 20, {TaskRole::ProcessExec, {12, 8, 0, 0}}),
                   conversion(kRename, 44, {TaskRole::TaskRename, {8, 28, 0, 0}}),
                   conversion(kOther, 8, {})});
        FtraceStreamConfig cfg;
        cfg.cpuId = 0;
        cfg.maxPacketBytes = 4096;
        cfg.contextMask = ContextTid | ContextPid | ContextProcname | ContextPrio;
        stream = std::make_unique<FtraceStream>(
            cfg, table, procs, [this](std::span<const std::byte> p, const IndexEntry&) {
                packets.emplace_back(p.begin(), p.end());
            });
    }
    // (tid, pid, procname, prio) of every event.
    std::vector<std::tuple<std::int32_t, std::int32_t, std::string, std::int32_t>> contexts() {
        std::vector<std::tuple<std::int32_t, std::int32_t, std::string, std::int32_t>> out;
        for (const Bytes& p : packets)
            for (std::size_t at = 84; at + 38 <= p.size(); at += 38) {
                const char* name = reinterpret_cast<const char*>(p.data() + at + 18);
                out.emplace_back(static_cast<std::int32_t>(getLe(p, at + 10, 4)),
                                 static_cast<std::int32_t>(getLe(p, at + 14, 4)),
                                 std::string(name, strnlen(name, 16)),
                                 static_cast<std::int32_t>(getLe(p, at + 34, 4)));
            }
        return out;
    }

    ConversionTable table;
    std::vector<Bytes> packets;
    std::unique_ptr<FtraceStream> stream;
};

Record realSwitch(std::int32_t prev, std::int32_t next, std::string_view nextComm,
                  std::int32_t nextPrio) {
    Record r(kRealSwitch, prev);
    r.text("prev", 16).le(static_cast<std::uint32_t>(prev), 4).le(120, 4).le(0, 8);
    r.text(nextComm, 16).le(static_cast<std::uint32_t>(next), 4);
    r.le(static_cast<std::uint32_t>(nextPrio), 4);
    return r;
}

Record exec(std::int32_t tid, std::string_view file) {
    Record r(kExec, tid);
    r.le((file.size() + 1) << 16 | 20, 4).le(static_cast<std::uint32_t>(tid), 4).le(0, 4);
    r.raw(file).raw(std::string_view("\0", 1)).padTo4();
    return r;
}

Record rename(std::int32_t tid, std::string_view newComm) {
    Record r(kRename, tid);
    r.le(static_cast<std::uint32_t>(tid), 4).text("old", 16).text(newComm, 16).le(0, 4);
    return r;
}

} // namespace

// procname and prio are the running thread's at event time: from the
// sched_switch that switched it in, then its exec and renames, even when
// /proc (here FakeProcesses: "worker", prio tid % 7) says otherwise by the
// time the page is read. The pid comes from the lookup.
TEST(FtraceStream, ContextsFollowTheRunningThreadThroughSwitchExecAndRename) {
    FakeProcesses procs;
    TaskFixture f(&procs);
    PageWriter w(100);
    w.record(1, Record(kOther, 41));                           // before any switch: the lookup
    w.record(1, realSwitch(41, 52, "bash", 120));              // context: 41, still looked up
    w.record(1, Record(kOther, 52));                           // bash, prio 20
    w.record(1, exec(52, "/usr/bin/burner-with-a-long-name")); // the new name already
    w.record(1, Record(kOther, 52));
    w.record(1, rename(52, "renamed")); // the old name on the rename itself
    w.record(1, Record(kOther, 52));
    w.record(1, Record(kOther, 77)); // not the running thread: the lookup
    w.record(1, realSwitch(52, 0, "swapper/0", 120));
    w.record(1, Record(kOther, 0));
    f.stream->consumePage(w.finish());
    f.stream->flush(1000);
    using C = std::tuple<std::int32_t, std::int32_t, std::string, std::int32_t>;
    const std::vector<C> want = {
        {41, 40, "worker", 41 % 7},
        {41, 40, "worker", 41 % 7},
        {52, 50, "bash", 20},
        {52, 50, "burner-with-a-l", 20},
        {52, 50, "burner-with-a-l", 20},
        {52, 50, "burner-with-a-l", 20},
        {52, 50, "renamed", 20},
        {77, 70, "worker", 77 % 7},
        {52, 50, "renamed", 20},
        {0, 0, "swapper/0", 20},
    };
    EXPECT_EQ(f.contexts(), want);
}

// A location outside the record teaches nothing and never reads past it.
TEST(FtraceStream, AnExecWhoseFileNameLiesOutsideTheRecordChangesNoName) {
    FakeProcesses procs;
    TaskFixture f(&procs);
    PageWriter w(100);
    w.record(1, realSwitch(1, 52, "bash", 120));
    Record bad(kExec, 52);
    bad.le(std::uint32_t{200} << 16 | 20, 4).le(52, 4).le(0, 4).raw("x").padTo4();
    w.record(1, bad);
    w.record(1, Record(kOther, 52));
    f.stream->consumePage(w.finish());
    f.stream->flush(1000);
    const auto got = f.contexts();
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(std::get<2>(got[2]), "bash");
}
