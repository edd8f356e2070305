// Call stacks in the kernel domain's consumer (consumer/kernel): ftrace's
// kernel_stack / user_stack entries attached by FtraceStream to the event
// they follow, written as lttng-modules' context sequences, never as events
// of their own; the tracectl_kernel_symbol events KernelSymbols names; the
// tracectl_vm_map events of the processes in user stacks; and kallsyms' and
// /proc/PID/maps' parsing.
#include "ftrace_stream.hpp"
#include "kernel_symbols.hpp"
#include "kernel_test_support.hpp"

#include <gtest/gtest.h>
#include <map>

using namespace tracectl::consumer;
using namespace tracectl::consumer::kernel;
using namespace tracectl::kernel_records;
using ktest::Bytes;
using ktest::getLe;
using ktest::PageWriter;
using ktest::Record;

namespace {

constexpr std::uint16_t kEventId = 316;
constexpr std::uint16_t kEventCtf = 4;
constexpr std::uint16_t kKernelStack = 4;
constexpr std::uint16_t kUserStack = 13;

struct Event {
    std::uint16_t id = 0;
    std::vector<std::uint64_t> kernel;
    std::vector<std::uint64_t> user;
    std::uint32_t value = 0;  ///< kEventCtf: its copied field
    std::string symbol;       ///< kKernelSymbolId: its name; kVmMapId: its path
    std::uint64_t start = 0;  ///< kVmMapId
    std::int32_t pid = 0;     ///< kVmMapId, kThreadId
    std::int32_t tid = 0;     ///< kThreadId
    std::int32_t context = 0; ///< the pid context (a mask with kContextPid)
};

/// Mappings by pid, and how many times each pid's were read.
struct TableMaps final : UserMapsSource {
    std::map<std::int32_t, std::vector<UserMapping>> maps;
    std::map<std::int32_t, int> reads;
    std::vector<UserMapping> read(std::int32_t pid) override {
        ++reads[pid];
        const auto it = maps.find(pid);
        return it == maps.end() ? std::vector<UserMapping>{} : it->second;
    }
};

struct Fixture {
    explicit Fixture(std::uint32_t contexts, const KernelSymbols* symbols = nullptr,
                     UserMapsSource* maps = nullptr)
        : mask(contexts) {
        EventConversion c;
        c.ftraceId = kEventId;
        c.ctfId = kEventCtf;
        c.minSize = 12;
        c.steps = {{StepKind::Copy, 8, 4, 1}};
        table.add({c});
        FtraceStreamConfig cfg;
        cfg.uuid.fill(std::byte{0x11});
        cfg.cpuId = 0;
        cfg.maxPacketBytes = 65536;
        cfg.contextMask = contexts;
        cfg.kernelStackType = (contexts & ContextCallstackKernel) ? kKernelStack : 0;
        cfg.userStackType = (contexts & ContextCallstackUser) ? kUserStack : 0;
        cfg.kernelSymbols = symbols;
        cfg.userMaps = maps;
        stream = std::make_unique<FtraceStream>(
            cfg, table, nullptr, [this](std::span<const std::byte> p, const IndexEntry&) {
                packets.emplace_back(p.begin(), p.end());
            });
    }

    /// Every event of the packets so far (after a flush).
    std::vector<Event> events() const {
        std::vector<Event> out;
        for (const Bytes& p : packets) {
            std::size_t at = 84;
            while (at < p.size()) {
                Event e;
                e.id = static_cast<std::uint16_t>(getLe(p, at, 2));
                at += 10;
                if ((mask & ContextPid) != 0) {
                    e.context = static_cast<std::int32_t>(getLe(p, at, 4));
                    at += 4;
                }
                for (const std::uint32_t bit : {ContextCallstackKernel, ContextCallstackUser}) {
                    if ((mask & bit) == 0)
                        continue;
                    const auto n = getLe(p, at, 4);
                    at += 4;
                    for (std::uint64_t i = 0; i < n; ++i, at += 8)
                        (bit == ContextCallstackKernel ? e.kernel : e.user)
                            .push_back(getLe(p, at, 8));
                }
                if (e.id == kEventCtf) {
                    e.value = static_cast<std::uint32_t>(getLe(p, at, 4));
                    at += 4;
                } else if (e.id == kKernelSymbolId) {
                    at += 16;
                    while (p[at] != std::byte{0})
                        e.symbol += static_cast<char>(p[at++]);
                    at += 1;
                    while (p[at] != std::byte{0})
                        ++at;
                    at += 1;
                } else if (e.id == kVmMapId) {
                    e.start = getLe(p, at, 8);
                    at += 24;
                    e.pid = static_cast<std::int32_t>(getLe(p, at, 4));
                    at += 4;
                    while (p[at] != std::byte{0})
                        e.symbol += static_cast<char>(p[at++]);
                    at += 1;
                } else if (e.id == kThreadId) {
                    e.tid = static_cast<std::int32_t>(getLe(p, at, 4));
                    e.pid = static_cast<std::int32_t>(getLe(p, at + 4, 4));
                    at += 8;
                } else {
                    ADD_FAILURE() << "unexpected event id " << e.id;
                    return out;
                }
                out.push_back(e);
            }
        }
        return out;
    }

