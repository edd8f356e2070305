// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Network and live sessions for real (issue 17): the sandbox's tracectld
// streams to an unmodified lttng-relayd (Debian's lttng-tools 2.13) on
// loopback, and what the relay wrote is read back with babeltrace2; a live
// babeltrace2 follows a live session; an lttng-sessiond streams to the same
// relay at the same time; and the relay dies, restarts, is no relay at all,
// or is a proxy that spoils one reply. Each test has relays of its own on
// free ports (tests/integration/relay_support.hpp).
#include "child_process.hpp"
#include "eventually.hpp"
#include "kernel_trace_support.hpp"
#include "live_stream_probe.hpp"
#include "relay_support.hpp"
#include "sandbox.hpp"
#include "sandbox_suite.hpp"
#include "signal_recorder.hpp"
#include "trace_counts.hpp"
#include "tracectl_clients.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using namespace tracectl::test;
using Options = std::map<std::string, sdbus::Variant>;
using Json = nlohmann::json;

namespace {

constexpr const char* kRelayUnavailable = "org.tracectl.Tracing1.Error.RelayUnavailable";

/// A D-Bus call's failure: its error name ("no error" if it succeeded) and message.
struct CallError {
    std::string name = "no error";
    std::string message;
};

CallError errorOf(const std::function<void()>& call) {
    try {
        call();
    } catch (const sdbus::Error& e) {
        return {e.getName(), e.getMessage()};
    }
    return {};
}

std::string tracectlCli() {
    const char* p = std::getenv("TRACECTL");
    return p != nullptr ? p : "tracectl";
}

/// babeltrace2's text lines for `dir`, each without its timestamp and
/// delta ("[...] (+...) "): what two recordings of the same events share.
std::vector<std::string> eventsWithoutTimes(const std::string& dir) {
    const RunResult r = run({"babeltrace2", dir}, {}, std::chrono::seconds(60));
    EXPECT_EQ(r.exitCode, 0) << "babeltrace2 " << dir << ": " << r.describe();
    std::vector<std::string> lines;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
        const auto close = line.find(") ");
        lines.push_back(
            line.rfind("[", 0) == 0 && close != std::string::npos ? line.substr(close + 2) : line);
    }
    return lines;
}

std::size_t countContaining(const std::vector<std::string>& lines, const std::string& what) {
    return static_cast<std::size_t>(std::count_if(lines.begin(), lines.end(), [&](const auto& l) {
        return l.find(what) != std::string::npos;
    }));
}

/// Whether some regular file named `prefix`* below `dir` holds bytes.
bool holdsData(const std::string& dir, const std::string& prefix) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
        std::error_code sizeError;
        if (it->is_regular_file() && it->path().filename().string().rfind(prefix, 0) == 0 &&
            fs::file_size(it->path(), sizeError) > 0)
            return true;
    }
    return false;
}

class Relay : public SandboxSuite {
protected:
    static void SetUpTestSuite() {
        SandboxSuite::SetUpTestSuite();
        work_ = makeNobodyFolder("tracectl-relay-test");
    }
    static void TearDownTestSuite() {
        std::error_code ec;
        if (std::getenv("TRACECTL_SANDBOX_KEEP") == nullptr)
            fs::remove_all(work_, ec);
        SandboxSuite::TearDownTestSuite();
    }

    /// A fresh folder (that need not exist yet) for one relay's output.
    static std::string relayOutput(const std::string& name) {
        static int count = 0;
        return work_ + "/" + name + "-" + std::to_string(++count);
    }

    static std::string appLog() { return sandbox_->dir() + "/log/apps.log"; }

    /// A session streaming to `url`, with `options` besides.
    std::unique_ptr<SessionClient> createNetwork(const std::string& name, const std::string& url,
                                                 Options options = {}) {
        options["url"] = sdbus::Variant(url);
        return std::make_unique<SessionClient>(*bus_, manager_->CreateSession(name, options));
    }

    /// A started per-PID live session `name` on `relay` (live timer
    /// `liveTimerUsec`) recording `events` of the demo app.
    std::unique_ptr<SessionClient> startLivePerPid(const std::string& name, RelayDaemon& relay,
                                                   std::uint64_t liveTimerUsec,
                                                   const std::string& events) {
        auto s = createNetwork(name, relay.url(),
                               {{"mode", sdbus::Variant(std::string("live"))},
                                {"live-timer", sdbus::Variant(liveTimerUsec)},
                                {"buffer-ownership", sdbus::Variant(std::string("per-pid"))}});
        s->EnableEvents("ust", "", events, {});
        s->Start({});
        return s;
    }

    /// Runs the demo app to completion: `count` ticks `intervalUs` apart.
    void runApp(int count, int intervalUs = 0) {
        ChildProcess app({demoApp(), std::to_string(count), std::to_string(intervalUs)}, {},
                         appLog());
        ASSERT_EQ(app.wait(60000), 0) << "the demo app did not finish";
    }

    /// Starts `apps` demo apps of `count` ticks at once and returns their exit
    /// statuses once all ended.
    std::vector<int> runAppsAtOnce(int apps, int count) {
        std::vector<std::unique_ptr<ChildProcess>> running;
        for (int i = 0; i < apps; ++i)
            running.push_back(std::make_unique<ChildProcess>(
                std::vector<std::string>{demoApp(), std::to_string(count), "0"},
                std::vector<std::string>{}, appLog()));
        std::vector<int> statuses;
        for (auto& app : running)
            statuses.push_back(app->wait(60000));
        return statuses;
    }

    /// A babeltrace2 live viewer of session `name` on `relay` (stderr into
    /// log/`log`), once the relay lists it as attached (else `attached`
    /// false and `why`).
    struct LiveViewerRun {
        std::unique_ptr<LineReader> viewer;
        bool attached = false;
        std::string why;
    };
    LiveViewerRun startLiveViewer(RelayDaemon& relay, const std::string& name,
                                  const std::string& log) {
        LiveViewerRun v;
        v.viewer = std::make_unique<LineReader>(
            std::vector<std::string>{"babeltrace2", "--input-format=lttng-live",
                                     relay.liveUrl(name),
                                     "--params=session-not-found-action=\"end\""},
            sandbox_->dir() + "/log/" + log);
        const std::string listUrl = "net://127.0.0.1:" + std::to_string(relay.livePort());
        std::string listing;
        v.attached = eventually(
            [&] {
                listing = run({"babeltrace2", "--input-format=lttng-live", listUrl}).out;
                return listing.find("/" + name + " (") != std::string::npos &&
                       listing.find("1 client(s) connected") != std::string::npos;
            },
            std::chrono::seconds(15), std::chrono::milliseconds(100));
        if (!v.attached)
            v.why = "the viewer did not attach; the relay lists: " + listing +
                    fileText(sandbox_->dir() + "/log/" + log);
        return v;
    }

    /// The tracectl_demo:tick lines `viewer` printed.
    static int viewerTicks(const LineReader& viewer) {
        int n = 0;
        for (const auto& line : viewer.lines())
            if (line.text.find("tracectl_demo:tick:") != std::string::npos)
                ++n;
        return n;
    }

    /// `viewer` prints `expected` ticks, then, `s` destroyed, ends with
    /// status 0 having printed exactly those.
    /// The scenario's end: the session destroyed 3 s after its last app; the
    /// viewer, attached all along, ends well with `expected` ticks, and the
    /// relay holds them too.
    void destroySoonAfter(LineReader& viewer, SessionClient& s, RelayDaemon& relay,
                          const std::string& name, const std::string& log, int expected) {
        std::this_thread::sleep_for(std::chrono::seconds(3));
        s.Destroy({});
        EXPECT_EQ(viewer.wait(std::chrono::seconds(90)), 0)
            << "the viewer did not end well once the session was destroyed: "
            << fileText(sandbox_->dir() + "/log/" + log);
        EXPECT_EQ(viewerTicks(viewer), expected) << fileText(sandbox_->dir() + "/log/" + log);
        EXPECT_EQ(countTicks(relay.sessionDir(name)), expected);
    }

    void expectViewerEnds(LineReader& viewer, SessionClient& s, const std::string& log,
                          int expected) {
        EXPECT_TRUE(
            eventually([&] { return viewerTicks(viewer) >= expected; }, std::chrono::seconds(40)))
            << "the viewer printed " << viewerTicks(viewer) << " of " << expected
            << " ticks; its stderr: " << fileText(sandbox_->dir() + "/log/" + log);
        s.Destroy({});
        EXPECT_EQ(viewer.wait(std::chrono::seconds(15)), 0)
            << "the viewer did not end well once the session was destroyed: "
            << fileText(sandbox_->dir() + "/log/" + log);
        EXPECT_EQ(viewerTicks(viewer), expected);
    }

