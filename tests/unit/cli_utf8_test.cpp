#include "cli/utf8.hpp"

#include <gtest/gtest.h>
#include <string>

using tracectl::cli::isValidUtf8;
using namespace std::string_literals;

TEST(CliUtf8, AcceptsWellFormedText) {
    for (const std::string& s : {""s, "ascii"s, "café"s, "日本語"s, "\xf0\x9f\x98\x80"s})
        EXPECT_TRUE(isValidUtf8(s)) << s;
}

TEST(CliUtf8, RejectsWhatDbusCannotCarry) {
    for (const std::string& s :
         {"\xff"s, "a\xc3"s, "\xc0\xaf"s, "\xed\xa0\x80"s, "\xf4\x90\x80\x80"s, "nul\0x"s, "\x80"s})
        EXPECT_FALSE(isValidUtf8(s));
}
