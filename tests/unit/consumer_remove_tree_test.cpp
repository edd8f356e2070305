// removeTree (src/consumer/remove_tree.hpp): how the consumer deletes a
// cleared chunk, on a real temporary folder.
#include "remove_tree.hpp"

#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <system_error>
#include <unistd.h>

namespace fs = std::filesystem;
using tracectl::consumer::kMaxRemoveDepth;
using tracectl::consumer::removeTree;

namespace {

class RemoveTree : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/remove-tree-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        root_ = tmpl;
        fd_ = ::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_GE(fd_, 0);
    }
    void TearDown() override {
        ::close(fd_);
        std::error_code ec;
        fs::remove_all(root_, ec);
    }
    void file(const fs::path& p) {
        fs::create_directories((root_ / p).parent_path());
        std::ofstream(root_ / p) << "packet";
    }
    fs::path root_;
    int fd_ = -1;
};

} // namespace

TEST_F(RemoveTree, RemovesAChunkWithItsFoldersAndLeavesItsSiblings) {
    file("ust/uid/0/64-bit/channel0_0");
    file("ust/uid/0/64-bit/index/channel0_0.idx");
    file("ust/uid/0/64-bit/metadata");
    file("20261202T003000+0000-1/ust/uid/0/64-bit/metadata");
    file("archives/a-b-0/ust/uid/0/64-bit/metadata");
    removeTree(fd_, "ust");
    EXPECT_FALSE(fs::exists(root_ / "ust"));
    EXPECT_TRUE(fs::exists(root_ / "20261202T003000+0000-1/ust/uid/0/64-bit/metadata"));
    EXPECT_TRUE(fs::exists(root_ / "archives/a-b-0/ust/uid/0/64-bit/metadata"));
}

TEST_F(RemoveTree, AMissingEntryIsNoErrorAndAFileIsUnlinked) {
    EXPECT_NO_THROW(removeTree(fd_, "kernel"));
    file("lone");
    removeTree(fd_, "lone");
    EXPECT_FALSE(fs::exists(root_ / "lone"));
}

TEST_F(RemoveTree, ASymlinkIsRemovedNotFollowed) {
    file("outside/precious");
    fs::create_directories(root_ / "chunk");
    fs::create_directory_symlink(root_ / "outside", root_ / "chunk" / "link");
    removeTree(fd_, "chunk");
    EXPECT_FALSE(fs::exists(root_ / "chunk"));
    EXPECT_TRUE(fs::exists(root_ / "outside/precious"));
}

TEST_F(RemoveTree, NamesThatAreNotOneEntryAreRefused) {
    file("a/b");
    for (const char* bad : {"", ".", "..", "a/b"})
        EXPECT_THROW(removeTree(fd_, bad), std::system_error) << bad;
    EXPECT_TRUE(fs::exists(root_ / "a/b"));
}

TEST_F(RemoveTree, TooDeepATreeIsAnErrorNotARunawayRecursion) {
    fs::path deep = "d";
    for (int i = 0; i < kMaxRemoveDepth + 2; ++i)
        deep /= "d";
    file(deep / "f");
    EXPECT_THROW(removeTree(fd_, "d"), std::system_error);
}
