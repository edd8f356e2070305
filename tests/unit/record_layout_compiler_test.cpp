// compileFields (metadata/record_layout_compiler.hpp) on every field type of
// field_model.hpp, and TraceRegistry's record layout increments
// (takeNewLayouts) on lttng_ust_ctl_field lists as lttng-ust 2.13 sends them.
#include "metadata/enum_registry.hpp"
#include "metadata/metadata_error.hpp"
#include "metadata/record_layout_compiler.hpp"
#include "metadata/trace_registry.hpp"
#include "metadata_test_support.hpp"

#include <cerrno>
#include <gtest/gtest.h>
#include <memory>

using namespace tracectl::metadata;
using namespace tracectl::record_layout;
using namespace mdtest;

namespace {

Field intField(std::string id, std::uint32_t size, std::uint32_t alignment, bool isSigned = false,
               bool reverse = false) {
    IntegerType t;
    t.size = size;
    t.alignment = alignment;
    t.isSigned = isSigned;
    t.reverseByteOrder = reverse;
    return Field{std::move(id), t};
}

IntegerType intType(std::uint32_t size, std::uint32_t alignment, bool isSigned = false) {
    IntegerType t;
    t.size = size;
    t.alignment = alignment;
    t.isSigned = isSigned;
    return t;
}

Op skip(std::uint32_t a, std::uint64_t bits) {
    return Op{OpKind::Skip, 0, 0, a, bits};
}
Op str() {
    return Op{OpKind::String, 0, 0, 8, 0};
}

EnumEntry enumEntry(std::string label, std::int64_t lo, std::int64_t hi, bool isSigned) {
    return EnumEntry{std::move(label), false, EnumValue{static_cast<std::uint64_t>(lo), isSigned},
                     EnumValue{static_cast<std::uint64_t>(hi), isSigned}};
}

} // namespace

TEST(RecordLayoutCompiler, EmptyListIsEmptyProgram) {
    const Program p = compileFields({});
    EXPECT_TRUE(p.ops.empty());
    EXPECT_TRUE(p.ranges.empty());
    EXPECT_EQ(p.registers, 0u);
}

TEST(RecordLayoutCompiler, FixedIntegersOfOddAlignmentsAreOneSkip) {
    // uint8; uint16 packed on 8; uint32; 5- and 27-bit bitfields; uint64.
    const Program p =
        compileFields({intField("_a", 8, 8), intField("_b", 16, 8), intField("_c", 32, 32),
                       intField("_d", 5, 1), intField("_e", 27, 1), intField("_f", 64, 64)});
    // Aligned on 64: a 0..8, b 8..24, c 32..64, d 64..69, e 69..96, f 128..192.
    EXPECT_EQ(p.ops, (std::vector<Op>{skip(64, 192)}));
    EXPECT_EQ(p.registers, 0u);
}

TEST(RecordLayoutCompiler, FloatsAndEnumsAreSkipped) {
    FloatType f32{8, 24, 32, false};
    FloatType f64{11, 53, 64, true};
    auto labels = std::make_shared<EnumDescription>();
    labels->entries = {enumEntry("A", 0, 0, false)};
    const Program p = compileFields(
        {Field{"_f", f32}, Field{"_e", EnumType{intType(8, 8), labels}}, Field{"_d", f64}});
    // f 0..32, e 32..40, d 64..128.
    EXPECT_EQ(p.ops, (std::vector<Op>{skip(64, 128)}));
}

TEST(RecordLayoutCompiler, StringsEndTheFixedRun) {
    const Program p = compileFields({intField("_x", 32, 32), Field{"_s", StringType{}},
                                     intField("_y", 8, 8), intField("_z", 32, 32)});
    // After a string the offset is unknown: y's run cannot take z's alignment.
    EXPECT_EQ(p.ops, (std::vector<Op>{skip(32, 32), str(), skip(8, 8), skip(32, 32)}));

    // A leading string covers the list's 8-bit alignment.
    EXPECT_EQ(compileFields({Field{"_s", StringType{Encoding::Ascii}}}).ops,
              (std::vector<Op>{str()}));
}

