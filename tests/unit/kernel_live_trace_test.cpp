// End to end against the running kernel (root, tracefs; skipped otherwise):
// a tracefs instance records sched_switch with the mono clock, the test
// reads the per-CPU trace_pipe_raw pages, walks them (the ring-buffer page
// and event header layout of KERNEL-NOTES.md), converts each record by its
// EventConversion, frames the result per kernel_records.hpp and has
// babeltrace2 read it with the generated metadata: real kernel bytes,
// decoded as the TSDL says, with values and CLOCK_MONOTONIC timestamps.
#include "kernel/kernel_host.hpp"
#include "kernel/kernel_metadata.hpp"
#include "kernel/tracefs.hpp"
#include "kernel/tracepoint_catalog.hpp"
#include "kernel_ctf_test_support.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <gtest/gtest.h>
#include <map>

using namespace tracectl::kernel;
namespace kr = tracectl::kernel_records;
using ktest::Bytes;

namespace {

std::uint64_t monotonicNs() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

std::uint64_t le(const std::uint8_t* p, std::size_t n) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i)
        v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
    return v;
}

struct RawRecord {
    std::uint64_t timestamp;
    Bytes payload;
};

// The events of one ring-buffer page.
std::vector<RawRecord> walkPage(const Bytes& page, const PageFormat& pf) {
    std::vector<RawRecord> out;
    std::uint64_t ts = le(&page[pf.timestampOffset], pf.timestampSize);
    const std::uint64_t commit = le(&page[pf.commitOffset], pf.commitSize);
    const std::size_t length = std::min<std::size_t>(commit & ((1u << 27) - 1), pf.dataSize);
    const std::uint8_t* p = page.data() + pf.dataOffset;
    const std::uint8_t* end = p + length;
    while (p + 4 <= end) {
        const auto header = static_cast<std::uint32_t>(le(p, 4));
        p += 4;
        const std::uint32_t typeLen = header & 31;
        const std::uint64_t delta = header >> 5;
        if (typeLen == 29) { // padding
            if (delta == 0 || p + 4 > end)
                break;
            p += le(p, 4);
        } else if (typeLen == 30) { // time extend
            ts += delta | (le(p, 4) << 27);
            p += 4;
        } else if (typeLen == 31) { // absolute timestamp
            ts = (delta | (le(p, 4) << 27)) | (ts & (0x1Full << 59));
            p += 4;
        } else {
            ts += delta;
            std::size_t size = 0;
            if (typeLen == 0) {
                size = le(p, 4) - 4;
                p += 4;
            } else {
                size = 4u * typeLen;
            }
            if (p + size > end)
                break;
            out.push_back({ts, Bytes(p, p + size)});
            p += size;
        }
    }
    return out;
}

std::string comm(const Bytes& rec, std::size_t offset) {
    std::string s;
    for (std::size_t i = offset; i < offset + 16 && rec[i] != 0; ++i)
        s += static_cast<char>(rec[i]);
    return s;
}

std::int64_t i32(const Bytes& rec, std::size_t offset) {
    return static_cast<std::int32_t>(le(&rec[offset], 4));
}

TEST(KernelLiveTrace, RealSchedSwitchRecordsDecode) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "needs root (tracefs instances)";
    int status = -1;
    ktest::run("babeltrace2 --version", status);
    if (status != 0)
        GTEST_SKIP() << "babeltrace2 not installed";

    const Tracefs tracefs = Tracefs::locate();
    TracefsInstance inst =
        TracefsInstance::create(tracefs, "unittest-" + std::to_string(::getpid()) + "-live");
    inst.setClock("mono");
    inst.setBufferSizeKb(512);
    inst.setOverwrite(false);
    inst.enableEvent("sched", "sched_switch");
    const std::uint64_t before = monotonicNs();
    inst.setTracingOn(true);
    for (int i = 0; i < 20; ++i)
        ::usleep(1000);
    inst.setTracingOn(false);
    const std::uint64_t after = monotonicNs();

    TracepointCatalog catalog(inst.path() / "events");
    const EventFormat& format = catalog.format("sched", "sched_switch");
    KernelTraceDescription t = describeHost({}, "live", std::time(nullptr));
    for (std::size_t i = 0; i < 16; ++i)
        t.uuid[i] = static_cast<std::uint8_t>(i * 7);
    KernelChannelDescription ch;
    ch.name = "channel0";
    ch.contextMask = kr::ContextTid | kr::ContextProcname;
    ch.events = {{"sched", 4, format}};
    t.channels.push_back(ch);
    const KernelMetadata m = generateKernelMetadata(t);
    const kr::EventConversion conv = m.channels[0].events[0].conversion;

    const PageFormat pf = inst.headerPage();
    ktest::TempDir dir;
    std::size_t written = 0;
    std::string firstExpected;
    for (const unsigned cpu : inst.cpus()) {
        const tracectl::UniqueFd fd = inst.openRaw(cpu);
        Bytes stream;
        std::uint64_t seq = 0;
        for (;;) {
            Bytes page(pf.pageSize);
            const ssize_t n = ::read(fd.get(), page.data(), page.size());
            if (n < 0 && (errno == EAGAIN || errno == EINTR))
                break;
            ASSERT_GE(n, 0) << std::strerror(errno);
            if (n == 0)
                break;
            ASSERT_EQ(static_cast<std::size_t>(n), pf.pageSize) << "partial page";
            std::vector<ktest::Event> events;
            for (const RawRecord& r : walkPage(page, pf)) {
                if (r.payload.size() < conv.minSize || le(r.payload.data(), 2) != format.id)
                    continue;
                EXPECT_GE(r.timestamp, before);
                EXPECT_LE(r.timestamp, after);
                ktest::Event e{4, r.timestamp, ktest::convert(conv, r.payload)};
                e.tid = static_cast<std::int32_t>(i32(r.payload, 4));
                events.push_back(std::move(e));
                if (firstExpected.empty())
                    firstExpected =
                        "{ prev_comm = \"" + comm(r.payload, 8) +
                        "\", prev_tid = " + std::to_string(i32(r.payload, 24)) + ", prev_prio = " +
                        std::to_string(static_cast<std::int32_t>(i32(r.payload, 28)) - 100) + ",";
            }
            if (events.empty())
                continue;
            written += events.size();
            const Bytes packet = ktest::packet(t.uuid, 0, cpu, cpu, events, seq++, 0);
            stream.insert(stream.end(), packet.begin(), packet.end());
        }
        if (!stream.empty())
            ktest::writeFile(dir.path() / ("channel0_" + std::to_string(cpu)), stream.data(),
                             stream.size());
    }
    ASSERT_GT(written, 0u) << "no sched_switch recorded";
    RecordProperty("sched_switch_events", static_cast<int>(written));
    ktest::writeFile(dir.path() / "metadata", m.tsdl.data(), m.tsdl.size());
    const std::string out = ktest::run("babeltrace2 '" + dir.path().string() + "'", status);
    ASSERT_EQ(status, 0) << out;
    std::size_t lines = 0;
    for (std::size_t at = out.find("sched_switch: "); at != std::string::npos;
         at = out.find("sched_switch: ", at + 1))
        ++lines;
    EXPECT_EQ(lines, written) << out.substr(0, 2000);
    EXPECT_NE(out.find(firstExpected), std::string::npos) << firstExpected << "\n"
                                                          << out.substr(0, 2000);
    EXPECT_EQ(out.find("WARNING"), std::string::npos) << out.substr(0, 2000);
}

} // namespace
