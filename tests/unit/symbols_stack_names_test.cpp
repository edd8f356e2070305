// Names of user and kernel call stack addresses (symbols/): /proc/PID/maps' parsing in
// the real file, ElfSymbols over a real ELF file (this test's own executable, through its
// own mappings: the file offset of an address, the PT_LOAD segment, the symbol), and
// StackNames' frames as dtrace prints them.
#include "symbols/elf_symbols.hpp"
#include "symbols/proc_maps.hpp"
#include "symbols/stack_names.hpp"

#include <cstdint>
#include <gtest/gtest.h>
#include <unistd.h>

using tracectl::symbols::ElfSymbols;
using tracectl::symbols::readProcMaps;
using tracectl::symbols::StackNames;

// NOLINTNEXTLINE(readability-identifier-naming): the tests find it by this name
extern "C" __attribute__((noinline, used)) int tracectl_symbols_test_function(int x) {
    __asm__ volatile("" ::: "memory");
    return x * 3 + 1;
}

namespace {

std::uint64_t functionAddress() {
    return reinterpret_cast<std::uint64_t>(&tracectl_symbols_test_function);
}

/// StackNames with this process's executable mappings, as the consumer writes them.
StackNames ownNames() {
    StackNames names;
    for (auto& m : readProcMaps(getpid()))
        names.learnMapping(getpid(), m.start, m.end, m.pgoff, std::move(m.path));
    return names;
}

} // namespace

TEST(StackNames, AUserAddressIsNamedByItsMappingAndTheFilesSymbols) {
    StackNames names = ownNames();
    const auto frame = names.userFrame(getpid(), functionAddress() + 3);
    ASSERT_TRUE(frame.has_value()) << "a mapping of this executable holds the function";
    EXPECT_EQ(frame->object, "symbols_stack_names_test");
    ASSERT_TRUE(frame->symbol.has_value());
    EXPECT_EQ(frame->symbol->name, "tracectl_symbols_test_function");
    EXPECT_EQ(frame->symbol->offset, 3u);
    EXPECT_EQ(StackNames::dtraceText(frame, functionAddress() + 3),
              "symbols_stack_names_test`tracectl_symbols_test_function+0x3");
    EXPECT_EQ(
        StackNames::dtraceText(names.userFrame(getpid(), functionAddress()), functionAddress()),
        "symbols_stack_names_test`tracectl_symbols_test_function")
        << "no offset at the symbol's first byte, as dtrace prints it";
}

TEST(StackNames, UnknownProcessesAndAddressesStayRaw) {
    StackNames names = ownNames();
    EXPECT_FALSE(names.userFrame(getpid() + 1, functionAddress()).has_value())
        << "another process: none of its mappings was learnt";
    EXPECT_FALSE(names.userFrame(getpid(), 0x10).has_value());
    EXPECT_EQ(StackNames::dtraceText(std::nullopt, 0x10), "0x10");
    names.learnMapping(42, 0x1000, 0x2000, 0, "/nonexistent/lib.so");
    const auto unread = names.userFrame(42, 0x1010);
    ASSERT_TRUE(unread.has_value());
    EXPECT_FALSE(unread->symbol.has_value()) << "a file that cannot be read has no symbols";
    EXPECT_EQ(StackNames::dtraceText(unread, 0x1010), "lib.so`0x1010");
}

TEST(StackNames, KernelFramesAreNamedByTheSymbolsLearnt) {
    StackNames names;
    names.learnKernelSymbol(0xffffffff81000100, 0xffffffff81000200, "__schedule", "");
    names.learnKernelSymbol(0xffffffffc0000000, 0xffffffffc0000100, "ext4_fn", "ext4");
    EXPECT_EQ(StackNames::dtraceText(names.kernelFrame(0xffffffff81000110), 0),
              "vmlinux`__schedule+0x10");
    EXPECT_EQ(StackNames::dtraceText(names.kernelFrame(0xffffffffc0000001), 0), "ext4`ext4_fn+0x1");
    EXPECT_FALSE(names.kernelFrame(0xffffffff81000200).has_value()) << "past its end";
}

TEST(StackNames, ALaterMappingHidesAnEarlierOneItOverlaps) {
    StackNames names;
    names.learnMapping(7, 0x1000, 0x3000, 0, "/bin/before-exec");
    names.learnMapping(7, 0x2000, 0x4000, 0, "/bin/after-exec");
    EXPECT_EQ(names.userFrame(7, 0x1500)->object, "before-exec");
    EXPECT_EQ(names.userFrame(7, 0x2500)->object, "after-exec");
    EXPECT_EQ(names.userFrame(7, 0x2500)->fileOffset, 0x500u);
}

TEST(ElfSymbols, AFileThatIsNoElfHasNone) {
    const ElfSymbols none = ElfSymbols::load("/proc/self/maps");
    EXPECT_FALSE(none.loaded());
    EXPECT_FALSE(none.atFileOffset(0).has_value());
}
