// RecordCounter (consumer/record_counter.hpp) on packets written field by
// field as our TSDL lays them out, with layouts that came the whole way:
// lttng_ust_ctl_field lists -> TraceRegistry -> takeNewLayouts -> encode ->
// decode -> declare. Also hostile packets, and babeltrace2's own count of a
// real trace.
#include "metadata/record_layout_compiler.hpp"
#include "metadata/trace_registry.hpp"
#include "metadata_test_support.hpp"
#include "record_counter.hpp"
#include "record_test_support.hpp"

#include <array>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <random>
#include <sys/wait.h>

using namespace tracectl;
using namespace tracectl::consumer;
using namespace mdtest;
using rltest::BitWriter;
using Stop = CountResult::Stop;

namespace {

// One channel of one trace: the registry on the daemon's side, the counter
// on the consumer's.
struct Trace {
    explicit Trace(metadata::TraceInfo info)
        : registry(std::move(info)), chan(registry.createChannel()),
          abi(metadata::layoutAbi(registry.info().abi)),
          format(record_layout::PacketFormat::fromAbi(abi)), counter(format) {}

    // What the daemon would send after a registration.
    void sync() {
        for (const auto& [id, layouts] : registry.takeNewLayouts()) {
            EXPECT_EQ(id, chan);
            for (const std::string& chunk : record_layout::encodeChunks(layouts, 1u << 20))
                counter.declare(record_layout::decode(chunk));
        }
    }

    std::uint32_t event(std::string_view name, const Fields& fields) {
        const std::uint32_t id = registry.registerEvent(chan, name, 1, "", fields, "");
        sync();
        return id;
    }

    BitWriter packet() const {
        BitWriter w(abi.bigEndian);
        rltest::writePacketStart(w, abi);
        return w;
    }

    void header(BitWriter& w, std::uint32_t id, bool extended = false) const {
        rltest::largeHeader(w, abi, id, 12345, extended);
    }

    metadata::TraceRegistry registry;
    std::uint32_t chan;
    record_layout::Abi abi;
    record_layout::PacketFormat format;
    RecordCounter counter;
};

metadata::TraceInfo info32BigEndian() {
    metadata::TraceInfo info = sampleTraceInfo();
    info.abi.bitsPerLong = 32;
    info.abi.uint64Alignment = 32;
    info.abi.longAlignment = 32;
    info.abi.byteOrder = metadata::ByteOrder::Big;
    return info;
}

void expectEnd(const CountResult& r, std::uint64_t records, std::uint64_t content) {
    EXPECT_EQ(r.stop, Stop::End) << r.why;
    EXPECT_EQ(r.records, records);
    EXPECT_EQ(r.stopBit, content);
    EXPECT_TRUE(r.why.empty());
}

void expectMalformed(const CountResult& r, std::uint64_t records, std::uint64_t at,
                     const std::string& why) {
    EXPECT_EQ(r.stop, Stop::Malformed);
    EXPECT_EQ(r.records, records);
    EXPECT_EQ(r.stopBit, at);
    EXPECT_NE(r.why.find(why), std::string::npos) << r.why;
}

// The packet cut to its first `bytes` bytes, in a buffer of exactly that
// size (so that AddressSanitizer sees any read past it).
std::vector<std::byte> cut(const BitWriter& w, std::size_t bytes) {
    return {w.data().begin(), w.data().begin() + static_cast<std::ptrdiff_t>(bytes)};
}

} // namespace