    /// The result systemd gives the session's consumer unit ("success" when
    /// it runs or ran to a clean end; "signal" or "core-dump" if it crashed).
    std::string consumerResult(SessionClient& s) const {
        RunResult r = sandbox_->systemctl(
            {"show", "-p", "Result", "--value", "tracectl-consumer-" + hexId(s) + ".service"});
        while (!r.out.empty() && (r.out.back() == '\n' || r.out.back() == ' '))
            r.out.pop_back();
        return r.out;
    }

    /// The daemon still serves: it lists sessions, and a local session
    /// records an app from start to stop.
    void expectDaemonServes(const std::string& tag) {
        SCOPED_TRACE("the daemon serves after " + tag);
        ASSERT_TRUE(sandbox_->daemonRunning());
        EXPECT_EQ(errorOf([&] { manager_->ListSessions(); }).name, "no error");
        static int n = 0;
        const std::string name = "serving-" + std::to_string(++n);
        const std::string dir = output(name);
        SessionClient s(*bus_,
                        manager_->CreateSession(name, {{"output-path", sdbus::Variant(dir)}}));
        s.EnableEvents("ust", "", "tracectl_demo:tick", {});
        s.Start({});
        runApp(20);
        s.Stop({});
        EXPECT_EQ(countTicks(dir), 20);
        s.Destroy({});
    }

    /// Rotate(), then waits for RotationCompleted of that archive; returns
    /// the archive ("" if it did not come within 20 s).
    static std::string rotateAndWait(SessionClient& s, SignalRecorder& signals) {
        const std::string archive = s.Rotate({});
        const std::string wanted = "RotationCompleted " + s.getObjectPath() + " " + archive;
        bool failed = false;
        const bool done = signals.waitUntil(
            [&](const std::vector<std::string>& lines) {
                for (const auto& l : lines) {
                    if (l == wanted)
                        return true;
                    if (l.rfind("RotationFailed " + s.getObjectPath(), 0) == 0) {
                        failed = true;
                        return true;
                    }
                }
                return false;
            },
            std::chrono::seconds(20));
        EXPECT_FALSE(failed) << "RotationFailed for " << archive;
        return done && !failed ? archive : "";
    }

    static inline std::string work_;
};

} // namespace

// 1. What the relay writes is what a local session writes, event for event,
// per-UID and per-PID, whichever way the relay's address is given.
TEST_F(Relay, AStreamedTraceEqualsTheLocalTraceEventForEvent) {
    RelayDaemon relay(relayOutput("equal"));
    const std::string control = "tcp://127.0.0.1:" + std::to_string(relay.controlPort());
    const std::string data = "tcp://127.0.0.1:" + std::to_string(relay.dataPort());
    std::map<std::string, std::unique_ptr<SessionClient>> sessions;
    sessions["eq-local-uid"] = std::make_unique<SessionClient>(
        *bus_, manager_->CreateSession("eq-local-uid",
                                       {{"output-path", sdbus::Variant(output("eq-local-uid"))}}));
    sessions["eq-local-pid"] = std::make_unique<SessionClient>(
        *bus_, manager_->CreateSession(
                   "eq-local-pid", {{"output-path", sdbus::Variant(output("eq-local-pid"))},
                                    {"buffer-ownership", sdbus::Variant(std::string("per-pid"))}}));
    sessions["eq-net-uid"] = createNetwork("eq-net-uid", relay.url());
    sessions["eq-net-pid"] = std::make_unique<SessionClient>(
        *bus_, manager_->CreateSession(
                   "eq-net-pid", {{"control-url", sdbus::Variant(control)},
                                  {"data-url", sdbus::Variant(data)},
                                  {"buffer-ownership", sdbus::Variant(std::string("per-pid"))}}));
    for (const char* name : {"eq-net-uid", "eq-net-pid"}) {
        SessionClient& s = *sessions[name];
        EXPECT_EQ(s.OutputUrl(), relay.url()) << name;
        EXPECT_EQ(s.OutputPath(), "") << name;
        EXPECT_EQ(s.Mode(), "normal") << name;
        EXPECT_EQ(s.LiveTimer(), 0u) << name;
    }
    EXPECT_EQ(sessions["eq-local-uid"]->OutputUrl(), "");
    for (auto& [name, s] : sessions) {
        s->EnableEvents("ust", "", "tracectl_demo:*", {});
        s->Start({});
    }
    // One app, recorded by all four sessions at once.
    ChildProcess app({demoApp(), "300", "0"}, {}, appLog());
    ASSERT_EQ(app.wait(60000), 0);
    // The consumer streams from inside its sandbox: no network of its own
    // and nothing writable, only the two sockets the daemon connected.
    for (const char* name : {"eq-net-uid", "eq-net-pid"}) {
        std::string unit = "tracectl-consumer-";
        for (char c : sessions[name]->Id())
            if (c != '-')
                unit += c;
        unit += ".service";
        const auto property = [&](const char* p) {
            const RunResult r = sandbox_->systemctl({"show", "-p", p, "--value", unit});
            EXPECT_TRUE(r.ok()) << r.describe();
            return r.out.substr(0, r.out.find_last_not_of('\n') + 1);
        };
        EXPECT_EQ(property("ActiveState"), "active") << name;
        EXPECT_EQ(property("PrivateNetwork"), "yes") << name;
        EXPECT_EQ(property("ReadWritePaths"), "") << name;
    }
    for (auto& [name, s] : sessions)
        s->Stop({}); // a network session's Stop returns once the relay has it all

    const std::string netUid = relay.sessionDir("eq-net-uid");
    const std::string netPid = relay.sessionDir("eq-net-pid");
    ASSERT_FALSE(netUid.empty());
    ASSERT_FALSE(netPid.empty());
    const auto localUid = eventsWithoutTimes(output("eq-local-uid"));
    const auto streamedUid = eventsWithoutTimes(netUid);
    EXPECT_EQ(countContaining(localUid, "tracectl_demo:tick:"), 300u);
    EXPECT_EQ(countContaining(localUid, "tracectl_demo:debug_note:"), 300u);
    EXPECT_EQ(countContaining(localUid, "tracectl_demo:done:"), 1u);
    EXPECT_EQ(streamedUid.size(), localUid.size());
    EXPECT_TRUE(streamedUid == localUid) << "per-UID: the relay's trace differs from the local one";
    const auto localPid = eventsWithoutTimes(output("eq-local-pid"));
    const auto streamedPid = eventsWithoutTimes(netPid);
    EXPECT_EQ(countContaining(localPid, "tracectl_demo:tick:"), 300u);
    EXPECT_EQ(streamedPid.size(), localPid.size());
    EXPECT_TRUE(streamedPid == localPid) << "per-PID: the relay's trace differs from the local one";

    // LTTng's layout below the relay's session folder, index files included.
    const std::string uidDir = netUid + "/ust/uid/" + std::to_string(::getuid()) + "/64-bit";
    EXPECT_TRUE(fs::is_regular_file(uidDir + "/metadata")) << uidDir;
    EXPECT_TRUE(fs::is_regular_file(uidDir + "/index/channel0_0.idx")) << uidDir;
    std::vector<std::string> pidDirs;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(netPid + "/ust/pid", ec))
        pidDirs.push_back(e.path().filename().string());
    ASSERT_EQ(pidDirs.size(), 1u) << netPid << "/ust/pid";
    EXPECT_TRUE(std::regex_match(pidDirs[0],
                                 std::regex(".+-" + std::to_string(app.pid()) + R"(-\d{8}-\d{6})")))
        << pidDirs[0];
    EXPECT_TRUE(fs::is_regular_file(netPid + "/ust/pid/" + pidDirs[0] + "/metadata"));
    for (auto& [name, s] : sessions)
        s->Destroy({});
}

