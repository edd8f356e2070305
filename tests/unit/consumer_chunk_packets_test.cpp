// Every stream of every chunk holds a packet covering the chunk (issue 13,
// part 1), checked in-process on real liblttng-ust-ctl ring buffers with no
// producer at all: the worst case, a stream nothing is ever written to.
// The timestamps come from the trace clock (CLOCK_MONOTONIC, as lttng-ust's
// default), read back from the CTF index files the consumer writes.
#include "channel.hpp"
#include "common/event_loop.hpp"
#include "output/local_output.hpp"
#include "stream_reader.hpp"
#include "ust_channel.hpp"

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <lttng/ust-ctl.h>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace tracectl::consumer {
namespace {

namespace cp = consumer_protocol;
namespace fs = std::filesystem;

constexpr const char* kTraceDir = "ust/uid/0/64-bit";

std::uint64_t nowNs() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

struct Packet {
    std::uint64_t begin = 0; ///< timestamp_begin, ns
    std::uint64_t end = 0;   ///< timestamp_end, ns
};

/// The packets an index file lists (ctf-index.h: 16-byte header, then
/// 72-byte big-endian entries).
std::vector<Packet> packetsIn(const fs::path& index) {
    std::ifstream in(index, std::ios::binary);
    const std::vector<unsigned char> b{std::istreambuf_iterator<char>(in),
                                       std::istreambuf_iterator<char>()};
    auto be64 = [&](std::size_t at) {
        std::uint64_t v = 0;
        for (std::size_t i = 0; i < 8; ++i)
            v = (v << 8) | b[at + i];
        return v;
    };
    std::vector<Packet> out;
    for (std::size_t at = kIndexHeaderSize; at + 72 <= b.size(); at += 72)
        out.push_back({be64(at + 24), be64(at + 32)});
    return out;
}

/// The packets of stream `name` in trace folder `trace`; a test failure if
/// the stream file is missing or empty.
std::vector<Packet> streamPackets(const fs::path& trace, const std::string& name) {
    const fs::path file = trace / name;
    EXPECT_TRUE(fs::exists(file)) << file;
    if (fs::exists(file)) {
        EXPECT_GT(fs::file_size(file), 0u) << file;
    }
    return packetsIn(trace / "index" / (name + ".idx"));
}

cp::CreateChannel dataChannel(bool overwrite) {
    cp::CreateChannel c;
    c.key = 1;
    c.kind = cp::ChannelKind::Data;
    c.outputDir = kTraceDir;
    c.name = "channel0";
    c.subbufSize = 4096;
    c.subbufCount = 4;
    c.overwrite = overwrite;
    c.chanId = 1;
    return c;
}

class ChunkPackets : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("tracectl-chunk-packets-" + std::to_string(getpid()));
        fs::remove_all(dir_);
        root_.emplace(OutputDir::openRoot(dir_));
        chunk_.emplace(root_->subdir(""));
    }
    /// The chunk `<root>/<path>`.
    std::shared_ptr<const ChunkOutput> chunkAt(const std::string& path) const {
        return std::make_shared<LocalChunk>(root_->subdir(path));
    }
    void TearDown() override {
        chunk_.reset();
        root_.reset();
        fs::remove_all(dir_);
    }

    fs::path dir_;
    std::optional<OutputDir> root_;
    std::optional<LocalChunk> chunk_; ///< the first chunk, at the root
    EventLoop loop_;
};