TEST(RecordCounter, FixedEventsWithCompactAndExtendedHeaders) {
    Trace t(sampleTraceInfo());
    t.registry.registerChannel(t.chan, {});
    const std::uint32_t ints =
        t.event("p:two_ints", Fields{integer("a", 32, true), integer("b", 32, true)});
    const std::uint32_t byte = t.event("p:byte", Fields{integer("c", 8, false)});

    BitWriter w = t.packet();
    EXPECT_EQ(w.pos(), 672u);
    for (int i = 0; i < 3; ++i) {
        t.header(w, ints);
        w.put(static_cast<std::uint32_t>(-i), 32, 32);
        w.put(7, 32, 32);
    }
    t.header(w, byte); // 16 + 32 + 8 bits, then the next header aligns on 16
    w.put(0xab, 8, 8);
    t.header(w, ints, true); // extended: id 0 in 32 bits, 64-bit timestamp at 64
    w.put(1, 32, 32);
    w.put(2, 32, 32);
    t.header(w, byte);
    w.put(0xcd, 8, 8);
    const std::uint64_t content = rltest::finishPacket(w, t.format);

    expectEnd(t.counter.count(w.bytes(), 0, content), 6, content);
    EXPECT_EQ(t.counter.contentSize(w.bytes()), content);
    // The exact bytes, nothing after content_size.
    const auto exact = cut(w, content / 8);
    expectEnd(t.counter.count(exact, 0, content), 6, content);
    // An empty packet.
    expectEnd(t.counter.count(w.bytes(), 0, t.format.firstRecordBit), 0, t.format.firstRecordBit);
}

TEST(RecordCounter, ContextStringsSequencesAndPaddings) {
    Trace t(sampleTraceInfo());
    t.registry.registerChannel(t.chan, Fields{integer("vtid", 32, true), string("procname")});
    // msg, an 8-bit length, its 16-bit elements, then a 64-bit integer; and
    // an aligned sequence (8-byte padding before it) of a 32-bit length.
    const std::uint32_t ev =
        t.event("p:msg", concat({Fields{string("msg")}, sequence("vals", 16, false, 8),
                                 Fields{integer("tail", 64, false)}}));
    const std::uint32_t padded =
        t.event("p:padded", concat({Fields{integer("n", 32, false), integer("x", 8, false)},
                                    sequenceOf("s", "n", 8, false, false, 8)}));

    BitWriter w = t.packet();
    const auto context = [&](std::int32_t tid, std::string_view name) {
        w.align(32);
        w.put(static_cast<std::uint32_t>(tid), 32, 32);
        w.cstring(name);
    };
    const std::vector<std::vector<std::uint16_t>> vals{
        {}, {1}, {1, 2, 3}, std::vector<std::uint16_t>(200, 9)};
    for (std::size_t i = 0; i < vals.size(); ++i) {
        t.header(w, ev, i == 2);
        context(100 + static_cast<int>(i), i % 2 ? "app" : "");
        w.align(64);                         // the payload struct: its largest member is 64-bit
        w.cstring(std::string(i * 13, 'x')); // up to 39 bytes: past the quick look
        w.put(vals[i].size(), 8, 8);
        w.align(16);
        for (const std::uint16_t v : vals[i])
            w.put(v, 16, 16);
        w.put(0x1122334455667788, 64, 64);
    }
    for (std::uint32_t n : {0u, 5u}) {
        t.header(w, padded);
        context(-1, "p");
        w.align(64); // the padding struct {} align(64) makes the payload 64-aligned
        w.put(n, 32, 32);
        w.put(1, 8, 8);
        w.align(64);
        for (std::uint32_t k = 0; k < n; ++k)
            w.put(k, 8, 8);
    }
    const std::uint64_t content = rltest::finishPacket(w, t.format);
    expectEnd(t.counter.count(w.bytes(), 0, content), 6, content);
    const auto exact = cut(w, content / 8);
    expectEnd(t.counter.count(exact, 0, content), 6, content);
}