// 2. One session, a kernel channel and a UST channel: the relay's copy is
// one trace babeltrace2 merges on one timeline.
TEST_F(Relay, KernelAndUstChannelsStreamAsOneMergedTrace) {
    ASSERT_TRUE(manager_->KernelTracingAvailable());
    RelayDaemon relay(relayOutput("kernel"));
    auto s = createNetwork("net-kernel", relay.url());
    s->EnableEvents("kernel", "", "sched:sched_switch", {});
    s->EnableEvents("ust", "", "tracectl_demo:tick", {});
    s->Start({});
    // Ticks 2 ms apart: the app sleeps between them, and is switched out.
    ChildProcess app({demoApp(), "50", "2000"}, {}, appLog());
    ASSERT_EQ(app.wait(60000), 0);
    s->Stop({});
    const std::string dir = relay.sessionDir("net-kernel");
    ASSERT_FALSE(dir.empty());
    EXPECT_TRUE(fs::is_directory(dir + "/kernel")) << dir;
    EXPECT_TRUE(fs::is_directory(dir + "/ust")) << dir;
    const auto events = traceEvents(dir, {"sched_switch", "tracectl_demo:tick"});
    std::vector<std::int64_t> ticks;
    std::vector<std::int64_t> intoApp;
    std::vector<std::int64_t> outOfApp;
    for (const Json& e : events) {
        if (e["name"] == "tracectl_demo:tick") {
            EXPECT_EQ(e["domain"], "ust");
            ticks.push_back(e["ns"].get<std::int64_t>());
        } else {
            EXPECT_EQ(e["domain"], "kernel");
            if (e["fields"]["next_tid"] == app.pid())
                intoApp.push_back(e["ns"].get<std::int64_t>());
            if (e["fields"]["prev_tid"] == app.pid())
                outOfApp.push_back(e["ns"].get<std::int64_t>());
        }
    }
    ASSERT_EQ(ticks.size(), 50u);
    ASSERT_FALSE(intoApp.empty()) << "no sched_switch to the app in the relay's kernel trace";
    ASSERT_FALSE(outOfApp.empty());
    // One timeline: the app ran (switched in) before its first tick and was
    // switched out after its last one, and babeltrace2 merged them in order.
    EXPECT_LT(intoApp.front(), ticks.front());
    EXPECT_GT(outOfApp.back(), ticks.back());
    std::int64_t previous = 0;
    for (const Json& e : events) {
        EXPECT_GE(e["ns"].get<std::int64_t>(), previous) << "not one merged, ordered trace";
        previous = e["ns"].get<std::int64_t>();
    }
    s->Destroy({});
}