TEST(RecordLayoutCompiler, ArraysAreFixedSkips) {
    ArrayType text{intType(8, 8), 16};
    text.element.encoding = Encoding::Utf8;
    const ArrayType shorts{intType(16, 16), 3};
    const ArrayType none{intType(32, 32), 0};
    const ArrayType odd{intType(12, 8), 3}; // elements 0..12, 16..28, 32..44
    const Program p = compileFields(
        {Field{"_t", text}, Field{"_s", shorts}, Field{"_n", none}, Field{"_o", odd}});
    // t 0..128, s 128..176, n aligns to 192, o 192..236.
    EXPECT_EQ(p.ops, (std::vector<Op>{skip(32, 236)}));
}

TEST(RecordLayoutCompiler, SequencesReadTheirLengthIntoARegister) {
    const Program p =
        compileFields({intField("_len", 32, 32), Field{"_seq_padding", StructType{64, {}}},
                       Field{"_seq", SequenceType{intType(16, 16), "_len"}},
                       intField("_after", 8, 8), intField("_len2", 8, 8, false, true),
                       Field{"_seq2", SequenceType{intType(8, 8), "_len2"}}});
    EXPECT_EQ(p.registers, 2u);
    EXPECT_EQ(p.ops, (std::vector<Op>{
                         skip(64, 0), // the list's alignment (the padding's 64)
                         Op{OpKind::Integer, 0, 0, 32, 32},
                         skip(64, 0), // the padding
                         Op{OpKind::Sequence, 0, 0, 16, 16},
                         skip(8, 8),
                         Op{OpKind::Integer, kReverse, 1, 8, 8},
                         Op{OpKind::Sequence, 0, 1, 8, 8},
                     }));
}

TEST(RecordLayoutCompiler, NestedStructsAlignOnTheirLargestMember) {
    StructType inner{0, {intField("_b", 8, 8), intField("_c", 64, 64)}};
    StructType aligned{32, {intField("_e", 8, 8)}};
    const Program p =
        compileFields({intField("_a", 8, 8), Field{"_s", inner}, intField("_d", 16, 16),
                       Field{"_t", aligned}, Field{"_pad", StructType{8, {}}}});
    // a 0..8, s at 64: b 64..72, c 128..192, d 192..208, t at 224: e 224..232.
    EXPECT_EQ(p.ops, (std::vector<Op>{skip(64, 232)}));
}

TEST(RecordLayoutCompiler, VariantChoicesComeFromTheTagRanges) {
    auto labels = std::make_shared<EnumDescription>();
    labels->entries = {enumEntry("_a", 0, 0, false), enumEntry("_b", 1, 9, false),
                       enumEntry("_a", 10, 10, false), enumEntry("_c", 11, 11, false),
                       enumEntry("_a", 11, 20, false)};
    VariantType v{
        "_tag",
        {intField("_a", 32, 32), Field{"_b", StringType{}}, Field{"_c", StructType{0, {}}}}};
    const Program p = compileFields(
        {Field{"_tag", EnumType{intType(8, 8), labels}}, Field{"_v", v}, intField("_after", 8, 8)});
    EXPECT_EQ(p.registers, 1u);
    EXPECT_EQ(p.ops, (std::vector<Op>{
                         Op{OpKind::Integer, 0, 0, 8, 8},
                         Op{OpKind::Variant, 0, 0, 3, (std::uint64_t{4} << 32) | 0},
                         Op{OpKind::Choice, 0, 0, 1, 5},
                         Op{OpKind::Choice, 0, 0, 1, 6},
                         Op{OpKind::Choice, 0, 0, 0, 7}, // an empty struct: nothing
                         skip(32, 32),
                         str(),
                         skip(8, 8),
                     }));
    // Choice order, then entry order: 10..10 does not merge with 0..0; 11..20
    // is _a's too, but 11 is _c's first only by order (first match wins).
    EXPECT_EQ(p.ranges,
              (std::vector<VariantRange>{{0, 0, 0}, {10, 20, 0}, {1, 9, 1}, {11, 11, 2}}));
}

