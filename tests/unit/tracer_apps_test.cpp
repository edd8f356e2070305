// UstTracer's app logic with a fake AppCommands (fake_app_commands.hpp) and
// the real consumer (tracectl-consumerd, started by fork/exec): one app's
// hung set-up delays no other app's, an app that leaves mid-set-up is
// never started or stopped, a rule enabled while an app is being set up
// reaches it once, and Stop waits for its apps' stop.
#include "fake_app_commands.hpp"
#include "tracing/ust_tracer.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <endian.h>
#include <future>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace tracectl;
using tracectl::testing::FakeAppCommands;
using namespace std::chrono_literals;

namespace {

/// A gate jobs wait at until it opens (or 10 s pass, so a broken test ends).
class Gate {
public:
    void open() {
        std::lock_guard lock(mutex_);
        open_ = true;
        changed_.notify_all();
    }
    bool wait(std::chrono::milliseconds within = 10s) {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, within, [this] { return open_; });
    }

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    bool open_ = false;
};

/// The app thread: a loop on a thread of its own.
class AppThread {
public:
    AppThread() : thread_([this] { loop_.run(); }) {}
    ~AppThread() {
        loop_.post([this] { loop_.exit(0); });
        thread_.join();
    }
    EventLoop& loop() { return loop_; }
    /// Runs `f` on the loop and waits for it.
    template <typename F>
    void run(F f) {
        std::promise<void> done;
        loop_.post([&] {
            f();
            done.set_value();
        });
        done.get_future().wait();
    }

private:
    EventLoop loop_;
    std::thread thread_;
};

/// Pids no process has (pidfd_open fails: nothing is watched).
constexpr pid_t kFirstPid = 4'000'000;

std::shared_ptr<UstApp> fakeApp(pid_t pid, std::vector<UniqueFd>& peers) {
    auto app = std::make_shared<UstApp>();
    app->info.pid = pid;
    app->info.uid = 0;
    app->info.bitness = 64;
    app->info.name = "fake";
    app->info.uint8Alignment = 8;
    app->info.uint16Alignment = 16;
    app->info.uint32Alignment = 32;
    app->info.uint64Alignment = 64;
    app->info.longAlignment = 64;
    app->info.byteOrder = BYTE_ORDER;
    app->info.tracerMajor = 2;
    app->info.tracerMinor = 13;
    app->info.registeredAt = std::chrono::system_clock::now();
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    app->command = UniqueFd(sv[0]);
    peers.emplace_back(sv[1]);
    return app;
}

class TracerApps : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/tracer-apps-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        TracerConfig config;
        config.consumerBinary = TEST_CONSUMERD;
        config.useSystemd = false;
        config.daemonVersion = "test";
        tracer_ = std::make_unique<UstTracer>(config, commands_);
        thread_.run([&] {
            tracer_->attach(
                thread_.loop(),
                [](int, std::function<void()>, uint32_t) { return EventSourcePtr{}; },
                [this](const std::string&, const std::string& why) { failure_ = why; });
        });
    }
    void TearDown() override {
        released_.open(); // whatever still hangs
        if (tracer_) {
            std::promise<void> destroyed;
            thread_.run([&] {
                tracer_->destroy(snapshot_.idHex,
                                 [&](std::optional<Error>) { destroyed.set_value(); });
            });
            EXPECT_EQ(destroyed.get_future().wait_for(20s), std::future_status::ready);
            thread_.run([&] { tracer_.reset(); });
        }
        std::system(("rm -rf " + dir_).c_str());
    }

    /// Starts the session (one channel, one rule) and waits for Start's answer.
    void start() {
        snapshot_.idHex = "0123456789abcdef0123456789abcdef";
        snapshot_.name = "apps";
        snapshot_.outputPath = dir_ + "/trace";
        ChannelConfig channel;
        channel.name = "channel0";
        channel.subbufSize = 4096;
        channel.subbufCount = 2;
        snapshot_.channels.push_back(channel);
        EventRule rule;
        rule.channel = "channel0";
        rule.pattern = "first:*";
        snapshot_.rules.push_back(rule);
        std::promise<std::optional<Error>> started;
        thread_.run([&] { tracer_->start(snapshot_, [&](auto e) { started.set_value(e); }); });
        auto f = started.get_future();
        ASSERT_EQ(f.wait_for(20s), std::future_status::ready);
        const auto e = f.get();
        ASSERT_FALSE(e) << e->what();
    }

    /// Registers `app`; `ready` is opened once its register_done may go.
    void registerApp(const std::shared_ptr<UstApp>& app, Gate& ready) {
        thread_.run([&] { tracer_->onAppRegistered(app, [&ready] { ready.open(); }); });
    }

    /// Hangs app `pid`'s calls named `call` until released_ opens.
    void hang(pid_t pid, const std::string& call) {
        commands_->before = [this, pid, call](pid_t p, const std::string& name) {
            if (p == pid && name == call) {
                hung_.open();
                released_.wait();
            }
        };
    }

    std::size_t count(pid_t pid, const std::string& call) {
        const auto calls = commands_->calls(pid);
        return static_cast<std::size_t>(std::count(calls.begin(), calls.end(), call));
    }

    std::shared_ptr<FakeAppCommands> commands_ = std::make_shared<FakeAppCommands>();
    std::string dir_;
    AppThread thread_;
    std::unique_ptr<UstTracer> tracer_;
    SessionSnapshot snapshot_;
    std::string failure_;
    std::vector<UniqueFd> peers_;
    Gate hung_, released_;
};

} // namespace