// 3. Live: a babeltrace2 lttng-live viewer prints each event of an app
// ticking every 100 ms within 2 s of its emission, and ends at Destroy.
TEST_F(Relay, ALiveViewerSeesEachEventWithinTwoSecondsAndEndsAtDestroy) {
    RelayDaemon relay(relayOutput("live"));
    auto s = createNetwork("live-1", relay.url(), {{"mode", sdbus::Variant(std::string("live"))}});
    EXPECT_EQ(s->Mode(), "live");
    EXPECT_EQ(s->LiveTimer(), 1000000u) << "the default live timer";
    EXPECT_EQ(s->OutputUrl(), relay.url());
    s->EnableEvents("ust", "", "tracectl_demo:tick", {});
    s->Start({});
    // As LTTng 2.13: a live session does not rotate (a chunk switch under
    // its viewers shows as lost packets).
    const CallError rotated = errorOf([&] { s->Rotate({}); });
    EXPECT_EQ(rotated.name, "org.tracectl.Tracing1.Error.WrongState") << rotated.message;
    EXPECT_NE(rotated.message.find("live session"), std::string::npos) << rotated.message;
    EXPECT_EQ(errorOf([&] {
                  s->SetRotationSchedule({{"timer-us", sdbus::Variant(std::uint64_t{1000000})}});
              }).name,
              "org.tracectl.Tracing1.Error.WrongState");
    constexpr int kTicks = 30;
    const std::string go = work_ + "/live-go";
    ChildProcess app({demoApp(), std::to_string(kTicks), "100000", go}, {}, appLog());
    ASSERT_TRUE(waitTracing(app.pid(), appLog()));

    LineReader viewer({"babeltrace2", "--clock-seconds", "--input-format=lttng-live",
                       relay.liveUrl("live-1"), "--params=session-not-found-action=\"end\""},
                      sandbox_->dir() + "/log/live-viewer.log");
    // Attached: the relay counts it among the session's clients.
    const std::string listUrl = "net://127.0.0.1:" + std::to_string(relay.livePort());
    std::string listing;
    ASSERT_TRUE(eventually(
        [&] {
            listing = run({"babeltrace2", "--input-format=lttng-live", listUrl}).out;
            return listing.find("/live-1 (") != std::string::npos &&
                   listing.find("1 client(s) connected") != std::string::npos;
        },
        std::chrono::seconds(15), std::chrono::milliseconds(100)))
        << "the viewer did not attach; the relay lists: " << listing
        << fileText(sandbox_->dir() + "/log/live-viewer.log");
    std::ofstream(go).put('\n');

    std::map<std::uint64_t, std::int64_t> latencyNs; // by seq
    const std::regex tick(R"(^\[(\d+)\.(\d{9})\] .*tracectl_demo:tick: .*\{ seq = (\d+),)");
    const auto collect = [&] {
        for (const auto& line : viewer.lines()) {
            std::smatch m;
            if (std::regex_search(line.text, m, tick)) {
                const std::int64_t at = std::stoll(m[1]) * 1'000'000'000 + std::stoll(m[2]);
                latencyNs.emplace(std::stoull(m[3]), line.readAtNs - at);
            }
        }
        return latencyNs.size() == kTicks;
    };
    EXPECT_TRUE(eventually(collect, std::chrono::seconds(kTicks / 10 + 15)))
        << "the viewer printed " << latencyNs.size() << " of " << kTicks
        << " ticks; its stderr: " << fileText(sandbox_->dir() + "/log/live-viewer.log");
    EXPECT_EQ(app.wait(30000), 0);
    std::int64_t worst = 0;
    for (const auto& [seq, ns] : latencyNs) {
        EXPECT_LT(ns, 2'000'000'000)
            << "tick " << seq << " printed " << ns / 1e6 << " ms after its emission";
        EXPECT_GT(ns, -100'000'000) << "tick " << seq << " printed " << -ns / 1e6
                                    << " ms before its timestamp: the trace clock is off";
        worst = std::max(worst, ns);
    }
    std::cout << "live: worst emission-to-print latency " << worst / 1e6 << " ms over "
              << latencyNs.size() << " ticks\n";
    if (!latencyNs.empty()) {
        EXPECT_EQ(latencyNs.rbegin()->first, kTicks - 1u);
    }

    s->Destroy({});
    EXPECT_EQ(viewer.wait(std::chrono::seconds(15)), 0)
        << "the viewer did not end cleanly once the session was destroyed: "
        << fileText(sandbox_->dir() + "/log/live-viewer.log");
}

// Issue 40, A.6: a per-PID live session gave a viewer attached all along
// nothing of short-lived apps (0 of 20 apps' 420 events; LTTng 2.13, 168),
// though the relay held them all: their streams were closed as the apps
// exited, and lttng-relayd forgets a closed stream whose data it holds
// before a viewer asked for the new streams. They now stay open on the
// relay a few live-timer ticks after the app's exit.
TEST_F(Relay, ALiveViewerAttachedAllAlongSeesEveryEventOfShortLivedPerPidApps) {
    RelayDaemon relay(relayOutput("live-pid"));
    const std::string name = "live-pid";
    auto s = startLivePerPid(name, relay, 100000, "tracectl_demo:tick");
    LiveViewerRun run = startLiveViewer(relay, name, "live-pid-viewer.log");
    ASSERT_TRUE(run.attached) << run.why;
    LineReader& viewer = *run.viewer;

    // One after another, each gone within milliseconds.
    constexpr int kApps = 6;
    constexpr int kTicks = 21;
    for (int i = 0; i < kApps; ++i)
        runApp(kTicks);

    std::map<std::uint64_t, int> seen; // seq -> how many apps' ticks with it
    const std::regex tick(R"(tracectl_demo:tick: .*\{ seq = (\d+),)");
    const auto ticks = [&] {
        seen.clear();
        int n = 0;
        for (const auto& line : viewer.lines()) {
            std::smatch m;
            if (std::regex_search(line.text, m, tick)) {
                ++seen[std::stoull(m[1])];
                ++n;
            }
        }
        return n;
    };
    EXPECT_TRUE(eventually([&] { return ticks() >= kApps * kTicks; }, std::chrono::seconds(60)))
        << "the viewer printed " << ticks() << " of " << kApps * kTicks
        << " ticks; its stderr: " << fileText(sandbox_->dir() + "/log/live-pid-viewer.log");
    EXPECT_EQ(ticks(), kApps * kTicks);
    for (int seq = 0; seq < kTicks; ++seq)
        EXPECT_EQ(seen[static_cast<std::uint64_t>(seq)], kApps) << "seq " << seq;

    s->Destroy({});
    EXPECT_EQ(viewer.wait(std::chrono::seconds(15)), 0)
        << "the viewer did not end once the session was destroyed: "
        << fileText(sandbox_->dir() + "/log/live-pid-viewer.log");
    // The relay has them all too.
    EXPECT_EQ(countTicks(relay.sessionDir(name)), kApps * kTicks);
}

// Issue 40, A.6 and the activation suite's live viewer across a daemon
// restart: a live viewer never holds a trace with its metadata stream and
// no data stream, or the reverse, nor a trace whose metadata does not yet
// declare its events (babeltrace2 2.0.4 sizes its table of sequence lengths
// from the metadata it has then: an event class with a sequence that came
// later made it crash, 2 of 4 runs of 8 per-PID apps at once). The consumer published a new trace's
// metadata stream (STREAMS_SENT) a few milliseconds before its data
// streams; babeltrace2 2.0.4's lttng-live, asking for new streams in
// between, then asked again in a loop and never read the data streams (a
// restarted daemon's live session: the viewer stuck, 1 run in 6 under
// load). A viewer that only asks for new streams, as fast as the relay
// answers, while per-PID apps come one after another, sees what any viewer
// could hold at any moment. The apps start four at a time.
TEST_F(Relay, EachPerPidAppsTraceReachesLiveViewersWholeWithTheMetadataOfItsEvents) {
    RelayDaemon relay(relayOutput("live-whole"));
    const std::string name = "live-whole";
    auto s = startLivePerPid(name, relay, 200000, "tracectl_demo:tick");
    LiveStreamProbe probe(relay.livePort());
    std::uint64_t id = 0;
    ASSERT_TRUE(
        eventually([&] { return (id = probe.findSession(name)) != 0; }, std::chrono::seconds(15)))
        << "the relay does not list " << name;

    std::map<std::uint64_t, std::pair<bool, bool>> traces; // ctf_trace_id: metadata, data
    std::map<std::uint64_t, std::string> paths;
    std::set<std::string> partial;    // what a viewer held at some moment
    std::set<std::string> undeclared; // traces whose metadata lacked their event class
    const auto take = [&](const std::vector<LiveStreamProbe::Stream>& got) {
        for (const auto& st : got) {
            auto& t = traces[st.ctfTraceId];
            (st.metadata ? t.first : t.second) = true;
            paths[st.ctfTraceId] = st.pathName;
            // What a viewer builds its decoders from as it learns of the
            // trace: it must declare the events the trace's packets hold
            // (babeltrace2 2.0.4 crashed on an event class with a sequence
            // that came later).
            if (st.metadata &&
                probe.metadata(st.id).find("tracectl_demo:tick") == std::string::npos)
                undeclared.insert(st.pathName);
        }
        for (const auto& [trace, kinds] : traces)
            if (!kinds.first || !kinds.second)
                partial.insert(paths[trace] + (kinds.first ? ": metadata only" : ": data only"));
    };
    take(probe.attach(id));

    constexpr int kApps = 8;
    std::atomic<bool> appsDone = false;
    std::vector<int> statuses;
    std::thread apps([&] {
        // Two rounds of apps registering at once, as a fresh user ran them.
        for (int round = 0; round < 2; ++round)
            for (const int status : runAppsAtOnce(kApps / 2, 21))
                statuses.push_back(status);
        appsDone = true;
    });
    std::uint64_t answers = 0;
    bool hungUp = false;
    while (!appsDone) {
        take(probe.newStreams(hungUp));
        ++answers;
    }
    apps.join();
    EXPECT_EQ(statuses, std::vector<int>(kApps, 0)) << "the demo apps' exit statuses";
    EXPECT_TRUE(eventually(
        [&] {
            take(probe.newStreams(hungUp));
            return traces.size() >= static_cast<std::size_t>(kApps);
        },
        std::chrono::seconds(20)))
        << traces.size() << " of " << kApps << " apps' traces published";
    std::cout << "[ measured ] " << answers << " GET_NEW_STREAMS answers while " << kApps
              << " apps ran\n";
    EXPECT_TRUE(partial.empty()) << partial.size() << " trace(s) held partial by a viewer, e.g. "
                                 << (partial.empty() ? "" : *partial.begin());
    for (const auto& [trace, kinds] : traces)
        EXPECT_TRUE(kinds.first && kinds.second) << paths[trace];
    EXPECT_TRUE(undeclared.empty())
        << undeclared.size() << " trace(s) whose metadata, when a viewer learned of them, did "
        << "not declare tracectl_demo:tick, e.g. "
        << (undeclared.empty() ? "" : *undeclared.begin());
    s->Destroy({});
}

// A viewer whose streams are all idle learns of a new per-PID app: the
// relay tells viewers of new streams only in a data index
// (LTTNG_VIEWER_FLAG_NEW_STREAM with LTTNG_VIEWER_INDEX_OK), never in an
// idle stream's beacon, and babeltrace2 2.0.4 asks for new streams only then
// or once every stream it reads hung up: a viewer of an app that emitted
// once and then slept saw nothing of a second app (LTTng bug 1406; LTTng
// 2.13.9 hangs the same way). At the tick after new streams are published,
// the consumer's idle streams send an empty packet instead of a beacon.
TEST_F(Relay, AViewerOfAnIdleAppLearnsOfANewPerPidApp) {
    RelayDaemon relay(relayOutput("live-idle"));
    const std::string name = "live-idle";
    auto s = startLivePerPid(name, relay, 200000, "tracectl_demo:tick");
    // One tick, then asleep for the rest of the test.
    ChildProcess idle({demoApp(), "2", "600000000"}, {}, appLog());
    LiveViewerRun run = startLiveViewer(relay, name, "live-idle-viewer.log");
    ASSERT_TRUE(run.attached) << run.why;
    ASSERT_TRUE(eventually([&] { return viewerTicks(*run.viewer) >= 1; }, std::chrono::seconds(30)))
        << "the viewer never printed the idle app's tick: "
        << fileText(sandbox_->dir() + "/log/live-idle-viewer.log");
    constexpr int kTicks = 21;
    runApp(kTicks);
    EXPECT_TRUE(eventually([&] { return viewerTicks(*run.viewer) >= 1 + kTicks; },
                           std::chrono::seconds(30)))
        << "the viewer printed " << viewerTicks(*run.viewer) - 1 << " of the new app's " << kTicks
        << " ticks; its stderr: " << fileText(sandbox_->dir() + "/log/live-idle-viewer.log");
    ::kill(idle.pid(), SIGKILL);
    (void)idle.wait(10000);
    expectViewerEnds(*run.viewer, *s, "live-idle-viewer.log", 1 + kTicks);
}

// 3b. Per-PID apps that live several live-timer periods, one after
// another: the second one's ticks reach the viewer too, and the beacons
// of the first one's lingering streams do not break it (a viewer printed
// the first app's ticks only and failed at the end: "value overflows the
// signed 64-bit integer range", cc-name="monotonic").
// Lingering streams send no beacon, and the traces close one at a time.
TEST_F(Relay, ALiveViewerSeesPerPidAppsThatLiveSeveralTicksOneAfterAnother) {
    RelayDaemon relay(relayOutput("live-pid2"));
    const std::string name = "live-pid2";
    auto s = startLivePerPid(name, relay, 200000, "tracectl_demo:*");
    LiveViewerRun run = startLiveViewer(relay, name, "live-pid2-viewer.log");
    ASSERT_TRUE(run.attached) << run.why;
    constexpr int kTicks = 60;
    for (int k = 1; k <= 2; ++k) {
        runApp(kTicks, 10000); // 0.6 s: three live-timer periods
        // Its ticks reach the viewer while its streams linger, before the
        // next app starts.
        EXPECT_TRUE(eventually([&] { return viewerTicks(*run.viewer) >= k * kTicks; },
                               std::chrono::seconds(40)))
            << "app " << k << ": the viewer printed " << viewerTicks(*run.viewer) << " of "
            << k * kTicks
            << " ticks; its stderr: " << fileText(sandbox_->dir() + "/log/live-pid2-viewer.log");
    }
    expectViewerEnds(*run.viewer, *s, "live-pid2-viewer.log", 2 * kTicks);
    EXPECT_EQ(countTicks(relay.sessionDir(name)), 2 * kTicks);
}

// 3d. Short per-PID apps one after another, and the session destroyed a
// few seconds after the last: the viewer, attached all along, ends with
// every app's events. The exited apps' traces linger on the relay one
// after another (RelaySession::setLiveLinger()); a destroy that closed
// them at once left a viewer with the first 2 of 10 apps (lttng-relayd
// 2.13 unpublishes a closed stream once it holds all its data, so a
// viewer that had not asked for a trace's streams by then never sees it).
// With 20 apps (the issue's case) the traces closing 2 s apart and the
// destroy's 14 s cap left the viewer 15 or 16 of 20; they now close 800 ms
// apart.
TEST_F(Relay, ALiveViewerSeesEveryShortPerPidAppWhenTheSessionIsDestroyedSoonAfter) {
    RelayDaemon relay(relayOutput("live-pid10"));
    const std::string name = "live-pid10";
    auto s = startLivePerPid(name, relay, 200000, "tracectl_demo:tick");
    LiveViewerRun run = startLiveViewer(relay, name, "live-pid10-viewer.log");
    ASSERT_TRUE(run.attached) << run.why;
    constexpr int kApps = 20; // the issue's case
    constexpr int kTicks = 21;
    for (int i = 0; i < kApps; ++i) {
        runApp(kTicks);
        std::this_thread::sleep_for(std::chrono::milliseconds(300)); // the scenario's pace
    }
    destroySoonAfter(*run.viewer, *s, relay, name, "live-pid10-viewer.log", kApps * kTicks);
}

// Fresh users' cases (issue 40 A.6): short per-PID apps started at once,
// the viewer attached all along. The babeltrace2 2.0.4 viewer crashed
// (SIGSEGV in its CTF decoder): eight apps and a destroy 3 s later, 1 to 3
// runs of 4, when it got a trace's metadata stream without its data streams
// or learned of traces whose metadata did not yet declare the tick's
// sequences (it sizes its table of sequence lengths once); thirty apps, 10
// of 14 runs, when one app's first packet published the others' traces
// before their metadata was whole (RelaySession::streamsSent()).
TEST_F(Relay, ALiveViewerSeesEightPerPidAppsStartedAtOnce) {
    RelayDaemon relay(relayOutput("live-pid8"));
    const std::string name = "live-pid8";
    auto s = startLivePerPid(name, relay, 200000, "tracectl_demo:tick");
    LiveViewerRun run = startLiveViewer(relay, name, "live-pid8-viewer.log");
    ASSERT_TRUE(run.attached) << run.why;
    constexpr int kApps = 8;
    constexpr int kTicks = 50;
    EXPECT_EQ(runAppsAtOnce(kApps, kTicks), std::vector<int>(kApps, 0));
    destroySoonAfter(*run.viewer, *s, relay, name, "live-pid8-viewer.log", kApps * kTicks);
}

TEST_F(Relay, ALiveViewerSeesThirtyPerPidAppsStartedAtOnce) {
    RelayDaemon relay(relayOutput("live-pid30"));
    const std::string name = "live-pid30";
    auto s = startLivePerPid(name, relay, 200000, "tracectl_demo:tick");
    LiveViewerRun run = startLiveViewer(relay, name, "live-pid30-viewer.log");
    ASSERT_TRUE(run.attached) << run.why;
    constexpr int kApps = 30;
    constexpr int kTicks = 50;
    EXPECT_EQ(runAppsAtOnce(kApps, kTicks), std::vector<int>(kApps, 0));
    // Every app's events before the destroy (whose 14 s limit could cut
    // 30 lingering traces short).
    expectViewerEnds(*run.viewer, *s, "live-pid30-viewer.log", kApps * kTicks);
    EXPECT_EQ(countTicks(relay.sessionDir(name)), kApps * kTicks);
}

// 4. A tracectl session and an lttng-sessiond session stream to one relay
// at the same time: both traces complete, neither holds the other's app.
TEST_F(Relay, ATracectlSessionAndAnLttngSessionShareOneRelay) {
    RelayDaemon relay(relayOutput("shared"));
    LttngSessiond lttng;
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"create", "lt-side", "--set-url", relay.url()},
          {"enable-event", "-u", "tracectl_demo:tick", "-s", "lt-side"},
          {"start", "lt-side"}}) {
        const RunResult r = lttng.lttng(args);
        ASSERT_TRUE(r.ok()) << "lttng " << args[0] << ": " << r.describe() << r.out;
    }
    auto s = createNetwork("tc-side", relay.url());
    s->EnableEvents("ust", "", "tracectl_demo:tick", {});
    s->Start({});

    constexpr int kTicks = 5000;
    const std::string go = work_ + "/shared-go";
    const std::string lttngLog = work_ + "/lttng-app.log";
    ChildProcess theirs(lttng.command({"LTTNG_UST_REGISTER_TIMEOUT=20000", demoApp(),
                                       std::to_string(kTicks), "50", go}),
                        {}, lttngLog);
    ChildProcess ours({demoApp(), std::to_string(kTicks), "50", go}, {}, appLog());
    ASSERT_TRUE(waitTracing(ours.pid(), appLog()));
    ASSERT_TRUE(eventually([&] { return printedReady(lttngLog, theirs.pid()); }))
        << fileText(lttngLog);
    std::ofstream(go).put('\n'); // both emit at once
    ASSERT_EQ(theirs.wait(60000), 0) << fileText(lttngLog);
    ASSERT_EQ(ours.wait(60000), 0);
    const RunResult stopped = lttng.lttng({"stop", "lt-side"});
    EXPECT_TRUE(stopped.ok()) << stopped.describe();
    s->Stop({});

    const std::string lt = relay.sessionDir("lt-side");
    const std::string tc = relay.sessionDir("tc-side");
    ASSERT_FALSE(lt.empty());
    ASSERT_FALSE(tc.empty());
    for (const auto& [dir, who] : {std::pair{lt, "lttng-sessiond"}, std::pair{tc, "tracectld"}}) {
        SCOPED_TRACE(std::string(who) + "'s trace " + dir);
        const Json counts = countEvents(dir);
        EXPECT_EQ(counts["seq"]["count"], kTicks);
        EXPECT_EQ(counts["seq"]["missing"], 0);
        EXPECT_EQ(counts["seq"]["duplicates"], 0);
        EXPECT_EQ(counts["discarded"], 0);
    }
    // Each holds its own app only: nobody's for lttng, ours for tracectl.
    EXPECT_TRUE(fs::is_directory(lt + "/ust/uid/65534"));
    EXPECT_FALSE(fs::exists(lt + "/ust/uid/" + std::to_string(::getuid())));
    EXPECT_TRUE(fs::is_directory(tc + "/ust/uid/" + std::to_string(::getuid())));
    EXPECT_FALSE(fs::exists(tc + "/ust/uid/65534"));
    EXPECT_TRUE(lttng.lttng({"destroy", "lt-side"}).ok());
    s->Destroy({});
}