TEST(RecordCounter, ThirtyTwoBitBigEndianTrace) {
    Trace t(info32BigEndian());
    t.registry.registerChannel(t.chan, Fields{integer("vpid", 32, true)});
    // A length stored in the opposite byte order, and a uint64_t aligned as
    // i386 aligns it (lttng-ust sends lttng_alignof(uint64_t) * 8 = 32).
    const auto u64 = integer("l", 64, false, 10, false, lttng_ust_ctl_encode_none, 32);
    const std::uint32_t ev = t.event("p:ev", concat({Fields{integer("n", 16, false, 10, true)},
                                                     sequenceOf("s", "n", 8, false), Fields{u64}}));
    EXPECT_EQ(t.format.firstRecordBit, 640u);

    BitWriter w = t.packet();
    EXPECT_EQ(w.pos(), 640u);
    for (std::uint16_t n : {std::uint16_t{3}, std::uint16_t{0}, std::uint16_t{260}}) {
        t.header(w, ev, n == 0); // extended: aligned on 32 only in this ABI
        w.put(7, 32, 32);        // vpid
        w.align(32);             // payload: the 64-bit integer aligns on 32 here
        w.put(n, 16, 16, true);
        for (std::uint16_t k = 0; k < n; ++k)
            w.put(k, 8, 8);
        w.put(42, 64, 32);
    }
    const std::uint64_t content = rltest::finishPacket(w, t.format);
    expectEnd(t.counter.count(w.bytes(), 0, content), 3, content);
    EXPECT_EQ(t.counter.contentSize(w.bytes()), content);
    EXPECT_EQ(t.counter.contentSize(cut(w, 55)), std::nullopt);
    EXPECT_EQ(t.counter.contentSize(cut(w, 56)), content);

    // Read in the trace's own order, 260 (0x0104) would be 0x0401 = 1025
    // elements: past the end.
    Trace wrong(info32BigEndian());
    wrong.registry.registerChannel(wrong.chan, Fields{integer("vpid", 32, true)});
    wrong.event("p:ev", concat({Fields{integer("n", 16, false)}, sequenceOf("s", "n", 8, false),
                                Fields{u64}}));
    const CountResult r = wrong.counter.count(w.bytes(), 0, content);
    EXPECT_NE(r.stop, Stop::End);
}

TEST(RecordCounter, AppContextVariantsOfEveryChoice) {
    Trace t(sampleTraceInfo());
    const std::uint64_t enumId = t.registry.registerEnum("dynamic_type_enum", dynamicTypeEntries());
    t.registry.registerChannel(t.chan, dynamicContext("$app.prov:ctx", enumId));
    const std::uint32_t ev = t.event("p:ev", Fields{integer("x", 16, false)});
    t.sync();

    BitWriter w = t.packet();
    // Tag values: none, int8, int16, int32, int64, uint8 .. uint64, float,
    // double, string.
    const unsigned sizes[] = {0, 8, 16, 32, 64, 8, 16, 32, 64, 32, 64};
    for (int tag = 0; tag < 12; ++tag) {
        t.header(w, ev);
        w.put(static_cast<std::uint64_t>(tag), 8, 8);
        if (tag == 11)
            w.cstring("a string");
        else if (sizes[tag] != 0)
            w.put(0x55, sizes[tag], sizes[tag]);
        w.put(0xffff, 16, 16);
    }
    std::uint64_t content = rltest::finishPacket(w, t.format);
    expectEnd(t.counter.count(w.bytes(), 0, content), 12, content);

    // A tag no choice has.
    BitWriter bad = t.packet();
    t.header(bad, ev);
    bad.put(0, 8, 8);
    bad.put(1, 16, 16);
    const std::uint64_t second = bad.pos();
    t.header(bad, ev);
    bad.put(12, 8, 8);
    bad.put(1, 16, 16);
    content = rltest::finishPacket(bad, t.format);
    expectMalformed(t.counter.count(bad.bytes(), 0, content), 1, second,
                    "variant tag selects no choice");
}

