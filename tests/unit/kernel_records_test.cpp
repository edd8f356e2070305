// kernel_records encode/decode (common/kernel_records.hpp): the wire form
// byte by byte, the round trip, and every refusal of decode.
#include "kernel_records.hpp"

#include <array>
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
    a.task = {TaskRole::SchedSwitch, {24, 56, 40, 60}};
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
    return s + '\0'; // no task role
}

// One step-less conversion of minSize `minSize` with task role `role`.
std::string withTask(std::uint16_t minSize, std::uint8_t role, std::array<std::uint16_t, 4> at) {
    std::string s("\x01\x00\x00\x00", 4);
    s += le16(1) + le16(4) + le16(minSize) + le16(0);
    s += static_cast<char>(role);
    for (const std::uint16_t a : at)
        s += le16(a);
    return s;
}

void expectRefused(const std::string& bytes, const char* what) {
    EXPECT_THROW(decode(bytes), DecodeError) << what;
}

} // namespace

TEST(KernelRecords, EncodesTheDocumentedWireForm) {
    const std::string bytes = encode(sample());
    ASSERT_EQ(bytes.size(), 4u + (8 + 6 * 7 + 1 + 8) + (8 + 1));
    EXPECT_EQ(bytes.substr(0, 4), std::string("\x02\x00\x00\x00", 4));
    // 316 = 0x013C, ctf 4, minSize 64, 6 steps.
    EXPECT_EQ(bytes.substr(4, 8), std::string("\x3C\x01\x04\x00\x40\x00\x06\x00", 8));
    // First step: Copy, offset 8, size 24, element 1.
    EXPECT_EQ(bytes.substr(12, 7), std::string("\x00\x08\x00\x18\x00\x01\x00", 7));
    // Fourth step: DataLocSequence, offset 40, size 4, element 8.
    EXPECT_EQ(bytes.substr(12 + 21, 7), std::string("\x03\x28\x00\x04\x00\x08\x00", 7));
    // Sixth step: UserString (16), offset 56, size 8, element 1.
    EXPECT_EQ(bytes.substr(12 + 35, 7), std::string("\x10\x38\x00\x08\x00\x01\x00", 7));
    // Then the task role (1, SchedSwitch) and its 4 offsets; the second
    // conversion has role 0 and no offsets.
    EXPECT_EQ(bytes.substr(12 + 42, 9), std::string("\x01\x18\x00\x38\x00\x28\x00\x3C\x00", 9));
    EXPECT_EQ(bytes.substr(bytes.size() - 1), std::string(1, '\0'));
}