TEST_F(ChunkPackets, AStreamNothingWritesToCoversTheFirstTheNextAndTheFinalChunk) {
    const std::uint64_t created0 = nowNs();
    Channel ch(loop_, *chunk_, dataChannel(false));
    const std::uint64_t created1 = nowNs();
    const std::uint32_t streams = ch.streamCount();
    ASSERT_GE(streams, 1u);

    const auto next = chunkAt("chunk-1");
    int switched = 0;
    const std::uint64_t rotated0 = nowNs();
    const Channel::RotateResult r = ch.rotate(next, [&] { ++switched; });
    const std::uint64_t rotated1 = nowNs();
    EXPECT_EQ(r.error, "");
    EXPECT_EQ(r.expected, streams);
    EXPECT_EQ(switched, static_cast<int>(streams))
        << "nothing to drain: every stream switches at once";

    const std::uint64_t closed0 = nowNs();
    ch.drainAndClose(false);
    const std::uint64_t closed1 = nowNs();

    for (std::uint32_t cpu = 0; cpu < streams; ++cpu) {
        const std::string name = "channel0_" + std::to_string(cpu);
        SCOPED_TRACE(name);
        const auto first = streamPackets(dir_ / kTraceDir, name);
        ASSERT_FALSE(first.empty()) << "no packet in the first chunk";
        // Begins when the channel was made, ends at the rotation.
        EXPECT_GE(first.front().begin, created0);
        EXPECT_LE(first.front().begin, created1);
        EXPECT_GE(first.back().end, rotated0);
        EXPECT_LE(first.back().end, rotated1);

        const auto second = streamPackets(dir_ / "chunk-1" / kTraceDir, name);
        ASSERT_FALSE(second.empty()) << "no packet in the chunk after the rotation";
        // Begins at the rotation (after the first chunk's end), ends at the close.
        EXPECT_GE(second.front().begin, first.back().end);
        EXPECT_LE(second.front().begin, rotated1);
        EXPECT_GE(second.back().end, closed0);
        EXPECT_LE(second.back().end, closed1);
    }
}

TEST_F(ChunkPackets, ARotationOfAFullBufferOpensTheNewChunksPacketOnceThereIsRoom) {
    // A buffer that does not overwrite, full of packets nobody has read yet
    // (here the consumer's own empty ones, as a fast producer's would be):
    // a rotation has no room to close or open a packet at once.
    UstChannel::Attributes a;
    a.subbufSize = 4096;
    a.subbufCount = 4;
    a.chanId = 1;
    UstChannel ust(a);
    std::vector<UstStream> made = ust.createStreams();
    ASSERT_FALSE(made.empty());
    StreamReader reader(loop_, std::move(made.front()), *chunk_, kTraceDir, "channel0_0",
                        StreamReader::Kind::Data, false);
    lttng_ust_ctl_consumer_stream* s = reader.ustStream().get();
    int filled = 0;
    while (openPacket(s))
        ASSERT_LE(++filled, 4) << "the buffer never filled";
    EXPECT_EQ(filled, 4);
    const std::uint64_t full = nowNs();

    const auto next = chunkAt("chunk-1");
    bool switched = false;
    const std::uint64_t rotated0 = nowNs();
    reader.rotate(next, [&] { switched = true; });
    const std::uint64_t rotated1 = nowNs();
    EXPECT_TRUE(switched);

    const auto old = streamPackets(dir_ / kTraceDir, "channel0_0");
    EXPECT_EQ(old.size(), 4u) << "the four packets produced before the rotation";
    if (!old.empty()) {
        EXPECT_LE(old.back().end, full);
    }
    const auto fresh = streamPackets(dir_ / "chunk-1" / kTraceDir, "channel0_0");
    ASSERT_EQ(fresh.size(), 1u) << "the packet opened once the first old one was read";
    EXPECT_GE(fresh.front().begin, rotated0);
    EXPECT_LE(fresh.front().begin, rotated1);
    reader.close();
}

