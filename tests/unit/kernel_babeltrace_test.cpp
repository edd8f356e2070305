// The proof that the kernel TSDL (kernel_metadata.hpp) and the byte layout of
// kernel_records.hpp agree: ftrace records built by hand after the real
// format files, turned into CTF event payloads by their EventConversion
// steps (applied here as kernel_records.hpp specifies them), framed in one
// packet exactly as kernel_records.hpp lays it out, and read back by
// babeltrace2 with the generated metadata.
#include "kernel/kernel_metadata.hpp"
#include "kernel_ctf_test_support.hpp"
#include "kernel_fixtures.hpp"

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

using ktest::appendLe;
using ktest::Bytes;
using ktest::convert;
using ktest::Event;
using ktest::putLe;

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
    EventFormat format_; // a copy: callers pass temporaries
    Bytes bytes_;
};

TEST(KernelBabeltrace, MetadataAndLayoutAgree) {
    int status = -1;
    ktest::run("babeltrace2 --version", status);
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
    ch.contextMask = kr::ContextTid | kr::ContextProcname;
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
    const Bytes p = ktest::packet(t.uuid, 0, 0, 0, events);

    ktest::TempDir dir;
    ktest::writeFile(dir.path() / "metadata", m.tsdl.data(), m.tsdl.size());
    ktest::writeFile(dir.path() / "channel0_0", p.data(), p.size());
    const std::string out = ktest::run(
        "TZ=UTC babeltrace2 --clock-gmt --no-delta '" + dir.path().string() + "'", status);
    ASSERT_EQ(status, 0) << out << "\n" << m.tsdl;
    const auto expect = [&](const std::string& part) {
        EXPECT_NE(out.find(part), std::string::npos) << "missing: " << part << "\n" << out;
    };
    expect("[00:00:01.000000000] kernelhost lttng_statedump_start: { cpu_id = 0 }, { tid = 42, "
           "procname = "
           "\"worker\" }, { }");
    expect("[00:00:01.000000100] kernelhost sched_switch: { cpu_id = 0 }, { tid = 42, procname = "
           "\"worker\" }, "
           "{ prev_comm = \"bash\", prev_tid = 1234, prev_prio = -120, prev_state = 1, "
           "next_comm = \"swapper/0\", next_tid = 0, next_prio = 20 }");
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

// lttng-modules' layouts (lttng_kernel_layout.hpp) as babeltrace2 reads
// them: rwbs an integer, fork's tgids, inodes and vtids sequence, comm
// strings as char[16], prio - 100, gfp_t as 32 bits. The conversion is
// kernel_ctf_test_support.hpp's (no ProcessInfo: a tid is its own tgid).
TEST(KernelBabeltrace, LttngModulesLayouts) {
    int status = -1;
    ktest::run("babeltrace2 --version", status);
    if (status != 0)
        GTEST_SKIP() << "babeltrace2 not installed";
    const EventFormat fork = ktest::format("sched_process_fork");
    const EventFormat issue = ktest::format("block_rq_issue");
    const EventFormat wakeup = ktest::format("sched_wakeup");
    const EventFormat alloc = ktest::format("mm_page_alloc");

    KernelTraceDescription t;
    t.hostname = "kernelhost";
    t.clock.offset = 0;
    KernelChannelDescription ch;
    ch.name = "channel0";
    ch.contextMask = kr::ContextTid;
    ch.events = {{"sched", 4, fork}, {"block", 5, issue}, {"sched", 6, wakeup}, {"kmem", 7, alloc}};
    t.channels.push_back(ch);
    const KernelMetadata m = generateKernelMetadata(t);
    const std::vector<kr::EventConversion> conv = m.channels[0].conversions();

    Record r1(fork);
    r1.setDynamicString("parent_comm", "bash");
    r1.set("parent_pid", 1000);
    r1.setDynamicString("child_comm", "a-very-long-thread-name");
    r1.set("child_pid", 1001);
    Record r2(issue);
    r2.set("dev", (254u << 20) | 1);
    r2.set("sector", 2048);
    r2.set("nr_sector", 8);
    r2.set("bytes", 4096);
    r2.setText("rwbs", "WS");
    r2.setText("comm", "kworker/0:1");
    r2.set("ioprio", 0x4004);
    r2.setDynamicString("cmd", "");
    Record r3(wakeup);
    r3.setText("comm", "sleeper");
    r3.set("pid", 77);
    r3.set("prio", 120);
    r3.set("target_cpu", 1);
    Record r4(alloc);
    r4.set("pfn", 0x1234);
    r4.set("order", 0);
    r4.set("gfp_flags", 0x152cc0);
    r4.set("migratetype", 1);

    std::vector<Event> events = {
        {4, 1'000'000'000, convert(conv[0], r1.bytes())},
        {5, 1'000'000'100, convert(conv[1], r2.bytes())},
        {6, 1'000'000'200, convert(conv[2], r3.bytes())},
        {7, 1'000'000'300, convert(conv[3], r4.bytes())},
    };
    for (Event& e : events)
        e.context = Bytes{42, 0, 0, 0};
    const Bytes p = ktest::packet(t.uuid, 0, 0, 0, events, 0, 0);
    ktest::TempDir dir;
    ktest::writeFile(dir.path() / "metadata", m.tsdl.data(), m.tsdl.size());
    ktest::writeFile(dir.path() / "channel0_0", p.data(), p.size());
    const std::string out = ktest::run("babeltrace2 '" + dir.path().string() + "'", status);
    ASSERT_EQ(status, 0) << out << "\n" << m.tsdl;
    const auto expect = [&](const std::string& part) {
        EXPECT_NE(out.find(part), std::string::npos) << "missing: " << part << "\n" << out;
    };
    expect("sched_process_fork: { cpu_id = 0 }, { tid = 42 }, { parent_comm = \"bash\", "
           "parent_tid = 1000, parent_pid = 1000, parent_ns_inum = 0, child_comm = "
           "\"a-very-long-thr\", child_tid = 1001, _vtids_length = 1, vtids = [ [0] = 1001 ], "
           "child_pid = 1001, child_ns_inum = 0 }");
    expect("block_rq_issue: { cpu_id = 0 }, { tid = 42 }, { dev = 266338305, sector = 2048, "
           "nr_sector = 8, bytes = 4096, tid = 42, rwbs = 33, comm = \"kworker/0:1\", "
           "ioprio = 16388, cmd = \"\" }");
    expect("sched_wakeup: { cpu_id = 0 }, { tid = 42 }, { comm = \"sleeper\", tid = 77, "
           "prio = 20, target_cpu = 1 }");
    expect("kmem_mm_page_alloc: { cpu_id = 0 }, { tid = 42 }, { pfn = 0x1234, order = 0, "
           "gfp_flags = 1387712, migratetype = 1 }");
    EXPECT_EQ(out.find("WARNING"), std::string::npos) << out;
}

// Every context field, a second stream class, and the statedump events with
// their fields at the head of a CPU's stream, as the consumer writes them.
TEST(KernelBabeltrace, ContextsStatedumpAndTwoStreamClasses) {
    int status = -1;
    ktest::run("babeltrace2 --version", status);
    if (status != 0)
        GTEST_SKIP() << "babeltrace2 not installed";

    KernelTraceDescription t;
    t.uuid[0] = 1;
    t.hostname = "h";
    KernelChannelDescription a;
    a.name = "a";
    a.streamId = 0;
    a.contextMask = kr::kAllContexts;
    a.withStatedump = true;
    a.events = {{"irq", 4, ktest::format("irq_handler_entry")}};
    KernelChannelDescription b;
    b.name = "b";
    b.streamId = 1;
    b.contextMask = 0;
    b.events = {{"syscalls", 4, ktest::format("sys_exit_write")}};
    t.channels = {a, b};
    const KernelMetadata m = generateKernelMetadata(t);

    Bytes all;
    appendLe(all, 100, 4);                            // _tid
    appendLe(all, 99, 4);                             // _pid
    const char procname[16] = "abcdefghijklmno";      // 15 characters, NUL
    all.insert(all.end(), procname, procname + 16);   // _procname
    appendLe(all, static_cast<std::uint32_t>(-5), 4); // _prio
    appendLe(all, 1, 4);                              // _cpu_id
    appendLe(all, 2, 4);                              // __callstack_kernel_length
    appendLe(all, 0xffffffff81000010, 8);             // _callstack_kernel
    appendLe(all, 0xffffffff81000020, 8);
    appendLe(all, 0, 4); // __callstack_user_length: an empty stack

    Record irq(ktest::format("irq_handler_entry"));
    irq.set("irq", 16);
    irq.setDynamicString("name", "eth0");
    const EventFormat exitFormat = ktest::format("sys_exit_write");
    Record exit(exitFormat);
    exit.set("__syscall_nr", 1);
    exit.set("ret", static_cast<std::uint64_t>(-11));

    Bytes process;
    for (const std::uint32_t v : {100u, 100u, 99u, 99u, 1u, 1u})
        appendLe(process, v, 4); // tid vtid pid vpid ppid vppid
    const char name[16] = "bash";
    process.insert(process.end(), name, name + 16);
    for (const std::uint32_t v : {0u, 0u, 0u, 5u, 1u})
        appendLe(process, v, 4); // type mode submode status cpu
    Bytes fd;
    for (const std::uint32_t v : {99u, 3u, 0x8002u, 0x1fu})
        appendLe(fd, v, 4); // pid fd flags fmode
    const std::string file = "/tmp/x";
    fd.insert(fd.end(), file.begin(), file.end());
    fd.push_back(0);

    const auto ev = [&](std::uint16_t id, std::uint64_t ts, Bytes payload) {
        ktest::Event e{id, ts, std::move(payload)};
        e.context = all;
        return e;
    };
    Bytes cpu1 = ktest::packet(
        t.uuid, 0, 1, 1,
        {ev(kr::kStatedumpStartId, 10, {}), ev(kr::kStatedumpProcessStateId, 11, process),
         ev(kr::kStatedumpFileDescriptorId, 12, fd), ev(kr::kStatedumpEndId, 13, {})},
        0, 0);
    const Bytes next = ktest::packet(
        t.uuid, 0, 1, 1, {ev(4, 20, convert(m.channels[0].conversions()[0], irq.bytes()))}, 1, 0);
    cpu1.insert(cpu1.end(), next.begin(), next.end());
    ktest::Event plain{4, 30, convert(m.channels[1].conversions()[0], exit.bytes())};
    plain.context = Bytes{};
    const Bytes second = ktest::packet(t.uuid, 1, 0, 0, {plain}, 0, 0);

    ktest::TempDir dir;
    ktest::writeFile(dir.path() / "metadata", m.tsdl.data(), m.tsdl.size());
    ktest::writeFile(dir.path() / "a_1", cpu1.data(), cpu1.size());
    ktest::writeFile(dir.path() / "b_0", second.data(), second.size());
    const std::string out = ktest::run(
        "TZ=UTC babeltrace2 --clock-gmt --no-delta '" + dir.path().string() + "'", status);
    ASSERT_EQ(status, 0) << out << "\n" << m.tsdl;
    const std::string ctx =
        "{ tid = 100, pid = 99, procname = \"abcdefghijklmno\", prio = -5, cpu_id = 1, "
        "_callstack_kernel_length = 2, callstack_kernel = [ [0] = 0xFFFFFFFF81000010, [1] = "
        "0xFFFFFFFF81000020 ], _callstack_user_length = 0, callstack_user = [ ] }";
    const auto expect = [&](const std::string& part) {
        EXPECT_NE(out.find(part), std::string::npos) << "missing: " << part << "\n" << out;
    };
    expect("lttng_statedump_process_state: { cpu_id = 1 }, " + ctx +
           ", { tid = 100, vtid = 100, pid = 99, vpid = 99, ppid = 1, vppid = 1, name = \"bash\", "
           "type = 0, mode = 0, submode = 0, status = 5, cpu = 1 }");
    expect("lttng_statedump_file_descriptor: { cpu_id = 1 }, " + ctx +
           ", { pid = 99, fd = 3, flags = 32770, fmode = 31, filename = \"/tmp/x\" }");
    expect("lttng_statedump_end: { cpu_id = 1 }, " + ctx + ", { }");
    expect("irq_handler_entry: { cpu_id = 1 }, " + ctx + ", { irq = 16, name = \"eth0\" }");
    expect("syscall_exit_write: { cpu_id = 0 }, { ret = -11 }");
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 6) << out;
}

} // namespace
