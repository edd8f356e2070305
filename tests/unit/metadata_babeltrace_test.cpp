// The reader check: a registry's TSDL plus one hand-encoded packet (the bytes
// lttng-ust's ring buffer writes: packet header, packet context, event
// headers, stream event context, payloads) form a CTF 1.8 trace that
// babeltrace2 reads back with the right events and values.
#include "metadata/trace_registry.hpp"
#include "metadata_test_support.hpp"

#include <array>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <sys/wait.h>
#include <vector>

using namespace tracectl::metadata;
using namespace mdtest;

namespace {

// Bytes of a CTF packet, written field by field with CTF alignment rules.
class PacketWriter {
public:
    explicit PacketWriter(bool bigEndian) : bigEndian_(bigEndian) {}

    void align(std::size_t bits) {
        const std::size_t bytes = bits / 8;
        if (bytes > 1)
            while (data_.size() % bytes != 0)
                data_.push_back(0);
    }
    // An integer of `bits` (8..64, whole bytes), aligned on its size.
    void uint(std::uint64_t v, unsigned bits, bool reverse = false) {
        align(bits);
        const bool big = bigEndian_ != reverse;
        const unsigned n = bits / 8;
        for (unsigned i = 0; i < n; ++i) {
            const unsigned shift = 8 * (big ? n - 1 - i : i);
            data_.push_back(static_cast<std::uint8_t>(v >> shift));
        }
    }
    void sint(std::int64_t v, unsigned bits) { uint(static_cast<std::uint64_t>(v), bits); }
    void f32(float v) { uint(std::bit_cast<std::uint32_t>(v), 32); }
    void f64(double v) { uint(std::bit_cast<std::uint64_t>(v), 64); }
    void bytes(std::string_view s) { data_.insert(data_.end(), s.begin(), s.end()); }
    void cstring(std::string_view s) {
        bytes(s);
        data_.push_back(0);
    }
    std::size_t size() const { return data_.size(); }
    void patch64(std::size_t at, std::uint64_t v) {
        for (unsigned i = 0; i < 8; ++i)
            data_[at + i] = static_cast<std::uint8_t>(v >> (8 * (bigEndian_ ? 7 - i : i)));
    }
    void padTo(std::size_t n) { data_.resize(n, 0); }
    const std::vector<std::uint8_t>& data() const { return data_; }

private:
    bool bigEndian_;
    std::vector<std::uint8_t> data_;
};

// Packet header and context as lttng-ust writes them; returns where
// content_size sits (packet_size follows it).
std::size_t writePacketStart(PacketWriter& w, const TraceInfo& info, std::uint32_t streamId,
                             std::uint64_t begin, std::uint64_t end) {
    w.uint(0xC1FC1FC1, 32);
    for (const auto b : info.uuid)
        w.uint(b, 8);
    w.uint(streamId, 32);
    w.uint(0, 64); // stream_instance_id
    w.uint(begin, 64);
    w.uint(end, 64);
    const std::size_t sizes = w.size();
    w.uint(0, 64);                   // content_size, patched
    w.uint(0, 64);                   // packet_size, patched
    w.uint(0, 64);                   // packet_seq_num
    w.uint(0, info.abi.bitsPerLong); // events_discarded
    w.uint(0, 32);                   // cpu_id
    return sizes;
}

void finishPacket(PacketWriter& w, std::size_t sizesAt) {
    constexpr std::size_t kPacketBytes = 4096;
    w.patch64(sizesAt, w.size() * 8);
    w.patch64(sizesAt + 8, kPacketBytes * 8);
    w.padTo(kPacketBytes);
}

// event_header_large, compact form (id < 65535, 32-bit timestamp).
void largeHeader(PacketWriter& w, std::uint16_t id, std::uint32_t ts) {
    w.uint(id, 16);
    w.uint(ts, 32);
}

// event_header_large, extended form.
void largeExtendedHeader(PacketWriter& w, std::uint32_t id, std::uint64_t ts) {
    w.uint(65535, 16);
    w.align(64); // the `extended` struct holds a 64-bit member
    w.uint(id, 32);
    w.uint(ts, 64);
}

class TempDir {
public:
    TempDir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "tracectl-md-XXXXXX").string();
        if (mkdtemp(tmpl.data()) == nullptr)
            throw std::runtime_error("mkdtemp failed");
        path_ = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

void writeFile(const std::filesystem::path& p, const void* data, std::size_t size) {
    std::ofstream out(p, std::ios::binary);
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
    ASSERT_TRUE(out.good()) << p;
}

struct CommandResult {
    int status = -1;
    std::string output;
};

CommandResult run(const std::string& command) {
    CommandResult r;
    FILE* p = popen((command + " 2>&1").c_str(), "r");
    if (p == nullptr)
        return r;
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0)
        r.output.append(buf.data(), n);
    const int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

bool haveBabeltrace() {
    return run("babeltrace2 --version").status == 0;
}

// Writes the registry's text and one packet; returns babeltrace2's output.
CommandResult readWithBabeltrace(const TempDir& dir, const TraceRegistry& registry,
                                 const PacketWriter& packet, const std::string& options = "") {
    writeFile(dir.path() / "metadata", registry.text().data(), registry.text().size());
    writeFile(dir.path() / "chan_0", packet.data().data(), packet.data().size());
    return run("TZ=UTC babeltrace2 --clock-gmt " + options + " '" + dir.path().string() + "'");
}

// Lines of `text` holding `part`.
std::size_t countLines(const std::string& text, const std::string& part) {
    std::size_t n = 0;
    for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
        ++n;
    return n;
}

} // namespace