TEST(RecordCounter, UnknownEventsResumeOnceDeclared) {
    Trace t(sampleTraceInfo());
    const std::uint32_t a = t.event("p:a", Fields{integer("x", 32, false)});
    ASSERT_EQ(a, 0u);

    BitWriter w = t.packet();
    t.header(w, a);
    w.put(1, 32, 32);
    const std::uint64_t second = w.pos();
    t.header(w, 1); // not registered yet
    w.cstring("late");
    t.header(w, a);
    w.put(2, 32, 32);
    t.header(w, 70000, true); // an id past the table
    const std::uint64_t content = rltest::finishPacket(w, t.format);

    // No context program yet (the channel is not registered): nothing counted.
    CountResult r = t.counter.count(w.bytes(), 0, content);
    EXPECT_EQ(r.stop, Stop::UnknownEvent);
    EXPECT_EQ(r.records, 0u);
    EXPECT_EQ(r.stopBit, t.format.firstRecordBit);

    t.registry.registerChannel(t.chan, {});
    t.sync();
    r = t.counter.count(w.bytes(), r.stopBit, content);
    EXPECT_EQ(r.stop, Stop::UnknownEvent);
    EXPECT_EQ(r.records, 1u);
    EXPECT_EQ(r.stopBit, second);
    EXPECT_FALSE(t.counter.knows(1));

    EXPECT_EQ(t.event("p:b", Fields{string("s")}), 1u);
    EXPECT_TRUE(t.counter.knows(1));
    r = t.counter.count(w.bytes(), r.stopBit, content);
    EXPECT_EQ(r.stop, Stop::UnknownEvent);
    EXPECT_EQ(r.records, 2u);
    const std::uint64_t last = r.stopBit;

    // Resuming at the same place again counts the same, changes nothing.
    EXPECT_EQ(t.counter.count(w.bytes(), second, content).records, 2u);
    EXPECT_EQ(t.counter.count(w.bytes(), last, content).records, 0u);
}

TEST(RecordCounter, DeclareRefusesConflictsAndChangesNothing) {
    RecordCounter c(record_layout::PacketFormat::fromAbi({}));
    record_layout::ChannelLayouts l;
    l.context = record_layout::Program{};
    l.events.emplace_back(
        0, record_layout::Program{{{record_layout::OpKind::Skip, 0, 0, 8, 8}}, {}, 0});
    c.declare(l);
    c.declare(l); // the same again: fine
    record_layout::ChannelLayouts other;
    other.events.emplace_back(1, record_layout::Program{});
    other.events.emplace_back(0, record_layout::Program{});
    EXPECT_THROW(c.declare(other), record_layout::LayoutError);
    EXPECT_FALSE(c.knows(1));
    record_layout::ChannelLayouts ctx;
    ctx.context = l.events[0].second;
    EXPECT_THROW(c.declare(ctx), record_layout::LayoutError);
    record_layout::ChannelLayouts far;
    far.events.emplace_back(RecordCounter::kMaxEventIds, record_layout::Program{});
    EXPECT_THROW(c.declare(far), record_layout::LayoutError);
    EXPECT_TRUE(c.hasContext());
    EXPECT_TRUE(c.knows(0));
}

TEST(RecordCounter, HostilePacketsAreMalformedNeverOutOfBounds) {
    Trace t(sampleTraceInfo());
    t.registry.registerChannel(t.chan, {});
    const std::uint32_t fixed = t.event("p:fixed", Fields{integer("x", 64, false)});
    const std::uint32_t text = t.event("p:text", Fields{string("s")});
    const std::uint32_t seq = t.event("p:seq", sequence("v", 32, false, 32));
    const std::uint64_t first = t.format.firstRecordBit;

    BitWriter w = t.packet();
    t.header(w, fixed);
    w.put(1, 64, 64);
    const std::uint64_t textAt = w.pos();
    t.header(w, text);
    w.cstring("hello");
    const std::uint64_t seqAt = w.pos();
    t.header(w, seq);
    w.put(2, 32, 32);
    w.put(1, 32, 32);
    w.put(2, 32, 32);
    const std::uint64_t content = rltest::finishPacket(w, t.format);
    expectEnd(t.counter.count(w.bytes(), 0, content), 3, content);

    // Arguments that do not fit the span or the packet.
    const auto exact = cut(w, content / 8);
    expectMalformed(t.counter.count(exact, 0, content + 8), 0, first, "past the end of the packet");
    expectMalformed(t.counter.count(cut(w, 40), 0, content), 0, first,
                    "past the end of the packet");
    expectMalformed(t.counter.count(w.bytes(), 0, first - 1), 0, first,
                    "before the end of the packet context");
    expectMalformed(t.counter.count(w.bytes(), content + 8, content), 0, content + 8,
                    "start past content_size");
    expectMalformed(t.counter.count(w.bytes(), 8, content), 0, 8, "inside the packet header");
    expectMalformed(t.counter.count({}, 0, 0), 0, first, "before the end of the packet context");

    // content_size inside a header, a fixed payload, a string, a sequence.
    expectMalformed(t.counter.count(cut(w, first / 8 + 2), 0, first + 16), 0, first,
                    "event header past content_size");
    expectMalformed(t.counter.count(cut(w, first / 8 + 10), 0, first + 80), 0, first,
                    "field past content_size");
    expectMalformed(t.counter.count(cut(w, (textAt + 48) / 8 + 3), 0, textAt + 48 + 24), 1, textAt,
                    "string without its NUL byte");
    expectMalformed(t.counter.count(cut(w, seqAt / 8 + 12), 0, seqAt + 96), 2, seqAt,
                    "sequence length past content_size");

    // A sequence length of 2^32 - 1 in an otherwise fine packet.
    BitWriter big = t.packet();
    t.header(big, seq);
    big.put(0xffffffff, 32, 32);
    big.put(1, 32, 32);
    const std::uint64_t bigContent = rltest::finishPacket(big, t.format);
    expectMalformed(t.counter.count(big.bytes(), 0, bigContent), 0, first,
                    "sequence length past content_size");

    // A string running to the end of the span with no NUL.
    BitWriter nonul = t.packet();
    t.header(nonul, text);
    for (int i = 0; i < 100; ++i)
        nonul.put('a', 8, 8);
    const std::uint64_t nonulContent = nonul.pos();
    nonul.patch(t.format.contentSizeBit, nonulContent, 64);
    const auto nonulExact = cut(nonul, nonulContent / 8);
    expectMalformed(t.counter.count(nonulExact, 0, nonulContent), 0, first,
                    "string without its NUL byte");
}

