// kernel::PacketRing: a snapshot channel's history of one stream, bounded
// by its ring buffer's size, written whole or its newest packets only.
#include "kernel/packet_ring.hpp"

#include <gtest/gtest.h>
#include <vector>

namespace tracectl::consumer::kernel {
namespace {

/// A sink that keeps what it was given: each packet's first byte (its
/// tag) and its index entry's packet_seq_num.
class RecordingSink final : public StreamSink {
public:
    void write(const void* data, std::size_t padded, std::size_t content,
               const IndexEntry* index) override {
        EXPECT_EQ(padded, content);
        tags.push_back(static_cast<const unsigned char*>(data)[0]);
        seqs.push_back(index->packetSeqNum);
        written += padded;
    }
    std::uint64_t bytes() const noexcept override { return written; }
    void close() noexcept override {}
    std::vector<unsigned> tags;
    std::vector<std::uint64_t> seqs;
    std::uint64_t written = 0;
};

void append(PacketRing& ring, unsigned char tag, std::size_t size) {
    std::vector<std::byte> packet(size, std::byte{tag});
    IndexEntry entry;
    entry.packetSeqNum = tag;
    ring.append(packet, entry);
}

TEST(PacketRing, KeepsTheNewestPacketsWithinItsBudgetOldestFirst) {
    PacketRing ring(3 * 100);
    for (unsigned char tag = 1; tag <= 5; ++tag)
        append(ring, tag, 100);
    EXPECT_EQ(ring.packets(), 3u);
    EXPECT_EQ(ring.bytes(), 300u);
    EXPECT_EQ(ring.dropped(), 2u);
    RecordingSink sink;
    ring.writeTo(sink, 0);
    EXPECT_EQ(sink.tags, (std::vector<unsigned>{3, 4, 5}));
    EXPECT_EQ(sink.seqs, (std::vector<std::uint64_t>{3, 4, 5}));
}

TEST(PacketRing, WritingKeepsTheHistoryForTheNextSnapshot) {
    PacketRing ring(1000);
    append(ring, 1, 100);
    RecordingSink first;
    ring.writeTo(first, 0);
    append(ring, 2, 100);
    RecordingSink second;
    ring.writeTo(second, 0);
    EXPECT_EQ(first.tags, (std::vector<unsigned>{1}));
    EXPECT_EQ(second.tags, (std::vector<unsigned>{1, 2}));
}

TEST(PacketRing, WritesOnlyTheNewestPacketsAsked) {
    PacketRing ring(1000);
    for (unsigned char tag = 1; tag <= 4; ++tag)
        append(ring, tag, 10);
    RecordingSink two;
    ring.writeTo(two, 2);
    EXPECT_EQ(two.tags, (std::vector<unsigned>{3, 4}));
    RecordingSink more;
    ring.writeTo(more, 9);
    EXPECT_EQ(more.tags, (std::vector<unsigned>{1, 2, 3, 4}));
}

TEST(PacketRing, AlwaysKeepsTheNewestPacketEvenAboveTheBudget) {
    PacketRing ring(50);
    append(ring, 1, 10);
    append(ring, 2, 80);
    EXPECT_EQ(ring.packets(), 1u);
    EXPECT_EQ(ring.bytes(), 80u);
    RecordingSink sink;
    ring.writeTo(sink, 0);
    EXPECT_EQ(sink.tags, (std::vector<unsigned>{2}));
}

TEST(PacketRing, ClearDropsEverything) {
    PacketRing ring(1000);
    append(ring, 1, 10);
    ring.clear();
    EXPECT_EQ(ring.packets(), 0u);
    EXPECT_EQ(ring.bytes(), 0u);
    RecordingSink sink;
    ring.writeTo(sink, 0);
    EXPECT_TRUE(sink.tags.empty());
    append(ring, 2, 10);
    ring.writeTo(sink, 0);
    EXPECT_EQ(sink.tags, (std::vector<unsigned>{2}));
}

} // namespace
} // namespace tracectl::consumer::kernel