TEST(MetadataBabeltrace, EveryFieldTypeDecodes) {
    if (!haveBabeltrace())
        GTEST_SKIP() << "babeltrace2 not installed";
    const TraceInfo info = sampleTraceInfo();
    TraceRegistry registry(info);

    const auto dyn = dynamicTypeEntries();
    const std::uint64_t dynId = registry.registerEnum("dynamic_type_enum", dyn);
    const lttng_ust_ctl_enum_entry states[] = {entry("ZERO", 0, 0), entry("RANGE", 1, 9),
                                               autoEntry("AUTO"), entry("NEG", -5, -2)};
    const std::uint64_t stateId = registry.registerEnum("prov_state", states);

    const std::uint32_t chan = registry.createChannel();
    const Fields allTypes = concat({
        {integer("s8", 8, true), integer("u8", 8, false), integer("s16", 16, true),
         integer("u16", 16, false), integer("s32", 32, true), integer("u32", 32, false),
         integer("s64", 64, true), integer("u64", 64, false), integer("hex", 32, false, 16),
         integer("oct", 16, false, 8), integer("net", 32, false, 10, true), floating("f", false),
         floating("d", true), string("s")},
        array("arr", 3, 16, true),
        array("txt", 8, 8, true, true),
        sequence("seq", 32, false),
        sequence("txtseq", 8, true, 32, true),
        enumField("state", "prov_state", stateId, 32, true),
        enumField("neg", "prov_state", stateId, 32, true),
        {structField("empty", 0)},
        array("al", 2, 8, false, false, 8),
    });
    // Registered before the channel, as lttng-ust does at session start.
    EXPECT_EQ(registry.registerEvent(chan, "prov:all_types", 13, "sig", allTypes, ""), 0u);
    const Fields odd{integer("", 8, false),
                     integer("", 8, false),
                     integer("struct", 8, false),
                     integer("Bool", 8, false),
                     integer("a.b", 8, false),
                     integer("a:b", 8, false),
                     integer("caf\xc3\xa9", 8, false),
                     integer("x\"y", 8, false),
                     integer("_z", 8, false),
                     integer("z", 8, false)};
    EXPECT_EQ(registry.registerEvent(chan, "prov:odd \"names\"", 4, "", odd, "uri:x"), 1u);
    EXPECT_EQ(registry.registerEvent(chan, "prov:empty", 0, "", {}, ""), 2u);
    const Fields ctx = concat({{integer("vpid", 32, true), string("procname")},
                               dynamicContext("$app.myprov:myctx", dynId)});
    registry.registerChannel(chan, ctx);

    PacketWriter w(false);
    const std::size_t sizes = writePacketStart(w, info, chan, 1000, 9000);

    // Event 0: every field type.
    w.align(16);
    largeHeader(w, 0, 1500);
    w.align(32); // event.context struct: its widest member is 32-bit
    w.sint(4242, 32);
    w.cstring("myapp");
    w.sint(11, 8); // tag: _string
    w.cstring("ctxval");
    w.align(64); // fields struct: its widest member is 64-bit
    w.sint(-5, 8);
    w.uint(250, 8);
    w.sint(-300, 16);
    w.uint(60000, 16);
    w.sint(-70000, 32);
    w.uint(4000000000u, 32);
    w.sint(-5000000000LL, 64);
    w.uint(18000000000000000000ULL, 64);
    w.uint(0xdeadbeef, 32);
    w.uint(0755, 16);
    w.uint(0x01020304, 32, true); // network byte order
    w.f32(1.5F);
    w.f64(-2.25);
    w.cstring("hello");
    w.sint(1, 16);
    w.sint(-2, 16);
    w.sint(3, 16);
    w.bytes(std::string_view("abc\0\0\0\0\0", 8));
    w.uint(2, 64); // _seq_length
    w.uint(7, 32);
    w.uint(8, 32);
    w.uint(5, 32); // _txtseq_length
    w.bytes("world");
    w.sint(5, 32);  // state: RANGE
    w.sint(-3, 32); // neg: NEG
    w.align(64);    // _al_padding
    w.uint(9, 8);
    w.uint(10, 8);

    // Event 1: odd names, extended header.
    w.align(16);
    largeExtendedHeader(w, 1, 2500);
    w.align(32);
    w.sint(4242, 32);
    w.cstring("myapp");
    w.sint(3, 8); // tag: _int32
    w.sint(-77, 32);
    for (int v = 1; v <= 10; ++v)
        w.uint(static_cast<std::uint64_t>(v), 8);

    // Event 2: no payload, empty variant choice.
    w.align(16);
    largeHeader(w, 2, 3000);
    w.align(32);
    w.sint(4242, 32);
    w.cstring("myapp");
    w.sint(0, 8); // tag: _none
    finishPacket(w, sizes);

    TempDir dir;
    const CommandResult r = readWithBabeltrace(dir, registry, w);
    ASSERT_EQ(r.status, 0) << r.output << "\n--- metadata:\n" << registry.text();
    const std::string& out = r.output;
    SCOPED_TRACE(out);
    EXPECT_EQ(countLines(out, "\n"), 3u);

    // Timestamps: clock offset 1700000000 s = 2023-11-14 22:13:20 UTC.
    EXPECT_NE(out.find("[22:13:20.000001500]"), std::string::npos);
    EXPECT_NE(out.find("[22:13:20.000002500]"), std::string::npos);
    EXPECT_NE(out.find("[22:13:20.000003000]"), std::string::npos);
    EXPECT_NE(out.find(" testhost prov:all_types: "), std::string::npos);

    EXPECT_NE(
        out.find("{ vpid = 4242, procname = \"myapp\", _app_myprov_myctx_tag = ( \"_string\" : "
                 "container = 11 ), _app_myprov_myctx = { \"ctxval\" } }"),
        std::string::npos);
    EXPECT_NE(out.find("{ s8 = -5, u8 = 250, s16 = -300, u16 = 60000, s32 = -70000, "
                       "u32 = 4000000000, s64 = -5000000000, u64 = 18000000000000000000, "
                       "hex = 0xDEADBEEF, oct = 0755, net = 16909060, f = 1.5, "
                       "d = -2.25, s = \"hello\", arr = [ [0] = 1, [1] = -2, [2] = 3 ], "
                       "txt = \"abc\", _seq_length = 2, seq = [ [0] = 7, [1] = 8 ], "
                       "_txtseq_length = 5, txtseq = \"world\", "
                       "state = ( \"RANGE\" : container = 5 ), "
                       "neg = ( \"NEG\" : container = -3 ), empty = { }, "
                       "al_padding = { }, al = [ [0] = 9, [1] = 10 ] }"),
              std::string::npos);

    EXPECT_NE(out.find("prov:odd \"names\": { cpu_id = 0 }, { vpid = 4242, procname = \"myapp\", "
                       "_app_myprov_myctx_tag = ( \"_int32\" : container = 3 ), "
                       "_app_myprov_myctx = { -77 } }, "
                       "{  = 1, _1 = 2, struct = 3, Bool_ = 4, a_b = 5, a_b_1 = 6, caf__ = 7, "
                       "x_y = 8, _z = 9, z_1 = 10 }"),
              std::string::npos);
    EXPECT_NE(out.find("prov:empty: { cpu_id = 0 }, { vpid = 4242, procname = \"myapp\", "
                       "_app_myprov_myctx_tag = ( \"_none\" : container = 0 ), "
                       "_app_myprov_myctx = { { } } }, { }"),
              std::string::npos);
}

