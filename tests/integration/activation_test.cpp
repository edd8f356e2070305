// Socket activation, D-Bus activation, restart and the one-daemon lock, for
// real: the sandbox's systemd user manager loads the per-user units of the
// tree (systemd/tracectld-user.socket and .service, drop-ins putting the
// socket on the sandbox's LTTNG_HOME) and its session bus reads the
// activation file (dbus/org.tracectl.Tracing1.user.service.in); tracectld is
// never started by the test itself. See scripts/sandbox --activation.
#include "child_process.hpp"
#include "eventually.hpp"
#include "kernel_trace_support.hpp"
#include "relay_support.hpp"
#include "sandbox.hpp"
#include "sandbox_suite.hpp"
#include "trace_counts.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <dirent.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace tracectl::test;
using namespace std::chrono_literals;

namespace {

/// CLOCK_MONOTONIC in microseconds: the clock of systemd's *Monotonic
/// timestamps.
uint64_t monotonicUs() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000 + static_cast<uint64_t>(ts.tv_nsec) / 1000;
}

std::string env(const char* name, const char* fallback) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' ? v : fallback;
}

/// The file's content, "" if it cannot be read.
std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

class Activation : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        Sandbox::Options o;
        o.activation = true;
        sandbox_ = std::make_unique<Sandbox>(o);
    }
    static void TearDownTestSuite() { sandbox_.reset(); }

    /// Every test starts with the daemon stopped and its socket listening.
    void SetUp() override {
        ASSERT_TRUE(sandbox_->systemctl({"stop", "tracectld.service"}).ok());
        (void)sandbox_->systemctl({"reset-failed", "tracectld.service"}); // nothing failed: fine
        ASSERT_EQ(unit("ActiveState"), "inactive");
        ASSERT_EQ(unitOf("tracectld.socket", "ActiveState"), "active");
        // And with no session of an earlier test to bring back: this user
        // manager (root's, in user mode) keeps RuntimeDirectory= at stop,
        // where a system manager removes it (tracectld(8), RESTARTS).
        std::filesystem::remove_all(sandbox_->runtimeDir() + "/tracectl");
    }

    static std::string unitOf(const std::string& unit, const std::string& property) {
        const RunResult r = sandbox_->systemctl({"show", "-p", property, "--value", unit});
        EXPECT_TRUE(r.ok()) << r.describe();
        std::string v = r.out;
        while (!v.empty() && v.back() == '\n')
            v.pop_back();
        return v;
    }
    static std::string unit(const std::string& property) {
        return unitOf("tracectld.service", property);
    }
    static uint64_t unitNumber(const std::string& property) {
        return std::stoull("0" + unit(property));
    }

    /// Waits (up to 10 s) for tracectld.service to be active with a main
    /// pid other than `not`; returns that pid, 0 on timeout.
    static pid_t waitActive(pid_t notPid = 0) {
        pid_t pid = 0;
        const bool active = eventually(
            [&] {
                if (unit("ActiveState") != "active")
                    return false;
                pid = static_cast<pid_t>(unitNumber("MainPID"));
                return pid != 0 && pid != notPid;
            },
            10s);
        return active ? pid : 0;
    }

    static RunResult userBusCall(const std::string& method) {
        return sandbox_->busctl({"--address=" + sandbox_->userBusAddress(), "call",
                                 "org.tracectl.Tracing1", "/org/tracectl/Tracing1",
                                 "org.tracectl.Tracing1.Manager", method});
    }

    /// Waits (up to 10 s) until app `pid` is listed by the daemon on the user bus.
    static bool waitRegistered(pid_t pid) {
        const std::string path =
            "\"/org/tracectl/Tracing1/application/" + std::to_string(pid) + "\"";
        return eventually(
            [&] {
                const RunResult r = userBusCall("ListApplications");
                return r.ok() && r.out.find(path) != std::string::npos;
            },
            10s, 50ms);
    }

    static RunResult tracectl(std::vector<std::string> args) {
        std::vector<std::string> argv = {env("TRACECTL", "tracectl"),
                                         "--bus-address=" + sandbox_->userBusAddress()};
        argv.insert(argv.end(), args.begin(), args.end());
        return run(argv);
    }

    /// Runs the tracectl commands `commands` in turn; false, with a test
    /// failure naming the command and its output, at the first that fails.
    static bool runAll(const std::vector<std::vector<std::string>>& commands) {
        for (const auto& args : commands) {
            const RunResult r = tracectl(args);
            if (!r.ok()) {
                ADD_FAILURE() << args[0] << ": " << r.describe();
                return false;
            }
        }
        return true;
    }

    /// Traces `app` (waiting on `go`, emitting `ticks` ticks) in a new
    /// session `name` and returns how many tick events the trace holds.
    static int traceTicks(ChildProcess& app, const std::string& go, const std::string& name) {
        const std::string out = sandbox_->dir() + "/traces/" + name;
        if (!runAll({{"create", name, "--output", out},
                     {"enable-event", "-u", "-s", name, "tracectl_demo:*"},
                     {"start", name}}))
            return -1;
        std::ofstream(go).put('\n');
        EXPECT_EQ(app.wait(30000), 0);
        const RunResult stop = tracectl({"stop", name});
        EXPECT_TRUE(stop.ok()) << stop.describe();
        const RunResult bt = run({"babeltrace2", out});
        EXPECT_TRUE(bt.ok()) << bt.describe();
        int ticks = 0;
        std::istringstream in(bt.out);
        for (std::string line; std::getline(in, line);)
            ticks += line.find("tracectl_demo:tick") != std::string::npos ? 1 : 0;
        return ticks;
    }

    /// Live tracectld processes serving this sandbox (LTTNG_HOME in their
    /// environment), from /proc.
    static std::vector<pid_t> sandboxDaemons() {
        std::vector<pid_t> out;
        const std::string marker = "LTTNG_HOME=" + sandbox_->lttngHome();
        std::unique_ptr<DIR, int (*)(DIR*)> proc(opendir("/proc"), closedir);
        while (dirent* e = readdir(proc.get())) {
            const pid_t pid = std::atoi(e->d_name);
            if (pid <= 0 || !processAlive(pid))
                continue;
            std::string comm = slurp("/proc/" + std::to_string(pid) + "/comm");
            if (comm != "tracectld\n")
                continue;
            const std::string environ = slurp("/proc/" + std::to_string(pid) + "/environ");
            if (environ.find(marker + '\0') != std::string::npos)
                out.push_back(pid);
        }
        return out;
    }

    /// tracectl `args`, again while the daemon refuses it because the
    /// session is still being taken over (State is already what it was):
    /// as that refusal says to. Gives up after 30 s.
    static RunResult onceTakenOver(const std::vector<std::string>& args) {
        RunResult r;
        EXPECT_TRUE(eventually(
            [&] {
                r = tracectl(args);
                return r.ok() || r.err.find("is being taken over") == std::string::npos;
            },
            30s, 100ms));
        return r;
    }

    /// Lets the apps waiting on `go` run for 1.5 s (the scenario's timing:
    /// the kill mid-trace, not a wait for a state), SIGKILLs tracectld
    /// `first`, and returns the one systemd restarts (0 if none came).
    static pid_t killMidTrace(pid_t first, const std::string& go) {
        std::ofstream(go).put('\n');
        std::this_thread::sleep_for(1500ms);
        EXPECT_EQ(::kill(first, SIGKILL), 0);
        return waitActive(first);
    }

    /// Whether session `path`'s State becomes `wanted` within 10 s.
    static bool stateBecomes(const std::string& path, const std::string& wanted) {
        return eventually(
            [&] {
                const RunResult r = sandbox_->busctl({"--address=" + sandbox_->userBusAddress(),
                                                      "get-property", "org.tracectl.Tracing1", path,
                                                      "org.tracectl.Tracing1.Session", "State"});
                return r.ok() && r.out == "s \"" + wanted + "\"\n";
            },
            10s);
    }

    static void measure(const std::string& what, double ms) {
        std::cout << "[ measured ] " << what << ": " << ms << " ms" << std::endl;
        ::testing::Test::RecordProperty(what, std::to_string(ms));
    }

    static inline std::unique_ptr<Sandbox> sandbox_;
};

