// The record layout wire format (common/record_layout.hpp): encode/decode
// round trips, the strict refusals, the limits, PacketFormat offsets.
#include "record_layout.hpp"

#include <gtest/gtest.h>
#include <string>

using namespace tracectl::record_layout;

namespace {

Op skip(std::uint32_t a, std::uint64_t bits) {
    return Op{OpKind::Skip, 0, 0, a, bits};
}

// A program with every op kind: tag, length, sequence, string, a variant of
// two choices (an integer, a string).
Program everyOp() {
    Program p;
    p.registers = 2;
    p.ops = {
        skip(64, 96),
        Op{OpKind::Integer, kSigned, 0, 8, 8},
        Op{OpKind::Integer, kReverse, 1, 32, 32},
        Op{OpKind::Sequence, 0, 1, 16, 16},
        Op{OpKind::String, 0, 0, 8, 0},
        Op{OpKind::Variant, kSigned, 0, 2, (std::uint64_t{2} << 32) | 0},
        Op{OpKind::Choice, 0, 0, 1, 8},
        Op{OpKind::Choice, 0, 0, 1, 9},
        skip(64, 64),
        Op{OpKind::String, 0, 0, 8, 0},
        skip(8, 8),
    };
    p.ranges = {VariantRange{static_cast<std::uint64_t>(-5), 0, 0}, VariantRange{1, 1, 1}};
    return p;
}

ChannelLayouts sample() {
    ChannelLayouts l;
    l.context = everyOp();
    l.events.emplace_back(0, Program{{skip(32, 64)}, {}, 0});
    l.events.emplace_back(7, everyOp());
    l.events.emplace_back(70000, Program{});
    return l;
}

void expectRefused(const std::string& bytes, const std::string& part) {
    try {
        decode(bytes);
        ADD_FAILURE() << "decoded, expected a refusal with \"" << part << "\"";
    } catch (const LayoutError& e) {
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
}

void expectInvalid(const Program& p, const std::string& part) {
    try {
        validate(p);
        ADD_FAILURE() << "valid, expected \"" << part << "\"";
    } catch (const LayoutError& e) {
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
}

// Offset of the first op of the context program in encode(sample()).
constexpr std::size_t kFirstOp = 4 + 1 + 1 + 2 + 4 + 4;

} // namespace

TEST(RecordLayout, RoundTripKeepsEverything) {
    const ChannelLayouts l = sample();
    const std::string bytes = encode(l);
    EXPECT_EQ(decode(bytes), l);
    // 10 bytes of message header, 10 per program header, 16 per op, 20 per
    // range, 4 per event id.
    EXPECT_EQ(bytes.size(), 10 + (10 + 11 * 16 + 2 * 20) + (4 + 10 + 16) +
                                (4 + 10 + 11 * 16 + 2 * 20) + (4 + 10));
    EXPECT_EQ(bytes.substr(0, 4), "TLAY");
}

TEST(RecordLayout, RoundTripWithoutContext) {
    ChannelLayouts l;
    l.events.emplace_back(3, Program{{skip(8, 8)}, {}, 0});
    const ChannelLayouts back = decode(encode(l));
    EXPECT_FALSE(back.context.has_value());
    ASSERT_EQ(back.events.size(), 1u);
    EXPECT_EQ(back.events[0].first, 3u);
    EXPECT_EQ(back.events[0].second.ops[0], skip(8, 8));

    ChannelLayouts emptyContext;
    emptyContext.context = Program{};
    const ChannelLayouts e = decode(encode(emptyContext));
    ASSERT_TRUE(e.context.has_value());
    EXPECT_TRUE(e.context->ops.empty());
    EXPECT_EQ(encode(emptyContext).size(), 20u);
}

TEST(RecordLayout, DecodeRefusesBadHeaderAndTruncation) {
    const std::string good = encode(sample());
    std::string bad = good;
    bad[0] = 'X';
    expectRefused(bad, "bad magic");
    bad = good;
    bad[4] = 2;
    expectRefused(bad, "unknown version 2");
    bad = good;
    bad[5] = 2;
    expectRefused(bad, "has-context byte 2");
    expectRefused(good + "x", "1 bytes after the last event");
    for (std::size_t n = 0; n < good.size(); ++n)
        EXPECT_THROW(decode(good.substr(0, n)), LayoutError) << n;
    expectRefused("", "truncated");
}

TEST(RecordLayout, DecodeRefusesBadOps) {
    const std::string good = encode(sample());
    std::string bad = good;
    bad[kFirstOp] = 6; // op kind
    expectRefused(bad, "unknown op kind 6");
    bad = good;
    bad[kFirstOp + 4] = 3; // skip alignment 3
    expectRefused(bad, "skip alignment 3 invalid");
    bad = good;
    bad[kFirstOp + 1] = 1; // a skip with flags
    expectRefused(bad, "skip with flags");
    bad = good;
    bad[kFirstOp + 16 + 2] = 9; // integer register 9 of 2
    expectRefused(bad, "register 9 out of range");
    bad = good;
    bad[kFirstOp + 16 + 8] = 65; // integer size 65
    expectRefused(bad, "integer size 65 invalid");
    bad = good;
    bad[kFirstOp + 16 + 1] = 4; // unknown integer flag
    expectRefused(bad, "integer flags invalid");
}

TEST(RecordLayout, DecodeRefusesCountsPastTheLimits) {
    std::string bytes = encode(ChannelLayouts{Program{}, {}});
    // registers = 1025
    bytes[6] = static_cast<char>(0x01);
    bytes[7] = static_cast<char>(0x04);
    expectRefused(bytes, "1025 registers, past the limit");
    bytes = encode(ChannelLayouts{Program{}, {}});
    bytes[8] = 0x01; // op count 32769
    bytes[9] = static_cast<char>(0x80);
    expectRefused(bytes, "32769 ops, past the limit");
    bytes = encode(ChannelLayouts{Program{}, {}});
    bytes[12] = 0x01; // range count 16385
    bytes[13] = 0x40;
    expectRefused(bytes, "16385 ranges, past the limit");
    bytes = encode(ChannelLayouts{Program{}, {}});
    for (std::size_t i = 16; i < 20; ++i)
        bytes[i] = static_cast<char>(0xff); // event count 2^32 - 1
    expectRefused(bytes, "4294967295 events, past the limit");
    // 1000 events announced, none there.
    ChannelLayouts none;
    std::string few = encode(none);
    few[6] = static_cast<char>(0xe8);
    few[7] = 0x03;
    expectRefused(few, "truncated event list");
}

TEST(RecordLayout, DecodeRefusesAnEventIdTwice) {
    ChannelLayouts l;
    l.events.emplace_back(4, Program{});
    l.events.emplace_back(4, Program{});
    expectRefused(encode(l), "event id 4 given twice");
}

TEST(RecordLayout, ValidateRefusesBrokenVariants) {
    Program p = everyOp();
    p.ops[6].bits = 9; // first body not right after the choices
    expectInvalid(p, "choice body not where the previous one ends");
    p = everyOp();
    p.ops[7].alignment = 5; // second body past the end
    expectInvalid(p, "choice body past the end of its variant");
    p = everyOp();
    p.ranges[1].choice = 2;
    expectInvalid(p, "range 1 selects no choice");
    p = everyOp();
    p.ranges[0] = VariantRange{1, static_cast<std::uint64_t>(-1), 0}; // 1 .. -1 signed
    expectInvalid(p, "range 0 ends before it starts");
    p = everyOp();
    p.ops[5].bits = (std::uint64_t{3} << 32) | 0;
    expectInvalid(p, "variant ranges out of range");
    p = everyOp();
    p.ops[5].alignment = 0;
    expectInvalid(p, "variant without choices");
    p = everyOp();
    p.ops[7].kind = OpKind::Skip;
    expectInvalid(p, "expected a variant choice");
    p = everyOp();
    p.ops.push_back(Op{OpKind::Choice, 0, 0, 0, 0});
    expectInvalid(p, "choice outside a variant");
    p = everyOp();
    p.ops[4].alignment = 16;
    expectInvalid(p, "string op must be alignment 8");
    p = everyOp();
    p.ops[0].bits = kMaxSkipBits + 1;
    expectInvalid(p, "past the limit");
    p = everyOp();
    p.ops[3].bits = 0;
    expectInvalid(p, "sequence element size 0 invalid");
}

TEST(RecordLayout, ValidateBoundsNesting) {
    // kMaxNesting variants, each the only choice of the one outside it.
    const auto nested = [](std::size_t depth) {
        Program p;
        p.registers = 1;
        p.ops.push_back(Op{OpKind::Integer, 0, 0, 8, 8});
        for (std::size_t d = 0; d < depth; ++d) {
            const std::uint64_t at = p.ops.size();
            p.ops.push_back(Op{OpKind::Variant, 0, 0, 1, 0});
            p.ops.push_back(Op{OpKind::Choice, 0, 0, 0, at + 2});
        }
        // Each body holds the rest: body length = ops after it.
        for (std::size_t i = 1; i < p.ops.size(); ++i) {
            if (p.ops[i].kind == OpKind::Choice)
                p.ops[i].alignment = static_cast<std::uint32_t>(p.ops.size() - p.ops[i].bits);
        }
        return p;
    };
    EXPECT_NO_THROW(validate(nested(kMaxNesting)));
    expectInvalid(nested(kMaxNesting + 1), "variants nested past 16");
}

TEST(RecordLayout, EncodeRefusesInvalidPrograms) {
    ChannelLayouts l;
    l.events.emplace_back(0, Program{{Op{OpKind::Integer, 0, 0, 8, 8}}, {}, 0});
    EXPECT_THROW(encode(l), LayoutError);
}

TEST(RecordLayout, ChunksStayUnderTheBoundAndKeepOrder) {
    ChannelLayouts l;
    l.context = Program{};
    for (std::uint32_t id = 0; id < 100; ++id)
        l.events.emplace_back(id, Program{{skip(32, 64)}, {}, 0}); // 30 bytes each
    const std::vector<std::string> chunks = encodeChunks(l, 10 + 10 + 30 * 10);
    ASSERT_EQ(chunks.size(), 10u); // 10 events a chunk, the context in the first
    ChannelLayouts joined;
    for (const std::string& c : chunks) {
        EXPECT_LE(c.size(), 320u);
        ChannelLayouts part = decode(c);
        if (part.context) {
            EXPECT_FALSE(joined.context.has_value());
            joined.context = part.context;
        }
        joined.events.insert(joined.events.end(), part.events.begin(), part.events.end());
    }
    EXPECT_EQ(joined, l);
    EXPECT_THROW(encodeChunks(l, 29), LayoutError);
    EXPECT_TRUE(encodeChunks(ChannelLayouts{}, 100).empty());
}

TEST(RecordLayout, PacketFormatFollowsTheTsdl) {
    const PacketFormat f64 = PacketFormat::fromAbi(Abi{});
    // header: 32 + 128 + 32 + 64 = 256; context: 5 x 64 + long 64 + u32 32.
    EXPECT_EQ(f64.contentSizeBit, 256u + 128u);
    EXPECT_EQ(f64.packetSizeBit, 256u + 192u);
    EXPECT_EQ(f64.firstRecordBit, 672u); // offsetof(packet_header, ctx.header_end) = 84 bytes

    Abi i386;
    i386.bitsPerLong = 32;
    i386.uint64Alignment = 32;
    i386.longAlignment = 32;
    EXPECT_EQ(PacketFormat::fromAbi(i386).firstRecordBit, 640u); // 80 bytes

    Abi packed = Abi{};
    packed.bitsPerLong = 32;
    packed.longAlignment = 32;
    EXPECT_EQ(PacketFormat::fromAbi(packed).firstRecordBit, 640u);

    Abi bad;
    bad.bitsPerLong = 16;
    EXPECT_THROW(PacketFormat::fromAbi(bad), LayoutError);
    bad = Abi{};
    bad.uint32Alignment = 12;
    EXPECT_THROW(PacketFormat::fromAbi(bad), LayoutError);
}
