// kernel_records encode/decode (common/kernel_records.hpp): the wire form
// byte by byte, the round trip, and every refusal of decode.
#include "kernel_records.hpp"

#include <gtest/gtest.h>

using namespace tracectl::kernel_records;

namespace {

std::vector<EventConversion> sample() {
    EventConversion a;
    a.ftraceId = 316;
    a.ctfId = 4;
    a.minSize = 64;
    a.steps = {{StepKind::Copy, 8, 24, 1},           {StepKind::DataLocString, 32, 4, 1},
               {StepKind::RelLocString, 36, 4, 1},   {StepKind::DataLocSequence, 40, 4, 8},
               {StepKind::RelLocSequence, 44, 4, 2}, {StepKind::UserString, 56, 8, 1}};
    EventConversion b;
    b.ftraceId = 65535;
    b.ctfId = 65535;
    b.minSize = 8;
    return {a, b};
}

std::string le16(std::uint16_t v) {
    return {static_cast<char>(v & 0xff), static_cast<char>(v >> 8)};
}

// One conversion holding one step, raw.
std::string oneStep(std::uint8_t kind, std::uint16_t offset, std::uint16_t size,
                    std::uint16_t element) {
    std::string s("\x01\x00\x00\x00", 4);
    s += le16(1) + le16(4) + le16(8) + le16(1);
    s += static_cast<char>(kind);
    s += le16(offset) + le16(size) + le16(element);
    return s;
}

void expectRefused(const std::string& bytes, const char* what) {
    EXPECT_THROW(decode(bytes), DecodeError) << what;
}

} // namespace

TEST(KernelRecords, EncodesTheDocumentedWireForm) {
    const std::string bytes = encode(sample());
    ASSERT_EQ(bytes.size(), 4u + (8 + 6 * 7) + 8);
    EXPECT_EQ(bytes.substr(0, 4), std::string("\x02\x00\x00\x00", 4));
    // 316 = 0x013C, ctf 4, minSize 64, 6 steps.
    EXPECT_EQ(bytes.substr(4, 8), std::string("\x3C\x01\x04\x00\x40\x00\x06\x00", 8));
    // First step: Copy, offset 8, size 24, element 1.
    EXPECT_EQ(bytes.substr(12, 7), std::string("\x00\x08\x00\x18\x00\x01\x00", 7));
    // Fourth step: DataLocSequence, offset 40, size 4, element 8.
    EXPECT_EQ(bytes.substr(12 + 21, 7), std::string("\x03\x28\x00\x04\x00\x08\x00", 7));
    // Sixth step: UserString (16), offset 56, size 8, element 1.
    EXPECT_EQ(bytes.substr(12 + 35, 7), std::string("\x10\x38\x00\x08\x00\x01\x00", 7));
}

TEST(KernelRecords, RoundTrips) {
    EXPECT_EQ(decode(encode(sample())), sample());
    EXPECT_TRUE(decode(encode({})).empty());
}

TEST(KernelRecords, AcceptsTheLimits) {
    // A step ending exactly at 65535, and every element size.
    EXPECT_NO_THROW(decode(oneStep(0, 65535 - 10, 10, 1)));
    for (std::uint16_t e : {1, 2, 4, 8})
        EXPECT_NO_THROW(decode(oneStep(3, 16, 4, e)));
    EventConversion c;
    c.steps.assign(kMaxSteps, Step{StepKind::Copy, 8, 1, 1});
    EXPECT_EQ(decode(encode({c})).at(0).steps.size(), kMaxSteps);
}

TEST(KernelRecords, RefusesEveryTruncation) {
    const std::string bytes = encode(sample());
    for (std::size_t n = 0; n < bytes.size(); ++n)
        EXPECT_THROW(decode(bytes.substr(0, n)), DecodeError) << n << " bytes";
}

TEST(KernelRecords, RefusesTrailingBytes) {
    expectRefused(encode(sample()) + '\0', "one trailing byte");
    expectRefused(encode({}) + "xyz", "after an empty list");
}

TEST(KernelRecords, RefusesBadSteps) {
    expectRefused(oneStep(5, 8, 4, 1), "unknown kind 5");
    expectRefused(oneStep(255, 8, 4, 1), "unknown kind 255");
    expectRefused(oneStep(0, 8, 0, 1), "Copy of size 0");
    expectRefused(oneStep(1, 8, 0, 1), "location of size 0");
    expectRefused(oneStep(1, 8, 2, 1), "location of size 2");
    expectRefused(oneStep(4, 8, 8, 1), "location of size 8");
    for (std::uint16_t e : {0, 3, 5, 16, 65535})
        expectRefused(oneStep(3, 8, 4, e), "element size");
    expectRefused(oneStep(0, 8, 4, 3), "element size on a Copy");
    expectRefused(oneStep(0, 65535 - 9, 10, 1), "Copy reaching past 65535");
    expectRefused(oneStep(2, 65533, 4, 1), "location reaching past 65535");
}

// A user string's step is a system call argument: 8 bytes at 16 + 8 i.
TEST(KernelRecords, UserStringStepsAreSystemCallArguments) {
    EXPECT_EQ(decode(oneStep(16, 24, 8, 1))[0].steps[0].kind, StepKind::UserString);
    EXPECT_EQ(decode(oneStep(16, 56, 8, 1))[0].steps[0].offset, 56);
    expectRefused(oneStep(16, 24, 4, 1), "a user string of size 4");
    expectRefused(oneStep(16, 8, 8, 1), "a user string at nr's offset");
    expectRefused(oneStep(16, 28, 8, 1), "a user string between two arguments");
    expectRefused(oneStep(16, 64, 8, 1), "a seventh argument");
    expectRefused(oneStep(15, 24, 8, 1), "unknown kind 15");
    expectRefused(oneStep(17, 24, 8, 1), "unknown kind 17");
}

TEST(KernelRecords, RefusesTooMany) {
    std::string steps("\x01\x00\x00\x00", 4);
    steps += le16(1) + le16(4) + le16(8) + le16(static_cast<std::uint16_t>(kMaxSteps + 1));
    for (std::size_t i = 0; i <= kMaxSteps; ++i)
        steps += std::string("\x00\x08\x00\x01\x00\x01\x00", 7);
    expectRefused(steps, "kMaxSteps + 1 steps");

    std::string many;
    const std::uint32_t n = kMaxConversions + 1;
    many.append(reinterpret_cast<const char*>(&n), 4);
    many.append(std::size_t(n) * 8, '\0');
    expectRefused(many, "kMaxConversions + 1 conversions");

    // A count the bytes cannot hold is refused without reserving for it.
    expectRefused(std::string("\xff\xff\x00\x00", 4), "65535 announced, none present");
}