TEST_F(Activation, AnAppStartedBeforeTheDaemonActivatesItAndIsTraced) {
    const std::string go = sandbox_->dir() + "/go-socket";
    const uint64_t t0 = monotonicUs();
    ChildProcess app({demoApp(), "25", "1000", go}, {}, sandbox_->dir() + "/log/apps.log");
    const pid_t daemon = waitActive();
    ASSERT_NE(daemon, 0) << "the app's connection did not start tracectld.service";
    // The daemon took the socket systemd passed (FileDescriptorName=ust).
    EXPECT_NE(sandbox_->readLog("systemd").find("tracectld[" + std::to_string(daemon) +
                                                "]: notice: tracectld "),
              std::string::npos);
    EXPECT_NE(sandbox_->readLog("systemd").find("(socket passed by systemd)"), std::string::npos);
    const uint64_t triggered = unitNumber("InactiveExitTimestampMonotonic");
    const uint64_t ready = unitNumber("ActiveEnterTimestampMonotonic");
    ASSERT_GT(triggered, t0);
    ASSERT_GE(ready, triggered);
    measure("socket trigger to READY", static_cast<double>(ready - triggered) / 1000.0);
    measure("app start to READY", static_cast<double>(ready - t0) / 1000.0);

    ASSERT_TRUE(waitRegistered(app.pid()));
    EXPECT_EQ(traceTicks(app, go, "by-socket"), 25);
    EXPECT_EQ(static_cast<pid_t>(unitNumber("MainPID")), daemon);
}

TEST_F(Activation, ABusCallActivatesTheDaemon) {
    const auto t0 = std::chrono::steady_clock::now();
    const uint64_t m0 = monotonicUs();
    const RunResult r = userBusCall("ListSessions");
    const auto t1 = std::chrono::steady_clock::now();
    ASSERT_TRUE(r.ok()) << r.describe();
    EXPECT_EQ(r.out, "ao 0\n");
    // Started by systemd (the bus asked it: SystemdService=), not by the bus itself.
    const pid_t daemon = waitActive();
    ASSERT_NE(daemon, 0);
    EXPECT_GT(unitNumber("InactiveExitTimestampMonotonic"), m0);
    EXPECT_EQ(unit("Type"), "notify");
    measure("bus call to reply (busctl, daemon not running)",
            std::chrono::duration<double, std::milli>(t1 - t0).count());
    measure("bus activation to READY",
            static_cast<double>(unitNumber("ActiveEnterTimestampMonotonic") -
                                unitNumber("InactiveExitTimestampMonotonic")) /
                1000.0);
    // And tracectl starts it the same way.
    ASSERT_TRUE(sandbox_->systemctl({"stop", "tracectld.service"}).ok());
    const RunResult list = tracectl({"list"});
    EXPECT_TRUE(list.ok()) << list.describe();
    EXPECT_NE(waitActive(daemon), 0);
}

TEST_F(Activation, KillNineRestartsTheDaemonAndAppsRegisterAgain) {
    ASSERT_TRUE(userBusCall("ListSessions").ok());
    const pid_t first = waitActive();
    ASSERT_NE(first, 0);
    const uint64_t restarts = unitNumber("NRestarts");
    const std::string go = sandbox_->dir() + "/go-kill";
    ChildProcess app({demoApp(), "30", "1000", go}, {}, sandbox_->dir() + "/log/apps.log");
    ASSERT_TRUE(waitRegistered(app.pid()));

    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(::kill(first, SIGKILL), 0);
    const pid_t second = waitActive(first);
    const auto t1 = std::chrono::steady_clock::now();
    ASSERT_NE(second, 0) << "systemd did not restart tracectld";
    EXPECT_EQ(unitNumber("NRestarts"), restarts + 1);
    measure("SIGKILL to restarted and READY",
            std::chrono::duration<double, std::milli>(t1 - t0).count());
    // Never two: the killed one is gone, one daemon serves the sandbox.
    EXPECT_EQ(sandboxDaemons(), std::vector<pid_t>{second});

    // The app that was registered with the killed daemon comes back by itself.
    ASSERT_TRUE(waitRegistered(app.pid()));
    EXPECT_EQ(traceTicks(app, go, "after-kill"), 30);
}

/// CLOCK_REALTIME in ns: the clock the traces' timestamps are given in.
int64_t realtimeNs() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

TEST_F(Activation, KillNineMidTraceBothSessionsGoOnAndLoseOnlyWhatNoDaemonCouldRecord) {
    ASSERT_TRUE(userBusCall("ListSessions").ok());
    const pid_t first = waitActive();
    ASSERT_NE(first, 0);
    // Three apps, a tick every ms: they run some 7 s. bench/restart_loss
    // runs this test with TRACECTL_KILL_EMITTER (tracectl-bench-emitter),
    // TRACECTL_KILL_RATE (ticks/s, all apps together) and TRACECTL_KILL_APPS
    // for its figures at 100,000 events/s.
    const int kApps = std::stoi(env("TRACECTL_KILL_APPS", "3"));
    const std::string emitter = env("TRACECTL_KILL_EMITTER", "");
    const long rate = std::stol(env("TRACECTL_KILL_RATE", "1000")) / kApps;
    constexpr long kMilliseconds = 6000;
    const long kTicks = emitter.empty() ? 6000 : rate * kMilliseconds / 1000;
    const auto appCommand = [&](const std::string& go) {
        return emitter.empty()
                   ? std::vector<std::string>{demoApp(), std::to_string(kTicks), "1000", go}
                   : std::vector<std::string>{emitter, std::to_string(rate),
                                              std::to_string(kMilliseconds), go};
    };
    struct Traced {
        std::string name, buffers, out, path, before;
    };
    std::vector<Traced> sessions = {{"kill-uid", "per-uid", "", "", ""},
                                    {"kill-pid", "per-pid", "", "", ""}};
    for (Traced& t : sessions) {
        t.out = sandbox_->dir() + "/traces/" + t.name;
        ASSERT_TRUE((runAll({{"create", t.name, "--output", t.out, "--buffers", t.buffers},
                             {"enable-event", "-u", "-s", t.name, "tracectl_demo:tick"},
                             {"add-context", "-u", "-s", t.name, "-t", "vpid"},
                             {"start", t.name}})));
        const RunResult show = tracectl({"show", t.name, "--json"});
        ASSERT_TRUE(show.ok()) << show.describe();
        std::string hex = nlohmann::json::parse(show.out).value("Id", "");
        hex.erase(std::remove(hex.begin(), hex.end(), '-'), hex.end());
        t.path = "/org/tracectl/Tracing1/session/" + hex;
    }
    // Every property that says what a session is, and its state.
    const auto properties = [](const std::string& path) {
        const RunResult r = sandbox_->busctl(
            {"--address=" + sandbox_->userBusAddress(), "get-property", "org.tracectl.Tracing1",
             path, "org.tracectl.Tracing1.Session", "Id", "Name", "Owner", "State", "Mode",
             "OutputPath", "BufferOwnership", "Channels", "RotationSchedule", "Events", "Contexts",
             "ProcessAttributeTrackers", "CreationTime"});
        EXPECT_TRUE(r.ok()) << r.describe();
        return r.out;
    };
    for (Traced& t : sessions)
        t.before = properties(t.path);

    const std::string go = sandbox_->dir() + "/go-kill-mid";
    std::filesystem::remove(go);
    std::vector<std::unique_ptr<ChildProcess>> apps;
    for (int i = 0; i < kApps; ++i) {
        apps.push_back(std::make_unique<ChildProcess>(appCommand(go), std::vector<std::string>{},
                                                      sandbox_->dir() + "/log/apps.log"));
        ASSERT_TRUE(waitRegistered(apps.back()->pid()));
    }
    std::ofstream(go).put('\n');
    // The scenario's timing, not a wait for a state: the kill comes 1.5 s
    // into the trace, when the buffers hold events not written yet.
    std::this_thread::sleep_for(1500ms);
    const int64_t killedAt = realtimeNs();
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(::kill(first, SIGKILL), 0);
    const pid_t second = waitActive(first);
    ASSERT_NE(second, 0) << "systemd did not restart tracectld";
    measure(
        "kill -9 mid-trace: SIGKILL to restarted and READY",
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());

    // Both sessions are back where they were, as they were: active.
    for (const Traced& t : sessions)
        EXPECT_EQ(properties(t.path), t.before) << t.name;
    for (const auto& app : apps)
        EXPECT_EQ(app->wait(120000), 0);
    for (const Traced& t : sessions) {
        const RunResult stop = tracectl({"stop", t.name});
        EXPECT_TRUE(stop.ok()) << stop.describe();
    }

    // Each app's ticks are numbered 0..kTicks-1: every one is in each
    // session's trace (what the previous daemon's buffers held included),
    // but those emitted while no daemon could set the app up again; they
    // make at most one gap, which begins at the kill and ends within 2 s.
    for (const Traced& t : sessions) {
        const nlohmann::json gaps = seqGaps(t.out);
        int64_t from = INT64_MAX, to = 0;
        long recorded = 0, lost = 0;
        for (const auto& [vpid, g] : gaps.items()) {
            from = std::min(from, g["first_ns"].get<int64_t>());
            to = std::max(to, g["last_ns"].get<int64_t>());
            recorded += g["count"].get<long>();
            for (const auto& gap : g["gaps"])
                lost += gap["missing"].get<long>();
        }
        if (to > from)
            std::cout << "[ measured ] " << t.name << ": " << recorded << " ticks recorded, "
                      << lost << " missing, at "
                      << static_cast<long>(static_cast<double>(recorded + lost) * 1e9 /
                                           static_cast<double>(to - from))
                      << " ticks/s emitted" << std::endl;
        for (const auto& app : apps) {
            const std::string vpid = std::to_string(app->pid());
            ASSERT_TRUE(gaps.contains(vpid)) << t.name << " " << gaps.dump();
            const nlohmann::json& g = gaps[vpid];
            long missing = 0;
            for (const auto& gap : g["gaps"])
                missing += gap["missing"].get<long>();
            EXPECT_EQ(g["first"], 0) << t.name << " " << g.dump();
            EXPECT_EQ(g["last"], kTicks - 1) << t.name << " " << g.dump();
            EXPECT_EQ(g["duplicates"], 0) << t.name << " " << g.dump();
            EXPECT_EQ(g["count"].get<long>() + missing, kTicks) << t.name << " " << g.dump();
            ASSERT_LE(g["gaps"].size(), 1u) << t.name << " " << g.dump();
            if (g["gaps"].empty())
                continue;
            const auto& gap = g["gaps"][0];
            const double lastBeforeMs = (gap["from_ns"].get<int64_t>() - killedAt) / 1e6;
            const double tracedAgainMs = (gap["to_ns"].get<int64_t>() - killedAt) / 1e6;
            EXPECT_GT(lastBeforeMs, -100.0)
                << t.name << ": events before the kill were lost " << g.dump();
            EXPECT_GT(tracedAgainMs, 0.0) << g.dump();
            EXPECT_LT(tracedAgainMs, 2000.0) << t.name << " " << g.dump();
            measure(t.name + " pid " + vpid + ": kill to traced again", tracedAgainMs);
            std::cout << "[ measured ] " << t.name << " pid " << vpid
                      << ": ticks missing: " << gap["missing"].get<long>() << std::endl;
        }
        const RunResult destroy = tracectl({"destroy", t.name});
        EXPECT_TRUE(destroy.ok()) << destroy.describe();
    }
}