// 5. Rotating a network session: the relay's archive chunks, each a trace of
// its own, together hold every event exactly once.
TEST_F(Relay, TheArchivesOfARotatedNetworkSessionHoldEveryEventOnce) {
    RelayDaemon relay(relayOutput("rotation"));
    SignalRecorder signals;
    auto s = createNetwork("net-rot", relay.url());
    s->EnableEvents("ust", "", "tracectl_demo:tick", {});
    s->Start({});
    constexpr int kTicks = 4000;
    ChildProcess app({demoApp(), std::to_string(kTicks), "250"}, {}, appLog());
    ASSERT_TRUE(waitTracing(app.pid(), appLog()));
    EXPECT_FALSE(rotateAndWait(*s, signals).empty()) << "first rotation";
    EXPECT_FALSE(rotateAndWait(*s, signals).empty()) << "second rotation";
    ASSERT_EQ(app.wait(60000), 0);
    s->Stop({});
    EXPECT_FALSE(rotateAndWait(*s, signals).empty()) << "rotation after the stop";

    const std::string dir = relay.sessionDir("net-rot");
    ASSERT_FALSE(dir.empty());
    std::vector<std::string> chunks;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir + "/archives", ec))
        chunks.push_back(e.path().string());
    std::sort(chunks.begin(), chunks.end());
    EXPECT_EQ(chunks.size(), 3u) << dir << "/archives";
    long sum = 0;
    for (const auto& chunk : chunks) {
        const long n = countTicksIfAny(chunk); // each chunk is a trace of its own
        EXPECT_GE(n, 0) << chunk;
        sum += n;
    }
    EXPECT_EQ(sum, kTicks);
    const Json counts = countEvents(dir);
    EXPECT_EQ(counts["seq"]["count"], kTicks);
    EXPECT_EQ(counts["seq"]["missing"], 0);
    EXPECT_EQ(counts["seq"]["duplicates"], 0);
    EXPECT_EQ(counts["discarded"], 0);
    // The chunk the rotation after the stop opened holds nothing: the relay deletes it at
    // the end rather than keep an empty trace (LTTng opens none for a stopped session).
    s->Destroy({});
    std::vector<std::string> left;
    EXPECT_TRUE(eventually(
        [&] {
            left.clear();
            for (const auto& e : fs::directory_iterator(dir))
                left.push_back(e.path().filename().string());
            return left == std::vector<std::string>{"archives"};
        },
        std::chrono::seconds(10)))
        << dir << " holds " << ::testing::PrintToString(left);
}

