// Userspace probes' pure parts: LTTng's --userspace-probe locations
// (common/userspace_probe_location), USDT argument specifications into
// uprobe_events fetch arguments (kernel/sdt_arguments), and ELF functions and
// stapsdt notes into file offsets (kernel/elf_probe_points), read from this
// test program itself, which has both.
#include "common/unique_fd.hpp"
#include "kernel/elf_probe_points.hpp"
#include "kernel/sdt_arguments.hpp"
#include "userspace_probe_location.hpp"

#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <sys/sdt.h>
#include <unistd.h>

// NOLINTNEXTLINE(readability-identifier-naming): probed by this name in the ELF file
extern "C" __attribute__((noinline)) int tracectl_unit_probed(int i) {
    __asm__ volatile("" ::: "memory");
    DTRACE_PROBE2(tracectl_unit, fired, i, 7L);
    return i + 1;
}

namespace {

using namespace tracectl;
using namespace tracectl::kernel;

UserspaceProbeLocation parsed(const std::string& text) {
    std::string why;
    const auto l = parseUserspaceProbeLocation(text, why);
    EXPECT_TRUE(l.has_value()) << text << ": " << why;
    return l.value_or(UserspaceProbeLocation{});
}

TEST(UserspaceProbeLocation, ParsesLttngsSpellingsAndOurReturn) {
    const auto elf = parsed("elf:/usr/bin/app:main");
    EXPECT_EQ(elf.kind, UserspaceProbeLocation::Kind::Function);
    EXPECT_EQ(elf.path, "/usr/bin/app");
    EXPECT_EQ(elf.symbol, "main");
    EXPECT_EQ(parsed("/usr/bin/app:main"), elf) << "elf: is the default, as in LTTng";
    const auto ret = parsed("elf:/usr/bin/app:main%return");
    EXPECT_EQ(ret.kind, UserspaceProbeLocation::Kind::FunctionReturn);
    EXPECT_EQ(ret.symbol, "main");
    const auto args = parsed("elf:/usr/bin/app:main%args");
    EXPECT_EQ(args.kind, UserspaceProbeLocation::Kind::FunctionArguments);
    EXPECT_EQ(args.symbol, "main");
    const auto sdt = parsed("sdt:/usr/bin/app:prov:probe");
    EXPECT_EQ(sdt.kind, UserspaceProbeLocation::Kind::Sdt);
    EXPECT_EQ(sdt.provider, "prov");
    EXPECT_EQ(sdt.probe, "probe");
    const auto escaped = parsed("elf:/odd\\:dir/a\\%b:f");
    EXPECT_EQ(escaped.path, "/odd:dir/a%b");
    for (const auto& l : {elf, ret, args, sdt, escaped})
        EXPECT_EQ(parsed(formatUserspaceProbeLocation(l)), l) << formatUserspaceProbeLocation(l);
}

TEST(UserspaceProbeLocation, RefusesWhatLttngRefuses) {
    for (const char* bad :
         {"", "app", "elf::main", "sdt:app:prov", "xyz:a:b", "sdt:a:b:c%return", "elf:/a:0x400430",
          "elf:/a:4194364", "elf:/a:main+0x10", "elf:/a:main+16", "elf:/a:main%ret",
          "sdt:a:b:c%args", "elf:/a:main%args%return"}) {
        std::string why;
        EXPECT_FALSE(parseUserspaceProbeLocation(bad, why).has_value()) << bad;
        EXPECT_FALSE(why.empty()) << bad;
    }
}

TEST(SdtArguments, TypesAndOperandsBecomeFetchArguments) {
    EXPECT_EQ(sdtFetchArguments(""), "");
    EXPECT_EQ(sdtFetchArguments("-4@%edi -8@%rsi"), "arg0=%di:s32 arg1=%si:s64");
    EXPECT_EQ(sdtFetchArguments("8@-16(%rbp) 1@(%rax) 2@8(%rsp)"),
              "arg0=-16(%bp):u64 arg1=+0(%ax):u8 arg2=+8(%sp):u16");
    EXPECT_EQ(sdtFetchArguments("4@$42 -4@$-1"), "arg0=\\42:u32 arg1=\\-1:s32");
    EXPECT_EQ(sdtFetchArguments("8@%r12 -4@%r9d 1@%al"), "arg0=%r12:u64 arg1=%r9:s32 arg2=%ax:u8");
    for (const char* bad : {"4@foo(%rip)", "8@(%rax,%rbx,8)", "3@%eax", "%eax", "4@%xmm0"})
        EXPECT_THROW(sdtFetchArguments(bad), std::invalid_argument) << bad;
}

class ElfProbePoints : public ::testing::Test {
protected:
    void SetUp() override {
        self_ = UniqueFd(::open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
        ASSERT_TRUE(self_.valid());
    }
    UniqueFd self_;
};

TEST_F(ElfProbePoints, AFunctionIsAtTheFileOffsetOfItsCode) {
    const std::uint64_t offset = elfFunctionOffset(self_.get(), "self", "tracectl_unit_probed");
    // The bytes there are the function's first bytes, as mapped in memory.
    unsigned char inFile[16] = {};
    ASSERT_EQ(::pread(self_.get(), inFile, sizeof inFile, static_cast<off_t>(offset)),
              static_cast<ssize_t>(sizeof inFile));
    const auto* inMemory = reinterpret_cast<const unsigned char*>(&tracectl_unit_probed);
    EXPECT_EQ(std::string(inFile, inFile + 16), std::string(inMemory, inMemory + 16));
    EXPECT_GT(tracectl_unit_probed(1), 0);
    try {
        elfFunctionOffset(self_.get(), "self", "tracectl_no_such_function");
        ADD_FAILURE() << "no such function";
    } catch (const ElfProbeError& e) {
        EXPECT_NE(std::string(e.what()).find("no function named"), std::string::npos);
    }
}

TEST_F(ElfProbePoints, AnSdtProbeHasItsSiteAndArguments) {
    const auto sites = elfSdtProbeSites(self_.get(), "self", "tracectl_unit", "fired");
    ASSERT_EQ(sites.size(), 1u);
    EXPECT_EQ(sites.front().semaphore, 0u);
    // The site is a nop inside tracectl_unit_probed.
    const std::uint64_t function = elfFunctionOffset(self_.get(), "self", "tracectl_unit_probed");
    EXPECT_GE(sites.front().offset, function);
    EXPECT_LT(sites.front().offset, function + 64);
    unsigned char nop = 0;
    ASSERT_EQ(::pread(self_.get(), &nop, 1, static_cast<off_t>(sites.front().offset)), 1);
    EXPECT_EQ(nop, 0x90);
    // Two arguments, an int and a long, wherever the compiler put them.
    const std::string fetch = sdtFetchArguments(sites.front().arguments);
    EXPECT_EQ(fetch.rfind("arg0=", 0), 0u) << fetch;
    EXPECT_NE(fetch.find(":s32 arg1="), std::string::npos) << sites.front().arguments;
    EXPECT_EQ(fetch.substr(fetch.size() - 4), ":s64") << sites.front().arguments;
    EXPECT_THROW(elfSdtProbeSites(self_.get(), "self", "tracectl_unit", "nosuch"), ElfProbeError);
}

TEST(ElfProbePointsOther, AnotherMachinesElfAndAnyOtherFileAreRefused) {
    char path[] = "/tmp/tracectl-elf-XXXXXX";
    UniqueFd fd(::mkstemp(path));
    ASSERT_TRUE(fd.valid());
    std::string header(64, '\0');
    header.replace(0, 4,
                   "\x7f"
                   "ELF");
    header[4] = 2;
    header[5] = 1;
    header[6] = 1;
    header[16] = 2;
    header[18] = static_cast<char>(183); // EM_AARCH64
    header[20] = 1;
    header[52] = 64;
    ASSERT_EQ(::write(fd.get(), header.data(), header.size()), 64);
    try {
        elfFunctionOffset(fd.get(), "it", "main");
        ADD_FAILURE() << "an aarch64 ELF file";
    } catch (const ElfProbeError& e) {
        EXPECT_NE(std::string(e.what()).find("another machine"), std::string::npos) << e.what();
    }
    ASSERT_EQ(::ftruncate(fd.get(), 0), 0);
    ASSERT_EQ(::pwrite(fd.get(), "#!/bin/sh\n", 10, 0), 10);
    EXPECT_THROW(elfFunctionOffset(fd.get(), "it", "main"), ElfProbeError);
    ::unlink(path);
}

} // namespace
