#include "session/trace_paths.hpp"

#include <cstdlib>
#include <gtest/gtest.h>

using namespace tracectl;

namespace {

class TracePaths : public ::testing::Test {
protected:
    void SetUp() override {
        setenv("TZ", "UTC", 1);
        tzset();
    }
};

} // namespace

TEST_F(TracePaths, PerPidFolderIsNamePidAndRegistrationTime) {
    // 2026-11-30 03:17:00 UTC
    EXPECT_EQ(perPidTraceDir("demo-app", 4242, 1796008620),
              "ust/pid/demo-app-4242-20261130-031700");
}

TEST_F(TracePaths, ChunkNamesAreIsoBasicWithTheUtcOffset) {
    EXPECT_EQ(chunkStamp(1796008620), "20261130T031700+0000");
    EXPECT_EQ(archiveDir(1796008620, 1796008632, 3),
              "archives/20261130T031700+0000-20261130T031712+0000-3");
    EXPECT_EQ(chunkDir(1796008632, 4), "20261130T031712+0000-4");
    setenv("TZ", "CET-1", 1);
    tzset();
    EXPECT_EQ(chunkStamp(1796008620), "20261130T041700+0100");
}

TEST_F(TracePaths, ProcNamesNeverLeaveTheirFolder) {
    EXPECT_EQ(safeProcName("a/b"), "a_b");
    EXPECT_EQ(safeProcName(".."), "_.");
    EXPECT_EQ(safeProcName(""), "app");
    EXPECT_EQ(safeProcName(std::string("x\ny\x7f", 4)), "x_y_");
    EXPECT_EQ(safeProcName(std::string(100, 'n')).size(), 64u);
    EXPECT_EQ(perPidTraceDir("../x", 1, 0).rfind("ust/pid/_._x-1-", 0), 0u);
}