/// A process that waits for file `go`, then makes `writes` write(2) calls
/// to /dev/null a millisecond apart, numbered by their byte count (1, 2,
/// ..., writes); single-threaded: its tid is its pid.
std::vector<std::string> numberedWriter(const std::string& go, int writes) {
    return {"/usr/bin/python3", "-c",
            "import os, sys, time\n"
            "while not os.path.exists(sys.argv[1]): time.sleep(0.005)\n"
            "fd = os.open('/dev/null', os.O_WRONLY)\n"
            "for n in range(1, " +
                std::to_string(writes + 1) +
                "):\n"
                "    os.write(fd, b'w' * n)\n"
                "    time.sleep(0.001)\n",
            go};
}

/// What a trace below `dir` holds of a numberedWriter()'s calls: their
/// numbers, sorted, how many are missing between the first and the last,
/// and in how many runs.
struct NumberedWrites {
    std::vector<int> numbers;
    int missing = 0;
    int gaps = 0;
    /// Writes (a millisecond apart) whose time stamp is the one before's:
    /// records pushed to a later instant (a takeover's) lost their time.
    int sameTime = 0;
};

NumberedWrites numberedWrites(const std::string& dir) {
    NumberedWrites w;
    std::map<int, long long> timeOf;
    for (const nlohmann::json& e : traceEvents(dir, {"syscall_entry_write"})) {
        w.numbers.push_back(e["fields"]["count"].get<int>());
        timeOf[w.numbers.back()] = e["ns"].get<long long>();
    }
    for (auto it = timeOf.begin(); it != timeOf.end() && std::next(it) != timeOf.end(); ++it)
        if (std::next(it)->second == it->second)
            ++w.sameTime;
    std::sort(w.numbers.begin(), w.numbers.end());
    for (std::size_t i = 1; i < w.numbers.size(); ++i)
        if (w.numbers[i] > w.numbers[i - 1] + 1) {
            ++w.gaps;
            w.missing += w.numbers[i] - w.numbers[i - 1] - 1;
        }
    return w;
}

/// The ticks of app `pid` (`ticks` of them, numbered from 0) in the trace
/// below `dir` (seqGaps()): each at most once, from the first to the last,
/// with one gap at most (those emitted while no daemon could set the app up
/// again), which is printed for bench/restart_loss.
void expectEveryTickButOneGap(const std::string& what, const std::string& dir, pid_t pid,
                              int ticks) {
    const nlohmann::json all = seqGaps(dir);
    const std::string vpid = std::to_string(pid);
    ASSERT_TRUE(all.contains(vpid)) << what << ": " << all.dump();
    const nlohmann::json& g = all[vpid];
    EXPECT_EQ(g["first"], 0) << what << ": " << g.dump();
    EXPECT_EQ(g["last"], ticks - 1) << what << ": " << g.dump();
    EXPECT_EQ(g["duplicates"], 0) << what << ": " << g.dump();
    EXPECT_LE(g["gaps"].size(), 1u) << what << ": " << g.dump();
    long missing = 0;
    for (const auto& gap : g["gaps"])
        missing += gap["missing"].get<long>();
    std::cout << "[ measured ] " << what << ": " << g["count"].get<long>()
              << " ticks recorded across the kill, " << missing << " missing" << std::endl;
}

/// The D-Bus object path of session `name` (tracectl show --json's Id).
std::string sessionPath(const RunResult& show) {
    std::string hex = nlohmann::json::parse(show.out).value("Id", "");
    hex.erase(std::remove(hex.begin(), hex.end(), '-'), hex.end());
    return "/org/tracectl/Tracing1/session/" + hex;
}