TEST_F(ChunkPackets, ATraceWhoseStreamsAllClosedIsAbsentFromTheNewChunkNotHalfThere) {
    cp::CreateChannel meta;
    meta.key = 2;
    meta.kind = cp::ChannelKind::Metadata;
    meta.outputDir = kTraceDir;
    meta.name = "metadata";
    meta.subbufSize = 4096;
    meta.subbufCount = 2;
    meta.chanId = ~std::uint32_t{0};
    Channel metadata(loop_, *chunk_, meta);
    Channel data(loop_, *chunk_, dataChannel(false));
    metadata.pushMetadata(0, "/* CTF 1.8 */\n");
    int switched = 0;
    auto rotateBoth = [&](const std::string& chunk) {
        const auto next = chunkAt(chunk);
        EXPECT_EQ(metadata.rotate(next, [&] { ++switched; }).error, "");
        EXPECT_EQ(data.rotate(next, [&] { ++switched; }).error, "");
    };

    // Its streams open: the trace goes on, whole, in the next chunk.
    rotateBoth("chunk-1");
    EXPECT_TRUE(fs::exists(dir_ / "chunk-1" / kTraceDir / "metadata"));
    EXPECT_FALSE(streamPackets(dir_ / "chunk-1" / kTraceDir, "channel0_0").empty());

    // Its app left (every stream drained and closed, the channel not yet
    // destroyed): no folder at all in the next chunk, and what is still
    // pushed goes on in the chunk the trace was in.
    data.drainAndClose(true);
    switched = 0;
    rotateBoth("chunk-2");
    EXPECT_EQ(switched, 1 + static_cast<int>(data.streamCount()));
    EXPECT_FALSE(fs::exists(dir_ / "chunk-2" / kTraceDir)) << "half there";
    metadata.pushMetadata(14, "/* more */\n");
    metadata.drainAndClose(true);
    EXPECT_GT(fs::file_size(dir_ / "chunk-1" / kTraceDir / "metadata"), 0u);
}

// While active, a snapshot closes a stream's current sub-buffer only if it
// holds something (producer_active 1, as lttng-consumerd): an empty switch
// would evict the oldest sub-buffer of an overwrite ring, so snapshots taken
// one after another would push the history out (found by a fresh-user pass:
// 401 events in the first snapshots, 0 from the fifth on). Once stopped, the
// last packets end where tracing did.
TEST_F(ChunkPackets, SnapshotsKeepTheHistoryWhileActiveAndEndWhereTracingStoppedOnceStopped) {
    Channel ch(loop_, *chunk_, dataChannel(true), true);
    const std::uint32_t streams = ch.streamCount();
    ASSERT_GE(streams, 1u);
    auto snapshot = [&](const std::string& name) {
        ch.recordSnapshot(LocalChunk(root_->subdir(name)), 0);
        return dir_ / name / kTraceDir;
    };

    std::vector<fs::path> active;
    for (int i = 0; i < 8; ++i) // more than the ring's sub-buffers
        active.push_back(snapshot("snapshot-a" + std::to_string(i)));
    const std::uint64_t stopped0 = nowNs();
    ch.flush(); // Stop
    const std::uint64_t stopped1 = nowNs();
    const fs::path second = snapshot("snapshot-2");
    const fs::path third = snapshot("snapshot-3");

    for (std::uint32_t cpu = 0; cpu < streams; ++cpu) {
        const std::string name = "channel0_" + std::to_string(cpu);
        SCOPED_TRACE(name);
        const auto first = streamPackets(active.front(), name);
        ASSERT_FALSE(first.empty()) << "the packet opened when the channel was made";
        for (std::size_t i = 1; i < active.size(); ++i) {
            const auto again = streamPackets(active[i], name);
            ASSERT_EQ(again.size(), first.size()) << "snapshot " << i;
            EXPECT_EQ(again.front().begin, first.front().begin) << "snapshot " << i;
        }
        const auto two = streamPackets(second, name);
        ASSERT_FALSE(two.empty());
        EXPECT_GE(two.back().end, stopped0) << "a stopped stream ends at the stop";
        EXPECT_LE(two.back().end, stopped1);
        // Snapshots of a stopped session add nothing either.
        const auto three = streamPackets(third, name);
        EXPECT_EQ(three.size(), two.size());
    }
}

} // namespace
} // namespace tracectl::consumer
