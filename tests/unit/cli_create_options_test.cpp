// Unit tests of how tracectl builds Manager.CreateSession options.
#include "cli/create_options.hpp"

#include <cstdlib>
#include <ctime>
#include <gtest/gtest.h>

using namespace tracectl::cli;

TEST(CliCreateOptions, RelativeOutputIsMadeAbsoluteAgainstCwd) {
    EXPECT_EQ(absolute_output_path("traces/web", "/home/alice"), "/home/alice/traces/web");
    EXPECT_EQ(absolute_output_path("./traces/", "/home/alice"), "/home/alice/traces");
    EXPECT_EQ(absolute_output_path("../bob/t", "/home/alice"), "/home/bob/t");
    EXPECT_EQ(absolute_output_path(".", "/home/alice"), "/home/alice");
}

TEST(CliCreateOptions, AbsoluteOutputIsNormalized) {
    EXPECT_EQ(absolute_output_path("/var/traces", "/home/alice"), "/var/traces");
    EXPECT_EQ(absolute_output_path("/var//traces/./x/../", "/home/alice"), "/var/traces");
    EXPECT_EQ(absolute_output_path("/", "/home/alice"), "/");
}

TEST(CliCreateOptions, EmptyOutputStaysEmpty) {
    EXPECT_EQ(absolute_output_path("", "/home/alice"), "");
}

TEST(CliCreateOptions, OnlyGivenOptionsAreSent) {
    EXPECT_TRUE(create_session_options(std::nullopt, false).empty());
    const auto both = create_session_options(std::string{"/t"}, true);
    EXPECT_EQ(both,
              (std::map<std::string, std::string>{{"output-path", "/t"}, {"mode", "snapshot"}}));
    const auto output_only = create_session_options(std::string{"/t"}, false);
    EXPECT_EQ(output_only, (std::map<std::string, std::string>{{"output-path", "/t"}}));
    EXPECT_EQ(create_session_options(std::nullopt, false, std::string{"per-pid"}),
              (std::map<std::string, std::string>{{"buffer-ownership", "per-pid"}}));
}

TEST(AutoSession, NameIsAutoAndTheLocalTimeAsLttngCreateGivesIt) {
    ::setenv("TZ", "UTC", 1);
    ::tzset();
    EXPECT_EQ(auto_session_name(std::time_t{1796172245}), "auto-20261202-004405");
    EXPECT_EQ(auto_session_name(std::time_t{0}), "auto-19700101-000000");
}

TEST(AutoSession, OutputIsTheNameAloneUnderLttngTraces) {
    EXPECT_EQ(auto_session_output("/home/alice", "auto-20261202-010405"),
              "/home/alice/lttng-traces/auto-20261202-010405");
    EXPECT_EQ(auto_session_output("/root/", "auto-1"), "/root/lttng-traces/auto-1");
}
