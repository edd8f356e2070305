// The harness of the UstTracer unit tests (tracer_apps_test.cpp,
// tracer_sessions_test.cpp): the tracer on a loop of its own (the app
// thread), a fake AppCommands (fake_app_commands.hpp) for the apps, the
// real consumer (tracectl-consumerd, started by the direct fork/exec
// launcher), and what the tests need to wait on facts: gates, answers
// recorded from the loop, failures reported, the consumers' processes.
#pragma once

#include "fake_app_commands.hpp"
#include "gate.hpp"
#include "ust/ust_tracer.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <endian.h>
#include <filesystem>
#include <fstream>
#include <future>
#include <gtest/gtest.h>
#include <iterator>
#include <mutex>
#include <optional>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <vector>

namespace tracectl::testing {

using namespace std::chrono_literals;

/// The app thread: a loop on a thread of its own.
class AppThread {
public:
    AppThread() : thread_([this] { loop_.run(); }) {}
    ~AppThread() {
        loop_.post([this] { loop_.exit(0); });
        thread_.join();
    }
    AppThread(const AppThread&) = delete;
    AppThread& operator=(const AppThread&) = delete;
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

inline std::shared_ptr<UstApp> fakeApp(pid_t pid, std::vector<UniqueFd>& peers, uid_t uid = 0) {
    auto app = std::make_shared<UstApp>();
    app->info.pid = pid;
    app->info.uid = uid;
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

/// True once `fact()` holds, checked every 10 ms for up to `within`.
template <typename F>
bool eventually(F fact, std::chrono::milliseconds within = 20s) {
    const auto end = std::chrono::steady_clock::now() + within;
    while (!fact()) {
        if (std::chrono::steady_clock::now() >= end)
            return false;
        std::this_thread::sleep_for(10ms);
    }
    return true;
}

/// Records the calls of a tracer callback (made on the loop) for the test
/// thread: each call's error and path, and its rank among every recorded
/// call of the process (to tell which of two callbacks came first). The
/// callbacks share the record, so it outlives the test body if need be.
class Answers {
public:
    struct Call {
        std::optional<Error> error;
        std::string path;
        uint64_t rank = 0;
    };
    UstTracer::Done done() const {
        return [s = state_](std::optional<Error> e) { s->add(std::move(e), ""); };
    }
    Recordings::PathDone withPath() const {
        return [s = state_](std::optional<Error> e, std::string path) {
            s->add(std::move(e), std::move(path));
        };
    }
    /// Waits until `n` calls came (false if not within `within`).
    bool wait(std::size_t n = 1, std::chrono::milliseconds within = 20s) const {
        std::unique_lock lock(state_->mutex);
        return state_->changed.wait_for(lock, within, [&] { return state_->calls.size() >= n; });
    }
    std::size_t count() const {
        std::lock_guard lock(state_->mutex);
        return state_->calls.size();
    }
    /// Call `i` (wait() for it first).
    Call at(std::size_t i = 0) const {
        std::lock_guard lock(state_->mutex);
        return state_->calls.at(i);
    }

private:
    struct State {
        std::mutex mutex;
        std::condition_variable changed;
        std::vector<Call> calls;
        void add(std::optional<Error> e, std::string path) {
            static std::atomic<uint64_t> ranks{0};
            std::lock_guard lock(mutex);
            calls.push_back(Call{std::move(e), std::move(path), ++ranks});
            changed.notify_all();
        }
    };
    std::shared_ptr<State> state_ = std::make_shared<State>();
};

/// The pid of the consumer our process started for the output folder
/// `output` (its "--output <output>" arguments), or -1: found in /proc,
/// among our children (the direct launcher forks them).
inline pid_t consumerOf(const std::string& output) {
    const std::string wanted = std::string("--output") + '\0' + output + '\0';
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string name = entry.path().filename();
        if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit))
            continue;
        std::ifstream stat(entry.path() / "stat");
        std::string line;
        if (!std::getline(stat, line))
            continue;
        // "pid (comm) state ppid ...": comm may hold anything but the last ')'.
        const auto close = line.rfind(')');
        if (close == std::string::npos)
            continue;
        char state = 0;
        pid_t ppid = 0;
        if (std::sscanf(line.c_str() + close + 1, " %c %d", &state, &ppid) != 2 || ppid != getpid())
            continue;
        std::ifstream cmdline(entry.path() / "cmdline");
        const std::string args{std::istreambuf_iterator<char>(cmdline), {}};
        if (args.find(wanted) != std::string::npos)
            return static_cast<pid_t>(std::stol(name));
    }
    return -1;
}

