// The TSDL written for every field type lttng-ust 2.13 sends, compared line by
// line with what lttng-sessiond 2.13 writes for it (ust-metadata.c).
#include "metadata/metadata_error.hpp"
#include "metadata/trace_registry.hpp"
#include "metadata_test_support.hpp"

#include <gtest/gtest.h>
#include <string>

using namespace tracectl::metadata;
using namespace mdtest;

namespace {

class MetadataFieldTypes : public ::testing::Test {
protected:
    MetadataFieldTypes() : registry_(sampleTraceInfo()) {
        chan_ = registry_.createChannel();
        registry_.registerChannel(chan_, {});
    }

    // The text an event with `fields` adds.
    std::string eventText(const Fields& fields, std::string_view name = "prov:ev") {
        const std::size_t before = registry_.text().size();
        registry_.registerEvent(chan_, name, 13, "sig", fields, "");
        return registry_.text().substr(before);
    }

    // The member lines of an event with `fields`.
    std::string members(const Fields& fields) {
        const std::string t = eventText(fields);
        const std::string open = "\tfields := struct {\n";
        const auto b = t.find(open);
        const auto e = t.rfind("\t};\n};\n");
        EXPECT_NE(b, std::string::npos);
        EXPECT_NE(e, std::string::npos);
        return t.substr(b + open.size(), e - b - open.size());
    }

    TraceRegistry registry_;
    std::uint32_t chan_ = 0;
};

const std::string kI = "\t\t";

} // namespace

TEST_F(MetadataFieldTypes, EventBlockLayout) {
    EXPECT_EQ(eventText({integer("x", 32, true)}),
              "event {\n"
              "\tname = \"prov:ev\";\n"
              "\tid = 0;\n"
              "\tstream_id = 0;\n"
              "\tloglevel = 13;\n"
              "\tfields := struct {\n"
              "\t\tinteger { size = 32; align = 32; signed = 1; encoding = none; base = 10; } _x;\n"
              "\t};\n"
              "};\n\n");
}

TEST_F(MetadataFieldTypes, EventBlockWithModelEmfUriAndNoFields) {
    const std::size_t before = registry_.text().size();
    registry_.registerEvent(chan_, "a\"b", -1, "", {}, "http://x/\"y\"");
    EXPECT_EQ(registry_.text().substr(before), "event {\n"
                                               "\tname = \"a\\\"b\";\n"
                                               "\tid = 0;\n"
                                               "\tstream_id = 0;\n"
                                               "\tmodel.emf.uri = \"http://x/\\\"y\\\"\";\n"
                                               "\tfields := struct {\n"
                                               "\t};\n"
                                               "};\n\n");
}

TEST_F(MetadataFieldTypes, IntegersOfEverySizeAndSignedness) {
    Fields f;
    for (std::uint32_t bits : {8u, 16u, 32u, 64u}) {
        f.push_back(integer("s" + std::to_string(bits), bits, true));
        f.push_back(integer("u" + std::to_string(bits), bits, false));
    }
    std::string expected;
    for (std::uint32_t bits : {8u, 16u, 32u, 64u}) {
        const std::string b = std::to_string(bits);
        expected += kI + "integer { size = " + b + "; align = " + b +
                    "; signed = 1; encoding = none; base = 10; } _s" + b + ";\n";
        expected += kI + "integer { size = " + b + "; align = " + b +
                    "; signed = 0; encoding = none; base = 10; } _u" + b + ";\n";
    }
    EXPECT_EQ(members(f), expected);
}

TEST_F(MetadataFieldTypes, HexOctalBinaryAndNetworkByteOrder) {
    EXPECT_EQ(
        members({integer("h", 32, false, 16), integer("o", 16, false, 8), integer("b", 8, false, 2),
                 integer("net", 32, false, 10, true), integer("nethex", 16, false, 16, true)}),
        kI + "integer { size = 32; align = 32; signed = 0; encoding = none; base = 16; } _h;\n" +
            kI + "integer { size = 16; align = 16; signed = 0; encoding = none; base = 8; } _o;\n" +
            kI + "integer { size = 8; align = 8; signed = 0; encoding = none; base = 2; } _b;\n" +
            kI +
            "integer { size = 32; align = 32; signed = 0; encoding = none; base = 10; byte_order = "
            "be; } _net;\n" +
            kI +
            "integer { size = 16; align = 16; signed = 0; encoding = none; base = 16; byte_order = "
            "be; } _nethex;\n");
}

