// StackSymbolizer (cli/stack_symbolizer.hpp): babeltrace2's text lines in,
// the callstack_kernel addresses named by the trace's own
// tracectl_kernel_symbol events.
#include "cli/stack_symbolizer.hpp"

#include <gtest/gtest.h>

using tracectl::cli::StackSymbolizer;

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
