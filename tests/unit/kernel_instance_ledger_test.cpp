// InstanceLedger (daemon/kernel/instance_ledger.hpp): the tracefs instances
// a daemon made, written down so that the next daemon of the same instance
// removes what a crash left, and nothing of another daemon's.
#include "kernel/instance_ledger.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

using tracectl::kernel::InstanceLedger;

namespace {

std::filesystem::path tempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ledger-XXXXXX").string();
    return ::mkdtemp(tmpl.data());
}

} // namespace

TEST(InstanceLedger, NamesAreWrittenDownOnceAndCrossedOut) {
    const auto dir = tempDir();
    InstanceLedger ledger(dir / "kernel-instances");
    EXPECT_TRUE(ledger.read().empty()) << "no file: nothing";
    ledger.add("tracectl-0123abcd");
    ledger.add("tracectl-ffff");
    ledger.add("tracectl-0123abcd");
    EXPECT_EQ(ledger.read(), (std::vector<std::string>{"tracectl-0123abcd", "tracectl-ffff"}));
    // Another object over the same file (the next daemon) reads the same.
    EXPECT_EQ(InstanceLedger(dir / "kernel-instances").read(), ledger.read());
    ledger.remove("tracectl-0123abcd");
    ledger.remove("tracectl-never");
    EXPECT_EQ(ledger.read(), (std::vector<std::string>{"tracectl-ffff"}));
    std::filesystem::remove_all(dir);
}

TEST(InstanceLedger, WhatIsNotAnInstanceNameIsNeverTaken) {
    const auto dir = tempDir();
    {
        std::ofstream f(dir / "kernel-instances");
        f << "tracectl-ok\n../../etc\ntracectl-\ntracectl-a/b\n\nfoo\ntracectl-"
          << std::string(65, 'x') << "\ntracectl-ok\n";
    }
    InstanceLedger ledger(dir / "kernel-instances");
    EXPECT_EQ(ledger.read(), std::vector<std::string>{"tracectl-ok"});
    ledger.add("../escape");
    ledger.add("other-tool");
    EXPECT_EQ(ledger.read(), std::vector<std::string>{"tracectl-ok"});
    EXPECT_TRUE(InstanceLedger::isInstanceName("tracectl-0123-1"));
    EXPECT_FALSE(InstanceLedger::isInstanceName("tracectl-a b"));
    std::filesystem::remove_all(dir);
}

TEST(InstanceLedger, AnEmptyPathKeepsNothing) {
    InstanceLedger ledger({});
    ledger.add("tracectl-x");
    EXPECT_TRUE(ledger.read().empty());
}
