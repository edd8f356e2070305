// The registry's rules: the preamble, channel/event/enum ids, append-only
// text, and the refusal of malformed or hostile registrations.
#include "metadata/metadata_error.hpp"
#include "metadata/trace_registry.hpp"
#include "metadata_test_support.hpp"

#include <cerrno>
#include <cstdlib>
#include <gtest/gtest.h>
#include <random>
#include <string>

using namespace tracectl::metadata;
using namespace mdtest;

namespace {

// Runs `f`, expects a MetadataError with `err`.
template <typename F>
void expectError(int err, F&& f) {
    try {
        f();
        ADD_FAILURE() << "no error, expected errno " << err;
    } catch (const MetadataError& e) {
        EXPECT_EQ(e.errnoValue(), err) << e.what();
    }
}

class UtcTimeZone : public ::testing::Environment {
public:
    void SetUp() override {
        setenv("TZ", "UTC", 1);
        tzset();
    }
};
const auto* const kUtc = ::testing::AddGlobalTestEnvironment(new UtcTimeZone);

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

} // namespace

TEST(MetadataPreamble, PerUidTraceBlockEnvAndClock) {
    TraceRegistry r(sampleTraceInfo());
    const std::string& t = r.text();
    EXPECT_EQ(t.rfind("/* CTF 1.8 */\n\n", 0), 0u);
    EXPECT_TRUE(contains(
        t, "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
           "typealias integer { size = 16; align = 16; signed = false; } := uint16_t;\n"
           "typealias integer { size = 32; align = 32; signed = false; } := uint32_t;\n"
           "typealias integer { size = 64; align = 64; signed = false; } := uint64_t;\n"
           "typealias integer { size = 64; align = 64; signed = false; } := unsigned long;\n"
           "typealias integer { size = 5; align = 1; signed = false; } := uint5_t;\n"
           "typealias integer { size = 27; align = 1; signed = false; } := uint27_t;\n"));
    EXPECT_TRUE(contains(t, "trace {\n"
                            "\tmajor = 1;\n"
                            "\tminor = 8;\n"
                            "\tuuid = \"a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf\";\n"
                            "\tbyte_order = le;\n"
                            "\tpacket.header := struct {\n"
                            "\t\tuint32_t magic;\n"
                            "\t\tuint8_t  uuid[16];\n"
                            "\t\tuint32_t stream_id;\n"
                            "\t\tuint64_t stream_instance_id;\n"
                            "\t};\n"
                            "};\n"));
    EXPECT_TRUE(contains(t, "env {\n"
                            "\tdomain = \"ust\";\n"
                            "\ttracer_name = \"lttng-ust\";\n"
                            "\ttracer_major = 2;\n"
                            "\ttracer_minor = 13;\n"
                            "\ttracer_buffering_scheme = \"uid\";\n"
                            "\ttracer_buffering_id = 1000;\n"
                            "\tarchitecture_bit_width = 64;\n"
                            "\ttrace_name = \"mysession\";\n"
                            "\ttrace_creation_datetime = \"20231114T221320+0000\";\n"
                            "\thostname = \"testhost\";\n"
                            "};\n"));
    EXPECT_FALSE(contains(t, "vpid"));
    EXPECT_TRUE(contains(t, "clock {\n"
                            "\tname = \"monotonic\";\n"
                            "\tuuid = \"11223344-5566-7788-99aa-bbccddeeff00\";\n"
                            "\tdescription = \"Monotonic Clock\";\n"
                            "\tfreq = 1000000000; /* Frequency, in Hz */\n"
                            "\t/* clock value offset from Epoch is: offset * (1/freq) */\n"
                            "\toffset = 1700000000000000000;\n"
                            "};\n"));
    EXPECT_TRUE(contains(t, "typealias integer {\n\tsize = 64; align = 64; signed = false;\n"
                            "\tmap = clock.monotonic.value;\n} := uint64_clock_monotonic_t;\n"));
    EXPECT_TRUE(contains(t, "struct packet_context {\n"
                            "\tuint64_clock_monotonic_t timestamp_begin;\n"
                            "\tuint64_clock_monotonic_t timestamp_end;\n"
                            "\tuint64_t content_size;\n"
                            "\tuint64_t packet_size;\n"
                            "\tuint64_t packet_seq_num;\n"
                            "\tunsigned long events_discarded;\n"
                            "\tuint32_t cpu_id;\n"
                            "};\n"));
    EXPECT_TRUE(contains(t, "struct event_header_compact {\n"
                            "\tenum : uint5_t { compact = 0 ... 30, extended = 31 } id;\n"));
    EXPECT_TRUE(contains(t, "} align(32);\n\nstruct event_header_large {\n"
                            "\tenum : uint16_t { compact = 0 ... 65534, extended = 65535 } id;\n"));
    EXPECT_TRUE(contains(t, "\t} v;\n} align(16);\n\n"));
    EXPECT_FALSE(contains(t, "stream {"));
}

