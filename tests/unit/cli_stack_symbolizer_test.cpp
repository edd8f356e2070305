// StackSymbolizer (cli/stack_symbolizer.hpp): babeltrace2's text lines in,
// the callstack_kernel addresses named by the trace's own
// tracectl_kernel_symbol events.
#include "cli/stack_symbolizer.hpp"
#include "symbols/proc_maps.hpp"

#include <cinttypes>
#include <cstdio>
#include <gtest/gtest.h>
#include <unistd.h>

using tracectl::cli::StackSymbolizer;

// NOLINTNEXTLINE(readability-identifier-naming): the tests find it by this name
extern "C" __attribute__((noinline, used)) int tracectl_symbolizer_test_function(int x) {
    __asm__ volatile("" ::: "memory");
    return x + 1;
}

namespace {

const char* const kSymbol =
    "[13:24:59.416242260] (+0.000000000) vm tracectl_kernel_symbol: { cpu_id = 0 }, { tid = 7, "
    "_callstack_kernel_length = 0, callstack_kernel = [ ] }, { address = 0xFFFFFFFF81E2C3F0, "
    "end = 0xFFFFFFFF81E2CB20, name = \"__schedule\", module = \"\" }";
const char* const kModuleSymbol =
    "[13:24:59.416242261] (+0.000000001) vm tracectl_kernel_symbol: { cpu_id = 0 }, { tid = 7, "
    "_callstack_kernel_length = 0, callstack_kernel = [ ] }, { address = 0xFFFFFFFFC0001000, "
    "end = 0xFFFFFFFFC0001100, name = \"ext4_fn\", module = \"ext4\" }";

} // namespace

TEST(StackSymbolizer, NamesTheAddressesOfKernelStacksBySymbolsSeenBefore) {
    StackSymbolizer s;
    EXPECT_EQ(s.process(kSymbol), kSymbol) << "a symbol line passes unchanged";
    EXPECT_EQ(s.process(kModuleSymbol), kModuleSymbol);
    EXPECT_EQ(s.symbols(), 2u);
    const std::string line =
        "[13:24:59.5] (+0.1) vm sched_switch: { cpu_id = 1 }, { tid = 7, "
        "_callstack_kernel_length = 3, callstack_kernel = [ [0] = 0xFFFFFFFF81E2C8A4, [1] = "
        "0xFFFFFFFFC0001010, [2] = 0xFFFFFFFF80000000 ] }, { prev_comm = \"a\" }";
    EXPECT_EQ(s.process(line),
              "[13:24:59.5] (+0.1) vm sched_switch: { cpu_id = 1 }, { tid = 7, "
              "_callstack_kernel_length = 3, callstack_kernel = [ [0] = 0xFFFFFFFF81E2C8A4 "
              "<__schedule+0x4b4>, [1] = 0xFFFFFFFFC0001010 <ext4_fn+0x10 [ext4]>, [2] = "
              "0xFFFFFFFF80000000 ] }, { prev_comm = \"a\" }");
}

TEST(StackSymbolizer, LeavesOtherLinesAndUnknownAddressesAlone) {
    StackSymbolizer s;
    const std::string before =
        "x sched_switch: { cpu_id = 1 }, { callstack_kernel = [ [0] = 0xFFFFFFFF81E2C8A4 ] }";
    EXPECT_EQ(s.process(before), before) << "no symbol seen yet";
    s.process(kSymbol);
    const std::string other = "x sched_switch: { cpu_id = 1 }, { prev_comm = \"callstack\" }";
    EXPECT_EQ(s.process(other), other);
    const std::string user =
        "x e: { cpu_id = 1 }, { callstack_user = [ [0] = 0xFFFFFFFF81E2C8A4 ] }";
    EXPECT_EQ(s.process(user), user) << "user stacks are not named by kernel symbols";
}

namespace {

std::string hex(std::uint64_t v) {
    char text[24];
    std::snprintf(text, sizeof text, "0x%" PRIX64, v);
    return text;
}

} // namespace