/// The state letter of process `pid` in /proc ('T': stopped), or 0.
inline char processState(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line))
        return 0;
    const auto close = line.rfind(')');
    return close == std::string::npos || close + 2 >= line.size() ? 0 : line[close + 2];
}

/// A process we watch: its pidfd tells when it has exited.
class Process {
public:
    explicit Process(pid_t pid) : pid_(pid) {
        if (pid > 0)
            pidfd_.reset(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
    }
    pid_t pid() const { return pid_; }
    bool valid() const { return pidfd_.valid(); }
    void signal(int sig) const {
        if (pidfd_.valid())
            syscall(SYS_pidfd_send_signal, pidfd_.get(), sig, nullptr, 0);
    }
    /// True once it has exited (within `within`).
    bool exited(std::chrono::milliseconds within = 20s) const {
        pollfd p{pidfd_.get(), POLLIN, 0};
        return pidfd_.valid() && poll(&p, 1, static_cast<int>(within.count())) == 1;
    }

private:
    pid_t pid_;
    UniqueFd pidfd_;
};

/// A consumer stopped (SIGSTOP) until this goes out of scope (SIGCONT), so
/// that a failing test leaves no stopped process behind.
class StoppedWhileInScope {
public:
    /// Returns once it is stopped (or 20 s passed: check stopped()).
    explicit StoppedWhileInScope(const Process& p) : p_(p) {
        p_.signal(SIGSTOP);
        stopped_ = eventually([&] { return processState(p_.pid()) == 'T'; });
    }
    bool stopped() const { return stopped_; }
    ~StoppedWhileInScope() { p_.signal(SIGCONT); }
    StoppedWhileInScope(const StoppedWhileInScope&) = delete;
    StoppedWhileInScope& operator=(const StoppedWhileInScope&) = delete;

private:
    const Process& p_;
    bool stopped_ = false;
};

/// The tracer on its own app thread, fake apps, real consumers (fork/exec).
/// Every session started through start() is destroyed at the end.
class TracerHarness : public ::testing::Test {
protected:
    /// Before SetUp(), in a derived fixture's constructor: the deadline of
    /// each consumer request.
    std::chrono::milliseconds consumerTimeout_ = kConsumerReplyTimeout;

    /// The consumer built with the tests: $TEST_CONSUMERD (meson test sets
    /// it), else the build tree's, found from this program's own path
    /// (<build>/tests/unit/<test> -> <build>/src/consumer/tracectl-consumerd)
    /// for a test run by hand or under gdb; "" if neither exists.
    static std::string consumerdPath() {
        if (const char* path = std::getenv("TEST_CONSUMERD"))
            return path;
        std::error_code error;
        const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
        const auto built =
            self.parent_path().parent_path().parent_path() / "src/consumer/tracectl-consumerd";
        return !error && std::filesystem::exists(built, error) ? built.string() : "";
    }

    void SetUp() override {
        char tmpl[] = "/tmp/tracer-test-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        RecordingConfig config;
        config.consumerBinary = consumerdPath();
        ASSERT_FALSE(config.consumerBinary.empty())
            << "no tracectl-consumerd: set TEST_CONSUMERD to its path";
        config.useSystemd = false;
        config.daemonVersion = "test";
        config.consumerTimeout = consumerTimeout_;
        recordings_ = std::make_unique<Recordings>(config);
        tracer_ = std::make_unique<UstTracer>(TracerConfig{}, *recordings_, commands_);
        thread_.run([&] {
            const auto watcher = [](int, std::function<void()>, uint32_t) {
                return EventSourcePtr{};
            };
            tracer_->attach(thread_.loop(), watcher);
            recordings_->addDomain(*tracer_);
            recordings_->attach(thread_.loop(), watcher,
                                [this](const std::string& idHex, const std::string& why) {
                                    std::lock_guard lock(failuresMutex_);
                                    failures_.emplace_back(idHex, why);
                                });
        });
    }
    void TearDown() override {
        released_.open(); // whatever still hangs
        if (tracer_) {
            for (const auto& id : started_) {
                Answers destroyed;
                thread_.run([&] { destroySession(id, destroyed.done()); });
                EXPECT_TRUE(destroyed.wait()) << "destroying " << id;
            }
            thread_.run([&] {
                tracer_.reset();
                recordings_.reset();
            });
        }
        std::filesystem::remove_all(dir_);
    }