TEST(MetadataPreamble, PerPidEnvNamesTheApp) {
    TraceRegistry r(sampleTraceInfo(true));
    EXPECT_TRUE(contains(r.text(), "\ttracer_buffering_scheme = \"pid\";\n"
                                   "\ttracer_buffering_id = 4242;\n"));
    EXPECT_TRUE(contains(r.text(), "\thostname = \"testhost\";\n"
                                   "\ttracer_patchlevel = 5;\n"
                                   "\tvpid = 4242;\n"
                                   "\tprocname = \"myapp\";\n"
                                   "\tvpid_datetime = \"20231114T221500+0000\";\n"
                                   "};\n"));
}

TEST(MetadataPreamble, ThirtyTwoBitAbiAndNegativeOffsetWithoutClockUuid) {
    auto info = sampleTraceInfo();
    info.abi = Abi{32, 8, 16, 32, 32, 32, ByteOrder::Little};
    info.clock.offset = -42;
    info.clock.uuid.reset();
    TraceRegistry r(info);
    EXPECT_TRUE(contains(r.text(), "size = 64; align = 32; signed = false; } := uint64_t;\n"));
    EXPECT_TRUE(contains(r.text(), "size = 32; align = 32; signed = false; } := unsigned long;\n"));
    EXPECT_TRUE(contains(r.text(), "\tarchitecture_bit_width = 32;\n"));
    EXPECT_TRUE(contains(r.text(), "\toffset = -42;\n"));
    EXPECT_TRUE(contains(r.text(), "clock {\n\tname = \"monotonic\";\n\tdescription"));
}

TEST(MetadataPreamble, EscapesWhatSessionsAndAppsName) {
    auto info = sampleTraceInfo(true);
    info.hostname = "h\"ost";
    info.traceName = "a\\b\nc";
    info.app->procname = "evil\"; } event { name = \"x";
    TraceRegistry r(info);
    EXPECT_TRUE(contains(r.text(), "\thostname = \"h\\\"ost\";\n"));
    EXPECT_TRUE(contains(r.text(), "\ttrace_name = \"a\\\\b\\nc\";\n"));
    EXPECT_TRUE(contains(r.text(), "\tprocname = \"evil\\\"; } event { name = \\\"x\";\n"));
}

TEST(MetadataPreamble, RejectsAnInvalidTraceInfo) {
    auto bad = [](auto change) {
        auto info = sampleTraceInfo();
        change(info);
        expectError(EINVAL, [&] { TraceRegistry r(info); });
    };
    bad([](TraceInfo& i) { i.abi.bitsPerLong = 48; });
    bad([](TraceInfo& i) { i.abi.uint32Alignment = 0; });
    bad([](TraceInfo& i) { i.abi.uint64Alignment = 24; });
    bad([](TraceInfo& i) { i.abi.longAlignment = 128; });
    bad([](TraceInfo& i) { i.clock.name = "mono tonic"; });
    bad([](TraceInfo& i) { i.clock.name = "struct"; });
    bad([](TraceInfo& i) { i.clock.frequency = 0; });
    bad([](TraceInfo& i) {
        i.buffering = BufferingScheme::PerPid;
        i.app.reset();
    });
    EXPECT_EQ(byteOrderFromRegistration(1234), ByteOrder::Little);
    EXPECT_EQ(byteOrderFromRegistration(4321), ByteOrder::Big);
    EXPECT_EQ(byteOrderFromRegistration(0), std::nullopt);
}

