// StreamFile: page-aligned packets go with O_DIRECT, the rest through the
// page cache, and the file holds exactly what was written, in order, on a
// filesystem that takes direct I/O (the build folder's) and on one that
// may not (tmpfs, /dev/shm).
#include "stream_file.hpp"

#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace tracectl::consumer {
namespace {

/// A page-aligned anonymous mapping, like a ring buffer's pages.
class PageBuffer {
public:
    explicit PageBuffer(std::size_t size) : size_(size) {
        void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            throw std::runtime_error("mmap");
        data_ = static_cast<unsigned char*>(p);
    }
    ~PageBuffer() { ::munmap(data_, size_); }
    PageBuffer(const PageBuffer&) = delete;
    PageBuffer& operator=(const PageBuffer&) = delete;
    unsigned char* data() { return data_; }

private:
    std::size_t size_;
    unsigned char* data_ = nullptr;
};

std::vector<unsigned char> readAll(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writesLandInOrder(const std::filesystem::path& folder) {
    std::filesystem::remove_all(folder);
    const OutputDir dir = OutputDir::openRoot(folder);
    constexpr std::size_t kPage = StreamFile::kDirectAlignment;
    PageBuffer buf(16 * kPage);
    for (std::size_t i = 0; i < 16 * kPage; ++i)
        buf.data()[i] = static_cast<unsigned char>(i * 7 + i / kPage);

    std::vector<unsigned char> expected;
    StreamFile file(dir, "channel0_0");
    auto put = [&](const unsigned char* p, std::size_t n) {
        file.write(p, n);
        expected.insert(expected.end(), p, p + n);
        EXPECT_EQ(file.size(), expected.size());
    };
    put(buf.data(), 4 * kPage);              // aligned: direct
    put(buf.data() + 4 * kPage, 2 * kPage);  // aligned: direct
    put(buf.data() + 1, 100);                // unaligned address and length
    put(buf.data() + 8 * kPage, 4 * kPage);  // aligned memory, unaligned offset
    put(buf.data() + 3, kPage - 100);        // back to a page boundary (11 pages)
    put(buf.data() + 12 * kPage, 4 * kPage); // aligned again: direct
    file.close();
    EXPECT_EQ(readAll(folder / "channel0_0"), expected);
    std::filesystem::remove_all(folder);
}

TEST(StreamFile, MixedAlignedAndUnalignedWritesLandInOrder) {
    writesLandInOrder(std::filesystem::current_path() / "stream-file-test");
}

TEST(StreamFile, AFilesystemWithoutDirectIoIsWrittenThroughThePageCache) {
    writesLandInOrder(std::filesystem::path("/dev/shm") /
                      ("tracectl-stream-file-test-" + std::to_string(::getpid())));
}

TEST(StreamFile, AWriteAfterCloseIsEbadf) {
    const auto folder = std::filesystem::current_path() / "stream-file-closed";
    std::filesystem::remove_all(folder);
    const OutputDir dir = OutputDir::openRoot(folder);
    StreamFile file(dir, "f");
    file.close();
    const char byte = 'x';
    try {
        file.write(&byte, 1);
        ADD_FAILURE() << "wrote to a closed file";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code().value(), EBADF);
    }
    std::filesystem::remove_all(folder);
}

} // namespace
} // namespace tracectl::consumer