TEST_F(TracerApps, AHungAppDoesNotDelayAnotherAppsSetUp) {
    start();
    const pid_t slow = kFirstPid, quick = kFirstPid + 1;
    hang(slow, "create_session");
    Gate slowReady, quickReady;
    registerApp(fakeApp(slow, peers_), slowReady);
    ASSERT_TRUE(hung_.wait());
    registerApp(fakeApp(quick, peers_), quickReady);
    // Set up, started and told register_done while the other one hangs.
    EXPECT_TRUE(quickReady.wait(3s));
    EXPECT_EQ(count(quick, "create_event first:*"), 1u);
    EXPECT_EQ(count(quick, "start"), 1u);
    EXPECT_FALSE(slowReady.wait(100ms));
    released_.open();
    EXPECT_TRUE(slowReady.wait());
}

TEST_F(TracerApps, AnAppThatLeavesMidSetUpIsNeitherStartedNorStopped) {
    start();
    const pid_t leaving = kFirstPid + 2;
    hang(leaving, "send_stream");
    Gate ready;
    registerApp(fakeApp(leaving, peers_), ready);
    ASSERT_TRUE(hung_.wait());
    thread_.run([&] { tracer_->onAppGone(leaving); });
    released_.open();
    EXPECT_TRUE(ready.wait()); // told, so that its registration ends
    std::promise<void> stopped;
    thread_.run([&] { tracer_->stop(snapshot_.idHex, [&](auto) { stopped.set_value(); }); });
    ASSERT_EQ(stopped.get_future().wait_for(20s), std::future_status::ready);
    // The job made no call after the app left.
    EXPECT_EQ(count(leaving, "create_event first:*"), 0u);
    EXPECT_EQ(count(leaving, "start"), 0u);
    EXPECT_EQ(count(leaving, "stop"), 0u);
    EXPECT_TRUE(failure_.empty()) << failure_;
}

TEST_F(TracerApps, ARuleEnabledDuringASetUpReachesTheAppOnce) {
    start();
    const pid_t app = kFirstPid + 3;
    hang(app, "create_session");
    Gate ready;
    registerApp(fakeApp(app, peers_), ready);
    ASSERT_TRUE(hung_.wait());
    EventRule later;
    later.channel = "channel0";
    later.pattern = "later:*";
    std::promise<void> enabled;
    thread_.run(
        [&] { tracer_->enableEvents(snapshot_.idHex, later, [&](auto) { enabled.set_value(); }); });
    released_.open();
    ASSERT_TRUE(ready.wait());
    ASSERT_EQ(enabled.get_future().wait_for(10s), std::future_status::ready);
    // Once more through the strand: every job queued before has run.
    std::promise<void> idle;
    thread_.run([&] { tracer_->withApp(app, [&] { idle.set_value(); }); });
    ASSERT_EQ(idle.get_future().wait_for(10s), std::future_status::ready);
    EXPECT_EQ(count(app, "create_event first:*"), 1u);
    EXPECT_EQ(count(app, "create_event later:*"), 1u);
    EXPECT_EQ(count(app, "start"), 1u);
}

TEST_F(TracerApps, StopAnswersAfterItsAppsStopped) {
    start();
    const pid_t app = kFirstPid + 4;
    Gate ready;
    registerApp(fakeApp(app, peers_), ready);
    ASSERT_TRUE(ready.wait());
    hang(app, "stop");
    std::promise<void> stopped;
    thread_.run([&] { tracer_->stop(snapshot_.idHex, [&](auto) { stopped.set_value(); }); });
    ASSERT_TRUE(hung_.wait());
    auto f = stopped.get_future();
    EXPECT_EQ(f.wait_for(200ms), std::future_status::timeout);
    released_.open();
    EXPECT_EQ(f.wait_for(20s), std::future_status::ready);
    EXPECT_EQ(count(app, "stop"), 1u);
}