TEST(MetadataChannels, IdsCountFromZeroAndRepliesAreLarge) {
    TraceRegistry r(sampleTraceInfo());
    EXPECT_EQ(r.createChannel(), 0u);
    EXPECT_EQ(r.createChannel(), 1u);
    const ChannelReply reply = r.registerChannel(1, {});
    EXPECT_EQ(reply.chanId, 1u);
    EXPECT_EQ(reply.headerType, LTTNG_UST_CTL_CHANNEL_HEADER_LARGE);
    EXPECT_TRUE(r.isChannelRegistered(1));
    EXPECT_FALSE(r.isChannelRegistered(0));
    EXPECT_TRUE(contains(r.text(), "stream {\n"
                                   "\tid = 1;\n"
                                   "\tevent.header := struct event_header_large;\n"
                                   "\tpacket.context := struct packet_context;\n"
                                   "};\n\n"));
    expectError(ENOENT, [&] { r.registerChannel(2, {}); });
    expectError(ENOENT, [&] { r.registerEvent(7, "e", 0, "", {}, ""); });
}

TEST(MetadataChannels, ContextFieldsAndLaterAppsMustMatch) {
    TraceRegistry r(sampleTraceInfo());
    const auto chan = r.createChannel();
    const Fields ctx{integer("vpid", 32, true), string("procname")};
    r.registerChannel(chan, ctx);
    EXPECT_TRUE(contains(
        r.text(),
        "\tpacket.context := struct packet_context;\n"
        "\tevent.context := struct {\n"
        "\t\tinteger { size = 32; align = 32; signed = 1; encoding = none; base = 10; } _vpid;\n"
        "\t\tstring _procname;\n"
        "\t};\n"
        "};\n"));
    const std::string before = r.text();
    EXPECT_EQ(r.registerChannel(chan, ctx).chanId, chan); // a second app, same context
    expectError(EINVAL, [&] { r.registerChannel(chan, Fields{integer("vpid", 32, true)}); });
    expectError(EINVAL, [&] { r.registerChannel(chan, {}); });
    expectError(EINVAL, [&] {
        r.registerChannel(chan, Fields{integer("vpid", 64, true), string("procname")});
    });
    EXPECT_EQ(r.text(), before);
}

TEST(MetadataChannels, StreamBlockPrecedesEventsRegisteredBeforeIt) {
    TraceRegistry r(sampleTraceInfo());
    const auto a = r.createChannel();
    const auto b = r.createChannel();
    const std::string preamble = r.text();
    EXPECT_EQ(r.registerEvent(a, "p:first", 1, "", Fields{integer("x", 8, false)}, ""), 0u);
    EXPECT_EQ(r.registerEvent(a, "p:second", 1, "", {}, ""), 1u);
    EXPECT_EQ(r.registerEvent(b, "p:other", 1, "", {}, ""), 0u);
    EXPECT_EQ(r.text(), preamble); // nothing names a stream not yet declared
    EXPECT_EQ(r.eventCount(a), 2u);

    r.registerChannel(a, {});
    const std::string afterA = r.text();
    EXPECT_EQ(afterA.rfind(preamble, 0), 0u); // append-only
    const auto stream = afterA.find("stream {\n\tid = 0;");
    const auto first = afterA.find("name = \"p:first\"");
    const auto second = afterA.find("name = \"p:second\"");
    ASSERT_NE(stream, std::string::npos);
    ASSERT_NE(first, std::string::npos);
    EXPECT_LT(stream, first);
    EXPECT_LT(first, second);
    EXPECT_FALSE(contains(afterA, "p:other"));

    EXPECT_EQ(r.registerEvent(a, "p:third", 1, "", {}, ""), 2u); // written at once
    EXPECT_TRUE(contains(r.text(), "name = \"p:third\""));
    r.registerChannel(b, {});
    EXPECT_EQ(r.text().rfind(afterA, 0), 0u);
    EXPECT_LT(r.text().find("stream {\n\tid = 1;"), r.text().find("p:other"));
}

