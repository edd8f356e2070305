// The proof that the kernel TSDL (kernel_metadata.hpp) and the byte layout of
// kernel_records.hpp agree: ftrace records built by hand after the real
// format files, turned into CTF event payloads by their EventConversion
// steps (applied here as kernel_records.hpp specifies them), framed in one
// packet exactly as kernel_records.hpp lays it out, and read back by
// babeltrace2 with the generated metadata.
#include "kernel/kernel_metadata.hpp"
#include "kernel_test_support.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace tracectl::kernel;
namespace kr = tracectl::kernel_records;

namespace {

using Bytes = std::vector<std::uint8_t>;

void putLe(Bytes& b, std::size_t at, std::uint64_t v, std::size_t n) {
    if (b.size() < at + n)
        b.resize(at + n, 0);
    for (std::size_t i = 0; i < n; ++i)
        b[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}
void appendLe(Bytes& b, std::uint64_t v, std::size_t n) {
    putLe(b, b.size(), v, n);
}
std::uint32_t getU32(const Bytes& b, std::size_t at) {
    return static_cast<std::uint32_t>(b[at]) | static_cast<std::uint32_t>(b[at + 1]) << 8 |
           static_cast<std::uint32_t>(b[at + 2]) << 16 |
           static_cast<std::uint32_t>(b[at + 3]) << 24;
}

// An ftrace record of `format`: the fixed part, then the dynamic data that
// the __data_loc / __rel_loc fields point at.
class Record {
public:
    explicit Record(const EventFormat& format) : format_(format) {
        std::uint32_t fixed = 0;
        for (const FormatField& f : format.fields)
            fixed = std::max(fixed, f.offset + f.size);
        bytes_.resize(fixed, 0);
        set("common_type", format.id);
        set("common_pid", 42);
    }
    const FormatField& field(const std::string& name) const {
        for (const FormatField& f : format_.fields)
            if (f.name == name)
                return f;
        throw std::runtime_error("no field " + name);
    }
    void set(const std::string& name, std::uint64_t v) {
        const FormatField& f = field(name);
        putLe(bytes_, f.offset, v, f.size);
    }
    void setText(const std::string& name, const std::string& text) {
        const FormatField& f = field(name);
        for (std::size_t i = 0; i < f.size; ++i)
            bytes_[f.offset + i] = i < text.size() ? static_cast<std::uint8_t>(text[i]) : 0;
    }
    // Appends `data` to the dynamic area and points field `name` at it.
    void setDynamic(const std::string& name, const Bytes& data) {
        const FormatField& f = field(name);
        const std::size_t at = bytes_.size();
        bytes_.insert(bytes_.end(), data.begin(), data.end());
        const std::uint32_t offset = f.isRelLoc ? static_cast<std::uint32_t>(at - (f.offset + 4))
                                                : static_cast<std::uint32_t>(at);
        putLe(bytes_, f.offset, (static_cast<std::uint64_t>(data.size()) << 16) | offset, 4);
    }
    void setDynamicString(const std::string& name, const std::string& s) {
        Bytes b(s.begin(), s.end());
        b.push_back(0);
        setDynamic(name, b);
    }
    const Bytes& bytes() const { return bytes_; }

private:
    const EventFormat& format_;
    Bytes bytes_;
};

// kernel_records.hpp's steps, applied to one record.
Bytes convert(const kr::EventConversion& c, const Bytes& rec) {
    EXPECT_GE(rec.size(), c.minSize);
    Bytes out;
    for (const kr::Step& s : c.steps) {
        if (s.kind == kr::StepKind::Copy) {
            out.insert(out.end(), rec.begin() + s.offset, rec.begin() + s.offset + s.size);
            continue;
        }
        const std::uint32_t loc = getU32(rec, s.offset);
        const bool rel =
            s.kind == kr::StepKind::RelLocString || s.kind == kr::StepKind::RelLocSequence;
        const std::size_t start = (loc & 0xFFFF) + (rel ? s.offset + 4u : 0u);
        const std::size_t length = loc >> 16;
        const bool inside = start + length <= rec.size();
        if (s.kind == kr::StepKind::DataLocString || s.kind == kr::StepKind::RelLocString) {
            for (std::size_t i = 0; inside && i < length && rec[start + i] != 0; ++i)
                out.push_back(rec[start + i]);
            out.push_back(0);
        } else {
            const std::size_t count = inside ? length / s.elementSize : 0;
            appendLe(out, count, 4);
            out.insert(out.end(), rec.begin() + static_cast<std::ptrdiff_t>(start),
                       rec.begin() + static_cast<std::ptrdiff_t>(start + count * s.elementSize));
        }
    }
    return out;
}

struct Event {
    std::uint16_t id;
    std::uint64_t timestamp;
    Bytes payload;
};

// One packet of the kernel_records.hpp layout, context tid + procname.
Bytes packet(const kr::EventConversion* unused, const tracectl::metadata::Uuid& uuid,
             std::uint32_t streamId, std::uint64_t instance, std::uint32_t cpu,
             const std::vector<Event>& events) {
    (void)unused;
    Bytes b;
    appendLe(b, kr::kPacketMagic, 4);
    b.insert(b.end(), uuid.begin(), uuid.end());
    appendLe(b, streamId, 4);
    appendLe(b, instance, 8);
    appendLe(b, events.front().timestamp, 8);
    appendLe(b, events.back().timestamp, 8);
    const std::size_t sizes = b.size();
    appendLe(b, 0, 8); // content_size
    appendLe(b, 0, 8); // packet_size
    appendLe(b, 0, 8); // packet_seq_num
    appendLe(b, 3, 8); // events_discarded
    appendLe(b, cpu, 4);
    EXPECT_EQ(b.size(), kr::kPacketPreambleSize);
    for (const Event& e : events) {
        appendLe(b, e.id, 2);
        appendLe(b, e.timestamp, 8);
        appendLe(b, 42, 4); // _tid
        const char procname[16] = "worker";
        b.insert(b.end(), procname, procname + 16);
        b.insert(b.end(), e.payload.begin(), e.payload.end());
    }
    putLe(b, sizes, b.size() * 8, 8);
    putLe(b, sizes + 8, b.size() * 8, 8);
    return b;
}

std::string run(const std::string& command, int& status) {
    std::string out;
    FILE* p = popen((command + " 2>&1").c_str(), "r");
    if (p == nullptr)
        return out;
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0)
        out.append(buf.data(), n);
    const int st = pclose(p);
    status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
}

void writeFile(const std::filesystem::path& p, const void* data, std::size_t size) {
    std::ofstream out(p, std::ios::binary);
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
    ASSERT_TRUE(out.good()) << p;
}

class TempDir {
public:
    TempDir() {
        std::string t = (std::filesystem::temp_directory_path() / "kernel-bt-XXXXXX").string();
        if (::mkdtemp(t.data()) == nullptr)
            throw std::runtime_error("mkdtemp");
        path_ = t;
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

TEST(KernelBabeltrace, MetadataAndLayoutAgree) {
    int status = -1;
    run("babeltrace2 --version", status);
    if (status != 0)
        GTEST_SKIP() << "babeltrace2 not installed";

    const EventFormat sw = ktest::format("sched_switch");
    const EventFormat exec = ktest::format("sched_process_exec");
    const EventFormat dma = ktest::format("dma_map_sg");
    const EventFormat rel = ktest::format("foo_rel_loc");
    const EventFormat write = ktest::format("sys_enter_write");

    KernelTraceDescription t;
    for (std::size_t i = 0; i < 16; ++i)
        t.uuid[i] = static_cast<std::uint8_t>(0xA0 + i);
    t.hostname = "kernelhost";
    t.sysname = "Linux";
    t.kernelRelease = "6.18.0";
    t.kernelVersion = "#1";
    t.sessionName = "kernel-session";
    t.creationTime = 1700000000;
    t.clock.offset = 0;
    KernelChannelDescription ch;
    ch.name = "channel0";
    ch.streamId = 0;
    ch.contextMask = kr::kContextTid | kr::kContextProcname;
    ch.withStatedump = true;
    ch.events = {{"sched", 4, sw},
                 {"sched", 5, exec},
                 {"dma", 6, dma},
                 {"sample", 7, rel},
                 {"syscalls", 8, write}};
    t.channels.push_back(ch);
    const KernelMetadata m = generateKernelMetadata(t);
    const std::vector<kr::EventConversion> conv = m.channels[0].conversions();

    Record r1(sw);
    r1.setText("prev_comm", "bash");
    r1.set("prev_pid", 1234);
    r1.set("prev_prio", static_cast<std::uint64_t>(-20));
    r1.set("prev_state", 1);
    r1.setText("next_comm", "swapper/0");
    r1.set("next_pid", 0);
    r1.set("next_prio", 120);

    Record r2(exec);
    r2.setDynamicString("filename", "/usr/bin/true");
    r2.set("pid", 777);
    r2.set("old_pid", 776);

    Record r3(dma);
    r3.setDynamicString("device", "0000:00:1f.2");
    r3.set("full_nents", 2);
    r3.set("full_ents", 2);
    r3.set("truncated", 1);
    Bytes phys;
    appendLe(phys, 0x1000, 8);
    appendLe(phys, 0x2000, 8);
    r3.setDynamic("phys_addrs", phys);
    r3.setDynamic("dma_addrs", {});
    Bytes lengths;
    appendLe(lengths, 512, 4);
    appendLe(lengths, 4096, 4);
    appendLe(lengths, 7, 4);
    r3.setDynamic("lengths", lengths);
    r3.set("dir", 1);
    r3.set("attrs", 0x20);

    Record r4(rel);
    r4.setDynamicString("foo", "relative");
    r4.set("bar", 99);
    Bytes mask;
    appendLe(mask, 0x5, 8);
    r4.setDynamic("bitmask", mask);
    r4.setDynamic("cpumask", {0x03, 0x00});

    Record r5(write);
    r5.set("__syscall_nr", 1);
    r5.set("fd", 1);
    r5.set("buf", 0x7FFD0000);
    r5.set("count", 13);

    // The statedump's lttng_statedump_start (no fields) shares the stream class.
    const std::vector<Event> events = {
        {kr::kStatedumpStartId, 1'000'000'000, {}},
        {4, 1'000'000'100, convert(conv[0], r1.bytes())},
        {5, 1'000'000'200, convert(conv[1], r2.bytes())},
        {6, 1'000'000'300, convert(conv[2], r3.bytes())},
        {7, 1'000'000'400, convert(conv[3], r4.bytes())},
        {8, 1'000'000'500, convert(conv[4], r5.bytes())},
    };
    const Bytes p = packet(nullptr, t.uuid, 0, 0, 0, events);

    TempDir dir;
    writeFile(dir.path() / "metadata", m.tsdl.data(), m.tsdl.size());
    writeFile(dir.path() / "channel0_0", p.data(), p.size());
    const std::string out =
        run("TZ=UTC babeltrace2 --clock-gmt --no-delta '" + dir.path().string() + "'", status);
    ASSERT_EQ(status, 0) << out << "\n" << m.tsdl;
    const auto expect = [&](const std::string& part) {
        EXPECT_NE(out.find(part), std::string::npos) << "missing: " << part << "\n" << out;
    };
    expect("[00:00:01.000000000] kernelhost lttng_statedump_start: { cpu_id = 0 }, { tid = 42, "
           "procname = "
           "\"worker\" }, { }");
    expect("[00:00:01.000000100] kernelhost sched_switch: { cpu_id = 0 }, { tid = 42, procname = "
           "\"worker\" }, "
           "{ prev_comm = \"bash\", prev_tid = 1234, prev_prio = -20, prev_state = 1, "
           "next_comm = \"swapper/0\", next_tid = 0, next_prio = 120 }");
    expect("sched_process_exec: { cpu_id = 0 }, { tid = 42, procname = \"worker\" }, { filename = "
           "\"/usr/bin/true\", tid = 777, old_tid = 776 }");
    expect("dma_map_sg: { cpu_id = 0 }, { tid = 42, procname = \"worker\" }, { device = "
           "\"0000:00:1f.2\", "
           "full_nents = 2, full_ents = 2, truncated = 1, _phys_addrs_length = 2, phys_addrs = "
           "[ [0] = 4096, [1] = 8192 ], _dma_addrs_length = 0, dma_addrs = [ ], "
           "_lengths_length = 3, lengths = [ [0] = 512, [1] = 4096, [2] = 7 ], dir = 1, "
           "attrs = 0x20 }");
    expect("foo_rel_loc: { cpu_id = 0 }, { tid = 42, procname = \"worker\" }, { foo = "
           "\"relative\", bar = 99, "
           "_bitmask_length = 1, bitmask = [ [0] = 0x5 ], _cpumask_length = 2, cpumask = [ "
           "[0] = 0x3, [1] = 0x0 ] }");
    expect(
        "syscall_entry_write: { cpu_id = 0 }, { tid = 42, procname = \"worker\" }, { fd = 1, buf = "
        "0x7FFD0000, count = 13 }");
    // events_discarded = 3 in the packet: babeltrace2 reports discarded events.
    expect("WARNING: Tracer may have discarded events");
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 7) << out; // the warning, 6 events
}

} // namespace