    std::uint32_t mask;
    ConversionTable table;
    std::vector<Bytes> packets;
    std::unique_ptr<FtraceStream> stream;
};

Record event(std::int32_t tid, std::uint32_t value) {
    Record r(kEventId, tid);
    r.le(value, 4);
    return r;
}

Record kernelStack(std::int32_t tid, std::vector<std::uint64_t> frames) {
    Record r(kKernelStack, tid);
    r.le(frames.size(), 4).le(0, 4);
    for (const std::uint64_t f : frames)
        r.le(f, 8);
    return r;
}

/// Thread `tid`'s user stack; its process `tgid` (0: the thread is its process's main one).
Record userStack(std::int32_t tid, std::vector<std::uint64_t> frames, std::int32_t tgid = 0) {
    Record r(kUserStack, tid);
    r.le(static_cast<std::uint32_t>(tgid != 0 ? tgid : tid), 4).le(0, 4);
    frames.resize(8, 0); // FTRACE_STACK_ENTRIES, the unused ones 0
    for (const std::uint64_t f : frames)
        r.le(f, 8);
    return r;
}

} // namespace

TEST(Callstack, EachStackGoesToTheEventItFollowsAndIsNoEventOfItsOwn) {
    Fixture f(ContextCallstackKernel | ContextCallstackUser);
    PageWriter w(1000);
    w.record(10, event(7, 1));
    w.record(1, kernelStack(7, {0xffffffff81000010, 0xffffffff81000020}));
    w.record(1, userStack(7, {0x401000, 0x401100, 0x7f0000001000}));
    w.record(10, event(7, 2));
    w.record(1, kernelStack(7, {0xffffffff81000030}));
    w.record(1, userStack(7, {}));
    f.stream->consumePage(w.finish());
    f.stream->flush(5000);
    const auto events = f.events();
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].value, 1u);
    EXPECT_EQ(events[0].kernel,
              (std::vector<std::uint64_t>{0xffffffff81000010, 0xffffffff81000020}));
    EXPECT_EQ(events[0].user, (std::vector<std::uint64_t>{0x401000, 0x401100, 0x7f0000001000}));
    EXPECT_EQ(events[1].value, 2u);
    EXPECT_EQ(events[1].kernel, (std::vector<std::uint64_t>{0xffffffff81000030}));
    EXPECT_TRUE(events[1].user.empty());
    EXPECT_EQ(f.stream->counters().orphanStacks, 0u);
    EXPECT_EQ(f.stream->counters().unknownIds, 0u) << "stack entries are not unknown events";
}

TEST(Callstack, AnInterruptsEventBetweenAnEventAndItsStackKeepsItsOwn) {
    // ftrace: X committed, an interrupt's Y and Y's stack, then X's stack.
    Fixture f(ContextCallstackKernel);
    PageWriter w(1000);
    w.record(10, event(7, 1));
    w.record(1, event(7, 2));
    w.record(1, kernelStack(7, {0xffffffff8100aaaa}));
    w.record(1, kernelStack(7, {0xffffffff8100bbbb}));
    f.stream->consumePage(w.finish());
    f.stream->flush(5000);
    const auto events = f.events();
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].value, 1u) << "in ring buffer order";
    EXPECT_EQ(events[0].kernel, (std::vector<std::uint64_t>{0xffffffff8100bbbb}));
    EXPECT_EQ(events[1].kernel, (std::vector<std::uint64_t>{0xffffffff8100aaaa}));
}

TEST(Callstack, AStackOnTheNextPageStillJoinsItsEvent) {
    Fixture f(ContextCallstackKernel);
    PageWriter a(1000);
    a.record(10, event(7, 1));
    f.stream->consumePage(a.finish());
    PageWriter b(2000);
    b.record(1, kernelStack(7, {0xffffffff81000040}));
    f.stream->consumePage(b.finish());
    f.stream->flush(5000);
    const auto events = f.events();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].kernel, (std::vector<std::uint64_t>{0xffffffff81000040}));
}

