// tracectld on a bus that goes away: it exits with status 1 (tracectld(8):
// "1 failure") and says why in its log, instead of spinning or hanging on.
// A private dbus-daemon (no sandbox): nothing else on it to disturb.
#include "child_process.hpp"
#include "eventually.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>

using namespace std::chrono_literals;
using tracectl::test::ChildProcess;
using tracectl::test::eventually;

namespace {

std::string readFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(BusLoss, TheDaemonExitsWithStatusOneAndSaysWhy) {
    if (geteuid() != 0)
        GTEST_SKIP() << "needs root (tracectld's app endpoints)";
    const char* daemon = std::getenv("TRACECTLD");
    ASSERT_NE(daemon, nullptr) << "TRACECTLD not set";
    char tmpl[] = "/tmp/tracectl-bus-loss-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl;
    const std::string address = "unix:path=" + dir + "/bus";

    ChildProcess bus(
        {"dbus-daemon", "--session", "--nofork", "--nopidfile", "--address=" + address}, {},
        dir + "/dbus.log");
    ASSERT_TRUE(eventually([&] { return std::filesystem::exists(dir + "/bus"); }, 5s))
        << readFile(dir + "/dbus.log");
    const std::string log = dir + "/tracectld.log";
    ChildProcess tracectld({daemon, "--bus-address", address, "--lttng-home", dir, "--spawner",
                            "direct", "--log-target", "stderr"},
                           {}, log);
    ASSERT_TRUE(eventually([&] { return readFile(log).find("ready") != std::string::npos; }, 10s))
        << readFile(log);

    bus.kill(SIGKILL);
    EXPECT_EQ(tracectld.wait(5000), 1) << readFile(log);
    EXPECT_NE(readFile(log).find("lost the connection to the bus"), std::string::npos)
        << readFile(log);
    std::filesystem::remove_all(dir);
}

} // namespace
