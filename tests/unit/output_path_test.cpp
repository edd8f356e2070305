#include "common/error.hpp"
#include "session/output_path.hpp"

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <gtest/gtest.h>

using tracectl::checkedOutputPath;
using tracectl::defaultOutputPath;
using tracectl::Error;
using tracectl::ErrorCode;

namespace {

ErrorCode codeOf(std::string_view path) {
    try {
        checkedOutputPath(path);
    } catch (const Error& e) {
        return e.code();
    }
    ADD_FAILURE() << "accepted " << path;
    return ErrorCode::Failed;
}

} // namespace

TEST(OutputPath, NormalizesAbsolutePaths) {
    EXPECT_EQ(checkedOutputPath("/tmp/trace"), "/tmp/trace");
    EXPECT_EQ(checkedOutputPath("/tmp//trace/"), "/tmp/trace");
    EXPECT_EQ(checkedOutputPath("/tmp/./trace/."), "/tmp/trace");
}

TEST(OutputPath, RejectsRelativeEscapingAndOddPaths) {
    for (const char* p :
         {"", "relative", "./x", "/tmp/../etc", "/..", "/a/b/..", "/", "//", "/a\nb"})
        EXPECT_EQ(codeOf(p), ErrorCode::InvalidArgument) << p;
    EXPECT_EQ(codeOf("/" + std::string(5000, 'a')), ErrorCode::InvalidArgument);
    EXPECT_EQ(codeOf("/tmp/" + std::string(256, 'a')), ErrorCode::InvalidArgument); // NAME_MAX
    EXPECT_EQ(checkedOutputPath("/tmp/" + std::string(255, 'a')), "/tmp/" + std::string(255, 'a'));
    std::string longest = "/";
    while (longest.size() < 4095)
        longest += longest.size() % 200 == 0 ? '/' : 'a';
    EXPECT_EQ(checkedOutputPath(longest).size(), 4095u);
    EXPECT_EQ(codeOf(longest + "a"), ErrorCode::InvalidArgument); // PATH_MAX counts the NUL
}

TEST(OutputPath, DefaultFollowsLttngLayout) {
    setenv("TZ", "UTC", 1);
    tzset();
    const auto t = std::chrono::system_clock::from_time_t(1700000000); // 2023-11-14 22:13:20 UTC
    EXPECT_EQ(defaultOutputPath("/home/alice", "s1", t),
              "/home/alice/lttng-traces/s1-20231114-221320");
    EXPECT_EQ(defaultOutputPath("/root/", "x", t), "/root/lttng-traces/x-20231114-221320");
}