TEST(Callstack, AStackWithoutItsEventIsCountedAndDropped) {
    Fixture f(ContextCallstackKernel);
    PageWriter w(1000);
    w.record(10, event(7, 1));
    f.stream->consumePage(w.finish());
    f.stream->flush(1500); // the event goes out without its stack
    PageWriter b(2000);
    b.record(1, kernelStack(7, {0xffffffff81000040}));
    b.record(1, kernelStack(8, {0xffffffff81000050}));
    f.stream->consumePage(b.finish());
    f.stream->flush(5000);
    const auto events = f.events();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_TRUE(events[0].kernel.empty());
    EXPECT_EQ(f.stream->counters().orphanStacks, 2u);
}

TEST(Callstack, AStreamWithoutTheContextWritesNoStackAndNoStackEntry) {
    // The channel asked for no call stack: an entry (there should be none)
    // is an unknown record, never a sequence or an event.
    Fixture f(0);
    PageWriter w(1000);
    w.record(10, event(7, 1));
    w.record(1, kernelStack(7, {0xffffffff81000040}));
    f.stream->consumePage(w.finish());
    f.stream->flush(5000);
    const auto events = f.events();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_TRUE(events[0].kernel.empty());
    EXPECT_EQ(f.stream->counters().unknownIds, 1u);
}

TEST(Callstack, EachSymbolIsWrittenOnceBeforeItsFirstEventAndAgainInTheNextChunk) {
    const KernelSymbols symbols = KernelSymbols::parse("ffffffff81000000 T _stext\n"
                                                       "ffffffff81000100 t __schedule\n"
                                                       "ffffffff81000200 D some_data\n"
                                                       "ffffffff81000300 T schedule\n"
                                                       "ffffffffc0000000 t ext4_fn\t[ext4]\n");
    ASSERT_EQ(symbols.size(), 4u) << "text symbols only";
    EXPECT_EQ(symbols.at(symbols.find(0xffffffff81000250)).name, "__schedule")
        << "data symbols do not cut a function short";
    EXPECT_EQ(symbols.at(symbols.find(0xffffffffc0000000)).module, "ext4");
    EXPECT_EQ(symbols.find(0xffffffff80000000), KernelSymbols::kNpos);
    Fixture f(ContextCallstackKernel, &symbols);
    PageWriter w(1000);
    w.record(10, event(7, 1));
    w.record(1, kernelStack(7, {0xffffffff81000110, 0xffffffff81000310}));
    w.record(10, event(7, 2));
    w.record(1, kernelStack(7, {0xffffffff81000120, 0x1234}));
    f.stream->consumePage(w.finish());
    f.stream->flush(3000);
    f.stream->forgetSymbols(); // a new chunk
    PageWriter b(4000);
    b.record(10, event(7, 3));
    b.record(1, kernelStack(7, {0xffffffff81000130}));
    f.stream->consumePage(b.finish());
    f.stream->flush(5000);
    std::vector<std::string> order;
    for (const Event& e : f.events())
        order.push_back(e.id == kKernelSymbolId ? e.symbol : "event" + std::to_string(e.value));
    EXPECT_EQ(order, (std::vector<std::string>{"__schedule", "schedule", "event1", "event2",
                                               "__schedule", "event3"}));
}

TEST(Callstack, AProcessMappingsAreWrittenBeforeItsFirstUserStackOncePerChunk) {
    TableMaps maps;
    maps.maps[7] = {{0x1000, 0x2000, 0x0, "/bin/app"}, {0x7000, 0x8000, 0x3000, "/lib/libc.so"}};
    Fixture f(ContextCallstackUser, nullptr, &maps);
    PageWriter w(1000);
    w.record(10, event(7, 1));
    w.record(1, userStack(7, {0x1100, 0x7100}));
    w.record(10, event(7, 2));
    w.record(1, userStack(7, {0x1200}));
    w.record(10, event(9, 3)); // a process gone already: nothing to write, raw addresses
    w.record(1, userStack(9, {0x1300}));
    f.stream->consumePage(w.finish());
    f.stream->flush(3000);
    f.stream->forgetSymbols(); // a new chunk: written again
    PageWriter a(4000);
    a.record(10, event(7, 4));
    a.record(1, userStack(7, {0x1100}));
    f.stream->consumePage(a.finish());
    // The process loaded a library: an address no mapping written holds reads its maps
    // again, once per chunk.
    maps.maps[7].push_back({0x9000, 0xa000, 0x0, "/bin/other"});
    PageWriter b(4100);
    b.record(10, event(7, 5));
    b.record(1, userStack(7, {0x9100}));
    b.record(10, event(7, 6));
    b.record(1, userStack(7, {0xf100}));
    f.stream->consumePage(b.finish());
    f.stream->flush(5000);
    std::vector<std::string> order;
    for (const Event& e : f.events())
        order.push_back(e.id == kVmMapId ? std::to_string(e.pid) + ":" + e.symbol
                                         : "event" + std::to_string(e.value));
    EXPECT_EQ(order, (std::vector<std::string>{"7:/bin/app", "7:/lib/libc.so", "event1", "event2",
                                               "event3", "7:/bin/app", "7:/lib/libc.so", "event4",
                                               "7:/bin/other", "event5", "event6"}));
    EXPECT_EQ(maps.reads[7], 3) << "first stack of each chunk, and one read again";
    EXPECT_EQ(maps.reads[9], 1);
}