// A kernel-and-UST session survives the daemon's SIGKILL: its consumer is
// taken over, and so are its tracefs instances, which go on recording
// while no daemon runs (tracectld(8), RESTARTS). A writer process numbers
// its write(2) calls: the trace holds each exactly once, none lost (the
// instance's buffer holds what was written meanwhile); the ip provider,
// loaded again, records.
TEST_F(Activation, KillNineMidTraceAKernelSessionGoesOnWithItsInstances) {
    ASSERT_TRUE(userBusCall("ListSessions").ok());
    const pid_t first = waitActive();
    ASSERT_NE(first, 0);
    const std::string go = sandbox_->dir() + "/go-kill-kernel";
    std::filesystem::remove(go);
    constexpr int kWrites = 4000, kTicks = 3000;
    ChildProcess writer(numberedWriter(go, kWrites), {}, sandbox_->dir() + "/log/apps.log");
    ChildProcess app({demoApp(), std::to_string(kTicks), "1000", go}, {},
                     sandbox_->dir() + "/log/apps.log");
    ASSERT_TRUE(waitRegistered(app.pid()));
    const std::string name = "kill-kernel";
    const std::string out = sandbox_->dir() + "/traces/" + name;
    ASSERT_TRUE((runAll(
        {{"create", name, "--output", out},
         {"enable-event", "-u", "-s", name, "tracectl_demo:tick"},
         {"add-context", "-u", "-s", name, "-t", "vpid"},
         {"enable-event", "-k", "-s", name, "--syscall", "write", "--filter",
          "$ctx.tid == " + std::to_string(writer.pid())},
         {"enable-event", "-k", "-s", name, "sched:sched_process_exit"},
         {"enable-event", "-k", "-s", name, "ip:send", "--filter", "ip_saddr == \"127.0.0.4\""},
         {"start", name}})));
    const std::string path = sessionPath(tracectl({"show", name, "--json"}));
    const std::string hex = path.substr(path.rfind('/') + 1);
    const auto properties = [&] {
        const RunResult r = sandbox_->busctl(
            {"--address=" + sandbox_->userBusAddress(), "get-property", "org.tracectl.Tracing1",
             path, "org.tracectl.Tracing1.Session", "Id", "Name", "Owner", "State", "Mode",
             "OutputPath", "Channels", "Events", "Contexts", "KernelChannels", "KernelEvents",
             "RotationSchedule", "CreationTime"});
        EXPECT_TRUE(r.ok()) << r.describe();
        return r.out;
    };
    const std::string before = properties();
    ASSERT_TRUE(sessionInstances().count("tracectl-" + hex)) << "its tracefs instance";
    ASSERT_NE(killMidTrace(first, go), 0) << "systemd did not restart tracectld";
    EXPECT_EQ(properties(), before) << "back as it was: active";
    EXPECT_TRUE(sessionInstances().count("tracectl-" + hex)) << "the same instance, kept";
    EXPECT_EQ(writer.wait(60000), 0);
    EXPECT_EQ(app.wait(60000), 0);
    // The ip provider is loaded again: datagrams sent now are recorded.
    const RunResult sent = run({"/usr/bin/python3", "-c",
                                "import socket\n"
                                "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                                "s.bind(('127.0.0.4', 0))\n"
                                "for _ in range(3): s.sendto(b'after the restart', "
                                "('127.0.0.5', 9))\n"});
    EXPECT_TRUE(sent.ok()) << sent.describe();
    const RunResult stop = tracectl({"stop", name});
    EXPECT_TRUE(stop.ok()) << stop.describe();

    // Every chunk (the archive of the previous daemon's, the current one) reads.
    const nlohmann::json counts = countEvents(out);
    EXPECT_GT(counts["events"].value("sched_process_exit", 0), 0) << counts.dump();
    EXPECT_EQ(counts["events"].value("ip:send", 0), 3) << counts.dump();
    const NumberedWrites writes = numberedWrites(out);
    ASSERT_FALSE(writes.numbers.empty());
    EXPECT_EQ(std::adjacent_find(writes.numbers.begin(), writes.numbers.end()),
              writes.numbers.end())
        << "a write twice";
    EXPECT_EQ(writes.numbers.front(), 1);
    EXPECT_EQ(writes.numbers.back(), kWrites);
    EXPECT_EQ(writes.gaps, 0) << writes.missing << " writes missing";
    EXPECT_EQ(writes.sameTime, 0) << "writes from before the takeover lost their time";
    std::cout << "[ measured ] kernel writes across the kill: " << writes.numbers.size()
              << " recorded, " << writes.missing << " missing" << std::endl;
    // The UST side as for any session taken over.
    expectEveryTickButOneGap(name, out, app.pid(), kTicks);

    const RunResult destroy = tracectl({"destroy", name});
    EXPECT_TRUE(destroy.ok()) << destroy.describe();
    EXPECT_TRUE(eventually([&] { return sessionInstances().count("tracectl-" + hex) == 0; }, 10s))
        << "no instance outlives its session";
}

// A snapshot session survives the daemon's SIGKILL with its buffers: a
// snapshot recorded after the restart holds the events from before it,
// user-space (the previous daemon's buffers, kept by the consumer, as a
// trace of their own) and kernel (the tracefs instance's buffer, taken
// over), and those after it.
TEST_F(Activation, KillNineMidTraceASnapshotSessionKeepsItsBuffers) {
    ASSERT_TRUE(userBusCall("ListSessions").ok());
    const pid_t first = waitActive();
    ASSERT_NE(first, 0);
    const std::string go = sandbox_->dir() + "/go-kill-snapshot";
    std::filesystem::remove(go);
    constexpr int kWrites = 3000, kTicks = 3000;
    ChildProcess writer(numberedWriter(go, kWrites), {}, sandbox_->dir() + "/log/apps.log");
    ChildProcess app({demoApp(), std::to_string(kTicks), "1000", go}, {},
                     sandbox_->dir() + "/log/apps.log");
    ASSERT_TRUE(waitRegistered(app.pid()));
    const std::string name = "kill-snapshot";
    const std::string out = sandbox_->dir() + "/traces/" + name;
    ASSERT_TRUE((runAll({{"create", name, "--snapshot", "--output", out},
                         {"enable-event", "-u", "-s", name, "tracectl_demo:tick"},
                         {"add-context", "-u", "-s", name, "-t", "vpid"},
                         {"enable-event", "-k", "-s", name, "--syscall", "write", "--filter",
                          "$ctx.tid == " + std::to_string(writer.pid())},
                         {"start", name}})));
    const std::string path = sessionPath(tracectl({"show", name, "--json"}));
    ASSERT_NE(killMidTrace(first, go), 0) << "systemd did not restart tracectld";
    EXPECT_TRUE(stateBecomes(path, "active"));
    EXPECT_EQ(writer.wait(60000), 0);
    EXPECT_EQ(app.wait(60000), 0);
    const RunResult snap = onceTakenOver({"snapshot", "record", "-s", name});
    ASSERT_TRUE(snap.ok()) << snap.describe();
    std::string folder = snap.out;
    while (!folder.empty() && folder.back() == '\n')
        folder.pop_back();
    // Every tick, from the first: those before the kill in the previous
    // daemon's buffers, the others in the next daemon's.
    expectEveryTickButOneGap(name, folder, app.pid(), kTicks);
    const NumberedWrites writes = numberedWrites(folder);
    ASSERT_FALSE(writes.numbers.empty());
    EXPECT_EQ(writes.numbers.front(), 1) << "kernel events from before the restart";
    EXPECT_EQ(writes.numbers.back(), kWrites);
    EXPECT_EQ(writes.gaps, 0) << writes.missing << " writes missing";
    EXPECT_EQ(writes.sameTime, 0) << "writes from before the takeover lost their time";
    const RunResult destroy = tracectl({"destroy", name});
    EXPECT_TRUE(destroy.ok()) << destroy.describe();
}

// A network session survives the daemon's SIGKILL: its consumer, taken
// over, goes on streaming to the same relay session; what the previous
// daemon recorded is archived there as a rotation does, and the relay's
// output reads whole. Each app tick is there at most once, with one gap at
// most (the ticks emitted while no daemon could set the app up again).
TEST_F(Activation, KillNineMidTraceANetworkSessionGoesOnStreaming) {
    ASSERT_TRUE(userBusCall("ListSessions").ok());
    const pid_t first = waitActive();
    ASSERT_NE(first, 0);
    const std::string relayOut = makeNobodyFolder("tracectl-activation-relay");
    RelayDaemon relay(relayOut + "/out");
    const std::string go = sandbox_->dir() + "/go-kill-net";
    std::filesystem::remove(go);
    constexpr int kTicks = 3000;
    ChildProcess app({demoApp(), std::to_string(kTicks), "1000", go}, {},
                     sandbox_->dir() + "/log/apps.log");
    ASSERT_TRUE(waitRegistered(app.pid()));
    const std::string name = "kill-net";
    ASSERT_TRUE((runAll({{"create", name, "--set-url", relay.url()},
                         {"enable-event", "-u", "-s", name, "tracectl_demo:tick"},
                         {"add-context", "-u", "-s", name, "-t", "vpid"},
                         {"start", name}})));
    const std::string path = sessionPath(tracectl({"show", name, "--json"}));
    const auto properties = [&] {
        const RunResult r = sandbox_->busctl(
            {"--address=" + sandbox_->userBusAddress(), "get-property", "org.tracectl.Tracing1",
             path, "org.tracectl.Tracing1.Session", "Id", "Name", "State", "Mode", "OutputUrl",
             "Channels", "Events", "Contexts", "CreationTime"});
        EXPECT_TRUE(r.ok()) << r.describe();
        return r.out;
    };
    const std::string before = properties();
    ASSERT_NE(killMidTrace(first, go), 0) << "systemd did not restart tracectld";
    EXPECT_EQ(properties(), before) << "back as it was: active";
    EXPECT_EQ(app.wait(60000), 0);
    const RunResult stop = tracectl({"stop", name});
    EXPECT_TRUE(stop.ok()) << stop.describe();

    const std::string dir = relay.sessionDir(name);
    ASSERT_FALSE(dir.empty());
    EXPECT_FALSE(std::filesystem::is_empty(dir + "/archives"))
        << "the previous daemon's chunk, archived on the relay";
    expectEveryTickButOneGap(name, dir, app.pid(), kTicks);
    const RunResult destroy = tracectl({"destroy", name});
    EXPECT_TRUE(destroy.ok()) << destroy.describe();
    std::error_code ec;
    std::filesystem::remove_all(relayOut, ec);
}