TEST(MetadataEvents, IdsPerChannelAndEqualEventsShareTheirId) {
    TraceRegistry r(sampleTraceInfo());
    const auto a = r.createChannel();
    const auto b = r.createChannel();
    r.registerChannel(a, {});
    r.registerChannel(b, {});
    const Fields f{integer("x", 32, true), string("s")};
    EXPECT_EQ(r.registerEvent(a, "p:e", 13, "int, x", f, ""), 0u);
    EXPECT_EQ(r.registerEvent(a, "p:f", 13, "int, x", f, ""), 1u);
    EXPECT_EQ(r.registerEvent(b, "p:e", 13, "int, x", f, ""), 0u);
    const std::string before = r.text();
    // A second app (or the same app again) registering the same event.
    EXPECT_EQ(r.registerEvent(a, "p:e", 13, "int, x", f, ""), 0u);
    EXPECT_EQ(r.text(), before);
    // Anything different is another event class.
    EXPECT_EQ(
        r.registerEvent(a, "p:e", 13, "int, x", Fields{integer("x", 64, true), string("s")}, ""),
        2u);
    EXPECT_EQ(r.registerEvent(a, "p:e", 14, "int, x", f, ""), 3u);
    EXPECT_EQ(r.registerEvent(a, "p:e", 13, "long, x", f, ""), 4u);
    EXPECT_EQ(r.registerEvent(a, "p:e", 13, "int, x", f, "uri"), 5u);
    EXPECT_EQ(r.registerEvent(a, "p:e", 13, "int, x", f, "uri"), 5u);
    EXPECT_EQ(r.eventCount(a), 6u);
    EXPECT_EQ(r.eventCount(b), 1u);
}

TEST(MetadataEnums, IdsFromOneCounterAndEqualEnumsShareTheirId) {
    TraceRegistry r(sampleTraceInfo());
    const lttng_ust_ctl_enum_entry e1[] = {entry("A", 0, 0), entry("B", 1, 5)};
    const lttng_ust_ctl_enum_entry e2[] = {entry("A", 0, 0), entry("B", 1, 6)};
    EXPECT_EQ(r.registerEnum("p_enum", e1), 0u);
    EXPECT_EQ(r.registerEnum("q_enum", e1), 1u);
    EXPECT_EQ(r.registerEnum("p_enum", e1), 0u);
    EXPECT_EQ(r.registerEnum("p_enum", e2), 2u);
    EXPECT_EQ(r.registerEnum("p_enum", e2), 2u);
    EXPECT_EQ(r.registerEnum("empty", {}), 3u);
    EXPECT_EQ(r.enumCount(), 4u);

    const auto chan = r.createChannel();
    r.registerChannel(chan, {});
    EXPECT_EQ(r.registerEvent(chan, "e", 0, "", enumField("x", "p_enum", 2), ""), 0u);
    EXPECT_TRUE(contains(r.text(), "\"B\" = 1 ... 6,"));
    expectError(ENOENT,
                [&] { r.registerEvent(chan, "e", 0, "", enumField("x", "p_enum", 1), ""); });
    expectError(ENOENT,
                [&] { r.registerEvent(chan, "e", 0, "", enumField("x", "p_enum", 9), ""); });
    expectError(ENOENT, [&] { r.registerEvent(chan, "e", 0, "", enumField("x", "nope", 0), ""); });
}