TEST(Callstack, AThreadsProcessIsWrittenBeforeItsFirstUserStackOncePerChunk) {
    // Threads 8 and 10 of process 7 (ftrace's user_stack entry gives the tgid): the
    // process's mappings, then a tracectl_thread event per thread other than the main
    // one, before its first stack of the chunk.
    TableMaps maps;
    maps.maps[7] = {{0x1000, 0x2000, 0x0, "/bin/app"}};
    Fixture f(ContextCallstackUser, nullptr, &maps);
    PageWriter w(1000);
    w.record(10, event(8, 1));
    w.record(1, userStack(8, {0x1100}, 7));
    w.record(10, event(7, 2)); // the main thread: no thread event
    w.record(1, userStack(7, {0x1200}));
    w.record(10, event(8, 3)); // told already
    w.record(1, userStack(8, {0x1300}, 7));
    w.record(10, event(10, 4));
    w.record(1, userStack(10, {0x1400}, 7));
    // Tid 8 reused: the main thread of a new process 8, then a thread of process 7 again.
    w.record(10, event(8, 5));
    w.record(1, userStack(8, {0x1500}));
    w.record(10, event(8, 6));
    w.record(1, userStack(8, {0x1600}, 7));
    f.stream->consumePage(w.finish());
    f.stream->flush(3000);
    f.stream->forgetSymbols(); // a new chunk: told again
    PageWriter a(4000);
    a.record(10, event(10, 7));
    a.record(1, userStack(10, {0x1700}, 7));
    f.stream->consumePage(a.finish());
    f.stream->flush(5000);
    std::vector<std::string> order;
    for (const Event& e : f.events()) {
        order.push_back(e.id == kVmMapId ? "map " + std::to_string(e.pid)
                        : e.id == kThreadId
                            ? "thread " + std::to_string(e.tid) + " of " + std::to_string(e.pid)
                            : "event" + std::to_string(e.value));
    }
    EXPECT_EQ(order, (std::vector<std::string>{"map 7", "thread 8 of 7", "event1", "event2",
                                               "event3", "thread 10 of 7", "event4",
                                               "thread 8 of 8", "event5", "thread 8 of 7", "event6",
                                               "map 7", "thread 10 of 7", "event7"}));
}

TEST(Callstack, AnEventWithAUserStackHasItsTgidAsPidContext) {
    // No /proc answer (processes null: pid = tid, as for a thread gone before the
    // lookup): the user_stack entry's tgid is the event's pid, and its thread event's.
    TableMaps maps;
    maps.maps[7] = {{0x1000, 0x2000, 0x0, "/bin/app"}};
    Fixture f(ContextPid | ContextCallstackUser, nullptr, &maps);
    PageWriter w(1000);
    w.record(10, event(8, 1));
    w.record(1, userStack(8, {0x1100}, 7));
    f.stream->consumePage(w.finish());
    f.stream->flush(2000);
    const auto events = f.events();
    ASSERT_EQ(events.size(), 3u) << "map, thread, event";
    for (const Event& e : events)
        EXPECT_EQ(e.context, 7) << e.id;
}

TEST(Callstack, ProcMapsKeepsTheExecutableFileMappings) {
    const auto maps = tracectl::symbols::parseProcMaps(
        "55d0c8a00000-55d0c8a01000 r--p 00000000 fe:01 1234 /usr/bin/app\n"
        "55d0c8a01000-55d0c8a02000 r-xp 00001000 fe:01 1234 /usr/bin/app\n"
        "7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n"
        "7f1000028000-7f100019d000 r-xp 00028000 fe:01 99   /usr/lib/libc.so.6\n"
        "7ffc1000000-7ffc1002000 r-xp 00000000 00:00 0    [vdso]\n"
        "garbage\n"
        "7f2000000000-7f2000001000 r-xp 00000000 fe:01 5    /tmp/gone (deleted)");
    ASSERT_EQ(maps.size(), 3u);
    EXPECT_EQ(maps[0], (UserMapping{0x55d0c8a01000, 0x55d0c8a02000, 0x1000, "/usr/bin/app"}));
    EXPECT_EQ(maps[1].path, "/usr/lib/libc.so.6");
    EXPECT_EQ(maps[1].pgoff, 0x28000u);
    EXPECT_EQ(maps[2].path, "/tmp/gone (deleted)");
}