TEST(RecordCounter, RandomBytesNeverEscapeTheSpan) {
    Trace t(sampleTraceInfo());
    const std::uint64_t enumId = t.registry.registerEnum("dynamic_type_enum", dynamicTypeEntries());
    t.registry.registerChannel(t.chan, dynamicContext("$app.prov:ctx", enumId));
    t.event("p:a", Fields{integer("x", 32, false)});
    t.event("p:b", concat({Fields{string("s")}, sequence("v", 16, false, 8)}));
    t.event("p:c",
            concat({Fields{integer("n", 8, false)}, sequenceOf("w", "n", 64, false, false, 8)}));

    std::mt19937_64 rng(14);
    std::uint64_t ends = 0, unknown = 0, malformed = 0, records = 0;
    for (int round = 0; round < 2000; ++round) {
        BitWriter w = t.packet();
        const std::size_t bytes = 84 + rng() % 200;
        // Mostly small ids and tags, to get past the headers often.
        while (w.pos() < bytes * 8) {
            const std::uint64_t v = rng();
            w.put((v & 0xf0) != 0 ? v % 4 : v, 8, 8);
        }
        const std::vector<std::byte> exact = cut(w, bytes);
        const CountResult r = t.counter.count(exact, 0, bytes * 8);
        ASSERT_LE(r.stopBit, bytes * 8);
        ASSERT_GE(r.stopBit, t.format.firstRecordBit);
        records += r.records;
        switch (r.stop) {
        case Stop::End:
            ++ends;
            EXPECT_EQ(r.stopBit, bytes * 8);
            break;
        case Stop::UnknownEvent:
            ++unknown;
            break;
        case Stop::Malformed:
            ++malformed;
            EXPECT_FALSE(r.why.empty());
            break;
        }
    }
    // Each way out was taken, and records were counted.
    EXPECT_GT(unknown, 0u);
    EXPECT_GT(malformed, 0u);
    EXPECT_GT(records, 0u);
    (void)ends;
}

// --- babeltrace2 reads the same packet -------------------------------------

namespace {

std::string runCommand(const std::string& command, int& status) {
    std::string out;
    FILE* p = popen((command + " 2>&1").c_str(), "r");
    if (p == nullptr) {
        status = -1;
        return out;
    }
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0)
        out.append(buf.data(), n);
    const int st = pclose(p);
    status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
}

