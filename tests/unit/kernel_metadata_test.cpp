// The kernel trace's conversion steps and TSDL (src/daemon/kernel/kernel_metadata.hpp)
// for the real format files of tests/unit/data/kernel.
#include "ip_event_fields.hpp"
#include "kernel/kernel_host.hpp"
#include "kernel/kernel_metadata.hpp"
#include "kernel_fixtures.hpp"
#include "metadata/trace_environment.hpp"
#include "metadata/tsdl_text.hpp"

#include <gtest/gtest.h>

using namespace tracectl::kernel;
namespace kr = tracectl::kernel_records;
using kr::Step;
using kr::StepKind;

namespace {

Step copy(std::uint16_t offset, std::uint16_t size) {
    return {StepKind::Copy, offset, size, 1};
}
Step dataLocString(std::uint16_t offset) {
    return {StepKind::DataLocString, offset, 4, 1};
}
Step relLocString(std::uint16_t offset) {
    return {StepKind::RelLocString, offset, 4, 1};
}
Step dataLocSequence(std::uint16_t offset, std::uint16_t element) {
    return {StepKind::DataLocSequence, offset, 4, element};
}
Step relLocSequence(std::uint16_t offset, std::uint16_t element) {
    return {StepKind::RelLocSequence, offset, 4, element};
}

kr::EventConversion conversion(const std::string& system, const std::string& event,
                               std::uint16_t ctfId = 4) {
    return computeConversion(ktest::format(event), ctfId, lttngNaming(system, event));
}

// The conversion generateKernelMetadata() makes: with the event's layout.
kr::EventConversion laidOut(const std::string& system, const std::string& event,
                            std::uint16_t ctfId = 4) {
    return computeConversion(ktest::format(event), ctfId, lttngNaming(system, event),
                             lttngLayout(system, event));
}

struct Expected {
    const char* system;
    const char* event;
    std::uint16_t ftraceId;
    std::uint16_t minSize;
    std::vector<Step> steps;
};

TEST(KernelConversion, ExactSteps) {
    const Expected cases[] = {
        // Every field follows the previous one: one copy.
        {"sched", "sched_switch", 372, 64, {copy(8, 56)}},
        {"sched", "sched_process_exec", 365, 20, {dataLocString(8), copy(12, 8)}},
        {"sched",
         "sched_process_fork",
         366,
         24,
         {dataLocString(8), copy(12, 4), dataLocString(16), copy(20, 4)}},
        // __syscall_nr (8..12) dropped; the arguments are 8-byte slots, of
        // which those of a narrower C type keep their low bytes (write's
        // `unsigned int fd`: 4).
        {"syscalls", "sys_enter_write", 840, 40, {copy(16, 4), copy(24, 16)}},
        {"syscalls", "sys_exit_write", 839, 24, {copy(16, 8)}},
        // filename is a user string (lttng-modules' ctf_user_string).
        {"syscalls",
         "sys_enter_openat",
         782,
         48,
         {copy(16, 4), {kr::StepKind::UserString, 24, 8, 1}, copy(32, 4), copy(40, 2)}},
        {"raw_syscalls", "sys_enter", 443, 64, {copy(8, 56)}},
        {"net", "net_dev_xmit", 2306, 28, {copy(8, 16), dataLocString(24)}},
        {"net", "netif_receive_skb", 2303, 24, {copy(8, 12), dataLocString(20)}},
        {"irq", "irq_handler_entry", 225, 16, {copy(8, 4), dataLocString(12)}},
        // A gap (12..16) splits the copy.
        {"block", "block_rq_issue", 2104, 64, {copy(8, 4), copy(16, 44), dataLocString(60)}},
        {"dma",
         "dma_map_sg",
         431,
         48,
         {dataLocString(8), copy(12, 9), dataLocSequence(24, 8), dataLocSequence(28, 8),
          dataLocSequence(32, 4), copy(36, 12)}},
        {"ipi", "ipi_send_cpumask", 353, 32, {dataLocSequence(8, 1), copy(16, 16)}},
        {"sample",
         "foo_rel_loc",
         1999,
         24,
         {relLocString(8), copy(12, 4), relLocSequence(16, 8), relLocSequence(20, 1)}},
    };
    for (const Expected& e : cases) {
        SCOPED_TRACE(e.event);
        const kr::EventConversion c = conversion(e.system, e.event, 9);
        EXPECT_EQ(c.ftraceId, e.ftraceId);
        EXPECT_EQ(c.ctfId, 9);
        EXPECT_EQ(c.minSize, e.minSize);
        EXPECT_EQ(c.steps, e.steps);
    }
}

KernelTraceDescription trace() {
    KernelTraceDescription t;
    for (std::size_t i = 0; i < 16; ++i)
        t.uuid[i] = static_cast<std::uint8_t>(i);
    t.hostname = "host";
    t.sysname = "Linux";
    t.kernelRelease = "6.18.0";
    t.kernelVersion = "#1 SMP";
    t.sessionName = "s\"1";
    t.creationTime = 0;
    t.clock.offset = 1234;
    t.clock.uuid = tracectl::metadata::Uuid{};
    KernelChannelDescription ch;
    ch.name = "channel0";
    ch.streamId = 0;
    ch.contextMask = kr::kAllContexts;
    ch.withStatedump = true;
    ch.events.push_back({"sched", 4, ktest::format("sched_switch")});
    ch.events.push_back({"sched", 5, ktest::format("sched_process_exec")});
    ch.events.push_back({"syscalls", 6, ktest::format("sys_enter_write")});
    ch.events.push_back({"dma", 7, ktest::format("dma_map_sg")});
    ch.events.push_back({"net", 8, ktest::format("netif_receive_skb")});
    t.channels.push_back(ch);
    KernelChannelDescription second;
    second.name = "second";
    second.streamId = 1;
    second.contextMask = 0;
    second.events.push_back({"irq", 4, ktest::format("irq_handler_entry")});
    t.channels.push_back(second);
    return t;
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(KernelMetadata, Preamble) {
    const KernelMetadata m = generateKernelMetadata(trace());
    EXPECT_EQ(m.tsdl.rfind("/* CTF 1.8 */\n", 0), 0u);
    EXPECT_TRUE(has(m.tsdl, "\tuuid = \"00010203-0405-0607-0809-0a0b0c0d0e0f\";\n"
                            "\tbyte_order = le;\n"));
    EXPECT_TRUE(has(m.tsdl, "\thostname = \"host\";\n"
                            "\tdomain = \"kernel\";\n"
                            "\tsysname = \"Linux\";\n"
                            "\tkernel_release = \"6.18.0\";\n"
                            "\tkernel_version = \"#1 SMP\";\n"
                            "\ttracer_name = \"lttng-modules\";\n"
                            "\ttracer_major = 2;\n"
                            "\ttracer_minor = 13;\n"));
    EXPECT_TRUE(has(m.tsdl, "\ttrace_name = \"s\\\"1\";\n"));
    EXPECT_TRUE(has(m.tsdl, "clock {\n\tname = \"monotonic\";\n"
                            "\tuuid = \"00000000-0000-0000-0000-000000000000\";\n"
                            "\tdescription = \"Monotonic Clock\";\n"
                            "\tfreq = 1000000000; /* Frequency, in Hz */\n"));
    EXPECT_TRUE(has(m.tsdl, "\toffset = 1234;\n"));
    EXPECT_TRUE(has(m.tsdl, "map = clock.monotonic.value;"));
}

TEST(KernelMetadata, StreamClasses) {
    const KernelMetadata m = generateKernelMetadata(trace());
    EXPECT_TRUE(has(m.tsdl, "stream {\n\tid = 0;\n\tevent.header := struct {\n"
                            "\t\tuint16_t id;\n\t\tuint64_clock_monotonic_t timestamp;\n\t};\n"));
    EXPECT_TRUE(has(m.tsdl, "\t\tuint64_t events_discarded;\n\t\tuint32_t cpu_id;\n\t};\n"
                            "\tevent.context := struct {\n"
                            "\t\tinteger { size = 32; align = 8; signed = 1; encoding = none; "
                            "base = 10; } _tid;\n"
                            "\t\tinteger { size = 32; align = 8; signed = 1; encoding = none; "
                            "base = 10; } _pid;\n"
                            "\t\tinteger { size = 8; align = 8; signed = 1; encoding = UTF8; "
                            "base = 10; } _procname[16];\n"));
    // Channel 1 has no context and no statedump.
    EXPECT_TRUE(has(m.tsdl, "stream {\n\tid = 1;\n"));
    EXPECT_TRUE(has(m.tsdl, "\t\tuint32_t cpu_id;\n\t};\n};\n"));
    EXPECT_TRUE(has(m.tsdl, "\tname = \"lttng_statedump_process_state\";\n\tid = 1;\n"
                            "\tstream_id = 0;\n"));
    EXPECT_FALSE(has(m.tsdl, "stream_id = 1;\n\tfields := struct {\n\t};"));
}

TEST(KernelMetadata, EventFields) {
    const KernelMetadata m = generateKernelMetadata(trace());
    const std::string i32 =
        "integer { size = 32; align = 8; signed = 1; encoding = none; base = 10; }";
    const std::string text =
        "integer { size = 8; align = 8; signed = 1; encoding = UTF8; base = 10; }";
    EXPECT_TRUE(has(m.tsdl, "event {\n\tname = \"sched_switch\";\n\tid = 4;\n\tstream_id = 0;\n"
                            "\tfields := struct {\n"
                            "\t\t" +
                                text +
                                " _prev_comm[16];\n"
                                "\t\t" +
                                i32 +
                                " _prev_tid;\n"
                                "\t\t" +
                                i32 +
                                " _prev_prio;\n"
                                "\t\tinteger { size = 64; align = 8; signed = 1; encoding = none; "
                                "base = 10; } _prev_state;\n"
                                "\t\t" +
                                text +
                                " _next_comm[16];\n"
                                "\t\t" +
                                i32 +
                                " _next_tid;\n"
                                "\t\t" +
                                i32 + " _next_prio;\n\t};\n};\n"));
    EXPECT_TRUE(has(m.tsdl, "\tname = \"sched_process_exec\";\n\tid = 5;\n\tstream_id = 0;\n"
                            "\tfields := struct {\n\t\tstring _filename;\n"
                            "\t\t" +
                                i32 + " _tid;\n\t\t" + i32 + " _old_tid;\n"));
    // Pointers and sizes: hex; __syscall_nr gone.
    EXPECT_TRUE(has(m.tsdl, "\tname = \"syscall_entry_write\";\n\tid = 6;\n\tstream_id = 0;\n"
                            "\tfields := struct {\n"
                            "\t\tinteger { size = 32; align = 8; signed = 0; encoding = none; "
                            "base = 10; } _fd;\n"
                            "\t\tinteger { size = 64; align = 8; signed = 0; encoding = none; "
                            "base = 16; } _buf;\n"
                            "\t\tinteger { size = 64; align = 8; signed = 0; encoding = none; "
                            "base = 10; } _count;\n\t};\n"));
    // __data_loc arrays: a u32 length, then the sequence; bool as u8.
    EXPECT_TRUE(has(m.tsdl, "\t\tinteger { size = 8; align = 8; signed = 0; encoding = none; "
                            "base = 10; } _truncated;\n"
                            "\t\tinteger { size = 32; align = 8; signed = 0; encoding = none; "
                            "base = 10; } __phys_addrs_length;\n"
                            "\t\tinteger { size = 64; align = 8; signed = 0; encoding = none; "
                            "base = 10; } _phys_addrs[ __phys_addrs_length ];\n"));
    EXPECT_TRUE(has(m.tsdl, "\tname = \"net_if_receive_skb\";\n"));
    EXPECT_TRUE(has(m.tsdl, "\tname = \"irq_handler_entry\";\n\tid = 4;\n\tstream_id = 1;\n"));

    ASSERT_EQ(m.channels.size(), 2u);
    ASSERT_EQ(m.channels[0].events.size(), 5u);
    EXPECT_EQ(m.channels[0].events[2].ctfName, "syscall_entry_write");
    EXPECT_EQ(m.channels[0].conversions()[0], laidOut("sched", "sched_switch", 4));
    EXPECT_EQ(m.channels[1].conversions()[0], conversion("irq", "irq_handler_entry", 4));
}

TEST(KernelMetadata, UnmappableFieldsAreKeptAsBytes) {
    EventFormat f = ktest::format("irq_handler_entry");
    f.fields.push_back(parseFieldLine("\tfield:u8 mac[ETH_ALEN];\toffset:16;\tsize:6;\tsigned:0;"));
    f.fields.push_back(parseFieldLine("\tfield:__u128 wide;\toffset:24;\tsize:16;\tsigned:0;"));
    f.fields.push_back(parseFieldLine("\tfield:char empty[0];\toffset:40;\tsize:0;\tsigned:0;"));
    KernelTraceDescription t = trace();
    t.channels.resize(1);
    t.channels[0].events = {{"irq", 4, f}};
    const KernelMetadata m = generateKernelMetadata(t);
    EXPECT_TRUE(has(m.tsdl, "base = 16; } _mac[6];\n"));
    EXPECT_TRUE(has(m.tsdl, "integer { size = 8; align = 8; signed = 0; encoding = none; "
                            "base = 16; } _wide[16];\n"));
    EXPECT_FALSE(has(m.tsdl, "_empty"));
    EXPECT_EQ(m.channels[0].events[0].conversion.steps,
              (std::vector<Step>{copy(8, 4), dataLocString(12), copy(16, 6), copy(24, 16)}));
}

TEST(KernelMetadata, CollidingNamesArePrefixed) {
    KernelTraceDescription t = trace();
    t.channels.resize(1);
    EventFormat other = ktest::format("sched_switch");
    t.channels[0].events = {{"sched", 4, ktest::format("sched_switch")}, {"mine", 5, other}};
    const KernelMetadata m = generateKernelMetadata(t);
    EXPECT_EQ(m.channels[0].events[1].ctfName, "mine_sched_switch");
    EXPECT_TRUE(has(m.tsdl, "\tname = \"mine_sched_switch\";\n\tid = 5;\n"));
    // Not in the table: ftrace's own field names.
    EXPECT_TRUE(has(m.tsdl, "_prev_pid;\n"));
}

TEST(KernelMetadata, RejectsBadDescriptions) {
    KernelTraceDescription t = trace();
    t.channels[1].streamId = 0;
    EXPECT_THROW(generateKernelMetadata(t), KernelMetadataError);
    t = trace();
    t.channels[0].events[1].ctfId = 4;
    EXPECT_THROW(generateKernelMetadata(t), KernelMetadataError);
    t = trace();
    t.channels[0].events[0].ctfId = 3;
    EXPECT_THROW(generateKernelMetadata(t), KernelMetadataError);
    t = trace();
    t.clock.name = "not an identifier";
    EXPECT_THROW(generateKernelMetadata(t), KernelMetadataError);
    t = trace();
    t.channels.clear();
    EXPECT_THROW(generateKernelMetadata(t), KernelMetadataError);
    t = trace();
    t.channels[0].events[0].format.fields.back().offset = 65534;
    EXPECT_THROW(generateKernelMetadata(t), KernelMetadataError);
    t = trace();
    t.channels[0].contextMask = 1u << 9;
    EXPECT_THROW(generateKernelMetadata(t), KernelMetadataError);
}

} // namespace

namespace {

std::string clockBlock(const std::string& tsdl) {
    const std::size_t begin = tsdl.find("clock {\n");
    const std::size_t end = tsdl.find("};\n", begin);
    return begin == std::string::npos || end == std::string::npos
               ? std::string()
               : tsdl.substr(begin, end + 3 - begin);
}

// babeltrace2 merges the kernel and UST traces only if both describe the
// same clock: the kernel clock block must be the UST one, byte for byte.
TEST(KernelMetadata, ClockIsTheUstClock) {
    KernelTraceDescription k = describeHost(tracectl::metadata::Uuid{}, "s", 0);
    EXPECT_FALSE(k.hostname.empty());
    EXPECT_EQ(k.sysname, "Linux");
    EXPECT_FALSE(k.kernelRelease.empty());
    k.channels.push_back({"channel0", 0, 0, false, {}, std::nullopt});
    tracectl::metadata::TraceInfo ust;
    ust.clock = k.clock;
    const std::string kernelClock = clockBlock(generateKernelMetadata(k).tsdl);
    EXPECT_FALSE(kernelClock.empty());
    EXPECT_EQ(kernelClock, clockBlock(tracectl::metadata::tracePreamble(ust)));
    EXPECT_NE(kernelClock.find("\tname = \"monotonic\";\n"), std::string::npos);
    if (k.clock.uuid) {
        EXPECT_NE(kernelClock.find(tracectl::metadata::uuidToString(*k.clock.uuid)),
                  std::string::npos);
    }
}

} // namespace

// Found by a fresh-user pass: with two kernel channels, an event enabled in
// the first one while tracing went in the middle of the metadata, which the
// consumer (append only) refused, and the trace became unreadable.
TEST(KernelMetadata, MoreEventsOnlyAppendToTheMetadataWhateverTheirChannel) {
    KernelTraceDescription t = describeHost({}, "s", 0);
    KernelChannelDescription a{"a", 0, kr::ContextTid, true, {}, std::nullopt};
    KernelChannelDescription b{"b", 1, kr::ContextTid, false, {}, std::nullopt};
    a.events.push_back({"sched", 4, ktest::format("sched_switch")});
    b.events.push_back({"irq", 5, ktest::format("irq_handler_entry")});
    t.channels = {a, b};
    const KernelMetadata before = generateKernelMetadata(t);
    t.channels[0].events.push_back({"sched", 6, ktest::format("sched_process_fork")});
    t.channels[1].events.push_back({"syscalls", 7, ktest::format("sys_enter_write")});
    t.channels[0].events.push_back({"sched", 8, ktest::format("sched_process_exec")});
    const KernelMetadata after = generateKernelMetadata(t);
    ASSERT_GT(after.tsdl.size(), before.tsdl.size());
    EXPECT_EQ(after.tsdl.compare(0, before.tsdl.size(), before.tsdl), 0)
        << "the old metadata is a prefix of the new";
    ASSERT_EQ(after.channels.size(), 2u);
    ASSERT_EQ(after.channels[0].events.size(), 3u);
    EXPECT_EQ(after.channels[0].events[1].ctfName, "sched_process_fork");
    EXPECT_EQ(after.channels[0].events[1].conversion.ctfId, 6);
    EXPECT_EQ(after.channels[1].events[1].ctfName, "syscall_entry_write");
    const std::string appended = after.tsdl.substr(before.tsdl.size());
    EXPECT_LT(appended.find("sched_process_fork"), appended.find("syscall_entry_write"));
    EXPECT_LT(appended.find("syscall_entry_write"), appended.find("sched_process_exec"));
}

// Found by a fresh-user pass: system call arguments declared signed (`int
// dfd`) are `signed:0` in ftrace's format (each sits in an unsigned long
// slot), and came out as 4294967196 instead of -100.
TEST(KernelMetadata, SignedSystemCallArgumentsStaySigned) {
    KernelTraceDescription t = describeHost({}, "s", 0);
    KernelChannelDescription ch{"c", 0, kr::ContextTid, false, {}, std::nullopt};
    ch.events.push_back({"syscalls", 4, ktest::format("sys_enter_openat")});
    t.channels = {ch};
    const std::string tsdl = generateKernelMetadata(t).tsdl;
    // `int dfd` in an unsigned long slot: lttng-modules' 32-bit signed int
    // (-100 for AT_FDCWD; the slot holds 4294967196), `umode_t mode` 16 bits.
    EXPECT_NE(tsdl.find("integer { size = 32; align = 8; signed = 1; encoding = none; base = 10; "
                        "} _dfd;"),
              std::string::npos)
        << tsdl;
    EXPECT_NE(tsdl.find("integer { size = 16; align = 8; signed = 0; encoding = none; base = 10; "
                        "} _mode;"),
              std::string::npos)
        << tsdl;
}

// lttng-modules copies the string arguments of system calls from user
// memory (`filename = "/etc/passwd"`); ftrace records only the pointer.
// Those fields are CTF strings filled by the system-call string program
// (UserString steps); others keep their integer (write's buf).
TEST(KernelMetadata, SystemCallStringArgumentsAreStrings) {
    KernelTraceDescription t = describeHost({}, "s", 0);
    KernelChannelDescription ch{"c", 0, kr::ContextTid, false, {}, std::nullopt};
    ch.events.push_back({"syscalls", 4, ktest::format("sys_enter_openat")});
    ch.events.push_back({"syscalls", 5, ktest::format("sys_enter_write")});
    t.channels = {ch};
    const KernelMetadata m = generateKernelMetadata(t);
    EXPECT_NE(m.tsdl.find("\t\tstring _filename;\n"), std::string::npos) << m.tsdl;
    EXPECT_NE(m.tsdl.find("base = 16; } _buf;"), std::string::npos) << m.tsdl;
    const auto& steps = m.channels[0].events[0].conversion.steps;
    ASSERT_EQ(steps.size(), 4u); // dfd, filename, flags, mode
    EXPECT_EQ(steps[1].kind, kr::StepKind::UserString);
    EXPECT_EQ(steps[1].offset, 24);
    for (const kr::Step& s : m.channels[0].events[1].conversion.steps)
        EXPECT_NE(s.kind, kr::StepKind::UserString);
}

// The ip provider's events sit among the ftrace events of their channel, at
// the ids the channel gave them, with ip_event_fields.hpp's payload; ids
// that clash are refused.
TEST(KernelMetadata, IpProviderEventsAreDeclaredAtTheirIdsWithTheirPayload) {
    KernelTraceDescription t = describeHost({}, "s", 0);
    KernelChannelDescription ch{"net", 0, kr::ContextTid, false, {}, std::nullopt};
    ch.events.push_back({"sched", 4, ktest::format("sched_switch")});
    ch.ipProbes = IpProbeIds{5, 6};
    t.channels = {ch};
    const KernelMetadata m = generateKernelMetadata(t);
    const auto send = m.tsdl.find("name = \"ip:send\";\n\tid = 5;\n\tstream_id = 0;");
    const auto receive = m.tsdl.find("name = \"ip:receive\";\n\tid = 6;\n\tstream_id = 0;");
    ASSERT_NE(send, std::string::npos) << m.tsdl;
    ASSERT_NE(receive, std::string::npos) << m.tsdl;
    EXPECT_LT(m.tsdl.find("sched_switch"), send) << "in id order: the metadata only grows";
    EXPECT_NE(m.tsdl.find(tracectl::ip::ipEventTsdlFields(), send), std::string::npos);
    ASSERT_EQ(m.channels[0].events.size(), 1u) << "no ftrace conversion for the probes";
    t.channels[0].ipProbes = IpProbeIds{4, 7};
    EXPECT_THROW(generateKernelMetadata(t), KernelMetadataError) << "id 4 is sched_switch's";
    t.channels[0].ipProbes = IpProbeIds{7, 65535};
    EXPECT_THROW(generateKernelMetadata(t), KernelMetadataError);
}

// The events that tell the consumer who runs (kernel_records TaskRole), with
// their fields' offsets from the real format files; every other event none.
TEST(KernelConversion, TaskRolesFromTheFormatFiles) {
    EXPECT_EQ(conversion("sched", "sched_switch").task,
              (kr::TaskFields{kr::TaskRole::SchedSwitch, {24, 56, 40, 60}}));
    EXPECT_EQ(conversion("sched", "sched_process_exec").task,
              (kr::TaskFields{kr::TaskRole::ProcessExec, {12, 8, 0, 0}}));
    EXPECT_EQ(conversion("task", "task_rename").task,
              (kr::TaskFields{kr::TaskRole::TaskRename, {8, 28, 0, 0}}));
    for (const char* other : {"sched_process_fork", "sys_enter_write", "irq_handler_entry"})
        EXPECT_EQ(conversion("x", other).task.role, kr::TaskRole::None) << other;
    // A sched_switch of another layout (next_comm not 16 chars) tells nothing.
    tracectl::kernel::EventFormat odd = ktest::format("sched_switch");
    for (auto& f : odd.fields)
        if (f.name == "next_comm")
            f.size = 8;
    EXPECT_EQ(computeConversion(odd, 4, lttngNaming("sched", "sched_switch")).task.role,
              kr::TaskRole::None);
}