TEST(RecordLayoutCompiler, SignedTagsCompareSigned) {
    auto labels = std::make_shared<EnumDescription>();
    labels->entries = {enumEntry("_neg", -10, -1, true), enumEntry("_pos", 0, 5, true)};
    VariantType v{"_tag", {intField("_neg", 8, 8), intField("_pos", 64, 64)}};
    const Program p =
        compileFields({Field{"_tag", EnumType{intType(16, 16, true), labels}}, Field{"_v", v}});
    ASSERT_EQ(p.ops.size(), 6u);
    EXPECT_EQ(p.ops[0], (Op{OpKind::Integer, kSigned, 0, 16, 16}));
    EXPECT_EQ(p.ops[1].flags, kSigned);
    EXPECT_EQ(p.ranges[0].lo, static_cast<std::uint64_t>(-10));
    EXPECT_EQ(p.ranges[0].hi, static_cast<std::uint64_t>(-1));
}

TEST(RecordLayoutCompiler, NestedVariantBodiesAreRelocated) {
    auto labels = std::make_shared<EnumDescription>();
    labels->entries = {enumEntry("_x", 0, 0, false), enumEntry("_y", 1, 1, false)};
    // _y's choice is a struct holding its own tag and variant.
    StructType y{
        0,
        {Field{"_t2", EnumType{intType(8, 8), labels}},
         Field{"_v2", VariantType{"_t2", {Field{"_x", StringType{}}, intField("_y", 16, 16)}}}}};
    VariantType outer{"_t1", {intField("_x", 8, 8), Field{"_y", y}}};
    const Program p =
        compileFields({Field{"_t1", EnumType{intType(8, 8), labels}}, Field{"_v1", outer}});
    EXPECT_EQ(p.registers, 2u);
    EXPECT_EQ(p.ops, (std::vector<Op>{
                         Op{OpKind::Integer, 0, 0, 8, 8},
                         Op{OpKind::Variant, 0, 0, 2, (std::uint64_t{2} << 32) | 0},
                         Op{OpKind::Choice, 0, 0, 1, 4},
                         Op{OpKind::Choice, 0, 0, 6, 5},
                         skip(8, 8),
                         Op{OpKind::Integer, 0, 1, 8, 8},
                         Op{OpKind::Variant, 0, 1, 2, (std::uint64_t{2} << 32) | 2},
                         Op{OpKind::Choice, 0, 0, 1, 9},
                         Op{OpKind::Choice, 0, 0, 1, 10},
                         str(),
                         skip(16, 16),
                     }));
    EXPECT_NO_THROW(validate(p));
}

TEST(RecordLayoutCompiler, UnresolvedReferencesAreRefused) {
    EXPECT_THROW(compileFields({Field{"_s", SequenceType{intType(8, 8), "_nowhere"}}}),
                 LayoutError);
    EXPECT_THROW(compileFields({Field{"_v", VariantType{"_nowhere", {intField("_a", 8, 8)}}}}),
                 LayoutError);
}

TEST(RecordLayoutCompiler, AbiForTheConsumer) {
    tracectl::metadata::Abi abi;
    abi.bitsPerLong = 32;
    abi.uint64Alignment = 32;
    abi.longAlignment = 32;
    abi.byteOrder = ByteOrder::Big;
    const tracectl::record_layout::Abi out = layoutAbi(abi);
    EXPECT_EQ(out.bitsPerLong, 32u);
    EXPECT_EQ(out.uint64Alignment, 32u);
    EXPECT_EQ(out.longAlignment, 32u);
    EXPECT_EQ(out.uint32Alignment, 32u);
    EXPECT_TRUE(out.bigEndian);
    EXPECT_EQ(PacketFormat::fromAbi(out).firstRecordBit, 640u);
}