TEST(MetadataBabeltrace, TraceEnvAndClockAsReadersSeeThem) {
    if (!haveBabeltrace())
        GTEST_SKIP() << "babeltrace2 not installed";
    if (run("/usr/bin/python3 -c 'import bt2'").status != 0)
        GTEST_SKIP() << "python3-bt2 not installed";
    const TraceInfo info = sampleTraceInfo(true);
    TraceRegistry registry(info);
    const std::uint32_t chan = registry.createChannel();
    registry.registerChannel(chan, {});
    registry.registerEvent(chan, "p:e", 13, "", Fields{integer("x", 32, false)}, "");
    // A negative loglevel (not written) must not make the trace unreadable.
    registry.registerEvent(chan, "p:neg", -1, "", {}, "");

    PacketWriter w(false);
    const std::size_t sizes = writePacketStart(w, info, chan, 100, 200);
    w.align(16);
    largeHeader(w, 0, 150);
    w.uint(7, 32);
    finishPacket(w, sizes);

    TempDir dir;
    TempDir scriptDir;
    writeFile(dir.path() / "metadata", registry.text().data(), registry.text().size());
    writeFile(dir.path() / "chan_0", w.data().data(), w.data().size());
    const std::string script =
        "import bt2, sys\n"
        "it = bt2.TraceCollectionMessageIterator(sys.argv[1])\n"
        "for m in it:\n"
        "    if type(m) is bt2._StreamBeginningMessageConst:\n"
        "        t = m.stream.trace\n"
        "        for k in sorted(t.environment):\n"
        "            print('env', k, t.environment[k])\n"
        "        cc = m.stream.cls.default_clock_class\n"
        "        print('clock', cc.name, cc.frequency, cc.offset.seconds, "
        "cc.offset.cycles, cc.uuid)\n"
        "    elif type(m) is bt2._EventMessageConst:\n"
        "        print('event', m.event.name, m.event.cls.log_level,\n"
        "              m.event.payload_field['x'], m.default_clock_snapshot.ns_from_origin)\n";
    writeFile(scriptDir.path() / "read.py", script.data(), script.size());
    const CommandResult r =
        run("TZ=UTC /usr/bin/python3 '" + (scriptDir.path() / "read.py").string() + "' '" +
            dir.path().string() + "'");
    ASSERT_EQ(r.status, 0) << r.output;
    const std::string& out = r.output;
    SCOPED_TRACE(out);
    for (const char* line :
         {"env architecture_bit_width 64\n", "env domain ust\n", "env hostname testhost\n",
          "env procname myapp\n", "env trace_creation_datetime 20231114T221320+0000\n",
          "env trace_name mysession\n", "env tracer_buffering_id 4242\n",
          "env tracer_buffering_scheme pid\n", "env tracer_major 2\n", "env tracer_minor 13\n",
          "env tracer_name lttng-ust\n", "env tracer_patchlevel 5\n", "env vpid 4242\n",
          "env vpid_datetime 20231114T221500+0000\n",
          "clock monotonic 1000000000 1700000000 0 "
          "11223344-5566-7788-99aa-bbccddeeff00\n",
          "event p:e 13 7 1700000000000000150\n"})
        EXPECT_NE(out.find(line), std::string::npos) << line;
}