TEST(MetadataEnums, RejectsBadEntries) {
    TraceRegistry r(sampleTraceInfo());
    lttng_ust_ctl_enum_entry unterminated = entry("x", 0, 0);
    std::memset(unterminated.string, 'A', sizeof unterminated.string);
    expectError(EINVAL, [&] { r.registerEnum("e", std::span(&unterminated, 1)); });
    const lttng_ust_ctl_enum_entry reversed[] = {entry("R", 5, 1)};
    expectError(EINVAL, [&] { r.registerEnum("e", reversed); });
    const lttng_ust_ctl_enum_entry mixed[] = {entry("M", 0, -1, false)};
    EXPECT_NO_THROW(r.registerEnum("big", mixed)); // 0 ... UINT64_MAX: fine unsigned
    expectError(EINVAL, [&] { r.registerEnum(std::string_view("a\0b", 3), {}); });

    RegistryLimits small;
    small.maxEnumEntries = 2;
    small.maxEnums = 1;
    small.maxNameBytes = 8;
    TraceRegistry s(sampleTraceInfo(), small);
    const lttng_ust_ctl_enum_entry three[] = {entry("a", 0, 0), entry("b", 1, 1), entry("c", 2, 2)};
    expectError(E2BIG, [&] { s.registerEnum("e", three); });
    expectError(E2BIG, [&] { s.registerEnum("a_long_name", {}); });
    EXPECT_EQ(s.registerEnum("first", {}), 0u);
    expectError(E2BIG, [&] { s.registerEnum("second", {}); });
}

TEST(MetadataEnums, ContainerSignednessMustFitTheValues) {
    TraceRegistry r(sampleTraceInfo());
    const auto chan = r.createChannel();
    r.registerChannel(chan, {});
    const lttng_ust_ctl_enum_entry negative[] = {entry("N", -3, -1)};
    const lttng_ust_ctl_enum_entry huge[] = {entry("H", -1, -1, false)};
    const auto neg = r.registerEnum("neg", negative);
    const auto big = r.registerEnum("huge", huge);
    expectError(EINVAL, [&] {
        r.registerEvent(chan, "e", 0, "", enumField("x", "neg", neg, 32, false), "");
    });
    expectError(EINVAL, [&] {
        r.registerEvent(chan, "e", 0, "", enumField("x", "huge", big, 64, true), "");
    });
    EXPECT_NO_THROW(r.registerEvent(chan, "e", 0, "", enumField("x", "neg", neg, 32, true), ""));
    EXPECT_NO_THROW(r.registerEvent(chan, "f", 0, "", enumField("x", "huge", big, 64, false), ""));
}

namespace {

class MetadataRejects : public ::testing::Test {
protected:
    MetadataRejects() : r_(sampleTraceInfo()) {
        chan_ = r_.createChannel();
        r_.registerChannel(chan_, {});
        const lttng_ust_ctl_enum_entry e[] = {entry("_a", 0, 0), entry("_b", 1, 1)};
        enumId_ = r_.registerEnum("sel", e);
    }

    // Registering `fields` fails with `err` and changes nothing.
    void rejects(int err, const Fields& fields) {
        const std::string before = r_.text();
        const std::size_t events = r_.eventCount(chan_);
        expectError(err, [&] { r_.registerEvent(chan_, "ev", 0, "", fields, ""); });
        EXPECT_EQ(r_.text(), before);
        EXPECT_EQ(r_.eventCount(chan_), events);
    }

    TraceRegistry r_;
    std::uint32_t chan_ = 0;
    std::uint64_t enumId_ = 0;
};

} // namespace

TEST_F(MetadataRejects, UnterminatedNames) {
    Fields f{integer("x", 8, false)};
    std::memset(f[0].name, 'n', sizeof f[0].name);
    rejects(EINVAL, f);

    Fields s = sequence("s", 8, false);
    std::memset(s[1].type.u.sequence_nestable.length_name, 'n',
                sizeof s[1].type.u.sequence_nestable.length_name);
    rejects(EINVAL, s);

    Fields e = enumField("e", "sel", enumId_);
    std::memset(e[0].type.u.enum_nestable.name, 'n', sizeof e[0].type.u.enum_nestable.name);
    rejects(EINVAL, e);

    Fields v = enumField("tag", "sel", enumId_, 8);
    v.push_back(variantField("v", "tag", 1));
    std::memset(v.back().type.u.variant_nestable.tag_name, 't',
                sizeof v.back().type.u.variant_nestable.tag_name);
    v.push_back(integer("a", 8, false));
    rejects(EINVAL, v);
}