TEST_F(MetadataFieldTypes, PackedAndBitAlignedIntegers) {
    EXPECT_EQ(
        members({integer("p", 32, true, 10, false, lttng_ust_ctl_encode_none, 8),
                 integer("bits", 3, false, 10, false, lttng_ust_ctl_encode_none, 1)}),
        kI + "integer { size = 32; align = 8; signed = 1; encoding = none; base = 10; } _p;\n" +
            kI +
            "integer { size = 3; align = 1; signed = 0; encoding = none; base = 10; } _bits;\n");
}

TEST_F(MetadataFieldTypes, FloatAndDouble) {
    EXPECT_EQ(members({floating("f", false), floating("d", true)}),
              kI + "floating_point { exp_dig = 8; mant_dig = 24; align = 32; } _f;\n" + kI +
                  "floating_point { exp_dig = 11; mant_dig = 53; align = 64; } _d;\n");
}

TEST_F(MetadataFieldTypes, Strings) {
    EXPECT_EQ(members({string("s"), string("a", lttng_ust_ctl_encode_ASCII),
                       string("n", lttng_ust_ctl_encode_none)}),
              kI + "string _s;\n" + kI + "string { encoding = ASCII; } _a;\n" + kI +
                  "string _n;\n");
}

TEST_F(MetadataFieldTypes, ArraysOfIntegersAndText) {
    EXPECT_EQ(
        members(concat({array("arr", 4, 16, true), array("txt", 16, 8, true, true)})),
        kI +
            "integer { size = 16; align = 16; signed = 1; encoding = none; base = 10; } "
            "_arr[4];\n" +
            kI +
            "integer { size = 8; align = 8; signed = 1; encoding = UTF8; base = 10; } _txt[16];\n");
}

TEST_F(MetadataFieldTypes, SequencesOfIntegersAndText) {
    EXPECT_EQ(members(concat({sequence("seq", 32, false), sequence("txt", 8, true, 32, true)})),
              kI +
                  "integer { size = 64; align = 64; signed = 0; encoding = none; base = 10; } "
                  "__seq_length;\n" +
                  kI +
                  "integer { size = 32; align = 32; signed = 0; encoding = none; base = 10; } "
                  "_seq[ __seq_length ];\n" +
                  kI +
                  "integer { size = 32; align = 32; signed = 0; encoding = none; base = 10; } "
                  "__txt_length;\n" +
                  kI +
                  "integer { size = 8; align = 8; signed = 1; encoding = UTF8; base = 10; } _txt[ "
                  "__txt_length ];\n");
}

TEST_F(MetadataFieldTypes, AlignedArrayAndSequenceGetAPaddingStruct) {
    Fields f = array("a", 2, 8, false, false, 8);
    f.push_back(integer("n", 8, false));
    for (const auto& x : sequenceOf("s", "n", 8, false, false, 4))
        f.push_back(x);
    EXPECT_EQ(
        members(f),
        kI + "struct {} align(64) _a_padding;\n" + kI +
            "integer { size = 8; align = 8; signed = 0; encoding = none; base = 10; } _a[2];\n" +
            kI + "integer { size = 8; align = 8; signed = 0; encoding = none; base = 10; } _n;\n" +
            kI + "struct {} align(32) _s_padding;\n" + kI +
            "integer { size = 8; align = 8; signed = 0; encoding = none; base = 10; } _s[ _n ];\n");
}

TEST_F(MetadataFieldTypes, EnumsWithValuesRangesAndAutoEntries) {
    const lttng_ust_ctl_enum_entry entries[] = {entry("ZERO", 0, 0), entry("RANGE", 1, 9),
                                                autoEntry("AUTO"), entry("NEG", -5, -2),
                                                entry("q\"uote", 100, 100)};
    const std::uint64_t id = registry_.registerEnum("prov_enum", entries);
    EXPECT_EQ(members(enumField("e", "prov_enum", id, 32, true)),
              kI +
                  "enum : integer { size = 32; align = 32; signed = 1; encoding = none; base = 10; "
                  "} {\n" +
                  kI + "\t\"ZERO\" = 0,\n" + kI + "\t\"RANGE\" = 1 ... 9,\n" + kI +
                  "\t\"AUTO\",\n" + kI + "\t\"NEG\" = -5 ... -2,\n" + kI +
                  "\t\"q\\\"uote\" = 100,\n" + kI + "} _e;\n");
}

TEST_F(MetadataFieldTypes, UnsignedEnumAndFullRangeValues) {
    const lttng_ust_ctl_enum_entry entries[] = {entry("MAX", -1, -1, false),
                                                entry("ALL", 0, -1, false)};
    const std::uint64_t id = registry_.registerEnum("u64", entries);
    EXPECT_EQ(members(enumField("e", "u64", id, 64, false)),
              kI +
                  "enum : integer { size = 64; align = 64; signed = 0; encoding = none; base = 10; "
                  "} {\n" +
                  kI + "\t\"MAX\" = 18446744073709551615,\n" + kI +
                  "\t\"ALL\" = 0 ... 18446744073709551615,\n" + kI + "} _e;\n");
}

