#include "metadata/clock_source.hpp"
#include "metadata/tsdl_text.hpp"

#include <cstdlib>
#include <ctime>
#include <gtest/gtest.h>
#include <string>

using namespace tracectl::metadata;
using namespace std::string_literals;

TEST(MetadataTsdlText, StringLiteralKeepsPlainText) {
    EXPECT_EQ(stringLiteral("hello world"), "\"hello world\"");
    EXPECT_EQ(stringLiteral(""), "\"\"");
}

TEST(MetadataTsdlText, StringLiteralEscapesQuotesBackslashesAndControls) {
    EXPECT_EQ(stringLiteral("a\"b"), "\"a\\\"b\"");
    EXPECT_EQ(stringLiteral("a\\b"), "\"a\\\\b\"");
    EXPECT_EQ(stringLiteral("a\nb"), "\"a\\nb\"");
    EXPECT_EQ(stringLiteral("a\tb"), "\"a\\011b\"");
    EXPECT_EQ(stringLiteral("\x1b"
                            "1"),
              "\"\\0331\""); // three digits, then the '1'
    EXPECT_EQ(stringLiteral("\x7f"), "\"\\177\"");
}

TEST(MetadataTsdlText, StringLiteralKeepsUtf8AndReplacesInvalidBytes) {
    EXPECT_EQ(stringLiteral("caf\xc3\xa9 \xe6\x97\xa5"), "\"caf\xc3\xa9 \xe6\x97\xa5\"");
    EXPECT_EQ(stringLiteral("a\xff"
                            "b"),
              "\"a\xef\xbf\xbd"
              "b\"");
    EXPECT_EQ(stringLiteral("\xc3"), "\"\xef\xbf\xbd\""); // truncated sequence
    EXPECT_EQ(stringLiteral("\xed\xa0\x80"),
              "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");                // surrogate
    EXPECT_EQ(stringLiteral("\xc0\xaf"), "\"\xef\xbf\xbd\xef\xbf\xbd\""); // overlong
}

TEST(MetadataTsdlText, FieldIdentifierPrefixesUnderscore) {
    EXPECT_EQ(fieldIdentifier("msg"), "_msg");
    EXPECT_EQ(fieldIdentifier("_msg_length"), "__msg_length");
    EXPECT_EQ(fieldIdentifier("9lives"), "_9lives");
}

TEST(MetadataTsdlText, FieldIdentifierReplacesForbiddenBytes) {
    EXPECT_EQ(fieldIdentifier("$app.prov:ctx"), "__app_prov_ctx");
    EXPECT_EQ(fieldIdentifier("a b-c/d"), "_a_b_c_d");
    EXPECT_EQ(fieldIdentifier("caf\xc3\xa9"), "_caf__");
    EXPECT_EQ(fieldIdentifier(""), "_");
}

TEST(MetadataTsdlText, FieldIdentifierAvoidsKeywords) {
    // "_" + a keyword is never a keyword except for these three.
    EXPECT_EQ(fieldIdentifier("Bool"), "_Bool_");
    EXPECT_EQ(fieldIdentifier("Complex"), "_Complex_");
    EXPECT_EQ(fieldIdentifier("Imaginary"), "_Imaginary_");
    for (const char* k : {"struct", "integer", "string", "enum", "variant", "event", "align"})
        EXPECT_FALSE(isTsdlKeyword(fieldIdentifier(k))) << k;
    EXPECT_TRUE(isTsdlKeyword("typealias"));
}

TEST(MetadataTsdlText, SubstituteFillsPlaceholdersInOrder) {
    EXPECT_EQ(substitute("a{}b{}c", {"1", "22"}), "a1b22c");
    EXPECT_EQ(substitute("no placeholder", {}), "no placeholder");
    EXPECT_EQ(substitute("{}", {"{}"}), "{}"); // values are not scanned
    EXPECT_THROW(substitute("{}{}", {"x"}), std::logic_error);
    EXPECT_THROW(substitute("{}", {"x", "y"}), std::logic_error);
}

TEST(MetadataTsdlText, UuidToString) {
    Uuid u{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
           0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
    EXPECT_EQ(uuidToString(u), "00112233-4455-6677-8899-aabbccddeeff");
    EXPECT_EQ(parseUuid(" 00112233-4455-6677-8899-AABBCCDDEEFF\n"), u);
    EXPECT_EQ(parseUuid("00112233-4455-6677-8899-aabbccddeef"), std::nullopt);
    EXPECT_EQ(parseUuid("0011223304455-6677-8899-aabbccddeeff"), std::nullopt);
    EXPECT_EQ(parseUuid("00112233-4455-6677-8899-aabbccddeefg"), std::nullopt);
}

TEST(MetadataTsdlText, Iso8601LocalTime) {
    const char* old = std::getenv("TZ");
    const std::string saved = old != nullptr ? old : "";
    setenv("TZ", "UTC", 1);
    tzset();
    EXPECT_EQ(iso8601LocalTime(1700000000), "20231114T221320+0000");
    setenv("TZ", "CET-1", 1);
    tzset();
    EXPECT_EQ(iso8601LocalTime(1700000000), "20231114T231320+0100");
    if (old != nullptr)
        setenv("TZ", saved.c_str(), 1);
    else
        unsetenv("TZ");
    tzset();
}

TEST(MetadataTsdlText, ClockOffsetIsRealtimeMinusMonotonic) {
    timespec mono{};
    timespec real{};
    clock_gettime(CLOCK_MONOTONIC, &mono);
    clock_gettime(CLOCK_REALTIME, &real);
    const long long expected =
        (real.tv_sec - mono.tv_sec) * 1'000'000'000LL + (real.tv_nsec - mono.tv_nsec);
    const long long measured = measureClockOffset();
    EXPECT_LT(std::llabs(measured - expected), 50'000'000LL); // 50 ms
}

TEST(MetadataTsdlText, DefaultClockIsLttngUsts) {
    const ClockInfo c = defaultClock();
    EXPECT_EQ(c.name, "monotonic");
    EXPECT_EQ(c.description, "Monotonic Clock");
    EXPECT_EQ(c.frequency, 1'000'000'000u);
    EXPECT_EQ(c.uuid, readBootId());
}