TEST_F(MetadataRejects, UnknownAtypesAndBadScalars) {
    Fields f{integer("x", 8, false)};
    const std::uint32_t badAtype = 977;
    std::memcpy(&f[0].type.atype, &badAtype, sizeof badAtype);
    rejects(EINVAL, f);
    rejects(EINVAL, {integer("x", 0, false)});
    rejects(EINVAL, {integer("x", 65, false)});
    rejects(EINVAL, {integer("x", 32, false, 7)});
    rejects(EINVAL, {integer("x", 32, false, 10, false, lttng_ust_ctl_encode_none, 12)});
    Fields enc{integer("x", 8, false)};
    enc[0].type.u.integer.encoding = 3;
    rejects(EINVAL, enc);
    Fields fl{floating("f", false)};
    fl[0].type.u._float.mant_dig = 64; // x87 long double: no CTF 1.8 reader takes it
    fl[0].type.u._float.exp_dig = 15;
    rejects(EINVAL, fl);
    Fields fl0{floating("f", true)};
    fl0[0].type.u._float.mant_dig = 0;
    rejects(EINVAL, fl0);
    Fields fa{floating("f", true)};
    fa[0].type.u._float.alignment = 0;
    rejects(EINVAL, fa);
    Fields st{string("s")};
    st[0].type.u.string.encoding = -1;
    rejects(EINVAL, st);
}

TEST_F(MetadataRejects, TruncatedNestedTypes) {
    rejects(EINVAL, {array("a", 2, 8, false)[0]}); // element missing
    rejects(EINVAL, {integer("n", 8, false), sequenceOf("s", "n", 8, false)[0]});
    rejects(EINVAL, {enumField("e", "sel", enumId_)[0]}); // container missing
    rejects(EINVAL, {structField("st", 3), integer("a", 8, false)});
    rejects(EINVAL, {structField("st", 0xFFFFFFFFu)});
    Fields v = enumField("tag", "sel", enumId_, 8);
    v.push_back(variantField("v", "tag", 2));
    v.push_back(integer("_a", 8, false));
    rejects(EINVAL, v);
    Fields huge = enumField("tag", "sel", enumId_, 8);
    huge.push_back(variantField("v", "tag", 0xFFFFFFFFu));
    rejects(EINVAL, huge);
}

TEST_F(MetadataRejects, NonIntegerElementsAndContainers) {
    Fields a = array("a", 2, 8, false);
    a[1] = string("");
    rejects(EINVAL, a);
    Fields s = sequence("s", 8, false);
    s[2] = floating("", true);
    rejects(EINVAL, s);
    Fields e = enumField("e", "sel", enumId_);
    e[1] = string("");
    rejects(EINVAL, e);
}

TEST_F(MetadataRejects, SequenceLengthMustBeAnEarlierUnsignedInteger) {
    rejects(EINVAL, sequenceOf("s", "nowhere", 8, false));
    rejects(EINVAL, concat({{integer("n", 32, true)}, sequenceOf("s", "n", 8, false)}));
    rejects(EINVAL, concat({{string("n")}, sequenceOf("s", "n", 8, false)}));
    rejects(EINVAL, concat({sequenceOf("s", "n", 8, false), {integer("n", 32, false)}}));
    // A length inside an earlier struct is out of reach.
    rejects(EINVAL, concat({{structField("st", 1), integer("n", 8, false)},
                            sequenceOf("s", "n", 8, false)}));
    // An unsigned enum may count.
    Fields ok = concat({enumField("n", "sel", enumId_, 8, false), sequenceOf("s", "n", 8, false)});
    EXPECT_NO_THROW(r_.registerEvent(chan_, "ok", 0, "", ok, ""));
}