// A live session survives the daemon's SIGKILL with its lttng-live viewer
// attached: the consumer streams on into the same relay chunk, the next
// daemon's traces beside the previous one's; the viewer shows the ticks
// from before the kill and after it, and ends once the session is
// destroyed. The relay's output holds each tick at most once, one gap at most.
TEST_F(Activation, KillNineMidTraceALiveSessionKeepsItsViewer) {
    ASSERT_TRUE(userBusCall("ListSessions").ok());
    const pid_t first = waitActive();
    ASSERT_NE(first, 0);
    const std::string relayOut = makeNobodyFolder("tracectl-activation-live");
    RelayDaemon relay(relayOut + "/out");
    const std::string go = sandbox_->dir() + "/go-kill-live";
    std::filesystem::remove(go);
    constexpr int kTicks = 3000;
    ChildProcess app({demoApp(), std::to_string(kTicks), "1000", go}, {},
                     sandbox_->dir() + "/log/apps.log");
    ASSERT_TRUE(waitRegistered(app.pid()));
    const std::string name = "kill-live";
    ASSERT_TRUE((runAll({{"create", name, "--live=200000", "--set-url", relay.url()},
                         {"enable-event", "-u", "-s", name, "tracectl_demo:tick"},
                         {"add-context", "-u", "-s", name, "-t", "vpid"},
                         {"start", name}})));
    const std::string path = sessionPath(tracectl({"show", name, "--json"}));
    LineReader viewer({"babeltrace2", "--input-format=lttng-live", relay.liveUrl(name),
                       "--params=session-not-found-action=\"end\""},
                      sandbox_->dir() + "/log/live-viewer.log");
    const std::string listUrl = "net://127.0.0.1:" + std::to_string(relay.livePort());
    ASSERT_TRUE(eventually(
        [&] {
            const std::string listing =
                run({"babeltrace2", "--input-format=lttng-live", listUrl}).out;
            return listing.find("/" + name + " (") != std::string::npos &&
                   listing.find("1 client(s) connected") != std::string::npos;
        },
        15s, 100ms))
        << "the viewer did not attach";
    ASSERT_NE(killMidTrace(first, go), 0) << "systemd did not restart tracectld";
    EXPECT_TRUE(stateBecomes(path, "active"));
    EXPECT_EQ(app.wait(60000), 0);
    const auto viewerSaw = [&](int seq) {
        const std::string wanted = "seq = " + std::to_string(seq) + ",";
        for (const auto& line : viewer.lines())
            if (line.text.find("tracectl_demo:tick") != std::string::npos &&
                line.text.find(wanted) != std::string::npos)
                return true;
        return false;
    };
    EXPECT_TRUE(eventually([&] { return viewerSaw(kTicks - 1); }, 20s))
        << "the viewer never showed the last tick, emitted after the restart: "
        << viewer.lines().size() << " lines";
    EXPECT_TRUE(viewerSaw(0)) << "nor the first, before the kill";
    const RunResult stop = onceTakenOver({"stop", name});
    EXPECT_TRUE(stop.ok()) << stop.describe();
    const RunResult destroy = tracectl({"destroy", name});
    EXPECT_TRUE(destroy.ok()) << destroy.describe();
    EXPECT_EQ(viewer.wait(15s), 0) << "the viewer did not end once the session was destroyed";
    expectEveryTickButOneGap(name, relay.sessionDir(name), app.pid(), kTicks);
    std::error_code ec;
    std::filesystem::remove_all(relayOut, ec);
}

// A burst of crashes keeps every session: systemd empties the fd store
// once the unit fails, and its default start limit (5 in 10 s) failed it at
// the sixth kill in a row (found by a fresh user: the snapshot session's
// buffers were lost).
TEST_F(Activation, EightKillsInARowKeepEverySession) {
    ASSERT_TRUE(userBusCall("ListSessions").ok());
    pid_t daemon = waitActive();
    ASSERT_NE(daemon, 0);
    const std::string name = "kill-burst";
    ASSERT_TRUE(
        (runAll({{"create", name, "--snapshot", "--output", sandbox_->dir() + "/traces/" + name},
                 {"enable-event", "-u", "-s", name, "tracectl_demo:tick"},
                 {"start", name}})));
    const std::string path = sessionPath(tracectl({"show", name, "--json"}));
    for (int kill = 1; kill <= 8; ++kill) {
        ASSERT_EQ(::kill(daemon, SIGKILL), 0);
        daemon = waitActive(daemon);
        ASSERT_NE(daemon, 0) << "no restart after kill " << kill << ": " << unit("ActiveState");
    }
    EXPECT_TRUE(stateBecomes(path, "active")) << tracectl({"show", name}).out;
    const RunResult stop = onceTakenOver({"stop", name});
    EXPECT_TRUE(stop.ok()) << stop.describe();
    const RunResult destroy = tracectl({"destroy", name});
    EXPECT_TRUE(destroy.ok()) << destroy.describe();
}

TEST_F(Activation, AStoppedSessionComesBackStoppedAndStartsAgain) {
    ASSERT_TRUE(userBusCall("ListSessions").ok());
    const pid_t first = waitActive();
    ASSERT_NE(first, 0);
    const std::string out = sandbox_->dir() + "/traces/stopped-restart";
    const std::string before = sandbox_->dir() + "/go-before-restart";
    std::filesystem::remove(before);
    ChildProcess early({demoApp(), "20", "1000", before}, {}, sandbox_->dir() + "/log/apps.log");
    ASSERT_TRUE(waitRegistered(early.pid()));
    ASSERT_TRUE((runAll({{"create", "stopped-restart", "--output", out},
                         {"enable-event", "-u", "-s", "stopped-restart", "tracectl_demo:tick"},
                         {"start", "stopped-restart"}})));
    std::ofstream(before).put('\n');
    ASSERT_EQ(early.wait(30000), 0);
    ASSERT_TRUE(tracectl({"stop", "stopped-restart"}).ok());

    const RunResult restart = sandbox_->systemctl({"restart", "tracectld.service"});
    ASSERT_TRUE(restart.ok()) << restart.describe();
    ASSERT_NE(waitActive(first), 0);
    auto state = [&] {
        const RunResult r = tracectl({"show", "stopped-restart", "--json"});
        return r.ok() ? nlohmann::json::parse(r.out).value("State", "") : r.describe();
    };
    EXPECT_EQ(state(), "stopped");
    // Its consumer was taken over: Start records again, in a new chunk.
    const std::string after = sandbox_->dir() + "/go-after-restart";
    std::filesystem::remove(after);
    ChildProcess late({demoApp(), "30", "1000", after}, {}, sandbox_->dir() + "/log/apps.log");
    ASSERT_TRUE(waitRegistered(late.pid()));
    const RunResult start = tracectl({"start", "stopped-restart"});
    ASSERT_TRUE(start.ok()) << start.describe();
    EXPECT_EQ(state(), "active");
    std::ofstream(after).put('\n');
    ASSERT_EQ(late.wait(30000), 0);
    ASSERT_TRUE(tracectl({"stop", "stopped-restart"}).ok());
    // Before the restart, in the chunk archived then, and after it.
    EXPECT_EQ(countTicks(out), 50) << out;
    EXPECT_EQ(countTicks(out + "/archives"), 20) << out;
    EXPECT_TRUE(tracectl({"destroy", "stopped-restart"}).ok());
}

