#include "session/session_name.hpp"

#include <gtest/gtest.h>
#include <string>

using tracectl::kMaxSessionNameBytes;
using tracectl::quoteForMessage;
using tracectl::sessionNameProblem;

TEST(SessionName, AcceptsOrdinaryNames) {
    for (const char* name :
         {"a", "my-session", "trace_1", "with space", "café", "日本語", "a.b", "x..y"})
        EXPECT_EQ(sessionNameProblem(name), std::nullopt) << name;
}

TEST(SessionName, AcceptsTheLongestAllowedName) {
    EXPECT_EQ(sessionNameProblem(std::string(kMaxSessionNameBytes, 'n')), std::nullopt);
}

TEST(SessionName, RejectsEmpty) {
    EXPECT_NE(sessionNameProblem(""), std::nullopt);
}

TEST(SessionName, RejectsTooLong) {
    EXPECT_NE(sessionNameProblem(std::string(kMaxSessionNameBytes + 1, 'n')), std::nullopt);
    EXPECT_NE(sessionNameProblem(std::string(1 << 20, 'n')), std::nullopt);
}

TEST(SessionName, RejectsPathLikeNames) {
    for (const char* name : {"a/b", "../x", "/abs", "x/", ".", "..", ".hidden"})
        EXPECT_NE(sessionNameProblem(name), std::nullopt) << name;
}

TEST(SessionName, RejectsControlCharacters) {
    using namespace std::string_literals;
    for (const std::string& name :
         {"a\nb"s, "tab\t"s, "nul\0x"s, "del\x7f"s, "c1\xc2\x85"s, "\x1b[31m"s})
        EXPECT_NE(sessionNameProblem(name), std::nullopt) << quoteForMessage(name);
}

TEST(SessionName, RejectsInvisibleFormattingCharacters) {
    for (const char* name : {"evil\u202Etxt", "zero\u200Bwidth", "\uFEFFbom", "iso\u2066late"})
        EXPECT_NE(sessionNameProblem(name), std::nullopt) << quoteForMessage(name);
    EXPECT_EQ(quoteForMessage("a\u202Eb"), "'a\\xe2\\x80\\xaeb'");
}

TEST(SessionName, RejectsLeadingOrTrailingSpaces) {
    for (const char* name : {" ", "   ", " lead", "trail ", "\u00A0nbsp", "ideo\u3000"})
        EXPECT_NE(sessionNameProblem(name), std::nullopt) << quoteForMessage(name);
    EXPECT_EQ(sessionNameProblem("in between"), std::nullopt);
}

TEST(SessionName, RejectsMalformedUtf8) {
    using namespace std::string_literals;
    for (const std::string& name :
         {"\xff"s, "a\xc3"s, "\xc0\xaf"s /* overlong '/' */, "\xed\xa0\x80"s /* surrogate */,
          "\xf4\x90\x80\x80"s /* > U+10FFFF */, "\x80"s})
        EXPECT_NE(sessionNameProblem(name), std::nullopt) << quoteForMessage(name);
}

TEST(QuoteForMessage, EscapesAndTruncates) {
    EXPECT_EQ(quoteForMessage("abc"), "'abc'");
    EXPECT_EQ(quoteForMessage("a\nb"), "'a\\x0ab'");
    EXPECT_EQ(quoteForMessage("\xff"), "'\\xff'");
    EXPECT_EQ(quoteForMessage(std::string(100, 'x'), 4), "'xxxx'... (100 bytes)");
}