TEST_F(MetadataRejects, VariantRules) {
    auto variant = [&](std::string_view tag, std::vector<lttng_ust_ctl_field> choices,
                       Fields before) {
        Fields f = std::move(before);
        f.push_back(variantField("v", tag, static_cast<std::uint32_t>(choices.size())));
        f.insert(f.end(), choices.begin(), choices.end());
        return f;
    };
    const Fields tag = enumField("tag", "sel", enumId_, 8);
    EXPECT_NO_THROW(r_.registerEvent(
        chan_, "ok", 0, "", variant("tag", {integer("a", 8, false), string("b")}, tag), ""));
    rejects(EINVAL, variant("none", {integer("a", 8, false)}, tag)); // no such tag
    rejects(EINVAL,
            variant("x", {integer("a", 8, false)}, {integer("x", 8, false)})); // not an enum
    rejects(EINVAL, variant("tag", {integer("c", 8, false)}, tag));            // not a label
    rejects(EINVAL, variant("tag", {integer("a", 8, false), integer("a", 16, false)}, tag));
    rejects(EINVAL, variant("tag", {}, tag));
    // babeltrace2 refuses an option "_a" after one named "_a" (identifier "__a").
    const lttng_ust_ctl_enum_entry both[] = {entry("_a", 0, 0), entry("__a", 1, 1)};
    const auto bothId = r_.registerEnum("both", both);
    rejects(EINVAL, variant("t2", {integer("_a", 8, false), integer("a", 8, false)},
                            enumField("t2", "both", bothId, 8)));
    EXPECT_NO_THROW(
        r_.registerEvent(chan_, "ok2", 0, "",
                         variant("t2", {integer("a", 8, false), integer("_a", 8, false)},
                                 enumField("t2", "both", bothId, 8)),
                         ""));
    // An enum without labels selects nothing.
    const auto none = r_.registerEnum("none", {});
    rejects(EINVAL, variant("t3", {integer("a", 8, false)}, enumField("t3", "none", none, 8)));
    Fields aligned = array("a", 2, 8, false, false, 8);
    rejects(EINVAL, variant("tag", {aligned[0], aligned[1]}, tag));
}

TEST_F(MetadataRejects, Bounds) {
    RegistryLimits limits;
    limits.maxFields = 4;
    limits.maxDepth = 2;
    limits.maxNameBytes = 16;
    limits.maxSignatureBytes = 8;
    limits.maxUriBytes = 8;
    limits.maxEventsPerChannel = 2;
    limits.maxChannels = 1;
    TraceRegistry r(sampleTraceInfo(), limits);
    const auto chan = r.createChannel();
    expectError(E2BIG, [&] { r.createChannel(); });
    r.registerChannel(chan, {});
    const Fields five(5, integer("x", 8, false));
    expectError(E2BIG, [&] { r.registerEvent(chan, "e", 0, "", five, ""); });
    const Fields deep{structField("a", 1), structField("b", 1), structField("c", 1),
                      integer("x", 8, false)};
    expectError(E2BIG, [&] { r.registerEvent(chan, "e", 0, "", deep, ""); });
    const Fields twoDeep{structField("a", 1), structField("b", 1), integer("x", 8, false)};
    EXPECT_NO_THROW(r.registerEvent(chan, "e", 0, "", twoDeep, ""));
    expectError(E2BIG, [&] { r.registerEvent(chan, std::string(17, 'n'), 0, "", {}, ""); });
    expectError(E2BIG, [&] { r.registerEvent(chan, "e", 0, std::string(9, 's'), {}, ""); });
    expectError(E2BIG, [&] { r.registerEvent(chan, "e", 0, "", {}, std::string(9, 'u')); });
    expectError(E2BIG, [&] {
        r.registerEvent(chan, "e", 0, "", Fields{integer(std::string(17, 'f'), 8, false)}, "");
    });
    expectError(EINVAL, [&] { r.registerEvent(chan, std::string_view("a\0b", 3), 0, "", {}, ""); });
    EXPECT_EQ(r.registerEvent(chan, "f", 0, "", {}, ""), 1u);
    expectError(E2BIG, [&] { r.registerEvent(chan, "g", 0, "", {}, ""); });
    EXPECT_EQ(r.registerEvent(chan, "f", 0, "", {}, ""), 1u); // known events still answer
}

