// Unit tests of the generic D-Bus value -> JSON conversion of tracectl (no bus needed).
#include "cli/variant_json.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <sdbus-c++/Types.h>

using nlohmann::json;
using tracectl::cli::toPropertyMap;
using tracectl::cli::variantToJson;

TEST(CliVariantJson, BasicTypesKeepTheirType) {
    EXPECT_EQ(variantToJson(sdbus::Variant{true}), json(true));
    EXPECT_EQ(variantToJson(sdbus::Variant{std::uint8_t{200}}), json(200));
    EXPECT_EQ(variantToJson(sdbus::Variant{std::int16_t{-3}}), json(-3));
    EXPECT_EQ(variantToJson(sdbus::Variant{std::uint16_t{65535}}), json(65535));
    EXPECT_EQ(variantToJson(sdbus::Variant{std::int32_t{-70000}}), json(-70000));
    EXPECT_EQ(variantToJson(sdbus::Variant{std::uint32_t{1000}}), json(1000U));
    EXPECT_EQ(variantToJson(sdbus::Variant{std::int64_t{-1}}), json(-1));
    EXPECT_EQ(variantToJson(sdbus::Variant{std::numeric_limits<std::uint64_t>::max()}),
              json(std::numeric_limits<std::uint64_t>::max()));
    EXPECT_EQ(variantToJson(sdbus::Variant{2.5}), json(2.5));
    EXPECT_EQ(variantToJson(sdbus::Variant{std::string{"active"}}), json("active"));
    EXPECT_EQ(variantToJson(sdbus::Variant{sdbus::ObjectPath{"/org/x"}}), json("/org/x"));
    EXPECT_EQ(variantToJson(sdbus::Variant{sdbus::Signature{"a{sv}"}}), json("a{sv}"));
}

TEST(CliVariantJson, UnsignedIntegersStayUnsigned) {
    const json owner = variantToJson(sdbus::Variant{std::uint32_t{1000}});
    EXPECT_TRUE(owner.is_number_unsigned());
    const json time = variantToJson(sdbus::Variant{std::uint64_t{1714557600123456}});
    EXPECT_TRUE(time.is_number_unsigned());
    EXPECT_EQ(time.get<std::uint64_t>(), 1714557600123456U);
}

TEST(CliVariantJson, NonFiniteDoubleIsNull) {
    EXPECT_TRUE(variantToJson(sdbus::Variant{std::numeric_limits<double>::infinity()}).is_null());
}

TEST(CliVariantJson, ArraysBecomeArrays) {
    EXPECT_EQ(variantToJson(sdbus::Variant{std::vector<std::string>{"a", "b"}}),
              json::parse(R"(["a","b"])"));
    EXPECT_EQ(variantToJson(sdbus::Variant{std::vector<std::uint8_t>{1, 2}}), json::parse("[1,2]"));
    EXPECT_EQ(variantToJson(sdbus::Variant{std::vector<std::int32_t>{}}), json::array());
}

TEST(CliVariantJson, StructsBecomeArrays) {
    using Tracepoint = sdbus::Struct<std::string, std::string, std::int32_t>;
    const std::vector<Tracepoint> tracepoints{{"ust", "app:event", 13}, {"ust", "app:other", 6}};
    EXPECT_EQ(variantToJson(sdbus::Variant{tracepoints}),
              json::parse(R"([["ust","app:event",13],["ust","app:other",6]])"));
}

TEST(CliVariantJson, DictionariesBecomeObjects) {
    const std::map<std::string, sdbus::Variant> options{
        {"mode", sdbus::Variant{std::string{"snapshot"}}},
        {"size", sdbus::Variant{std::uint64_t{4096}}},
        {"nested",
         sdbus::Variant{std::map<std::string, sdbus::Variant>{{"flag", sdbus::Variant{false}}}}},
    };
    EXPECT_EQ(variantToJson(sdbus::Variant{options}),
              json::parse(R"({"mode":"snapshot","size":4096,"nested":{"flag":false}})"));
}

TEST(CliVariantJson, NonStringDictionaryKeysAreWrittenAsText) {
    const std::map<std::uint32_t, std::string> users{{0, "root"}, {1000, "alice"}};
    EXPECT_EQ(variantToJson(sdbus::Variant{users}), json::parse(R"({"0":"root","1000":"alice"})"));
}

TEST(CliVariantJson, VariantInVariantIsUnwrapped) {
    const sdbus::Variant inner{std::string{"deep"}};
    const std::vector<sdbus::Variant> values{inner, sdbus::Variant{std::int32_t{1}}};
    EXPECT_EQ(variantToJson(sdbus::Variant{values}), json::parse(R"(["deep",1])"));
}

TEST(CliVariantJson, EmptyVariantIsNull) {
    EXPECT_TRUE(variantToJson(sdbus::Variant{}).is_null());
}

TEST(CliVariantJson, PropertyMapConvertsEveryEntry) {
    const auto properties = toPropertyMap({
        {"Name", sdbus::Variant{std::string{"s1"}}},
        {"Owner", sdbus::Variant{std::uint32_t{1000}}},
    });
    ASSERT_EQ(properties.size(), 2U);
    EXPECT_EQ(properties.at("Name"), json("s1"));
    EXPECT_EQ(properties.at("Owner"), json(1000U));
}