// The registry path: lttng_ust_ctl_field lists decoded, then compiled.
TEST(RecordLayoutRegistry, AppContextOfDynamicType) {
    TraceRegistry r(sampleTraceInfo());
    const std::uint32_t chan = r.createChannel();
    const auto entries = dynamicTypeEntries();
    const std::uint64_t enumId = r.registerEnum("dynamic_type_enum", entries);
    r.registerChannel(chan, concat({Fields{integer("vtid", 32, true)},
                                    dynamicContext("$app.myprovider:myctx", enumId)}));
    const auto taken = r.takeNewLayouts();
    ASSERT_EQ(taken.size(), 1u);
    ASSERT_TRUE(taken[0].second.context.has_value());
    const Program& p = *taken[0].second.context;
    EXPECT_EQ(p.registers, 1u);
    ASSERT_EQ(p.ops.size(), 26u);      // vtid, tag, variant, 12 choices, 11 bodies
    EXPECT_EQ(p.ops[0], skip(32, 32)); // vtid
    EXPECT_EQ(p.ops[1], (Op{OpKind::Integer, kSigned, 0, 8, 8}));
    EXPECT_EQ(p.ops[2], (Op{OpKind::Variant, kSigned, 0, 12, std::uint64_t{12} << 32}));
    // Bodies: none (empty), int8..int64, uint8..uint64, float, double, string.
    const std::vector<Op> bodies{skip(8, 8),   skip(16, 16), skip(32, 32), skip(64, 64),
                                 skip(8, 8),   skip(16, 16), skip(32, 32), skip(64, 64),
                                 skip(32, 32), skip(64, 64), str()};
    EXPECT_EQ(p.ops[3], (Op{OpKind::Choice, 0, 0, 0, 15}));
    for (std::size_t k = 1; k < 12; ++k) {
        EXPECT_EQ(p.ops[3 + k], (Op{OpKind::Choice, 0, 0, 1, 15 + k - 1})) << k;
        EXPECT_EQ(p.ops[15 + k - 1], bodies[k - 1]) << k;
    }
    ASSERT_EQ(p.ranges.size(), 12u);
    for (std::uint32_t k = 0; k < 12; ++k)
        EXPECT_EQ(p.ranges[k], (VariantRange{k, k, k}));
}

TEST(RecordLayoutRegistry, TakeNewLayoutsHandsOutIncrements) {
    TraceRegistry r(sampleTraceInfo());
    const std::uint32_t a = r.createChannel();
    const std::uint32_t b = r.createChannel();
    EXPECT_TRUE(r.takeNewLayouts().empty());

    // An event before its channel: its layout comes first, without context.
    EXPECT_EQ(r.registerEvent(a, "p:early", 1, "", Fields{integer("x", 32, false)}, ""), 0u);
    auto taken = r.takeNewLayouts();
    ASSERT_EQ(taken.size(), 1u);
    EXPECT_EQ(taken[0].first, a);
    EXPECT_FALSE(taken[0].second.context.has_value());
    ASSERT_EQ(taken[0].second.events.size(), 1u);
    EXPECT_EQ(taken[0].second.events[0].first, 0u);
    EXPECT_EQ(taken[0].second.events[0].second.ops, (std::vector<Op>{skip(32, 32)}));
    EXPECT_TRUE(r.takeNewLayouts().empty());

    r.registerChannel(a, Fields{integer("vtid", 32, true), string("procname")});
    taken = r.takeNewLayouts();
    ASSERT_EQ(taken.size(), 1u);
    ASSERT_TRUE(taken[0].second.context.has_value());
    EXPECT_EQ(taken[0].second.context->ops, (std::vector<Op>{skip(32, 32), str()}));
    EXPECT_TRUE(taken[0].second.events.empty());

    // A second app: same context, same event: nothing new.
    r.registerChannel(a, Fields{integer("vtid", 32, true), string("procname")});
    EXPECT_EQ(r.registerEvent(a, "p:early", 1, "", Fields{integer("x", 32, false)}, ""), 0u);
    EXPECT_TRUE(r.takeNewLayouts().empty());

    // Two new events, in two channels; b is then declared without context.
    EXPECT_EQ(r.registerEvent(a, "p:msg", 1, "",
                              concat({Fields{string("msg")}, sequence("data", 8, false, 32)}), ""),
              1u);
    EXPECT_EQ(r.registerEvent(b, "p:other", 1, "", {}, ""), 0u);
    EXPECT_EQ(r.declareUnregisteredChannels(), 1u);
    taken = r.takeNewLayouts();
    ASSERT_EQ(taken.size(), 2u);
    EXPECT_EQ(taken[0].first, a);
    EXPECT_FALSE(taken[0].second.context.has_value());
    ASSERT_EQ(taken[0].second.events.size(), 1u);
    EXPECT_EQ(taken[0].second.events[0].first, 1u);
    EXPECT_EQ(taken[0].second.events[0].second.ops,
              (std::vector<Op>{skip(32, 0), str(), Op{OpKind::Integer, 0, 0, 32, 32},
                               Op{OpKind::Sequence, 0, 0, 8, 8}}));
    EXPECT_EQ(taken[1].first, b);
    ASSERT_TRUE(taken[1].second.context.has_value());
    EXPECT_TRUE(taken[1].second.context->ops.empty());
    ASSERT_EQ(taken[1].second.events.size(), 1u);
    EXPECT_TRUE(taken[1].second.events[0].second.ops.empty());
    EXPECT_TRUE(r.takeNewLayouts().empty());

    // Everything so far, for a consumer that starts over.
    const ChannelLayouts all = r.layouts(a);
    ASSERT_TRUE(all.context.has_value());
    EXPECT_EQ(all.events.size(), 2u);
    EXPECT_TRUE(r.layouts(99).events.empty());
    // And it survives the wire.
    EXPECT_EQ(decode(encode(all)), all);
}