TEST(MetadataBabeltrace, BigEndianThirtyTwoBitTrace) {
    if (!haveBabeltrace())
        GTEST_SKIP() << "babeltrace2 not installed";
    TraceInfo info = sampleTraceInfo();
    info.abi = Abi{32, 8, 16, 32, 32, 32, ByteOrder::Big};
    TraceRegistry registry(info);
    const std::uint32_t chan = registry.createChannel();
    registry.registerChannel(chan, {});
    registry.registerEvent(chan, "p:be", 0, "",
                           Fields{integer("x", 32, true), integer("le", 32, false, 16, true),
                                  integer("big", 64, false)},
                           "");
    PacketWriter w(true);
    const std::size_t sizes = writePacketStart(w, info, chan, 100, 200);
    w.align(16);
    largeHeader(w, 0, 150);
    w.align(64);
    w.sint(-1234, 32);
    w.uint(0xcafe, 32, true); // little-endian field in a big-endian trace
    w.uint(1ULL << 40, 64);
    finishPacket(w, sizes);

    TempDir dir;
    const CommandResult r = readWithBabeltrace(dir, registry, w);
    ASSERT_EQ(r.status, 0) << r.output << "\n--- metadata:\n" << registry.text();
    EXPECT_NE(
        r.output.find("p:be: { cpu_id = 0 }, { x = -1234, le = 0xCAFE, big = 1099511627776 }"),
        std::string::npos)
        << r.output;
}