TEST_F(Activation, ASessionWhoseConsumerDiedMeanwhileComesBackInErrorSayingSo) {
    ASSERT_TRUE(userBusCall("ListSessions").ok());
    const pid_t first = waitActive();
    ASSERT_NE(first, 0);
    const std::string out = sandbox_->dir() + "/traces/orphan";
    ASSERT_TRUE((runAll({{"create", "orphan", "--output", out},
                         {"enable-event", "-u", "-s", "orphan", "tracectl_demo:tick"},
                         {"start", "orphan"}})));
    const RunResult show = tracectl({"show", "orphan", "--json"});
    ASSERT_TRUE(show.ok());
    std::string hex = nlohmann::json::parse(show.out).value("Id", "");
    hex.erase(std::remove(hex.begin(), hex.end(), '-'), hex.end());
    const std::string consumerUnit = "tracectl-consumer-" + hex + ".service";
    const pid_t consumer = static_cast<pid_t>(std::stoll("0" + unitOf(consumerUnit, "MainPID")));
    ASSERT_GT(consumer, 0) << consumerUnit;
    // The daemon goes, then its session's consumer, before a new daemon
    // is there to take it over.
    ASSERT_TRUE(sandbox_->systemctl({"kill", "--signal=SIGSTOP", "tracectld.service"}).ok());
    ASSERT_EQ(::kill(consumer, SIGKILL), 0);
    EXPECT_TRUE(eventually([&] { return !processAlive(consumer); }, 10s));
    ASSERT_EQ(::kill(first, SIGKILL), 0);
    ASSERT_NE(waitActive(first), 0);
    std::string reason;
    EXPECT_TRUE(eventually(
        [&] {
            const RunResult r = tracectl({"show", "orphan", "--json"});
            if (!r.ok())
                return false;
            const auto j = nlohmann::json::parse(r.out);
            reason = j.value("ErrorReason", "");
            return j.value("State", "") == "error";
        },
        30s, 50ms))
        << reason;
    EXPECT_NE(reason.find("tracectld restarted while the session was active"), std::string::npos)
        << reason;
    // systemd lets a stored connection go once its peer closes it; had the
    // new daemon got it all the same, the consumer would not answer Adopt.
    EXPECT_TRUE(reason.find("ended while no daemon was there") != std::string::npos ||
                reason.find("could not be taken over") != std::string::npos)
        << reason;
    const RunResult destroy = tracectl({"destroy", "orphan"});
    EXPECT_TRUE(destroy.ok()) << destroy.describe();
}

TEST_F(Activation, TwoRestartsInARowLeaveEveryTraceReadableAndSchedulesGoOn) {
    ASSERT_TRUE(userBusCall("ListSessions").ok());
    const pid_t first = waitActive();
    ASSERT_NE(first, 0);
    const std::string go = sandbox_->dir() + "/go-twice";
    std::filesystem::remove(go);
    ChildProcess app({demoApp(), "6000", "1000", go}, {}, sandbox_->dir() + "/log/apps.log");
    ASSERT_TRUE(waitRegistered(app.pid()));
    std::vector<std::string> outs;
    for (int i = 0; i < 6; ++i) {
        const std::string name = "twice-" + std::to_string(i);
        outs.push_back(sandbox_->dir() + "/traces/" + name);
        ASSERT_TRUE((runAll({{"create", name, "--output", outs.back()},
                             {"enable-event", "-u", "-s", name, "tracectl_demo:tick"},
                             {"start", name}})));
    }
    ASSERT_TRUE(tracectl({"enable-rotation", "twice-0", "--timer", "1s"}).ok());
    std::ofstream(go).put('\n');
    // The scenario's timing, not a wait for a state: the restarts come a
    // second into the trace (every assertion holds whenever they come).
    std::this_thread::sleep_for(1s);
    // The second restart comes as soon as the first has returned (the new
    // daemon is READY): its takeovers, and the apps' set-up in the new
    // chunks, are under way then (they run after READY).
    ASSERT_TRUE(sandbox_->systemctl({"restart", "tracectld.service"}).ok());
    ASSERT_TRUE(sandbox_->systemctl({"restart", "tracectld.service"}).ok());
    ASSERT_NE(waitActive(first), 0);
    for (int i = 0; i < 6; ++i)
        EXPECT_TRUE(eventually(
            [&] {
                const RunResult r = tracectl({"show", "twice-" + std::to_string(i), "--json"});
                return r.ok() && nlohmann::json::parse(r.out).value("State", "") == "active";
            },
            30s, 50ms))
            << i;
    // The rotation schedule came back with the session: it rotates again.
    const auto archives = [&] {
        std::error_code ec;
        std::size_t n = 0;
        for (auto it = std::filesystem::directory_iterator(outs[0] + "/archives", ec);
             !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
            ++n;
        return n;
    };
    const std::size_t afterRestarts = archives();
    EXPECT_TRUE(eventually([&] { return archives() >= afterRestarts + 2; }, 20s)) << afterRestarts;
    EXPECT_EQ(app.wait(60000), 0);
    for (int i = 0; i < 6; ++i) {
        const std::string name = "twice-" + std::to_string(i);
        EXPECT_TRUE(tracectl({"stop", name}).ok()) << name;
        // Every chunk and archive reads, whatever the restarts cut short.
        const RunResult bt = run({"babeltrace2", outs[static_cast<std::size_t>(i)]});
        EXPECT_TRUE(bt.ok()) << name << ": " << bt.describe();
        EXPECT_TRUE(tracectl({"destroy", name}).ok()) << name;
    }
}

TEST_F(Activation, SystemctlRestartDuringARotationNeverHangsAndTheSessionGoesOn) {
    ASSERT_TRUE(userBusCall("ListSessions").ok());
    const pid_t first = waitActive();
    ASSERT_NE(first, 0);
    const std::string out = sandbox_->dir() + "/traces/rotating";
    ASSERT_TRUE((runAll({{"create", "rotating", "--output", out},
                         {"enable-event", "-u", "-s", "rotating", "tracectl_demo:*"},
                         {"start", "rotating"}})));
    // An app that keeps the buffers busy while the rotation runs.
    ChildProcess app({demoApp(), "200000", "20"}, {}, sandbox_->dir() + "/log/apps.log");
    ASSERT_TRUE(waitRegistered(app.pid()));
    auto property = [&](const std::string& name) {
        const RunResult r = tracectl({"show", "rotating", "--json"});
        return r.ok() ? nlohmann::json::parse(r.out).value(name, "") : std::string();
    };
    // The rotation cannot end while its consumer is stopped: it is surely
    // under way when the daemon restarts.
    std::string hex = property("Id");
    hex.erase(std::remove(hex.begin(), hex.end(), '-'), hex.end());
    const std::string consumerUnit = "tracectl-consumer-" + hex + ".service";
    const pid_t consumer = static_cast<pid_t>(std::stoll("0" + unitOf(consumerUnit, "MainPID")));
    ASSERT_GT(consumer, 0) << consumerUnit;
    ASSERT_EQ(::kill(consumer, SIGSTOP), 0);
    ChildProcess rotate({env("TRACECTL", "tracectl"), "--bus-address=" + sandbox_->userBusAddress(),
                         "rotate", "rotating", "--wait"},
                        {}, sandbox_->dir() + "/log/rotate.log");
    EXPECT_TRUE(eventually([&] { return property("State") == "rotating"; }, 10s, 20ms));
    const RunResult restart = sandbox_->systemctl({"restart", "tracectld.service"});
    ASSERT_TRUE(restart.ok()) << restart.describe();
    // The rotation failed with the daemon gone (1, or 3: unreachable), saying
    // so; it did not wait for the stopped consumer.
    const int status = rotate.wait(30000);
    ::kill(consumer, SIGCONT);
    EXPECT_TRUE(status == 1 || status == 3) << "rotate: " << status;
    const std::string said = slurp(sandbox_->dir() + "/log/rotate.log");
    EXPECT_NE(said.find("tracectl: "), std::string::npos) << said;
    const pid_t second = waitActive(first);
    ASSERT_NE(second, 0);
    // The session is back, at the same path, and goes on: the new daemon
    // took its consumer over once it ran again (the rotation it had begun
    // completed on the way).
    EXPECT_TRUE(eventually([&] { return property("State") == "active"; }, 30s, 50ms))
        << tracectl({"show", "rotating", "--json"}).out;
    // What was recorded before the restart is a readable trace, once the
    // session stopped: read while the consumer still appends to it, the
    // metadata file can end in a packet half written (babeltrace2 then
    // fails, as on any live LTTng trace on disk; seen beside another suite).
    // State is "active" as soon as the session is restored; a Stop while
    // its takeover is still under way is refused, saying to try again.
    const RunResult stop = onceTakenOver({"stop", "rotating"});
    EXPECT_TRUE(stop.ok()) << stop.describe();
    EXPECT_TRUE(eventually([&] { return countTicksOnceReadable(out) > 0; }, 20s))
        << out << ": " << countTicksIfAny(out);
    const RunResult destroy = tracectl({"destroy", "rotating"});
    EXPECT_TRUE(destroy.ok()) << destroy.describe();
}

TEST_F(Activation, ASecondDaemonRefusesWithAClearMessage) {
    ASSERT_TRUE(userBusCall("ListSessions").ok());
    const pid_t daemon = waitActive();
    ASSERT_NE(daemon, 0);
    // By hand, as the unit runs it (same LTTNG_HOME, same bus).
    const RunResult second = run({env("TRACECTLD", "tracectld"), "--user"},
                                 Env{{"LTTNG_HOME", sandbox_->lttngHome()},
                                     {"DBUS_SESSION_BUS_ADDRESS", sandbox_->userBusAddress()},
                                     {"XDG_RUNTIME_DIR", sandbox_->runtimeDir()}},
                                 10s);
    EXPECT_EQ(second.exitCode, 4) << second.describe();
    EXPECT_NE(second.err.find("another tracectld already runs for this instance (pid " +
                              std::to_string(daemon) + ")"),
              std::string::npos)
        << second.err;
    EXPECT_NE(second.err.find(sandbox_->lttngHome() + "/.lttng/tracectld.lock"), std::string::npos)
        << second.err;
    // On another bus, same run directory: refused by the lock too (the bus
    // name alone would not catch it).
    const RunResult other = run({env("TRACECTLD", "tracectld"), "--lttng-home",
                                 sandbox_->lttngHome(), "--bus-address", sandbox_->busAddress()},
                                Env{}, 10s);
    EXPECT_EQ(other.exitCode, 4) << other.describe();
    // The running one is untouched and still answers.
    EXPECT_EQ(static_cast<pid_t>(unitNumber("MainPID")), daemon);
    EXPECT_TRUE(userBusCall("ListSessions").ok());
    EXPECT_EQ(sandboxDaemons(), std::vector<pid_t>{daemon});
}

} // namespace