// 6a and 7. The relay killed while a session streams: the session goes to
// "error" naming the relay, the daemon serves on; once the relay is back on
// the same ports, a new session streams to it.
TEST_F(Relay, ARelayKilledMidSessionErrsTheSessionAndARestartedOneIsStreamedToAgain) {
    RelayDaemon relay(relayOutput("killed"));
    auto s = createNetwork("net-killed", relay.url());
    s->AddChannel("ust", "channel0",
                  {{"subbuf-size", sdbus::Variant(std::uint64_t{4096})},
                   {"subbuf-count", sdbus::Variant(std::uint64_t{4})}});
    s->EnableEvents("ust", "", "tracectl_demo:tick", {});
    s->Start({});
    // Small sub-buffers and an app that goes on ticking: packets keep going
    // to the relay, so its loss shows.
    ChildProcess app({demoApp(), "10000000", "100"}, {}, appLog());
    ASSERT_TRUE(waitTracing(app.pid(), appLog()));
    ASSERT_TRUE(eventually(
        [&] {
            const auto dirs = relay.sessionDirs("net-killed");
            return !dirs.empty() && holdsData(dirs.front(), "channel0_");
        },
        std::chrono::seconds(15)))
        << "no packet reached the relay";
    relay.kill();
    std::string state;
    EXPECT_TRUE(
        eventually([&] { return (state = s->State()) == "error"; }, std::chrono::seconds(20)))
        << "state " << state << " after the relay died";
    const std::string reason = s->ErrorReason();
    EXPECT_NE(reason.find("127.0.0.1"), std::string::npos) << reason;
    EXPECT_TRUE(reason.find(std::to_string(relay.controlPort())) != std::string::npos ||
                reason.find(std::to_string(relay.dataPort())) != std::string::npos)
        << "the reason names the relay's address: " << reason;
    EXPECT_EQ(processAlive(app.pid()), true) << "the app is never held up by the relay";
    const std::string result = consumerResult(*s);
    EXPECT_TRUE(result != "signal" && result != "core-dump") << "consumer unit: " << result;
    app.kill(); // before another session starts: it would trace it too
    app.wait(10000);
    expectDaemonServes("the relay died");
    EXPECT_EQ(errorOf([&] { s->Destroy({}); }).name, "no error");

    relay.restart(relayOutput("restarted"));
    auto again = createNetwork("net-restarted", relay.url());
    again->EnableEvents("ust", "", "tracectl_demo:tick", {});
    again->Start({});
    runApp(100);
    again->Stop({});
    const std::string dir = relay.sessionDir("net-restarted");
    ASSERT_FALSE(dir.empty());
    EXPECT_EQ(countTicks(dir), 100);
    again->Destroy({});
}

// 7b. A session stopped while the relay restarts goes to error at once,
// and a new Start streams to the relay that came back.
TEST_F(Relay, AStartAfterTheRelayRestartedStreamsToItAgain) {
    RelayDaemon relay(relayOutput("before-restart"));
    auto s = createNetwork("net-restart-start", relay.url());
    s->EnableEvents("ust", "", "tracectl_demo:tick", {});
    s->Start({});
    runApp(30);
    s->Stop({});
    EXPECT_EQ(countTicks(relay.sessionDir("net-restart-start")), 30);
    relay.restart(relayOutput("after-restart"));
    // The consumer watches its idle connections: the relay going away
    // fails the stopped session at once, naming the relay.
    ASSERT_TRUE(eventually([&] { return s->State() == "error"; })) << s->State();
    EXPECT_NE(s->ErrorReason().find("127.0.0.1:" + std::to_string(relay.controlPort())),
              std::string::npos)
        << s->ErrorReason();
    // A new Start streams to the relay that came back: a new consumer and
    // a new session on the relay, in a folder of its own.
    const CallError started = errorOf([&] { s->Start({}); });
    ASSERT_EQ(started.name, "no error") << started.message;
    EXPECT_EQ(s->State(), "active");
    EXPECT_EQ(s->ErrorReason(), "");
    runApp(40);
    s->Stop({});
    const auto dirs = relay.sessionDirs("net-restart-start");
    ASSERT_EQ(dirs.size(), 1u) << "the restarted relay has no folder for the session";
    EXPECT_EQ(countTicks(dirs.front()), 40);
    EXPECT_EQ(errorOf([&] { s->Destroy({}); }).name, "no error");
}

// 1b. A snapshot session with a network output (lttng create --snapshot
// --set-url): each RecordSnapshot is written on the relay, in the session's
// folder there, as `snapshot-1-<date>-<n>` (lttng-tools 2.13 cmd.c
// snapshot_record), and RecordSnapshot returns that folder relative to the
// relay's output folder. A relay down at RecordSnapshot is RelayUnavailable
// naming it, and the session takes the next snapshot once the relay is back.
TEST_F(Relay, SnapshotsOfANetworkSnapshotSessionAreWrittenOnTheRelay) {
    RelayDaemon relay(relayOutput("snapshots"));
    auto s =
        createNetwork("net-snap", relay.url(), {{"mode", sdbus::Variant(std::string("snapshot"))}});
    EXPECT_EQ(s->Mode(), "snapshot");
    EXPECT_EQ(s->OutputUrl(), relay.url());
    EXPECT_EQ(s->OutputPath(), "");
    s->EnableEvents("ust", "", "tracectl_demo:tick", {});
    s->Start({});
    ChildProcess app({demoApp(), "10000000", "1000"}, {}, appLog()); // ~1000 ticks a second
    ASSERT_TRUE(waitTracing(app.pid(), appLog()));
    // A flight recorder: the relay sees nothing until a snapshot.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_TRUE(relay.sessionDirs("net-snap").empty());

    const std::string first = s->RecordSnapshot({});
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const std::string second = s->RecordSnapshot({});
    const std::regex where(R"([^/]+/net-snap-\d{8}-\d{6}/snapshot-1-\d{8}-\d{6}-(\d+))");
    std::smatch m;
    ASSERT_TRUE(std::regex_match(first, m, where)) << first;
    EXPECT_EQ(m[1], "0");
    ASSERT_TRUE(std::regex_match(second, m, where)) << second;
    EXPECT_EQ(m[1], "1");
    // Both in the one folder the relay has for the session.
    const auto dirs = relay.sessionDirs("net-snap");
    ASSERT_EQ(dirs.size(), 1u);
    for (const std::string& snap : {first, second}) {
        const std::string dir = relay.outputDir() + "/" + snap;
        EXPECT_EQ(fs::path(dir).parent_path(), fs::path(dirs.front())) << dir;
        const std::string uidDir = dir + "/ust/uid/" + std::to_string(::getuid()) + "/64-bit";
        EXPECT_TRUE(fs::is_regular_file(uidDir + "/metadata")) << uidDir;
        EXPECT_TRUE(holdsData(uidDir, "channel0_")) << uidDir;
        // As LTTng's snapshots on a relay: no index (a snapshot's relay
        // session keeps none, lttng-relayd main.c session_streams_have_index).
        EXPECT_FALSE(fs::exists(uidDir + "/index")) << uidDir;
        EXPECT_GT(countTicks(dir), 0) << dir; // read by babeltrace2
    }
    const Json a = countEvents(relay.outputDir() + "/" + first);
    const Json b = countEvents(relay.outputDir() + "/" + second);
    ASSERT_FALSE(a["seq"]["last"].is_null());
    ASSERT_FALSE(b["seq"]["last"].is_null());
    EXPECT_GT(b["seq"]["last"].get<std::uint64_t>(), a["seq"]["last"].get<std::uint64_t>())
        << "the second snapshot holds later ticks";
    EXPECT_EQ(b["seq"]["duplicates"], 0);

    // The relay down: this snapshot fails naming it; the session is unharmed.
    relay.kill();
    const CallError down = errorOf([&] { s->RecordSnapshot({}); });
    EXPECT_EQ(down.name, kRelayUnavailable) << down.message;
    EXPECT_NE(down.message.find("127.0.0.1:" + std::to_string(relay.controlPort())),
              std::string::npos)
        << down.message;
    EXPECT_EQ(s->State(), "active");
    relay.restart(relayOutput("snapshots-restarted"));
    std::string third;
    const CallError again = errorOf([&] { third = s->RecordSnapshot({}); });
    ASSERT_EQ(again.name, "no error") << again.message;
    ASSERT_TRUE(std::regex_match(third, m, where)) << third;
    EXPECT_GT(countTicks(relay.outputDir() + "/" + third), 0);
    // A network snapshot session clears its buffers as a local one does.
    EXPECT_EQ(errorOf([&] { s->Clear({}); }).name, "no error");
    app.kill();
    app.wait(10000);
    EXPECT_EQ(errorOf([&] { s->Destroy({}); }).name, "no error");
}

