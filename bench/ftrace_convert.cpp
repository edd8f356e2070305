// The kernel consumer's conversion speed: FtraceStream over synthetic 4 KiB
// ftrace pages of sched_switch-like records (64-byte payloads: the common
// fields, prev_comm[16], prev_pid, prev_prio, prev_state (8), next_comm[16],
// next_pid, next_prio), into 1 MiB packets the sink drops.
//
//   BM_Convert/<mask>       one Copy step over the fixed fields; contexts
//                           tid + cpu_id (mask 17) or all five (31, with a
//                           ProcessInfo answering from memory)
//   BM_ConvertDataLoc       the same records with a __data_loc string
//   BM_ConvertLttngSchedSwitch  lttng-modules' sched_switch: Copy,
//                           PrioFromKernel, Copy, PrioFromKernel
//   BM_WalkOnly             the page walk alone (no conversion)
//
// Usage: tracectl-bench-ftrace-convert [--benchmark_min_time=...]
// bytes_per_second is of ftrace pages consumed (the input).
#include "ftrace_stream.hpp"

#include <benchmark/benchmark.h>
#include <cstring>
#include <vector>

using namespace tracectl::consumer::kernel;
using namespace tracectl::kernel_records;

namespace {

constexpr std::uint16_t kSwitch = 316;
constexpr std::size_t kPage = 4096;
constexpr std::size_t kPages = 256; // 1 MiB of input

void put(std::vector<std::byte>& out, const void* p, std::size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    out.insert(out.end(), b, b + n);
}

// Pages full of records of `payload` bytes made by `record(i, out)`.
template <typename Record>
std::vector<std::vector<std::byte>> makePages(std::size_t payload, Record record) {
    std::vector<std::vector<std::byte>> pages;
    std::uint64_t ts = 1'000'000;
    for (std::size_t p = 0; p < kPages; ++p) {
        std::vector<std::byte> data;
        for (std::uint32_t i = 0; 16 + data.size() + 4 + payload <= kPage; ++i) {
            const std::uint32_t header = (700u << 5) | static_cast<std::uint32_t>(payload / 4);
            put(data, &header, 4);
            record(i, data);
        }
        std::vector<std::byte> page;
        put(page, &ts, 8);
        const std::uint64_t commit = data.size();
        put(page, &commit, 8);
        page.insert(page.end(), data.begin(), data.end());
        page.resize(kPage);
        pages.push_back(std::move(page));
        ts += 100'000;
    }
    return pages;
}

void switchRecord(std::uint32_t i, std::vector<std::byte>& out) {
    const std::uint16_t type = kSwitch;
    const std::uint16_t flags = 0;
    const std::int32_t pid = 1000 + static_cast<std::int32_t>(i % 50);
    put(out, &type, 2);
    put(out, &flags, 2);
    put(out, &pid, 4);
    const char comm[16] = "kworker/0:1";
    put(out, comm, 16);
    const std::int32_t values[2] = {pid, 120};
    put(out, values, 8);
    const std::int64_t state = 1;
    put(out, &state, 8);
    put(out, comm, 16);
    put(out, values, 8);
}

class MemoryProcesses : public ProcessInfo {
public:
    ProcessDetails lookup(std::int32_t tid) override {
        ProcessDetails d;
        d.pid = tid;
        std::memcpy(d.procname.data(), "bench", 5);
        return d;
    }
};

void run(benchmark::State& state, const std::vector<std::vector<std::byte>>& pages,
         const EventConversion& conversion, std::uint32_t mask) {
    ConversionTable table;
    table.add({conversion});
    MemoryProcesses processes;
    FtraceStreamConfig cfg;
    cfg.maxPacketBytes = 1 << 20;
    cfg.contextMask = mask;
    std::uint64_t packetBytes = 0;
    FtraceStream stream(cfg, table, &processes, [&](std::span<const std::byte> p, const auto&) {
        packetBytes += p.size();
    });
    for (auto _ : state) {
        for (const auto& page : pages)
            stream.consumePage(page);
        benchmark::ClobberMemory();
    }
    stream.flush(0);
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * pages.size() * kPage));
    state.SetItemsProcessed(static_cast<std::int64_t>(stream.counters().eventsWritten));
    state.counters["out_MB"] = static_cast<double>(packetBytes) / 1e6;
    if (stream.counters().malformedPages != 0)
        state.SkipWithError("malformed pages");
}

void bmConvert(benchmark::State& state) {
    static const auto pages = makePages(64, switchRecord);
    EventConversion c;
    c.ftraceId = kSwitch;
    c.ctfId = kFirstFtraceCtfId;
    c.minSize = 64;
    c.steps = {{StepKind::Copy, 8, 56, 1}};
    run(state, pages, c, static_cast<std::uint32_t>(state.range(0)));
}
BENCHMARK(bmConvert)->Arg(ContextTid | ContextCpuId)->Arg(kAllContexts);

void bmConvertDataLoc(benchmark::State& state) {
    // The record with a trailing __data_loc char[] name ("eth0\0") at 64.
    static const auto pages = makePages(72, [](std::uint32_t i, std::vector<std::byte>& out) {
        const std::size_t start = out.size();
        switchRecord(i, out);
        // Replace prev_state's low 4 bytes by the __data_loc (length 5, offset 64).
        const std::uint32_t loc = (5u << 16) | 64;
        std::memcpy(out.data() + start + 40, &loc, 4);
        put(out, "eth0\0\0\0", 8);
    });
    EventConversion c;
    c.ftraceId = kSwitch;
    c.ctfId = kFirstFtraceCtfId;
    c.minSize = 64;
    c.steps = {{StepKind::Copy, 8, 32, 1},
               {StepKind::DataLocString, 40, 4, 1},
               {StepKind::Copy, 44, 28, 1}};
    run(state, pages, c, ContextTid | ContextCpuId);
}
BENCHMARK(bmConvertDataLoc);

void bmConvertLttngSchedSwitch(benchmark::State& state) {
    // lttng-modules' sched_switch (lttng_kernel_layout.hpp): the prios lose
    // MAX_RT_PRIO, so four steps where BM_Convert has one.
    static const auto pages = makePages(64, switchRecord);
    EventConversion c;
    c.ftraceId = kSwitch;
    c.ctfId = kFirstFtraceCtfId;
    c.minSize = 64;
    c.steps = {{StepKind::Copy, 8, 20, 1},
               {StepKind::PrioFromKernel, 28, 4, 1},
               {StepKind::Copy, 32, 28, 1},
               {StepKind::PrioFromKernel, 60, 4, 1}};
    run(state, pages, c, ContextTid | ContextCpuId);
}
BENCHMARK(bmConvertLttngSchedSwitch);

void bmWalkOnly(benchmark::State& state) {
    static const auto pages = makePages(64, switchRecord);
    std::uint64_t sum = 0;
    for (auto _ : state) {
        for (const auto& page : pages)
            walkPage(page.data(), page.size(), PageFormat{},
                     [&](const FtraceRecord& r) { sum += r.length; });
        benchmark::DoNotOptimize(sum);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * pages.size() * kPage));
}
BENCHMARK(bmWalkOnly);

} // namespace

BENCHMARK_MAIN();