    /// On the loop: what Session::start() does, the recording, then the
    /// tracer.
    void startSession(const SessionSnapshot& s, UstTracer::Done done) {
        recordings_->startRecording(s, [this, s, done](std::optional<Error> e) {
            if (e)
                return done(std::move(e));
            tracer_->start(s, [this, id = s.idHex, done](std::optional<Error> started) {
                if (!started)
                    recordings_->setRecordingActive(id, true);
                done(std::move(started));
            });
        });
    }
    /// On the loop: what Session::destroy() does, the tracer, then the
    /// recording; `done` with the first loss.
    void destroySession(const std::string& idHex, UstTracer::Done done) {
        recordings_->recordingEnding(idHex);
        tracer_->destroy(idHex, [this, idHex, done](std::optional<Error> e) {
            recordings_->endRecording(
                idHex, [e, done](std::optional<Error> ended) { done(e ? e : std::move(ended)); });
        });
    }

    /// A session: one channel (2 x 4 KiB sub-buffers), one rule
    /// ("first:*"), its output in a folder of its own below dir_.
    SessionSnapshot session(const std::string& idHex, const std::string& name,
                            bool snapshotMode = false) const {
        SessionSnapshot s;
        s.idHex = idHex;
        s.name = name;
        s.outputPath = dir_ + "/" + name;
        s.snapshotMode = snapshotMode;
        ChannelConfig channel;
        channel.name = "channel0";
        channel.subbufSize = 4096;
        channel.subbufCount = 2;
        channel.overwrite = snapshotMode; // as Session requires
        s.channels.push_back(channel);
        EventRule rule;
        rule.channel = "channel0";
        rule.pattern = "first:*";
        s.rules.push_back(rule);
        return s;
    }

    /// start()s `s` (destroyed at the end); the answer comes to `answers`.
    void beginStart(const SessionSnapshot& s, const Answers& answers) {
        started_.push_back(s.idHex);
        thread_.run([&] { startSession(s, answers.done()); });
    }
    /// Starts `s` and waits for Start's answer, which must be success.
    void start(const SessionSnapshot& s) {
        Answers started;
        beginStart(s, started);
        ASSERT_TRUE(started.wait()) << "Start of " << s.name << " did not answer";
        const auto e = started.at().error;
        ASSERT_FALSE(e) << e->what();
    }
    /// stop() and its answer (nullopt: answered with success).
    std::optional<Error> stop(const std::string& idHex) {
        Answers stopped;
        thread_.run([&] {
            recordings_->setRecordingActive(idHex, false);
            tracer_->stop(idHex, stopped.done());
        });
        EXPECT_TRUE(stopped.wait()) << "Stop did not answer";
        return stopped.count() != 0 ? stopped.at().error
                                    : std::optional<Error>(Error(ErrorCode::Failed, "no answer"));
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

    std::size_t count(pid_t pid, const std::string& call) const {
        const auto calls = commands_->calls(pid);
        return static_cast<std::size_t>(std::count(calls.begin(), calls.end(), call));
    }
    /// Waits until app `pid` was called `call` `n` times.
    bool called(pid_t pid, const std::string& call, std::size_t n = 1) const {
        return eventually([&] { return count(pid, call) >= n; });
    }
    /// Waits until app `pid`'s strand has run every job queued before now.
    bool strandIdle(pid_t pid) {
        auto idle = std::make_shared<Gate>();
        thread_.run([&] { tracer_->withApp(pid, [idle] { idle->open(); }); });
        return idle->wait();
    }

    /// The failures reported for session `idHex` so far.
    std::vector<std::string> failuresOf(const std::string& idHex) const {
        std::lock_guard lock(failuresMutex_);
        std::vector<std::string> out;
        for (const auto& [id, why] : failures_)
            if (id == idHex)
                out.push_back(why);
        return out;
    }
    std::size_t failureCount() const {
        std::lock_guard lock(failuresMutex_);
        return failures_.size();
    }
    /// Waits for the first failure of `idHex`; "" if none came.
    std::string awaitFailure(const std::string& idHex) const {
        std::string why;
        eventually([&] {
            const auto f = failuresOf(idHex);
            if (!f.empty())
                why = f.front();
            return !f.empty();
        });
        return why;
    }

    std::shared_ptr<FakeAppCommands> commands_ = std::make_shared<FakeAppCommands>();
    std::string dir_;
    AppThread thread_;
    std::unique_ptr<Recordings> recordings_;
    std::unique_ptr<UstTracer> tracer_;
    std::vector<std::string> started_;
    mutable std::mutex failuresMutex_;
    std::vector<std::pair<std::string, std::string>> failures_;
    std::vector<UniqueFd> peers_;
    Gate hung_, released_;
};

} // namespace tracectl::testing