TEST(StackSymbolizer, NamesUserFramesByTheTracesMappingsAndTheElfSymbols) {
    // This test's own executable mappings, as tracectl_vm_map lines, then an event of this
    // process (its tid context: the main thread's is the pid) with a user stack whose
    // first address is 5 bytes into a function of ours and whose second is unmapped.
    StackSymbolizer s;
    const std::string pid = std::to_string(getpid());
    for (const auto& m : tracectl::symbols::readProcMaps(getpid())) {
        const std::string line = "[1] (+0) vm tracectl_vm_map: { cpu_id = 0 }, { tid = 1 }, { "
                                 "start = " +
                                 hex(m.start) + ", end = " + hex(m.end) +
                                 ", pgoff = " + hex(m.pgoff) + ", pid = " + pid + ", path = \"" +
                                 m.path + "\" }";
        EXPECT_EQ(s.process(line), line) << "a mapping line passes unchanged";
    }
    ASSERT_GT(s.symbols(), 0u);
    const std::uint64_t f = reinterpret_cast<std::uint64_t>(&tracectl_symbolizer_test_function) + 5;
    const std::string prefix = "[2] (+1) vm syscall_entry_getppid: { cpu_id = 1 }, { tid = " + pid +
                               ", _callstack_user_length = 2, callstack_user = [ [0] = " + hex(f);
    const std::string line = prefix + ", [1] = 0x10 ] }, { }";
    EXPECT_EQ(s.process(line), prefix + " <tracectl_symbolizer_test_function+0x5 "
                                        "[cli_stack_symbolizer_test]>, [1] = 0x10 ] }, { }");
    const std::string other = "[3] (+1) vm e: { cpu_id = 1 }, { tid = 1, "
                              "_callstack_user_length = 1, callstack_user = [ [0] = " +
                              hex(f) + " ] }, { }";
    EXPECT_EQ(s.process(other), other) << "another process's address: no mapping of its";
}

TEST(StackSymbolizer, NamesAThreadsUserFramesByItsProcessFromTheTracesThreadEvents) {
    // Thread 1 is this process's (a tracectl_thread line says so): its tid context, with no
    // pid context, finds the process's mappings. Before the thread line, it found none.
    StackSymbolizer s;
    const std::string pid = std::to_string(getpid());
    for (const auto& m : tracectl::symbols::readProcMaps(getpid())) {
        s.process("[1] (+0) vm tracectl_vm_map: { cpu_id = 0 }, { tid = 1 }, { start = " +
                  hex(m.start) + ", end = " + hex(m.end) + ", pgoff = " + hex(m.pgoff) +
                  ", pid = " + pid + ", path = \"" + m.path + "\" }");
    }
    const std::uint64_t f = reinterpret_cast<std::uint64_t>(&tracectl_symbolizer_test_function) + 5;
    const std::string line = "[2] (+1) vm e: { cpu_id = 1 }, { tid = 1, "
                             "_callstack_user_length = 1, callstack_user = [ [0] = " +
                             hex(f) + " ] }, { }";
    EXPECT_EQ(s.process(line), line) << "thread 1's process is not known yet";
    const std::string thread =
        "[2] (+0) vm tracectl_thread: { cpu_id = 1 }, { tid = 1 }, { tid = 1, pid = " + pid + " }";
    EXPECT_EQ(s.process(thread), thread) << "a thread line passes unchanged";
    EXPECT_NE(s.process(line).find(" <tracectl_symbolizer_test_function+0x5 "
                                   "[cli_stack_symbolizer_test]>"),
              std::string::npos)
        << s.process(line);
    // The tid reused by a process's main thread: that process's own mappings (none here).
    s.process("[3] (+0) vm tracectl_thread: { cpu_id = 1 }, { tid = 1 }, { tid = 1, pid = 1 }");
    EXPECT_EQ(s.process(line), line);
}