TEST(MetadataBounds, MetadataSizeIsBoundedIncludingWaitingEvents) {
    const std::size_t preamble = TraceRegistry(sampleTraceInfo()).text().size();
    RegistryLimits limits;
    limits.maxMetadataBytes = preamble + 400;
    TraceRegistry r(sampleTraceInfo(), limits);
    const auto chan = r.createChannel();
    std::uint32_t n = 0;
    try {
        for (;; ++n)
            r.registerEvent(chan, "event" + std::to_string(n), 0, "", {}, "");
    } catch (const MetadataError& e) {
        EXPECT_EQ(e.errnoValue(), E2BIG);
    }
    EXPECT_GT(n, 0u);
    EXPECT_LT(n, 10u);
    // The stream block no longer fits either: the channel stays unregistered.
    expectError(E2BIG, [&] { r.registerChannel(chan, {}); });
    EXPECT_EQ(r.text().size(), preamble);
}

// Random field lists (valid-looking and garbage) never crash the registry:
// each one is either accepted or refused with a MetadataError.
TEST(MetadataRobustness, RandomFieldListsNeverCrash) {
    TraceRegistry r(sampleTraceInfo());
    const auto chan = r.createChannel();
    r.registerChannel(chan, {});
    const lttng_ust_ctl_enum_entry e[] = {entry("_a", 0, 0), entry("_b", 1, 1)};
    r.registerEnum("sel", e);
    std::mt19937 rng(12345);
    const std::vector<Fields> pieces = {{integer("a", 8, false)},
                                        {integer("n", 32, false)},
                                        {string("b")},
                                        {floating("d", true)},
                                        array("arr", 3, 8, true),
                                        sequenceOf("s", "n", 8, false),
                                        enumField("tag", "sel", 0, 8),
                                        {variantField("v", "tag", 2)},
                                        {structField("st", 2)},
                                        {structField("", 0)},
                                        {variantField("v", "tag", 1, 0, true)}};
    std::size_t accepted = 0;
    for (int i = 0; i < 10000; ++i) {
        Fields f;
        const int count = static_cast<int>(rng() % 8);
        for (int k = 0; k < count; ++k) {
            const Fields& p = pieces[rng() % pieces.size()];
            f.insert(f.end(), p.begin(), p.end());
        }
        // Flip some bytes now and then.
        if (!f.empty() && rng() % 3 == 0) {
            auto* bytes = reinterpret_cast<unsigned char*>(f.data());
            for (int k = 0; k < 4; ++k)
                bytes[rng() % (f.size() * sizeof(lttng_ust_ctl_field))] =
                    static_cast<unsigned char>(rng());
        }
        try {
            r.registerEvent(chan, "fuzz" + std::to_string(i), 0, "", f, "");
            ++accepted;
        } catch (const MetadataError&) {
        }
    }
    EXPECT_GT(accepted, 100u);
}

// A trace whose app left before registering a channel: the consumer still
// writes that channel's last packets, so the stream class must be declared
// (without event context) or readers refuse the whole trace.
TEST(MetadataChannels, UnregisteredChannelsAreDeclaredOnceWithoutContext) {
    TraceRegistry r(sampleTraceInfo());
    const std::uint32_t first = r.createChannel();
    const std::uint32_t second = r.createChannel();
    r.registerChannel(first, {});
    EXPECT_FALSE(r.isChannelRegistered(second));
    EXPECT_EQ(r.declareUnregisteredChannels(), 1u);
    EXPECT_TRUE(r.isChannelRegistered(second));
    EXPECT_TRUE(contains(r.text(), "stream {\n\tid = " + std::to_string(second) + ";\n"));
    EXPECT_FALSE(contains(r.text(), "event.context"));
    const std::size_t size = r.text().size();
    EXPECT_EQ(r.declareUnregisteredChannels(), 0u);
    EXPECT_EQ(r.text().size(), size);
}