// The task fields: each role's offsets must lie within minSize (the
// consumer reads them from any record it converts), and unknown roles are
// refused.
TEST(KernelRecords, TaskFieldsLieWithinTheRecord) {
    EXPECT_EQ(decode(withTask(64, 1, {24, 56, 40, 60})).at(0).task.role, TaskRole::SchedSwitch);
    expectRefused(withTask(63, 1, {24, 56, 40, 60}), "next_prio past minSize");
    expectRefused(withTask(64, 1, {24, 56, 49, 60}), "next_comm past minSize");
    EXPECT_EQ(decode(withTask(20, 2, {12, 8, 65535, 65535})).at(0).task.role,
              TaskRole::ProcessExec); // unused offsets are not checked
    expectRefused(withTask(20, 2, {17, 8, 0, 0}), "exec pid past minSize");
    EXPECT_NO_THROW(decode(withTask(44, 3, {8, 28, 0, 0})));
    expectRefused(withTask(43, 3, {8, 28, 0, 0}), "newcomm past minSize");
    expectRefused(withTask(64, 4, {0, 0, 0, 0}), "unknown role 4");
    expectRefused(withTask(64, 255, {0, 0, 0, 0}), "unknown role 255");
    expectRefused(withTask(64, 1, {24, 56, 40, 60}).substr(0, 20), "truncated offsets");
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
    expectRefused(oneStep(11, 8, 4, 1), "unknown kind 11");
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

// lttng-modules' steps (kinds 5..10): their wire form and refusals.
TEST(KernelRecords, LttngStepsRoundTrip) {
    EventConversion c;
    c.ftraceId = 1200;
    c.ctfId = 9;
    c.minSize = 48;
    c.steps = {{StepKind::RwbsFlags, 34, 10, 1},
               {StepKind::PrioFromKernel, 28, 4, 1},
               {StepKind::Tgid, 12, 4, 1},
               {StepKind::PidNsInum, 12, 4, 1},
               {StepKind::Vtids, 20, 4, 1},
               {StepKind::DataLocFixedText, 8, 4, 16},
               {StepKind::DataLocFixedText, 8, 4, kMaxFixedText}};
    const std::string bytes = encode({c});
    // The RwbsFlags step: kind 5, offset 34, size 10, element 1.
    EXPECT_EQ(bytes.substr(12, 7), std::string("\x05\x22\x00\x0a\x00\x01\x00", 7));
    // The first DataLocFixedText step: kind 10, offset 8, size 4, 16 bytes out.
    EXPECT_EQ(bytes.substr(12 + 5 * 7, 7), std::string("\x0a\x08\x00\x04\x00\x10\x00", 7));
    EXPECT_EQ(decode(bytes), std::vector<EventConversion>{c});
}

TEST(KernelRecords, RefusesBadLttngSteps) {
    for (std::uint8_t kind : {6, 7, 8, 9, 10}) {
        expectRefused(oneStep(kind, 8, 2, 1), "a prio, tid or location of 2 bytes");
        expectRefused(oneStep(kind, 8, 8, 1), "a prio, tid or location of 8 bytes");
    }
    expectRefused(oneStep(5, 8, 0, 1), "rwbs of 0 bytes");
    expectRefused(oneStep(5, 8, 10, 16), "element size on rwbs");
    expectRefused(oneStep(7, 8, 4, 4), "element size on Tgid");
    expectRefused(oneStep(10, 8, 4, 0), "fixed text of 0 bytes");
    expectRefused(oneStep(10, 8, 4, kMaxFixedText + 1), "fixed text past kMaxFixedText");
    expectRefused(oneStep(5, 65535 - 9, 10, 1), "rwbs reaching past 65535");
    EXPECT_NO_THROW(decode(oneStep(5, 8, 10, 1)));
    EXPECT_NO_THROW(decode(oneStep(10, 8, 4, 3)));
}

// lttng-modules 2.13 block.h's bits for the kernel's blk_fill_rwbs texts.
TEST(KernelRecords, RwbsFlagsAsLttngModules) {
    const struct {
        const char* text;
        std::uint32_t flags;
    } cases[] = {
        {"R", RwbsRead},
        {"W", RwbsWrite},
        {"WS", RwbsWrite | RwbsSync},
        {"RA", RwbsRead | RwbsRahead},
        {"RM", RwbsRead | RwbsMeta},
        {"WFSM", RwbsWrite | RwbsFua | RwbsSync | RwbsMeta},
        {"FWS", RwbsPreflush | RwbsWrite | RwbsSync},
        {"FWFS", RwbsPreflush | RwbsWrite | RwbsFua | RwbsSync},
        {"F", RwbsFlush},
        {"FF", RwbsPreflush | RwbsFlush}, // blk-flush's REQ_OP_FLUSH | REQ_PREFLUSH
        {"FS", RwbsFlush | RwbsSync},
        {"D", RwbsDiscard},
        {"DE", RwbsDiscard | RwbsSecure},
        {"N", 0},
        {"WZ", 0}, // write zeroes: no lttng-modules bit
        {"WZS", RwbsSync},
        {"ZRA", 0},                    // zone reset all
        {"ZAS", RwbsSync},             // zone append, sync
        {"WSU", RwbsWrite | RwbsSync}, // REQ_ATOMIC: no bit
        {"", 0},
        {"Q?", 0},
    };
    for (const auto& c : cases)
        EXPECT_EQ(rwbsFlags(c.text), c.flags) << c.text;
    // The text ends at its NUL; an array without one ends with the array.
    EXPECT_EQ(rwbsFlags(std::string_view("WS\0M", 4)), RwbsWrite | RwbsSync);
    EXPECT_EQ(rwbsFlags(std::string_view("RAS", 2)), RwbsRead | RwbsRahead);
    // What lttng-analyses' block.py reads: an even rwbs is a read, odd a write.
    EXPECT_EQ(rwbsFlags("RA") % 2, 0u);
    EXPECT_EQ(rwbsFlags("WS") % 2, 1u);
}