struct TempDir {
    TempDir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "tracectl-rc-XXXXXX").string();
        if (mkdtemp(tmpl.data()) == nullptr)
            throw std::runtime_error("mkdtemp failed");
        path = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    std::filesystem::path path;
};

void writeFile(const std::filesystem::path& p, const void* data, std::size_t size) {
    std::ofstream out(p, std::ios::binary);
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
    ASSERT_TRUE(out.good()) << p;
}

} // namespace

TEST(RecordCounter, CountsWhatBabeltraceReads) {
    int status = 0;
    runCommand("babeltrace2 --version", status);
    if (status != 0)
        GTEST_SKIP() << "babeltrace2 not installed";

    for (const bool i386 : {false, true}) {
        SCOPED_TRACE(i386 ? "32-bit big-endian" : "64-bit little-endian");
        Trace t(i386 ? info32BigEndian() : sampleTraceInfo());
        const std::uint64_t enumId =
            t.registry.registerEnum("dynamic_type_enum", dynamicTypeEntries());
        t.registry.registerChannel(t.chan, concat({Fields{integer("vtid", 32, true)},
                                                   dynamicContext("$app.prov:ctx", enumId)}));
        const std::uint32_t ints =
            t.event("p:ints", Fields{integer("a", 32, true), integer("b", 8, false)});
        const std::uint32_t msg = t.event(
            "p:msg", concat({Fields{string("s")}, sequence("v", 16, false, 32),
                             array("arr", 3, 8, false, true), Fields{floating("d", true)}}));

        BitWriter w = t.packet();
        const std::uint32_t seqAlign = 32;
        const std::uint32_t u64Align = 64; // what the fields say (mdtest's helpers)
        std::mt19937 rng(7);
        std::uint64_t written = 0;
        while (w.pos() < 3500 * 8) {
            const bool isMsg = rng() % 2 == 0;
            t.header(w, isMsg ? msg : ints, rng() % 5 == 0);
            w.align(32); // context: its largest member is 32-bit
            w.put(static_cast<std::uint32_t>(rng()), 32, 32);
            const unsigned tag = rng() % 12;
            w.put(tag, 8, 8);
            const unsigned sizes[] = {0, 8, 16, 32, 64, 8, 16, 32, 64, 32, 64};
            if (tag == 11) {
                w.cstring(std::string(rng() % 5, 'c'));
            } else if (sizes[tag] != 0) {
                const std::uint32_t a = sizes[tag] == 64 ? u64Align : sizes[tag];
                // A float or double must be a number babeltrace prints.
                w.put(tag >= 9 ? (sizes[tag] == 32 ? std::bit_cast<std::uint32_t>(1.5f)
                                                   : std::bit_cast<std::uint64_t>(2.5))
                               : 1,
                      sizes[tag], a);
            }
            if (isMsg) {
                w.align(u64Align); // the double is the largest member
                w.cstring(std::string(rng() % 9, 'm'));
                const unsigned n = rng() % 4;
                w.put(n, 32, seqAlign);
                w.align(16);
                for (unsigned k = 0; k < n; ++k)
                    w.put(k, 16, 16);
                w.put('a', 8, 8);
                w.put('b', 8, 8);
                w.put('c', 8, 8);
                w.put(std::bit_cast<std::uint64_t>(0.25), 64, u64Align);
            } else {
                w.align(32);
                w.put(static_cast<std::uint32_t>(-5), 32, 32);
                w.put(9, 8, 8);
            }
            ++written;
        }
        const std::uint64_t content = rltest::finishPacket(w, t.format, 4096);
        const CountResult r = t.counter.count(w.bytes(), 0, content);
        expectEnd(r, written, content);

        TempDir dir;
        writeFile(dir.path / "metadata", t.registry.text().data(), t.registry.text().size());
        writeFile(dir.path / "chan_0", w.data().data(), w.data().size());
        const std::string out =
            runCommand("babeltrace2 '" + dir.path.string() + "' | grep -c ' p:'", status);
        ASSERT_EQ(status, 0) << out;
        EXPECT_EQ(std::stoull(out), r.records) << out;
    }
}
