// Starting a process the way the daemon starts a session's consumer: a
// systemd transient service on the sandbox's real systemd manager (and the
// fork/exec fallback), with a socketpair end as its stdin, as another user;
// the launchers' callbacks come from an EventLoop the test drives.
#include "common/error.hpp"
#include "common/event_loop.hpp"
#include "recording/consumer_launcher.hpp"
#include "sandbox.hpp"

#include <chrono>
#include <cstdint>
#include <gtest/gtest.h>
#include <memory>
#include <optional>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

using namespace tracectl;
using namespace tracectl::test;
using namespace std::chrono_literals;

namespace {

/// Dispatches `loop` until `done()` or `timeout`; returns done().
template <typename Pred>
bool drive(EventLoop& loop, Pred done, std::chrono::milliseconds timeout) {
    bool late = false;
    auto timer = loop.addTimer(timeout, [&late] { late = true; });
    while (!done() && !late)
        if (sd_event_run(loop.get(), UINT64_MAX) < 0)
            return false;
    return done();
}

/// What a callback was given, once it was called.
template <typename T>
struct Outcome {
    bool called = false;
    T value{};
    auto setter() {
        return [this](T v) {
            called = true;
            value = std::move(v);
        };
    }
};

class ConsumerLauncherTest : public ::testing::TestWithParam<std::string> {
protected:
    static void SetUpTestSuite() { sandbox_ = std::make_unique<Sandbox>(); }
    static void TearDownTestSuite() { sandbox_.reset(); }

    void SetUp() override {
        launcher_ = GetParam() == "systemd" ? makeSystemdLauncher(loop_, sandbox_->systemdAddress())
                                            : makeDirectLauncher(loop_);
    }

    /// A spec running `binary args` as nobody, named after the test.
    ConsumerSpec spec(const std::string& name, std::string binary,
                      std::vector<std::string> args) const {
        ConsumerSpec s;
        s.unitName = "tracectl-consumer-" + name + "-" + GetParam() + ".service";
        s.binary = std::move(binary);
        s.args = std::move(args);
        s.uid = 65534;
        s.gid = 65534;
        s.outputDir = sandbox_->dir();
        return s;
    }

    /// Starts `s` with a new socketpair's end as stdin; returns our end.
    UniqueFd start(const ConsumerSpec& s) {
        int sv[2];
        EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        UniqueFd ours(sv[0]);
        Outcome<std::optional<Error>> started;
        launcher_->start(s, UniqueFd(sv[1]), started.setter());
        EXPECT_FALSE(started.called) << "called back from inside start()";
        EXPECT_TRUE(drive(
            loop_, [&] { return started.called; }, 15s));
        EXPECT_FALSE(started.value) << started.value->what();
        return ours;
    }

