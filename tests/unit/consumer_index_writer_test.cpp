// CTF index v1.1 files and the consumer's output files.
#include "index_writer.hpp"
#include "stream_file.hpp"

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <sys/stat.h>
#include <system_error>
#include <vector>

namespace fs = std::filesystem;
using namespace tracectl::consumer;

namespace {

std::vector<unsigned char> readAll(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::uint64_t be64(const std::vector<unsigned char>& b, std::size_t at) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < 8; ++i)
        v = (v << 8) | b[at + i];
    return v;
}

class TempDir : public ::testing::Test {
protected:
    void SetUp() override {
        std::string tmpl = (fs::temp_directory_path() / "tracectl-index-XXXXXX").string();
        ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
        dir_ = tmpl;
        oldMask_ = umask(0027);
    }
    void TearDown() override {
        umask(oldMask_);
        fs::remove_all(dir_);
    }
    fs::path dir_;
    mode_t oldMask_ = 0;
};

IndexEntry sampleEntry(std::uint64_t base) {
    IndexEntry e;
    e.offset = base + 1;
    e.packetSizeBits = base + 2;
    e.contentSizeBits = base + 3;
    e.timestampBegin = base + 4;
    e.timestampEnd = base + 5;
    e.eventsDiscarded = base + 6;
    e.streamId = base + 7;
    e.streamInstanceId = base + 8;
    e.packetSeqNum = base + 9;
    return e;
}

} // namespace

TEST(IndexFormat, HeaderIsBigEndianV11) {
    const auto h = encodeIndexHeader();
    const std::array<unsigned char, 16> expected{0xC1, 0xF1, 0xDC, 0xC1, 0, 0, 0, 1,
                                                 0,    0,    0,    1,    0, 0, 0, 72};
    for (std::size_t i = 0; i < h.size(); ++i)
        EXPECT_EQ(std::to_integer<unsigned char>(h[i]), expected[i]) << i;
}

TEST(IndexFormat, EntryIsNineBigEndianU64InOrder) {
    IndexEntry e = sampleEntry(0);
    e.offset = 0x0102030405060708ULL;
    const auto b = encodeIndexEntry(e);
    ASSERT_EQ(b.size(), 72u);
    EXPECT_EQ(std::to_integer<int>(b[0]), 0x01);
    EXPECT_EQ(std::to_integer<int>(b[7]), 0x08);
    const std::uint64_t want[] = {e.offset, 2, 3, 4, 5, 6, 7, 8, 9};
    for (std::size_t f = 0; f < 9; ++f) {
        std::uint64_t v = 0;
        for (std::size_t i = 0; i < 8; ++i)
            v = (v << 8) | std::to_integer<std::uint64_t>(b[f * 8 + i]);
        EXPECT_EQ(v, want[f]) << "field " << f;
    }
}

TEST_F(TempDir, IndexWriterWritesHeaderAndEntries) {
    const OutputDir root = OutputDir::openRoot(dir_ / "trace");
    const OutputDir chan = root.subdir("ust/uid/1000/64-bit");
    IndexWriter w(chan, "channel0_1");
    w.append(sampleEntry(100));
    w.append(sampleEntry(200));
    EXPECT_EQ(w.entries(), 2u);
    w.close();

    const fs::path file = dir_ / "trace/ust/uid/1000/64-bit/index/channel0_1.idx";
    const auto bytes = readAll(file);
    ASSERT_EQ(bytes.size(), 16u + 2 * 72);
    EXPECT_EQ(bytes[0], 0xC1);
    EXPECT_EQ(bytes[15], 72);
    EXPECT_EQ(be64(bytes, 16), 101u);
    EXPECT_EQ(be64(bytes, 16 + 8 * 8), 109u);
    EXPECT_EQ(be64(bytes, 16 + 72), 201u);
    EXPECT_EQ(fs::status(file).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
    EXPECT_EQ(fs::status(file.parent_path()).permissions() & fs::perms::all,
              fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);

    // Never overwrites a trace.
    EXPECT_THROW(IndexWriter(chan, "channel0_1"), std::system_error);
}

TEST_F(TempDir, StreamFileTracksItsSize) {
    const OutputDir root = OutputDir::openRoot(dir_);
    StreamFile f(root, "channel0_0");
    const std::vector<char> packet(4096, 'p');
    f.write(packet.data(), packet.size());
    f.write(packet.data(), 10);
    EXPECT_EQ(f.size(), 4106u);
    f.close();
    EXPECT_FALSE(f.isOpen());
    EXPECT_THROW(f.write(packet.data(), 1), std::system_error);
    EXPECT_EQ(fs::file_size(dir_ / "channel0_0"), 4106u);
}

TEST_F(TempDir, SubdirRefusesSymlinksAndFilesInThePath) {
    const OutputDir root = OutputDir::openRoot(dir_);
    fs::create_directory(dir_ / "elsewhere");
    fs::create_directory_symlink(dir_ / "elsewhere", dir_ / "ust");
    EXPECT_THROW(root.subdir("ust/uid"), std::system_error);
    EXPECT_FALSE(fs::exists(dir_ / "elsewhere/uid"));

    std::ofstream(dir_ / "plain") << "x";
    EXPECT_THROW(root.subdir("plain/x"), std::system_error);

    // Existing real directories are reused.
    fs::create_directories(dir_ / "kernel/a");
    EXPECT_NO_THROW(root.subdir("kernel/a/b"));
    EXPECT_TRUE(fs::is_directory(dir_ / "kernel/a/b"));
}

TEST_F(TempDir, CreateFileRefusesSymlinks) {
    const OutputDir root = OutputDir::openRoot(dir_);
    fs::create_symlink(dir_ / "target", dir_ / "metadata");
    EXPECT_THROW(StreamFile(root, "metadata"), std::system_error);
    EXPECT_FALSE(fs::exists(dir_ / "target"));
}