// 1c. A network snapshot of a session with a kernel and a UST channel: one
// trace on the relay, both domains in it, read by babeltrace2 as one.
TEST_F(Relay, AKernelAndUstSnapshotGoesToTheRelayAsOneTrace) {
    ASSERT_TRUE(manager_->KernelTracingAvailable());
    RelayDaemon relay(relayOutput("kernel-snapshot"));
    auto s = createNetwork("net-ksnap", relay.url(),
                           {{"mode", sdbus::Variant(std::string("snapshot"))}});
    s->EnableEvents("kernel", "", "sched:sched_switch", {});
    s->EnableEvents("ust", "", "tracectl_demo:tick", {});
    s->Start({});
    runApp(50, 2000);
    const std::string snap = s->RecordSnapshot({});
    const std::string dir = relay.outputDir() + "/" + snap;
    EXPECT_TRUE(fs::is_directory(dir + "/kernel")) << dir;
    EXPECT_TRUE(fs::is_directory(dir + "/ust")) << dir;
    std::size_t ticks = 0, switches = 0;
    for (const Json& e : traceEvents(dir, {"sched_switch", "tracectl_demo:tick"}))
        ++(e["name"] == "tracectl_demo:tick" ? ticks : switches);
    EXPECT_EQ(ticks, 50u);
    EXPECT_GT(switches, 0u) << "no sched_switch in the relay's kernel snapshot";
    EXPECT_EQ(errorOf([&] { s->Destroy({}); }).name, "no error");
}

// 6b. Nothing listening where the relay should be: RelayUnavailable at
// CreateSession (or Start), naming the address.
TEST_F(Relay, NothingListeningIsRelayUnavailableNamingTheAddress) {
    const auto ports = freeLoopbackPorts(2);
    const std::string url =
        "net://127.0.0.1:" + std::to_string(ports[0]) + ":" + std::to_string(ports[1]);
    const auto createAndStart = [&](const std::string& name, const Options& options) {
        return errorOf([&] {
            SessionClient s(*bus_, manager_->CreateSession(name, options));
            s.EnableEvents("ust", "", "tracectl_demo:tick", {});
            const CallError e = errorOf([&] { s.Start({}); });
            s.Destroy({});
            if (e.name != "no error")
                throw sdbus::Error(e.name, e.message);
        });
    };
    CallError e = createAndStart("nothing-there", {{"url", sdbus::Variant(url)}});
    EXPECT_EQ(e.name, kRelayUnavailable) << e.message;
    EXPECT_NE(e.message.find("127.0.0.1:" + std::to_string(ports[0])), std::string::npos)
        << e.message;
    // The control endpoint is a relay, the data one is not there.
    RelayDaemon relay(relayOutput("half"));
    e = createAndStart(
        "half-there",
        {{"control-url", sdbus::Variant("tcp://127.0.0.1:" + std::to_string(relay.controlPort()))},
         {"data-url", sdbus::Variant("tcp://127.0.0.1:" + std::to_string(ports[1]))}});
    EXPECT_EQ(e.name, kRelayUnavailable) << e.message;
    EXPECT_NE(e.message.find("127.0.0.1:" + std::to_string(ports[1])), std::string::npos)
        << "the message names the data address: " << e.message;
    // net://HOST alone means LTTng's default ports.
    if (!portAccepts("127.0.0.1", 5342)) {
        e = createAndStart("default-ports",
                           {{"url", sdbus::Variant(std::string("net://127.0.0.1"))}});
        EXPECT_EQ(e.name, kRelayUnavailable) << e.message;
        EXPECT_NE(e.message.find("5342"), std::string::npos) << e.message;
    }
    for (const char* name : {"nothing-there", "half-there", "default-ports"})
        EXPECT_EQ(errorNameOf([&] { manager_->GetSession(name); }),
                  "org.tracectl.Tracing1.Error.NoSuchSession")
            << "a half-made session " << name << " is left";
}

// 6b. Something that is not a relay listens there: a clear error, quickly.
TEST_F(Relay, APeerThatIsNoRelayIsRefusedClearly) {
    const std::pair<FakeRelay::Stranger, const char*> strangers[] = {
        {FakeRelay::Stranger::CloseAtOnce, "closes at once"},
        {FakeRelay::Stranger::Banner, "an SSH banner"},
        {FakeRelay::Stranger::WrongVersion, "protocol 9.0"},
        {FakeRelay::Stranger::Silent, "never answers"},
    };
    int n = 0;
    for (const auto& [behaviour, what] : strangers) {
        SCOPED_TRACE(std::string("a peer that ") + what);
        FakeRelay peer(behaviour);
        const std::string name = "stranger-" + std::to_string(++n);
        CallError e;
        const double seconds = secondsOf([&] {
            e = errorOf([&] {
                SessionClient s(
                    *bus_, manager_->CreateSession(name, {{"url", sdbus::Variant(peer.url())}}));
                s.EnableEvents("ust", "", "tracectl_demo:tick", {});
                const CallError started = errorOf([&] { s.Start({}); });
                s.Destroy({});
                if (started.name != "no error")
                    throw sdbus::Error(started.name, started.message);
            });
        });
        EXPECT_EQ(e.name, kRelayUnavailable) << e.message;
        EXPECT_NE(e.message.find("127.0.0.1:" + std::to_string(peer.controlPort())),
                  std::string::npos)
            << e.message;
        EXPECT_LT(seconds, 15.0) << "the refusal took too long";
        EXPECT_GT(peer.connections(), 0);
    }
    expectDaemonServes("peers that are no relay");
}

// 6c. A peer posing as the relay answers VERSION as one, then spoils one
// reply (garbage, a truncated reply and a hang-up, a huge length, a
// flood): the session reports the error, the consumer does not crash, the
// app is not held up, and the daemon serves on.
TEST_F(Relay, AHostilePeerPosingAsTheRelayOnlyFailsItsOwnSession) {
    RelayDaemon relay(relayOutput("hostile"));
    using F = FakeRelay;
    struct Case {
        std::uint32_t command;
        F::Fault fault;
        const char* faultName;
    };
    const Case cases[] = {
        {F::GetConfiguration, F::Fault::Garbage, "garbage"},
        {F::CreateSession, F::Fault::HugeLength, "a huge path length"},
        {F::CreateSession, F::Fault::Truncate, "a truncated reply"},
        {F::CreateTraceChunk, F::Fault::Garbage, "garbage"},
        {F::AddStream, F::Fault::Truncate, "a truncated reply"},
        {F::AddStream, F::Fault::Flood, "a 1 MiB flood"},
        {F::SendIndex, F::Fault::Garbage, "garbage"},
        {F::DataPending, F::Fault::Truncate, "a truncated reply"},
        {F::CloseTraceChunk, F::Fault::HugeLength, "a huge path length"},
    };
    int n = 0;
    for (const Case& c : cases) {
        const std::string what = F::commandName(c.command) + " answered with " + c.faultName;
        SCOPED_TRACE(what);
        F peer(relay, c.command, c.fault);
        const std::string name = "hostile-" + std::to_string(++n);
        std::unique_ptr<SessionClient> s;
        const CallError created = errorOf([&] {
            s = createNetwork(name, peer.url());
            s->AddChannel("ust", "channel0",
                          {{"subbuf-size", sdbus::Variant(std::uint64_t{4096})},
                           {"subbuf-count", sdbus::Variant(std::uint64_t{4})}});
            s->EnableEvents("ust", "", "tracectl_demo:*", {});
        });
        ASSERT_EQ(created.name, "no error") << "VERSION is answered: " << created.message;
        const CallError started = errorOf([&] { s->Start({}); });
        CallError stopped;
        if (started.name == "no error") {
            runApp(2000); // ADD_STREAM, SEND_METADATA, SEND_INDEX: the app never waits
            if (s->State() == "active")
                stopped = errorOf([&] { s->Stop({}); });
        }
        std::string state = s->State();
        std::string reason = s->ErrorReason();
        const std::string result = consumerResult(*s);
        const std::string address = "127.0.0.1:" + std::to_string(peer.controlPort());
        if (!peer.faulted()) {
            // Only Destroy sends it (CLOSE_TRACE_CHUNK): Destroy must come
            // back, the consumer not crash, the daemon serve on (below).
            EXPECT_EQ(stopped.name, "no error") << stopped.message;
        } else if (started.name != "no error") {
            EXPECT_EQ(started.name, kRelayUnavailable) << started.message;
            EXPECT_NE(started.message.find(address), std::string::npos) << started.message;
        } else if (stopped.name != "no error" && state != "error") {
            // Stop failed, saying why.
            EXPECT_NE(stopped.message.find("127.0.0.1"), std::string::npos)
                << stopped.name << " " << stopped.message;
        } else {
            EXPECT_TRUE(eventually([&] { return (state = s->State()) == "error"; },
                                   std::chrono::seconds(15)))
                << "state " << state << "; Stop: " << stopped.name << " " << stopped.message;
            reason = s->ErrorReason();
            EXPECT_NE(reason.find("127.0.0.1"), std::string::npos) << reason;
        }
        EXPECT_TRUE(result != "signal" && result != "core-dump")
            << "the consumer crashed: unit Result " << result << "; " << reason;
        const CallError destroyed = errorOf([&] { s->Destroy({}); });
        EXPECT_EQ(destroyed.name, "no error") << destroyed.message;
        const auto commandsSeen = [&] {
            std::string seen;
            for (const auto command : peer.commandsSeen())
                seen += " " + F::commandName(command);
            return seen;
        };
        // Destroy may come back before the relay's last reply went through the peer.
        EXPECT_TRUE(eventually([&] { return peer.faulted(); }, std::chrono::seconds(5)))
            << "the fault never happened; commands seen:" << commandsSeen();
        ASSERT_TRUE(sandbox_->daemonRunning());
    }
    expectDaemonServes("hostile peers");
}