    /// whenEnded(`timeout`), driven until it answers (bounded).
    std::optional<std::string> ended(const ConsumerSpec& s, std::chrono::milliseconds timeout) {
        Outcome<std::optional<std::string>> e;
        launcher_->whenEnded(s, timeout, e.setter());
        EXPECT_TRUE(drive(
            loop_, [&] { return e.called; }, timeout + 10s));
        return e.value;
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
    EventLoop loop_;
    std::unique_ptr<ConsumerLauncher> launcher_;
};

std::unique_ptr<Sandbox> ConsumerLauncherTest::sandbox_;

} // namespace

TEST_P(ConsumerLauncherTest, RunsAsTheOwnerWithTheSocketAsStdin) {
    // Answers on the socket (its stdin) with its uid and what it read.
    const auto s = spec("test", "/bin/sh", {"-c", "read x; echo \"$(id -u):$(id -g) got $x\" >&0"});
    UniqueFd ours = start(s);
    ASSERT_EQ(write(ours.get(), "ping\n", 5), 5);
    EXPECT_EQ(readLine(ours.get()), "65534:65534 got ping");
    EXPECT_TRUE(ended(s, 5s).has_value()) << "the process is still running after it exited";
}

TEST_P(ConsumerLauncherTest, StopEndsALongRunningConsumer) {
    const auto s = spec("long", "/bin/sleep", {"600"});
    UniqueFd ours = start(s);
    Outcome<std::optional<Error>> stopped;
    launcher_->stop(s, stopped.setter());
    ASSERT_TRUE(drive(
        loop_, [&] { return stopped.called; }, 15s));
    EXPECT_FALSE(stopped.value) << stopped.value->what();
    EXPECT_TRUE(ended(s, 1s).has_value()) << "still running after stop()";
}

TEST_P(ConsumerLauncherTest, AConsumerThatExitsTellsItsStatus) {
    const auto s = spec("exits", "/bin/sh", {"-c", "read x; exit 7"});
    UniqueFd ours = start(s);
    // Watched while it still runs: the end comes as it happens.
    Outcome<std::optional<std::string>> e;
    launcher_->whenEnded(s, 10s, e.setter());
    ASSERT_FALSE(drive(
        loop_, [&] { return e.called; }, 200ms))
        << e.value.value_or("nullopt");
    ASSERT_EQ(write(ours.get(), "go\n", 3), 3);
    ASSERT_TRUE(drive(
        loop_, [&] { return e.called; }, 15s));
    ASSERT_TRUE(e.value.has_value());
    EXPECT_EQ(*e.value, GetParam() == "systemd" ? "ActiveState failed, Result exit-code, status 7"
                                                : "exited with status 7");
}

TEST_P(ConsumerLauncherTest, AConsumerKilledBySignalSaysSo) {
    // The arguments reach the process as given with either launcher (the
    // systemd one escapes what ExecStart= would expand): "$$" is the shell's.
    const auto s = spec("killed", "/bin/sh", {"-c", "read x; kill -KILL $$"});
    UniqueFd ours = start(s);
    ASSERT_EQ(write(ours.get(), "go\n", 3), 3);
    const auto reason = ended(s, 10s);
    ASSERT_TRUE(reason.has_value());
    EXPECT_EQ(*reason, GetParam() == "systemd" ? "ActiveState failed, Result signal"
                                               : "killed by signal Killed");
}

TEST_P(ConsumerLauncherTest, OneStillRunningAtTheDeadlineIsStopped) {
    const auto s = spec("deadline", "/bin/sleep", {"600"});
    UniqueFd ours = start(s);
    EXPECT_EQ(ended(s, 300ms), std::nullopt);
    // Stopped by the launcher: gone soon after.
    EXPECT_TRUE(ended(s, 10s).has_value());
}

TEST_P(ConsumerLauncherTest, DestroyedWithCallsUnderWayCallsNobody) {
    const auto s = spec("destroyed", "/bin/sleep", {"600"});
    UniqueFd ours = start(s);
    bool called = false;
    launcher_->whenEnded(s, 10s, [&called](std::optional<std::string>) { called = true; });
    launcher_->stop(s, [&called](std::optional<Error>) { called = true; });
    launcher_.reset();
    // Whatever was under way is dropped with it.
    EXPECT_FALSE(drive(
        loop_, [&] { return called; }, 500ms));
    // Not left running: stopped here, in case (direct: killed by the
    // destructor). The stop() sent before the reset may have stopped it
    // already, and systemd collected it: "not loaded" (exit 5) is as good.
    if (GetParam() == "systemd") {
        const int stopped = sandbox_->systemctl({"stop", s.unitName}).exitCode;
        EXPECT_TRUE(stopped == 0 || stopped == 5) << "systemctl stop: exit " << stopped;
        EXPECT_NE(sandbox_->systemctl({"is-active", s.unitName}).out, "active\n");
    }
}

TEST(SystemdLauncher, AFailingUnitIsReportedNotHidden) {
    Sandbox sandbox;
    EventLoop loop;
    auto l = makeSystemdLauncher(loop, sandbox.systemdAddress());
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    UniqueFd ours(sv[0]);
    ConsumerSpec spec;
    spec.unitName = "tracectl-consumer-bad.service";
    spec.binary = "/nonexistent/tracectl-consumerd";
    spec.outputDir = sandbox.dir();
    Outcome<std::optional<Error>> started;
    l->start(spec, UniqueFd(sv[1]), started.setter());
    ASSERT_TRUE(drive(
        loop, [&] { return started.called; }, 15s));
    ASSERT_TRUE(started.value.has_value());
    // The manager's word: its exec failed.
    EXPECT_NE(std::string(started.value->what())
                  .find("tracectl-consumer-bad.service did not start (ActiveState failed, Result "
                        "exit-code"),
              std::string::npos)
        << started.value->what();
}

TEST(SystemdLauncher, AManagerThatIsNotThereIsAClearError) {
    EventLoop loop;
    try {
        makeSystemdLauncher(loop, "unix:path=/nonexistent/systemd/private");
        FAIL() << "connected to nothing";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("cannot be reached"), std::string::npos) << e.what();
    }
}

INSTANTIATE_TEST_SUITE_P(Launchers, ConsumerLauncherTest, ::testing::Values("systemd", "direct"));