namespace {

/// The system units (systemd/tracectld.service.in and tracectld.socket),
/// hardening and all, run by the sandbox's manager (as root it applies
/// CapabilityBoundingSet=, ProtectSystem=, SystemCallFilter=, ... as the
/// system manager would). Drop-ins only move what must not touch the host:
/// the socket to the sandbox's LTTNG_HOME, the daemon to the tree's with
/// --lttng-home (lock and wake-up page of that folder), and consumers to
/// the sandbox's manager. The daemon serves the sandbox's system bus.
class SystemUnits : public Activation {
protected:
    static void SetUpTestSuite() {
        // tracefs, as sys-kernel-tracing.mount (the unit's Wants=) mounts it
        // on a system: before the sandbox's mount namespace copies the mounts.
        (void)tracefsRoot();
        Sandbox::Options o;
        o.startDaemon = false;
        sandbox_ = std::make_unique<Sandbox>(o);
        const std::string units = sandbox_->unitDir();
        const std::string src = env("TRACECTL_SOURCE_ROOT", ".");
        const std::string home = sandbox_->lttngHome();
        // As meson configures it, with the tree's daemon for @sbindir@/tracectld.
        std::string service = slurp(src + "/systemd/tracectld.service.in");
        const std::string placeholder = "@sbindir@/tracectld";
        ASSERT_NE(service.find(placeholder), std::string::npos);
        service.replace(service.find(placeholder), placeholder.size(),
                        env("TRACECTLD", "/usr/sbin/tracectld"));
        std::ofstream(units + "/tracectld.service") << service;
        copyFile(src + "/systemd/tracectld.socket", units + "/tracectld.socket");
        std::filesystem::create_directories(units + "/tracectld.socket.d");
        std::filesystem::create_directories(units + "/tracectld.service.d");
        std::ofstream(units + "/tracectld.socket.d/50-test.conf")
            << "[Socket]\nListenStream=\nListenStream=" << home << "/.lttng/lttng-ust-sock-8\n";
        std::ofstream(units + "/tracectld.service.d/50-test.conf")
            << "[Service]\nExecStart=\nExecStart=" << env("TRACECTLD", "tracectld")
            << " --lttng-home " << home << "\n"
            << "Environment=\"TRACECTL_CONSUMERD=" << env("TRACECTL_CONSUMERD", "") << "\"\n"
            << "Environment=\"TRACECTL_SYSTEMD_ADDRESS=" << sandbox_->systemdAddress() << "\"\n";
        const RunResult reload = sandbox_->systemctl({"daemon-reload"});
        ASSERT_TRUE(reload.ok()) << reload.describe();
        const RunResult start = sandbox_->systemctl({"start", "tracectld.socket"});
        ASSERT_TRUE(start.ok()) << start.describe();
    }

    static void copyFile(const std::string& from, const std::string& to) {
        std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
    }
};

TEST_F(SystemUnits, TheHardenedSystemServiceIsSocketActivatedAndTraces) {
    // The hardening is in force (not dropped by a drop-in).
    EXPECT_EQ(unit("NoNewPrivileges"), "yes");
    EXPECT_EQ(unit("ProtectSystem"), "full");
    EXPECT_EQ(unit("MemoryDenyWriteExecute"), "yes");
    EXPECT_NE(unit("CapabilityBoundingSet").find("cap_setuid"), std::string::npos);
    EXPECT_EQ(unit("CapabilityBoundingSet").find("cap_sys_admin"), std::string::npos);
    // Of the system calls @system-service lacks, only the kernel domain's
    // BPF ones: not mount(2), ptrace(2), the module or reboot calls.
    std::set<std::string> allowed;
    std::istringstream filter(unit("SystemCallFilter"));
    for (std::string call; filter >> call;)
        allowed.insert(call);
    for (const char* call : {"bpf", "perf_event_open", "openat", "ioctl"})
        EXPECT_TRUE(allowed.count(call)) << call << " refused: " << unit("SystemCallFilter");
    for (const char* call : {"mount", "fsmount", "ptrace", "init_module", "reboot", "kexec_load"})
        EXPECT_FALSE(allowed.count(call)) << call << " allowed";

    const std::string go = sandbox_->dir() + "/go-system";
    ChildProcess app({demoApp(), "20", "1000", go}, {}, sandbox_->dir() + "/log/apps.log");
    const pid_t daemon = waitActive();
    ASSERT_NE(daemon, 0) << sandbox_->readLog("systemd");
    // The bounding set reached the process: CAP_DAC_OVERRIDE (bit 1),
    // CAP_FOWNER (3), CAP_SETGID (6), CAP_SETUID (7), CAP_SYS_PTRACE (19),
    // CAP_PERFMON (38), CAP_BPF (39).
    const std::string status = slurp("/proc/" + std::to_string(daemon) + "/status");
    EXPECT_NE(status.find("NoNewPrivs:\t1"), std::string::npos);
    EXPECT_NE(status.find("CapBnd:\t000000c0000800ca"), std::string::npos) << status;

    // Sessions on the system bus, through tracectl.
    auto systemBus = [](std::vector<std::string> args) {
        std::vector<std::string> argv = {env("TRACECTL", "tracectl")};
        argv.insert(argv.end(), args.begin(), args.end());
        return run(argv);
    };
    ASSERT_TRUE(eventually(
        [&] {
            const RunResult r = systemBus({"list-apps"});
            return r.ok() && r.out.find(std::to_string(app.pid())) != std::string::npos;
        },
        10s, 50ms));
    const std::string out = sandbox_->dir() + "/traces/system-unit";
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"create", "sys", "--output", out},
             {"enable-event", "-u", "-s", "sys", "tracectl_demo:*"},
             {"start", "sys"}}) {
        const RunResult r = systemBus(args);
        ASSERT_TRUE(r.ok()) << args[0] << ": " << r.describe();
    }
    std::ofstream(go).put('\n');
    EXPECT_EQ(app.wait(30000), 0);
    ASSERT_TRUE(systemBus({"stop", "sys"}).ok());
    const RunResult bt = run({"babeltrace2", out});
    ASSERT_TRUE(bt.ok()) << bt.describe();
    int ticks = 0;
    std::istringstream in(bt.out);
    for (std::string line; std::getline(in, line);)
        ticks += line.find("tracectl_demo:tick") != std::string::npos ? 1 : 0;
    EXPECT_EQ(ticks, 20);

    // The daemon may reach a relay over TCP: a port where nothing listens
    // is refused by the peer, not by the unit's sandbox
    // (RestrictAddressFamilies= once allowed AF_UNIX only).
    const RunResult net = systemBus({"create", "sys-net", "--set-url", "net://127.0.0.1:1:2"});
    EXPECT_FALSE(net.ok());
    EXPECT_NE(net.err.find("Connection refused"), std::string::npos) << net.describe();
    EXPECT_EQ(net.err.find("Address family not supported"), std::string::npos) << net.describe();
}

