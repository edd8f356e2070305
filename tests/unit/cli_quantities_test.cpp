// Unit tests of how tracectl reads durations and sizes.
#include "cli/quantities.hpp"

#include <gtest/gtest.h>

using namespace tracectl::cli;

TEST(CliQuantities, Durations) {
    EXPECT_EQ(parseDurationUs("10s"), 10'000'000u);
    EXPECT_EQ(parseDurationUs("500ms"), 500'000u);
    EXPECT_EQ(parseDurationUs("2m"), 120'000'000u);
    EXPECT_EQ(parseDurationUs("1h"), 3'600'000'000u);
    EXPECT_EQ(parseDurationUs("250us"), 250u);
    EXPECT_EQ(parseDurationUs("1234"), 1234u);
    for (const char* bad : {"", "s", "-1s", "10 s", "1.5s", "10d", "99999999999999999999s"})
        EXPECT_EQ(parseDurationUs(bad), std::nullopt) << bad;
    EXPECT_EQ(parseDurationUs("18446744073709551615h"), std::nullopt); // overflows
}

TEST(CliQuantities, Sizes) {
    EXPECT_EQ(parseSizeBytes("100M"), 100u << 20);
    EXPECT_EQ(parseSizeBytes("4k"), 4096u);
    EXPECT_EQ(parseSizeBytes("4KiB"), 4096u);
    EXPECT_EQ(parseSizeBytes("1G"), 1u << 30);
    EXPECT_EQ(parseSizeBytes("1gb"), 1u << 30);
    EXPECT_EQ(parseSizeBytes("512"), 512u);
    EXPECT_EQ(parseSizeBytes("512B"), 512u);
    for (const char* bad : {"", "M", "-1M", "1T", "1Mx", "1 M", "1.5M"})
        EXPECT_EQ(parseSizeBytes(bad), std::nullopt) << bad;
    EXPECT_EQ(parseSizeBytes("18446744073709551615G"), std::nullopt);
}

// lttng(1)'s grammar (lttng-tools utils_parse_size_suffix): decimal, 0x
// hexadecimal or 0 octal, then k/K, M or G, nothing after.
TEST(CliQuantities, SizesAsLttngTakesThem) {
    EXPECT_EQ(parseSizeBytes("0"), 0u);
    EXPECT_EQ(parseSizeBytes("1234"), 1234u);
    EXPECT_EQ(parseSizeBytes("8M"), 8u << 20);
    EXPECT_EQ(parseSizeBytes("16k"), 16384u);
    EXPECT_EQ(parseSizeBytes("128K"), 131072u);
    EXPECT_EQ(parseSizeBytes("1024G"), std::uint64_t{1} << 40);
    EXPECT_EQ(parseSizeBytes("0x400"), 1024u);
    EXPECT_EQ(parseSizeBytes("0X400"), 1024u);
    EXPECT_EQ(parseSizeBytes("0x40b"), 1035u) << "b is a hexadecimal digit there";
    EXPECT_EQ(parseSizeBytes("0x1234k"), 4771840u);
    EXPECT_EQ(parseSizeBytes("0300"), 192u) << "octal, as strtoull(3) with base 0";
    EXPECT_EQ(parseSizeBytes("17179869183G"), std::uint64_t{17179869183} << 30);
    EXPECT_EQ(parseSizeBytes("18446744073709551615"), UINT64_MAX);
}

TEST(CliQuantities, BadSizesSayWhy) {
    const auto why = [](std::string_view text) {
        const SizeParse p = parseSize(text);
        EXPECT_EQ(p.bytes, std::nullopt) << text;
        return p.error;
    };
    EXPECT_EQ(why(""), "'' is not a size: it is empty");
    EXPECT_EQ(why("-1"), "'-1' is not a size: sizes are never negative");
    EXPECT_EQ(why("-0x10k"), "'-0x10k' is not a size: sizes are never negative");
    // The units listed are every one taken (KiB and kb too, not only k/K, M, G).
    const std::string units = "' (K, M or G in either case, alone or followed by B or iB, as "
                              "in 8M, 8MiB or 8mb; or B alone)";
    EXPECT_EQ(why("8Q"), "'8Q' is not a size: unknown unit 'Q" + units);
    EXPECT_EQ(why("8MM"), "'8MM' is not a size: unknown unit 'MM" + units);
    EXPECT_EQ(why("1T"), "'1T' is not a size: unknown unit 'T" + units);
    EXPECT_EQ(why("8KiBs"), "'8KiBs' is not a size: unknown unit 'KiBs" + units);
    EXPECT_EQ(why("M"), "'M' is not a size: it does not start with a number");
    EXPECT_EQ(why("0x"), "'0x' is not a size: unknown unit 'x" + units);
    EXPECT_EQ(why("09"), "'09' is not a size: it does not start with a number")
        << "9 is no octal digit";
    EXPECT_EQ(why("17179869184G"),
              "'17179869184G' is not a size: more than 18446744073709551615 bytes");
    EXPECT_EQ(why("18446744073709551616"),
              "'18446744073709551616' is not a size: more than 18446744073709551615 bytes");
    EXPECT_EQ(why("0x10000000000000000"),
              "'0x10000000000000000' is not a size: more than 18446744073709551615 bytes");
    EXPECT_EQ(parseSize("8M").error, "");
    // What that message lists is taken.
    for (const char* text : {"8K", "8k", "8M", "8m", "8G", "8g", "8KiB", "8kib", "8MIB", "8GiB",
                             "8KB", "8kb", "8Mb", "8gB", "8B", "8b"}) {
        EXPECT_TRUE(parseSizeBytes(text).has_value()) << text;
    }
}

TEST(CliQuantities, SizesForPeople) {
    EXPECT_EQ(formatSize(0), "0 B");
    EXPECT_EQ(formatSize(1023), "1023 B");
    EXPECT_EQ(formatSize(1024), "1.0 KiB");
    EXPECT_EQ(formatSize(1536), "1.5 KiB");
    EXPECT_EQ(formatSize(2047), "1.9 KiB"); // rounded down, never past the size
    EXPECT_EQ(formatSize((12u << 20) + (512u << 10)), "12.5 MiB");
    EXPECT_EQ(formatSize(std::uint64_t{3} << 30), "3.0 GiB");
    EXPECT_EQ(formatSize(std::uint64_t{1} << 40), "1.0 TiB");
    EXPECT_EQ(formatSize(UINT64_MAX), "15.9 EiB");
}

TEST(CliQuantities, AggregateSeconds) {
    for (const char* good : {"6", "0.5", "1e-3", "2678400", "30"}) {
        EXPECT_EQ(aggregateSecondsError(good), std::nullopt) << good;
    }
    for (const char* bad : {"abc", "nan", "NaN", "", "6s", " 6", "1e", "0x10"}) {
        EXPECT_EQ(aggregateSecondsError(bad), "not a number of seconds: " + std::string(bad))
            << bad;
    }
    for (const char* small : {"0", "-0", "-1", "1e-400", "-1e400", "-inf"}) {
        EXPECT_EQ(aggregateSecondsError(small), "must be more than 0 seconds") << small;
    }
    for (const char* large : {"inf", "2678400.5", "1e400", "1e308"}) {
        EXPECT_EQ(aggregateSecondsError(large), "must be at most 2678400 seconds (31 days)")
            << large;
    }
    EXPECT_EQ(formatSeconds(6), "6");
    EXPECT_EQ(formatSeconds(0.5), "0.5");
    EXPECT_EQ(formatSeconds(0.1), "0.1");
    EXPECT_EQ(formatSeconds(2678400), "2678400");
}
