// InstanceLock: one holder per lock file; free again as soon as the holder
// is gone, even killed; never inherited across exec.
#include "service/instance_lock.hpp"

#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <optional>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

using tracectl::InstanceLock;

namespace {

class InstanceLockTest : public ::testing::Test {
protected:
    void SetUp() override {
        char templ[] = "/tmp/tracectl-lock-XXXXXX";
        ASSERT_NE(mkdtemp(templ), nullptr);
        dir_ = templ;
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    std::string dir_;
};

TEST_F(InstanceLockTest, PathIsTracectldLockInTheRunDirectory) {
    EXPECT_EQ(InstanceLock::pathIn("/run/lttng"), "/run/lttng/tracectld.lock");
}

TEST_F(InstanceLockTest, CreatesTheFolderAndRecordsThePid) {
    const std::string path = InstanceLock::pathIn(dir_ + "/home/.lttng");
    InstanceLock::Busy busy;
    auto lock = InstanceLock::tryAcquire(path, busy);
    ASSERT_TRUE(lock.has_value());
    EXPECT_EQ(lock->path(), path);
    std::FILE* f = std::fopen(path.c_str(), "r");
    ASSERT_NE(f, nullptr);
    long pid = 0;
    EXPECT_EQ(std::fscanf(f, "%ld", &pid), 1);
    std::fclose(f);
    EXPECT_EQ(pid, static_cast<long>(getpid()));
}

TEST_F(InstanceLockTest, ASecondHolderIsRefusedAndToldWhoHoldsIt) {
    const std::string path = InstanceLock::pathIn(dir_);
    InstanceLock::Busy busy;
    auto first = InstanceLock::tryAcquire(path, busy);
    ASSERT_TRUE(first.has_value());
    // A second open file description, as a second daemon would have.
    auto second = InstanceLock::tryAcquire(path, busy);
    EXPECT_FALSE(second.has_value());
    EXPECT_EQ(busy.path, path);
    ASSERT_TRUE(busy.holder.has_value());
    EXPECT_EQ(*busy.holder, getpid());
    first.reset();
    EXPECT_TRUE(InstanceLock::tryAcquire(path, busy).has_value());
}

TEST_F(InstanceLockTest, FreeAtOnceWhenTheHolderIsKilled) {
    const std::string path = InstanceLock::pathIn(dir_);
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        InstanceLock::Busy b;
        auto lock = InstanceLock::tryAcquire(path, b);
        const char c = lock ? 'y' : 'n';
        if (write(ready[1], &c, 1) != 1)
            _exit(2);
        pause();
        _exit(0);
    }
    close(ready[1]);
    char c = 0;
    ASSERT_EQ(read(ready[0], &c, 1), 1);
    close(ready[0]);
    ASSERT_EQ(c, 'y');
    InstanceLock::Busy busy;
    EXPECT_FALSE(InstanceLock::tryAcquire(path, busy).has_value());
    ASSERT_TRUE(busy.holder.has_value());
    EXPECT_EQ(*busy.holder, child);
    kill(child, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    // No stale-lock clean-up needed: the kernel dropped it with the process.
    auto lock = InstanceLock::tryAcquire(path, busy);
    ASSERT_TRUE(lock.has_value());
}

TEST_F(InstanceLockTest, TheLockDescriptorIsCloseOnExec) {
    const std::string path = InstanceLock::pathIn(dir_);
    InstanceLock::Busy busy;
    auto lock = InstanceLock::tryAcquire(path, busy);
    ASSERT_TRUE(lock.has_value());
    // Find our descriptor of the file among the open ones.
    bool found = false;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
        std::error_code ec;
        const auto target = std::filesystem::read_symlink(e.path(), ec);
        if (ec || target != path)
            continue;
        found = true;
        const int fd = std::stoi(e.path().filename().string());
        EXPECT_NE(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
    }
    EXPECT_TRUE(found);
}

} // namespace
