#include "common/cli_parse.hpp"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

/// parseAndRun on a little App (--flag, --level a|b, --version) with `args`.
int parse(std::vector<std::string> args, const std::function<int()>& run, bool* flag = nullptr) {
    CLI::App app{"test program", "prog"};
    app.set_version_flag("--version", "prog 1");
    bool f = false;
    std::string level;
    app.add_flag("--flag", f);
    app.add_option("--level", level)->check(CLI::IsMember({"a", "b"}));
    args.insert(args.begin(), "prog");
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    const int r = tracectl::parseAndRun(app, static_cast<int>(argv.size()), argv.data(), run);
    if (flag != nullptr)
        *flag = f;
    return r;
}

} // namespace

TEST(CliParse, HelpAndVersionExitZeroWithoutRunning) {
    bool ran = false;
    const auto run = [&] { return ran = true, 7; };
    testing::internal::CaptureStdout();
    EXPECT_EQ(parse({"--help"}, run), 0);
    EXPECT_NE(testing::internal::GetCapturedStdout().find("--flag"), std::string::npos);
    testing::internal::CaptureStdout();
    EXPECT_EQ(parse({"--version"}, run), 0);
    EXPECT_EQ(testing::internal::GetCapturedStdout(), "prog 1\n");
    EXPECT_FALSE(ran);
}

TEST(CliParse, UsageErrorsExitTwoWithoutRunning) {
    bool ran = false;
    const auto run = [&] { return ran = true, 0; };
    const std::vector<std::vector<std::string>> bad{
        {"--bogus"}, {"--level", "c"}, {"--level"}, {"extra"}};
    for (const auto& args : bad) {
        testing::internal::CaptureStderr();
        EXPECT_EQ(parse(args, run), tracectl::kCommandLineUsage) << args.front();
        EXPECT_NE(testing::internal::GetCapturedStderr().find("--help"), std::string::npos);
    }
    EXPECT_FALSE(ran);
}

TEST(CliParse, RunsAndReturnsItsStatus) {
    bool flag = false;
    EXPECT_EQ(parse(
                  {"--flag"}, [] { return 4; }, &flag),
              4);
    EXPECT_TRUE(flag);
    EXPECT_EQ(parse({}, [] { return 0; }), 0);
}

TEST(CliParse, AnExceptionFromRunExitsOne) {
    testing::internal::CaptureStderr();
    EXPECT_EQ(parse({}, []() -> int { throw std::runtime_error("no bus"); }),
              tracectl::kCommandLineFailure);
    testing::internal::GetCapturedStderr();
}
