// Starting a process the way the daemon starts a session's consumer: a
// systemd transient service on the sandbox's real systemd manager (and the
// fork/exec fallback), with a socketpair end as its stdin, as another user.
#include "common/error.hpp"
#include "consumer/consumer_launcher.hpp"
#include "eventually.hpp"
#include "sandbox.hpp"

#include <chrono>
#include <gtest/gtest.h>
#include <memory>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace tracectl;
using namespace tracectl::test;

namespace {

class ConsumerLauncherTest : public ::testing::TestWithParam<std::string> {
protected:
    static void SetUpTestSuite() { sandbox_ = std::make_unique<Sandbox>(); }
    static void TearDownTestSuite() { sandbox_.reset(); }

    std::unique_ptr<ConsumerLauncher> launcher() {
        return GetParam() == "systemd" ? makeSystemdLauncher(sandbox_->systemdAddress())
                                       : makeDirectLauncher();
    }

    /// Reads one line (bounded by 5 s) from `fd`.
    static std::string readLine(int fd) {
        std::string line;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (std::chrono::steady_clock::now() < deadline) {
            pollfd p{fd, POLLIN, 0};
            if (poll(&p, 1, 100) <= 0)
                continue;
            char c = 0;
            if (read(fd, &c, 1) != 1 || c == '\n')
                break;
            line += c;
        }
        return line;
    }

    static std::unique_ptr<Sandbox> sandbox_;
};

std::unique_ptr<Sandbox> ConsumerLauncherTest::sandbox_;

} // namespace

TEST_P(ConsumerLauncherTest, RunsAsTheOwnerWithTheSocketAsStdin) {
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    UniqueFd ours(sv[0]);
    ConsumerSpec spec;
    spec.unitName = "tracectl-consumer-test-" + GetParam() + ".service";
    spec.binary = "/bin/sh";
    // Answers on the socket (its stdin) with its uid and what it read.
    spec.args = {"-c", "read x; echo \"$(id -u):$(id -g) got $x\" >&0"};
    spec.uid = 65534;
    spec.gid = 65534;
    spec.outputDir = sandbox_->dir();
    auto l = launcher();
    l->start(spec, UniqueFd(sv[1]));
    ASSERT_EQ(write(ours.get(), "ping\n", 5), 5);
    EXPECT_EQ(readLine(ours.get()), "65534:65534 got ping");
    EXPECT_TRUE(eventually([&] { return !l->running(spec); }, std::chrono::seconds(5)))
        << "the process is still running after it exited";
}

TEST_P(ConsumerLauncherTest, StopEndsALongRunningConsumer) {
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    UniqueFd ours(sv[0]);
    ConsumerSpec spec;
    spec.unitName = "tracectl-consumer-long-" + GetParam() + ".service";
    spec.binary = "/bin/sleep";
    spec.args = {"600"};
    spec.uid = 65534;
    spec.gid = 65534;
    spec.outputDir = sandbox_->dir();
    auto l = launcher();
    l->start(spec, UniqueFd(sv[1]));
    EXPECT_TRUE(l->running(spec));
    l->stop(spec);
    EXPECT_TRUE(eventually([&] { return !l->running(spec); }, std::chrono::seconds(5)));
}

TEST(SystemdLauncher, AFailingUnitIsReportedNotHidden) {
    Sandbox sandbox;
    auto l = makeSystemdLauncher(sandbox.systemdAddress());
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    UniqueFd ours(sv[0]);
    ConsumerSpec spec;
    spec.unitName = "tracectl-consumer-bad.service";
    spec.binary = "/nonexistent/tracectl-consumerd";
    spec.outputDir = sandbox.dir();
    EXPECT_THROW(l->start(spec, UniqueFd(sv[1])), tracectl::Error);
}

INSTANTIATE_TEST_SUITE_P(Launchers, ConsumerLauncherTest, ::testing::Values("systemd", "direct"));