TEST_F(MetadataFieldTypes, EnumWithoutEntriesIsItsContainer) {
    // TSDL has no empty enumeration; babeltrace2's parser rejects "{ }".
    const std::uint64_t id = registry_.registerEnum("empty", {});
    EXPECT_EQ(
        members(enumField("e", "empty", id, 16, false)),
        kI + "integer { size = 16; align = 16; signed = 0; encoding = none; base = 10; } _e;\n");
}

TEST_F(MetadataFieldTypes, EmptyStructs) {
    EXPECT_EQ(members({structField("empty", 0), structField("al", 0, 8)}),
              kI + "struct {} _empty;\n" + kI + "struct {} align(64) _al;\n");
}

TEST_F(MetadataFieldTypes, NestedStructWithSequenceInside) {
    Fields f{integer("n", 32, false), structField("outer", 2)};
    f.push_back(integer("x", 8, false));
    for (const auto& s : sequenceOf("inner", "n", 16, false))
        f.push_back(s);
    EXPECT_EQ(
        members(f),
        kI + "integer { size = 32; align = 32; signed = 0; encoding = none; base = 10; } _n;\n" +
            kI + "struct {\n" + kI +
            "\tinteger { size = 8; align = 8; signed = 0; encoding = none; base = 10; } _x;\n" +
            kI +
            "\tinteger { size = 16; align = 16; signed = 0; encoding = none; base = 10; } _inner[ "
            "_n ];\n" +
            kI + "} _outer;\n");
}

TEST_F(MetadataFieldTypes, DynamicTypedAppContextVariant) {
    const auto entries = dynamicTypeEntries();
    const std::uint64_t id = registry_.registerEnum("dynamic_type_enum", entries);
    const std::string m = members(dynamicContext("$app.prov:ctx", id));
    EXPECT_NE(
        m.find(
            kI +
            "enum : integer { size = 8; align = 8; signed = 1; encoding = none; base = 10; } {\n" +
            kI + "\t\"_none\" = 0,\n"),
        std::string::npos)
        << m;
    EXPECT_NE(
        m.find(
            kI + "} __app_prov_ctx_tag;\n" + kI + "variant <__app_prov_ctx_tag> {\n" + kI +
            "\tstruct {} _none;\n" + kI +
            "\tinteger { size = 8; align = 8; signed = 1; encoding = none; base = 10; } _int8;\n"),
        std::string::npos)
        << m;
    EXPECT_NE(m.find(kI +
                     "\tfloating_point { exp_dig = 11; mant_dig = 53; align = 64; } _double;\n" +
                     kI + "\tstring _string;\n" + kI + "} __app_prov_ctx;\n"),
              std::string::npos)
        << m;
}

TEST_F(MetadataFieldTypes, AlignedVariantGetsAPaddingStruct) {
    const lttng_ust_ctl_enum_entry entries[] = {entry("_a", 0, 0), entry("_b", 1, 1)};
    const std::uint64_t id = registry_.registerEnum("sel", entries);
    Fields f = enumField("tag", "sel", id, 8, false);
    f.push_back(variantField("v", "tag", 2, 4));
    f.push_back(integer("a", 8, false));
    f.push_back(string("b"));
    const std::string m = members(f);
    EXPECT_NE(m.find(kI + "struct {} align(32) _v_padding;\n" + kI + "variant <_tag> {\n"),
              std::string::npos)
        << m;
}