/// `tracectl ARGS` on the sandbox's system bus, which the system unit serves.
RunResult onSystemBus(std::vector<std::string> args) {
    std::vector<std::string> argv = {env("TRACECTL", "tracectl")};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
}

/// Sends `count` UDP datagrams from `from` to `to`, port 9 (discard).
RunResult sendDatagrams(const std::string& from, const std::string& to, int count) {
    return run({"/usr/bin/python3", "-c",
                "import socket, sys\n"
                "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                "s.bind((sys.argv[1], 0))\n"
                "for _ in range(int(sys.argv[3])): s.sendto(b'hardened', (sys.argv[2], 9))\n",
                from, to, std::to_string(count)});
}

// The kernel domain under the same unit, as an installed system runs it:
// a tracefs instance with its per-CPU buffers and filters (a numbered
// writer's every write(2) and openat(2), sched_process_exit), the
// system-call string program (openat's filename, copied from user memory:
// a BPF program attached to the syscalls tracepoint through
// perf_event_open(2)), the ip provider's BPF programs (ip:*), and live
// in-kernel aggregations of ip:::receive (Manager.CreateIpAggregation: the
// daemon loads and reads the program, no session), all under the unit's
// sandbox. The unit's SystemCallFilter= once refused bpf(2) and its
// bounding set had neither CAP_BPF nor CAP_PERFMON: "cannot load the BPF
// programs ... Operation not permitted"; then perf_event_open(2) (in
// @debug) stayed refused, and every filename was "" with a warning.
TEST_F(SystemUnits, TheHardenedSystemServiceTracesTheKernelAndTheIpProvider) {
    ASSERT_TRUE(sandbox_->systemctl({"start", "tracectld.service"}).ok());
    const pid_t daemon = waitActive();
    ASSERT_NE(daemon, 0) << sandbox_->readLog("systemd");
    const std::string go = sandbox_->dir() + "/go-system-kernel";
    constexpr int kWrites = 300;
    ChildProcess writer(numberedWriter(go, kWrites), {}, sandbox_->dir() + "/log/apps.log");
    const std::string name = "sys-kernel";
    const std::string out = sandbox_->dir() + "/traces/" + name;
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"create", name, "--output", out},
             {"enable-event", "-k", "-s", name, "--syscall", "write,openat", "--filter",
              "$ctx.tid == " + std::to_string(writer.pid())},
             {"enable-event", "-k", "-s", name, "sched:sched_process_exit"},
             {"enable-event", "-k", "-s", name, "ip:*", "--filter", "ip_saddr == \"127.0.0.6\""},
             {"start", name}}) {
        const RunResult r = onSystemBus(args);
        ASSERT_TRUE(r.ok()) << args[0] << ": " << r.describe() << sandbox_->readLog("systemd");
    }
    std::ofstream(go).put('\n');
    EXPECT_EQ(writer.wait(60000), 0);
    const RunResult sent = sendDatagrams("127.0.0.6", "127.0.0.7", 3);
    EXPECT_TRUE(sent.ok()) << sent.describe();
    const RunResult stop = onSystemBus({"stop", name});
    ASSERT_TRUE(stop.ok()) << stop.describe();
    const nlohmann::json counts = countEvents(out);
    EXPECT_GT(counts["events"].value("sched_process_exit", 0), 0) << counts.dump();
    EXPECT_EQ(counts["events"].value("ip:send", 0), 3) << counts.dump();
    EXPECT_EQ(counts["events"].value("ip:receive", 0), 3) << counts.dump();
    const NumberedWrites writes = numberedWrites(out);
    ASSERT_FALSE(writes.numbers.empty());
    EXPECT_EQ(writes.numbers.front(), 1);
    EXPECT_EQ(writes.numbers.back(), kWrites);
    EXPECT_EQ(writes.gaps, 0) << writes.missing << " writes missing";
    // The writer's os.open('/dev/null'), its filename copied by the
    // system-call string program ("" if that program is refused).
    std::vector<std::string> opened;
    for (const nlohmann::json& e : traceEvents(out, {"syscall_entry_openat"}))
        opened.push_back(e["fields"]["filename"].get<std::string>());
    EXPECT_NE(std::find(opened.begin(), opened.end(), "/dev/null"), opened.end())
        << ::testing::PrintToString(opened) << sandbox_->readLog("systemd");
    EXPECT_TRUE(onSystemBus({"destroy", name}).ok());

    // Live aggregations of the ip provider, aggregated in the kernel: the
    // daemon loads the ip programs for each. Both at once: one keyed (an
    // exact count from one source), and dtrace(1)'s one-liner, ended by
    // Ctrl-C (SIGINT) as a user ends it.
    const std::string keyedLog = sandbox_->dir() + "/log/system-aggregate.log";
    ChildProcess keyed({env("TRACECTL", "tracectl"), "aggregate", "--duration", "5",
                        "ip:::receive { @[args[2]->ip_saddr] = count(); }"},
                       {}, keyedLog);
    const std::string oneLinerLog = sandbox_->dir() + "/log/system-dtrace.log";
    ChildProcess oneLiner(
        {env("TRACECTL", "tracectl"), "dtrace", "-n", "ip:::receive { @ = count(); }"}, {},
        oneLinerLog);
    // Counting once it says so.
    for (const std::string& log : {keyedLog, oneLinerLog})
        ASSERT_TRUE(eventually(
            [&] { return slurp(log).find("(aggregating in the kernel)") != std::string::npos; },
            20s, 50ms))
            << slurp(log) << sandbox_->readLog("systemd");
    const RunResult aggregated = sendDatagrams("127.0.0.8", "127.0.0.9", 4);
    EXPECT_TRUE(aggregated.ok()) << aggregated.describe();
    ASSERT_EQ(keyed.wait(60000), 0) << slurp(keyedLog);
    oneLiner.kill(SIGINT);
    ASSERT_EQ(oneLiner.wait(60000), 0) << slurp(oneLinerLog);
    // The rows: "KEY COUNT" (keyed), "COUNT" alone (the one-liner).
    std::map<std::string, long> bySource;
    long total = -1;
    for (const std::string& log : {keyedLog, oneLinerLog}) {
        std::istringstream rows(slurp(log));
        for (std::string line; std::getline(rows, line);) {
            std::istringstream row(line);
            std::string first, second, more;
            const auto number = [](const std::string& v) {
                return !v.empty() && std::all_of(v.begin(), v.end(), ::isdigit);
            };
            if (!(row >> first))
                continue;
            if (!(row >> second) && number(first) && log == oneLinerLog)
                total = std::stol(first);
            else if (!(row >> more) && number(second) && log == keyedLog)
                bySource[first] = std::stol(second);
        }
    }
    EXPECT_EQ(bySource["127.0.0.8"], 4) << slurp(keyedLog);
    // Every packet lo received meanwhile, the 4 datagrams among them.
    EXPECT_GE(total, 4) << slurp(oneLinerLog);
}

} // namespace
