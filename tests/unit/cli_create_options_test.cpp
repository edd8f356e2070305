// Unit tests of how tracectl builds Manager.CreateSession options.
#include "cli/create_options.hpp"

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