TEST_F(MetadataFieldTypes, LegacyArraySequenceEnumAndStruct) {
    const lttng_ust_ctl_enum_entry entries[] = {entry("A", 0, 0)};
    const std::uint64_t id = registry_.registerEnum("old", entries);

    lttng_ust_ctl_field arr = named("la", lttng_ust_ctl_atype_array);
    arr.type.u.legacy.array.elem_type.atype = lttng_ust_ctl_atype_integer;
    arr.type.u.legacy.array.elem_type.u.basic.integer = integer("", 16, false).type.u.integer;
    arr.type.u.legacy.array.length = 3;

    lttng_ust_ctl_field seq = named("ls", lttng_ust_ctl_atype_sequence);
    seq.type.u.legacy.sequence.length_type.atype = lttng_ust_ctl_atype_integer;
    seq.type.u.legacy.sequence.length_type.u.basic.integer = integer("", 32, false).type.u.integer;
    seq.type.u.legacy.sequence.elem_type.atype = lttng_ust_ctl_atype_integer;
    seq.type.u.legacy.sequence.elem_type.u.basic.integer = integer("", 8, true).type.u.integer;

    lttng_ust_ctl_field en = named("le", lttng_ust_ctl_atype_enum);
    copyName(en.type.u.legacy.basic.enumeration.name,
             sizeof en.type.u.legacy.basic.enumeration.name, "old");
    en.type.u.legacy.basic.enumeration.id = id;
    en.type.u.legacy.basic.enumeration.container_type = integer("", 16, false).type.u.integer;

    lttng_ust_ctl_field st = named("lst", lttng_ust_ctl_atype_struct);

    EXPECT_EQ(
        members({arr, seq, en, st}),
        kI +
            "integer { size = 16; align = 16; signed = 0; encoding = none; base = 10; } _la[3];\n" +
            kI +
            "integer { size = 32; align = 32; signed = 0; encoding = none; base = 10; } "
            "__ls_length;\n" +
            kI +
            "integer { size = 8; align = 8; signed = 1; encoding = none; base = 10; } _ls[ "
            "__ls_length ];\n" +
            kI +
            "enum : integer { size = 16; align = 16; signed = 0; encoding = none; base = 10; } "
            "{\n" +
            kI + "\t\"A\" = 0,\n" + kI + "} _le;\n" + kI + "struct {} _lst;\n");
}

TEST_F(MetadataFieldTypes, OddNamesGiveDistinctSafeIdentifiers) {
    EXPECT_EQ(
        members({integer("", 8, false), integer("", 8, false), integer("struct", 8, false),
                 integer("Bool", 8, false), integer("a.b", 8, false), integer("a:b", 8, false),
                 integer("_a_b", 8, false), integer("x y\"z", 8, false)}),
        kI + "integer { size = 8; align = 8; signed = 0; encoding = none; base = 10; } _;\n" + kI +
            "integer { size = 8; align = 8; signed = 0; encoding = none; base = 10; } __1;\n" + kI +
            "integer { size = 8; align = 8; signed = 0; encoding = none; base = 10; } _struct;\n" +
            kI +
            "integer { size = 8; align = 8; signed = 0; encoding = none; base = 10; } _Bool_;\n" +
            kI +
            "integer { size = 8; align = 8; signed = 0; encoding = none; base = 10; } _a_b;\n" +
            kI +
            "integer { size = 8; align = 8; signed = 0; encoding = none; base = 10; } _a_b_1;\n" +
            kI +
            "integer { size = 8; align = 8; signed = 0; encoding = none; base = 10; } __a_b;\n" +
            kI +
            "integer { size = 8; align = 8; signed = 0; encoding = none; base = 10; } _x_y_z;\n");
}

TEST_F(MetadataFieldTypes, SequenceRefersToTheRenamedLengthField) {
    // Two fields sanitize to "_n"; the sequence names the second one.
    Fields f{integer("n", 8, false), integer("n", 16, false)};
    for (const auto& s : sequenceOf("s", "n", 8, false))
        f.push_back(s);
    const std::string m = members(f);
    EXPECT_NE(m.find("} _n_1;\n"), std::string::npos) << m;
    EXPECT_NE(m.find("} _s[ _n_1 ];\n"), std::string::npos) << m;
}

TEST(MetadataFieldTypesByteOrder, BigEndianTraceMarksLittleEndianFields) {
    auto info = sampleTraceInfo();
    info.abi.byteOrder = ByteOrder::Big;
    TraceRegistry r(info);
    const auto chan = r.createChannel();
    r.registerChannel(chan, {});
    r.registerEvent(chan, "e", 0, "",
                    Fields{integer("x", 32, false, 10, true), floating("d", true)}, "");
    // lttng-ust sets reverse_byte_order on floats when float word order
    // differs from byte order.
    Fields rev{floating("f", false)};
    rev[0].type.u._float.reverse_byte_order = 1;
    r.registerEvent(chan, "f", 0, "", rev, "");
    EXPECT_NE(r.text().find("byte_order = be;"), std::string::npos);
    EXPECT_NE(r.text().find("base = 10; byte_order = le; } _x;"), std::string::npos);
    EXPECT_NE(r.text().find("floating_point { exp_dig = 11; mant_dig = 53; align = 64; } _d;"),
              std::string::npos);
    EXPECT_NE(
        r.text().find(
            "floating_point { exp_dig = 8; mant_dig = 24; align = 32; byte_order = le; } _f;"),
        std::string::npos);
}
