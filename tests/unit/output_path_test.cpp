#include "common/error.hpp"
#include "output_path.hpp"

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
}

TEST(OutputPath, DefaultFollowsLttngLayout) {
    setenv("TZ", "UTC", 1);
    tzset();
    const auto t = std::chrono::system_clock::from_time_t(1700000000); // 2023-11-14 22:13:20 UTC
    EXPECT_EQ(defaultOutputPath("/home/alice", "s1", t),
              "/home/alice/lttng-traces/s1-20231114-221320");
    EXPECT_EQ(defaultOutputPath("/root/", "x", t), "/root/lttng-traces/x-20231114-221320");
}
