// IpStream (consumer/kernel/ip_stream.hpp): the ip provider's ring-buffer
// records in, packets of the channel's stream class out. Event ids per
// probe, the payload of ip_event_fields.hpp, timestamps that never go
// backward, the program's drop count as events_discarded, packet splits.
#include "ip_event_fields.hpp"
#include "kernel/ip_stream.hpp"
#include "kernel_test_support.hpp"

#include <arpa/inet.h>
#include <cstring>
#include <gtest/gtest.h>

using namespace tracectl::consumer;
using namespace tracectl::consumer::kernel;
using namespace tracectl::kernel_records;
using ktest::Bytes;
using ktest::getLe;

namespace {

struct Packet {
    Bytes bytes;
    IndexEntry index;
};

struct Fixture {
    explicit Fixture(std::size_t maxPacket, std::uint64_t begin = 0) {
        IpStreamConfig cfg;
        cfg.beginTimestamp = begin;
        cfg.uuid.fill(std::byte{0x22});
        cfg.streamId = 3;
        cfg.maxPacketBytes = maxPacket;
        cfg.contextMask = ContextTid | ContextCpuId;
        cfg.sendId = 9;
        cfg.receiveId = 10;
        stream = std::make_unique<IpStream>(
            cfg, nullptr, [this](std::span<const std::byte> p, const IndexEntry& e) {
                packets.push_back({Bytes(p.begin(), p.end()), e});
            });
    }
    std::unique_ptr<IpStream> stream;
    std::vector<Packet> packets;
};

tracectl_ip_record udpRecord(std::uint8_t probe, std::uint64_t ts, std::uint32_t tid,
                             std::uint32_t cpu) {
    tracectl_ip_record r{};
    r.timestamp = ts;
    r.probe = probe;
    r.tid = tid;
    r.cpu = cpu;
    r.ip_ver = 4;
    r.header_len = 20;
    r.if_local = 1;
    std::memcpy(r.if_name, "lo", 3);
    const std::uint8_t header[20] = {0x45, 0, 0,   48, 0, 1, 0x40, 0, 64, 17,
                                     0,    0, 127, 0,  0, 1, 127,  0, 0,  1};
    std::memcpy(r.header, header, sizeof header);
    r.sport = 1000;
    r.dport = 2000;
    return r;
}

// Event header (u16 id, u64 ts), then _tid and _cpu_id (i32 each), then the payload.
constexpr std::size_t kHeaderAndContext = 2 + 8 + 4 + 4;

TEST(IpStream, RecordsBecomeEventsOfTheirProbesIdAndPayload) {
    Fixture f(4096);
    f.stream->consume(udpRecord(TRACECTL_IP_SEND, 1000, 77, 1));
    f.stream->consume(udpRecord(TRACECTL_IP_RECEIVE, 1100, 0, 0));
    f.stream->flush(5000);
    ASSERT_EQ(f.packets.size(), 1u);
    const Packet& p = f.packets[0];
    EXPECT_EQ(p.index.streamId, 3u);
    EXPECT_EQ(p.index.streamInstanceId, kIpProbesInstance);
    EXPECT_EQ(p.index.timestampBegin, 1000u);
    EXPECT_EQ(p.index.timestampEnd, 5000u);
    std::vector<std::byte> payload;
    tracectl::ip::appendIpEventFields(udpRecord(TRACECTL_IP_SEND, 1000, 77, 1), payload);
    const std::size_t first = kPacketPreambleSize;
    EXPECT_EQ(getLe(p.bytes, first, 2), 9u) << "ip:send's id";
    EXPECT_EQ(getLe(p.bytes, first + 2, 8), 1000u);
    EXPECT_EQ(getLe(p.bytes, first + 10, 4), 77u) << "_tid";
    EXPECT_EQ(getLe(p.bytes, first + 14, 4), 1u) << "_cpu_id: the CPU the probe ran on";
    EXPECT_EQ(
        std::memcmp(p.bytes.data() + first + kHeaderAndContext, payload.data(), payload.size()), 0);
    const std::size_t second = first + kHeaderAndContext + payload.size();
    EXPECT_EQ(getLe(p.bytes, second, 2), 10u) << "ip:receive's id";
    EXPECT_EQ(p.bytes.size(), second + kHeaderAndContext + payload.size());
    EXPECT_EQ(f.stream->counters().eventsWritten, 2u);
}

TEST(IpStream, TimestampsNeverGoBackwardAndUnknownProbesAreCounted) {
    Fixture f(4096);
    f.stream->consume(udpRecord(TRACECTL_IP_SEND, 2000, 1, 0));
    f.stream->consume(udpRecord(TRACECTL_IP_RECEIVE, 1500, 1, 1)); // another CPU, earlier
    f.stream->consume(udpRecord(7, 2500, 1, 0));
    f.stream->flush(1000); // before the last event: the end is the last event's
    ASSERT_EQ(f.packets.size(), 1u);
    std::vector<std::byte> payload;
    tracectl::ip::appendIpEventFields(udpRecord(TRACECTL_IP_SEND, 0, 0, 0), payload);
    const std::size_t second = kPacketPreambleSize + kHeaderAndContext + payload.size();
    EXPECT_EQ(getLe(f.packets[0].bytes, second + 2, 8), 2000u) << "clamped to the last";
    EXPECT_EQ(f.packets[0].index.timestampEnd, 2000u);
    EXPECT_EQ(f.stream->counters().unknownProbes, 1u);
    EXPECT_EQ(f.stream->counters().eventsWritten, 2u);
}

TEST(IpStream, TheProgramsDropCountIsTheDiscardedCountExactly) {
    Fixture f(4096);
    f.stream->setDropped(3);
    f.stream->consume(udpRecord(TRACECTL_IP_SEND, 10, 1, 0));
    f.stream->setDropped(3); // unchanged: nothing more
    f.stream->flush(20);
    f.stream->setDropped(8);
    f.stream->flush(30);
    ASSERT_EQ(f.packets.size(), 2u);
    EXPECT_EQ(f.packets[0].index.eventsDiscarded, 3u);
    EXPECT_EQ(f.packets[1].index.eventsDiscarded, 8u) << "a running count, as in LTTng";
    EXPECT_EQ(f.stream->counters().eventsDiscarded, 8u);
}

TEST(IpStream, AFullPacketIsClosedAndTheNextOpened) {
    Fixture f(4096);
    constexpr int kRecords = 60;
    for (int i = 0; i < kRecords; ++i)
        f.stream->consume(udpRecord(TRACECTL_IP_SEND, 100 + static_cast<std::uint64_t>(i), 1, 0));
    f.stream->flush(1000);
    ASSERT_GE(f.packets.size(), 2u);
    std::uint64_t seq = 0;
    for (const Packet& p : f.packets) {
        EXPECT_LE(p.bytes.size(), 4096u);
        EXPECT_EQ(p.index.packetSeqNum, seq++);
    }
    EXPECT_EQ(f.stream->counters().eventsWritten, static_cast<std::uint64_t>(kRecords));
    EXPECT_EQ(f.stream->counters().packets, f.packets.size());
}

// Found by a fresh-user pass: an idle stream's first packet began at its
// first flush, so a rotation's archive held a zero-length packet [t, t] and
// the next chunk's began at t too; babeltrace2, merging the chunks of one
// trace, ordered the two the wrong way and refused the trace.
TEST(IpStream, AnIdleStreamsFirstPacketBeginsAtTheStreamsBeginning) {
    Fixture f(4096, 500);
    f.stream->flush(1000);
    f.stream->flush(2000);
    ASSERT_EQ(f.packets.size(), 2u);
    EXPECT_EQ(f.packets[0].index.timestampBegin, 500u);
    EXPECT_EQ(f.packets[0].index.timestampEnd, 1000u);
    EXPECT_EQ(f.packets[1].index.timestampBegin, 1000u);
    EXPECT_EQ(f.packets[1].index.timestampEnd, 2000u);
}

} // namespace