TEST(RecordLayoutRegistry, RefusedRegistrationsAddNoLayout) {
    TraceRegistry r(sampleTraceInfo());
    const std::uint32_t a = r.createChannel();
    EXPECT_THROW(r.registerEvent(a, "p:bad", 1, "", Fields{integer("x", 65, false)}, ""),
                 MetadataError);
    EXPECT_THROW(r.registerChannel(a, Fields{integer("x", 0, false)}), MetadataError);
    EXPECT_TRUE(r.takeNewLayouts().empty());
}

TEST(RecordLayoutRegistry, ALayoutPastTheLimitsIsRefusedWithE2big) {
    TraceRegistry r(sampleTraceInfo());
    const std::uint32_t a = r.createChannel();
    r.registerChannel(a, {});
    r.takeNewLayouts();
    // 16386 single values alternating between two labels: 16386 ranges
    // that do not merge, past kMaxRanges.
    std::vector<lttng_ust_ctl_enum_entry> entries;
    for (std::int64_t v = 0; v < 16386; ++v)
        entries.push_back(entry(v % 2 == 0 ? "_even" : "_odd", v, v, false));
    const std::uint64_t enumId = r.registerEnum("parity", entries);
    const Fields fields = concat({enumField("tag", "parity", enumId, 16, false),
                                  Fields{variantField("v", "tag", 2), integer("even", 8, false),
                                         integer("odd", 16, false)}});
    const std::string text = r.text();
    try {
        r.registerEvent(a, "p:wide", 1, "", fields, "");
        ADD_FAILURE() << "registered";
    } catch (const MetadataError& e) {
        EXPECT_EQ(e.errnoValue(), E2BIG);
        EXPECT_NE(std::string(e.what()).find("ranges"), std::string::npos) << e.what();
    }
    EXPECT_EQ(r.eventCount(a), 0u);
    EXPECT_EQ(r.text(), text);
    EXPECT_TRUE(r.takeNewLayouts().empty());

    // Half as many values fit: one event, one layout of 8193 ranges.
    entries.resize(8193);
    const std::uint64_t smaller = r.registerEnum("parity_small", entries);
    EXPECT_EQ(r.registerEvent(a, "p:narrow", 1, "",
                              concat({enumField("tag", "parity_small", smaller, 16, false),
                                      Fields{variantField("v", "tag", 2), integer("even", 8, false),
                                             integer("odd", 16, false)}}),
                              ""),
              0u);
    const auto taken = r.takeNewLayouts();
    ASSERT_EQ(taken.size(), 1u);
    ASSERT_EQ(taken[0].second.events.size(), 1u);
    EXPECT_EQ(taken[0].second.events[0].second.ranges.size(), 8193u);
    EXPECT_EQ(encodeChunks(taken[0].second, 1u << 20).size(), 1u);
}