// A slow relay: the consumer discards, and counts it, rather than hold up
// the app; what it did send is all on the relay. The same app recorded at
// the same time by a session streaming straight to the relay loses nothing:
// the slowness is what made the difference.
TEST_F(Relay, ASlowRelayMakesTheConsumerDiscardCountedNeverHoldingUpTheApp) {
    RelayDaemon relay(relayOutput("slow"));
    // Every reply 50 ms late: at most 20 packets a second (16 KiB each).
    FakeRelay slow(relay, std::chrono::milliseconds(50));
    const Options channel{{"subbuf-size", sdbus::Variant(std::uint64_t{16384})},
                          {"subbuf-count", sdbus::Variant(std::uint64_t{4})}};
    std::map<std::string, std::unique_ptr<SessionClient>> sessions;
    sessions["net-slow"] = createNetwork("net-slow", slow.url());
    sessions["net-fast"] = createNetwork("net-fast", relay.url());
    // ~1 MB/s of events for a few seconds.
    constexpr std::uint64_t kTicks = 20000;
    const std::string go = work_ + "/slow-go";
    ChildProcess app({demoApp(), std::to_string(kTicks), "50", go}, {}, appLog());
    ASSERT_TRUE(waitTracing(app.pid(), appLog()));
    // Started with the app already there: Start returns once the app
    // records in the session, so every tick it emits belongs to both.
    for (auto& [name, s] : sessions) {
        s->AddChannel("ust", "channel0", channel);
        s->EnableEvents("ust", "", "tracectl_demo:tick", {});
        s->Start({});
    }
    std::ofstream(go).put('\n');
    int status = -1;
    const double took = secondsOf([&] { status = app.wait(30000); });
    EXPECT_EQ(status, 0);
    EXPECT_LT(took, 10.0) << "the app was held up";
    const double stopping = secondsOf([&] {
        for (auto& [name, s] : sessions)
            s->Stop({});
    });
    const Json fast = countEvents(relay.sessionDir("net-fast"));
    EXPECT_EQ(fast["discarded"], 0) << "the consumer keeps up with a relay that does";
    EXPECT_EQ(fast["seq"]["count"], kTicks);
    const Json counts = countEvents(relay.sessionDir("net-slow"));
    const auto recorded = counts["seq"]["count"].get<std::uint64_t>();
    const auto discarded = counts["discarded"].get<std::uint64_t>();
    std::cout << "slow relay: " << recorded << " recorded, " << discarded
              << " discarded; the app ran " << took << " s, Stop took " << stopping << " s\n";
    EXPECT_GT(discarded, 0u) << "the relay was not slow enough to show anything";
    // (Sessions started after the app registered: an app registering while
    // a slow session runs gets register_done without waiting for a
    // consumer silent for 1 s, kSilentConsumer, and what it emits before it
    // joined that session is not the session's.)
    EXPECT_EQ(recorded + discarded, kTicks) << "recorded + discarded = emitted";
    EXPECT_EQ(counts["discarded_unknown"], 0);
    EXPECT_EQ(counts["seq"]["duplicates"], 0);
    for (auto& [name, s] : sessions) {
        EXPECT_EQ(s->State(), "stopped") << name;
        s->Destroy({});
    }
}

// The relay over IPv6.
TEST_F(Relay, ARelayOnIpv6LoopbackIsStreamedTo) {
    RelayDaemon relay(relayOutput("ipv6"), true);
    auto s = createNetwork("net-v6", relay.url());
    EXPECT_EQ(s->OutputUrl(), relay.url()) << "net://[::1]:CONTROL:DATA";
    s->EnableEvents("ust", "", "tracectl_demo:tick", {});
    s->Start({});
    runApp(25);
    s->Stop({});
    EXPECT_EQ(countTicks(relay.sessionDir("net-v6")), 25);
    s->Destroy({});
}

// The command line: --set-url, --ctrl-url/--data-url and --live make the
// sessions the D-Bus options do, and a session made so streams.
TEST_F(Relay, TheCommandLineMakesNetworkAndLiveSessions) {
    RelayDaemon relay(relayOutput("cli"));
    const std::string cli = tracectlCli();
    const auto tracectl = [&](const std::vector<std::string>& args) {
        std::vector<std::string> argv{cli};
        argv.insert(argv.end(), args.begin(), args.end());
        return run(argv);
    };
    RunResult r = tracectl({"create", "cli-net", "--set-url", relay.url()});
    ASSERT_TRUE(r.ok()) << r.describe();
    SessionClient net(*bus_, manager_->GetSession("cli-net"));
    EXPECT_EQ(net.OutputUrl(), relay.url());
    ASSERT_TRUE(tracectl({"enable-event", "-u", "tracectl_demo:tick", "-s", "cli-net"}).ok());
    r = tracectl({"start", "cli-net"});
    ASSERT_TRUE(r.ok()) << r.describe();
    runApp(20);
    r = tracectl({"stop", "cli-net"});
    ASSERT_TRUE(r.ok()) << r.describe();
    EXPECT_EQ(countTicks(relay.sessionDir("cli-net")), 20);

    r = tracectl({"create", "cli-split", "--ctrl-url",
                  "tcp://127.0.0.1:" + std::to_string(relay.controlPort()), "--data-url",
                  "tcp://127.0.0.1:" + std::to_string(relay.dataPort())});
    ASSERT_TRUE(r.ok()) << r.describe();
    EXPECT_EQ(SessionClient(*bus_, manager_->GetSession("cli-split")).OutputUrl(), relay.url());

    r = tracectl({"create", "cli-live", "--live=250000", "--set-url", relay.url()});
    ASSERT_TRUE(r.ok()) << r.describe();
    SessionClient live(*bus_, manager_->GetSession("cli-live"));
    EXPECT_EQ(live.Mode(), "live");
    EXPECT_EQ(live.LiveTimer(), 250000u);

    const auto ports = freeLoopbackPorts(2);
    const std::string nowhere =
        "net://127.0.0.1:" + std::to_string(ports[0]) + ":" + std::to_string(ports[1]);
    r = tracectl({"create", "cli-nowhere", "--set-url", nowhere});
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE(r.err.find("127.0.0.1:" + std::to_string(ports[0])), std::string::npos) << r.err;
    for (const char* name : {"cli-net", "cli-split", "cli-live"})
        EXPECT_TRUE(tracectl({"destroy", name}).ok()) << name;
}

// A relay that stops answering while Destroy drains the buffers: the
// session is destroyed all the same, but Destroy says that the relay did
// not get everything, never reporting a success.
TEST_F(Relay, ADestroyWhoseRelayStopsAnsweringSaysTheTraceIsIncomplete) {
    RelayDaemon relay(relayOutput("frozen"));
    auto s = createNetwork("net-frozen", relay.url());
    s->EnableEvents("ust", "", "tracectl_demo:tick", {});
    s->Start({});
    runApp(200);           // less than a sub-buffer: it goes to the relay at Destroy
    relay.signal(SIGSTOP); // connected, and answering nothing
    const CallError destroyed = errorOf([&] { s->Destroy({}); });
    relay.signal(SIGCONT);
    EXPECT_EQ(destroyed.name, kRelayUnavailable) << destroyed.message;
    EXPECT_NE(destroyed.message.find("the session was destroyed, but"), std::string::npos)
        << destroyed.message;
    EXPECT_NE(destroyed.message.find(relay.url()), std::string::npos) << destroyed.message;
    EXPECT_EQ(errorNameOf([&] { manager_->GetSession("net-frozen"); }),
              "org.tracectl.Tracing1.Error.NoSuchSession");
}
