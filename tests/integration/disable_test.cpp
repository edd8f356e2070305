// Session.DisableEvents and Session.DisableChannel against the real stack
// (sandbox: tracectld, its consumer units, the bundled LTTng-UST demo app,
// tracefs), read back with babeltrace2 (trace_events.py): what was
// recorded before a disable and after the re-enable is there, what
// happened in between is not. The window is bounded by the D-Bus replies'
// times on CLOCK_MONOTONIC, the clock both domains record with (the
// trace's clock cycles), so nothing here assumes how fast anything runs.
#include "child_process.hpp"
#include "kernel_trace_support.hpp"
#include "sandbox_suite.hpp"

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <unistd.h>

using namespace tracectl::test;
using Json = nlohmann::json;

namespace {

using Options = std::map<std::string, sdbus::Variant>;

uint64_t monotonicNs() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

/// Voluntary context switches of the main thread of `pid` so far: the demo
/// app sleeps once per tick, so this grows with the ticks it emitted.
long switchesOf(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("voluntary_ctxt_switches:", 0) == 0)
            return std::stol(line.substr(line.find(':') + 1));
    return -1;
}

/// Waits until app `pid` has slept (ticked) `ticks` more times.
bool ticked(pid_t pid, long ticks) {
    const long from = switchesOf(pid);
    return eventually([&] { return switchesOf(pid) >= from + ticks; }, std::chrono::seconds(20));
}

/// The D-Bus error name of what `f` throws ("" if it returns).
template <class F>
std::string errorOf(F f) {
    try {
        f();
    } catch (const sdbus::Error& e) {
        return e.getName();
    }
    return "";
}

/// Ticks (with their trace clock value) in `dir`.
struct Window {
    std::size_t before = 0, inside = 0, after = 0;
    std::set<uint64_t> seqs;
};
Window ticksAround(const std::string& dir, uint64_t beforeNs, uint64_t fromNs, uint64_t toNs,
                   uint64_t afterNs) {
    Window w;
    for (const Json& e : traceEvents(dir, {"tracectl_demo:tick"})) {
        const auto at = e["cycles"].get<uint64_t>();
        w.seqs.insert(e["fields"]["seq"].get<uint64_t>());
        if (at < beforeNs)
            ++w.before;
        if (at > fromNs && at < toNs)
            ++w.inside;
        if (at > afterNs)
            ++w.after;
    }
    return w;
}

class Disable : public SandboxSuite {
protected:
    std::string appLog(const std::string& name) const {
        return sandbox_->dir() + "/log/disable-" + name + ".log";
    }

    /// Runs the demo app (a tick every 2 ms) traced by session `s`, calls
    /// `off` once it has ticked a while, lets it tick while off, calls `on`,
    /// lets it tick again, stops `s`, and checks the trace of `name`.
    void disabledWindow(const std::string& name, SessionClient& s, const std::function<void()>& off,
                        const std::function<void()>& on) {
        ChildProcess app({demoApp(), "1000000", "2000"}, {}, appLog(name));
        ASSERT_TRUE(waitTracing(app.pid(), appLog(name)));
        ASSERT_TRUE(ticked(app.pid(), 30));
        const uint64_t t0 = monotonicNs();
        off();
        const uint64_t t1 = monotonicNs(); // the reply: the app records nothing of it now
        ASSERT_TRUE(ticked(app.pid(), 30));
        const uint64_t t2 = monotonicNs();
        on();
        const uint64_t t3 = monotonicNs();
        ASSERT_TRUE(ticked(app.pid(), 30));
        s.Stop({});
        app.kill(SIGKILL);
        app.wait(5000);
        const Window w = ticksAround(output(name), t0, t1, t2, t3);
        EXPECT_GT(w.before, 0u) << "the ticks before the disable are missing";
        EXPECT_EQ(w.inside, 0u) << "ticks were recorded while disabled";
        EXPECT_GT(w.after, 0u) << "the ticks after the re-enable are missing";
        // The app numbered every tick: those of the window are a gap.
        ASSERT_FALSE(w.seqs.empty());
        const uint64_t span = *w.seqs.rbegin() - *w.seqs.begin() + 1;
        EXPECT_GE(span - w.seqs.size(), 20u) << "no gap in the ticks' sequence numbers";
    }
};

TEST_F(Disable, ARuleDisabledWhileActiveRecordsNothingUntilEnabledAgain) {
    auto s = startTickSession("d-rule", {}, false, {});
    disabledWindow(
        "d-rule", *s,
        [&] {
            s->DisableEvents("ust", "", "tracectl_demo:tick", {});
            const auto events = s->Events();
            ASSERT_EQ(events.size(), 1u);
            EXPECT_FALSE(events[0].template get<5>()) << "Events shows it disabled";
        },
        [&] {
            s->EnableEvents("ust", "", "tracectl_demo:tick", {});
            const auto events = s->Events();
            ASSERT_EQ(events.size(), 1u) << "re-enabled, not a second rule";
            EXPECT_TRUE(events[0].template get<5>());
        });
    // Enabled: the same rule again is refused as before.
    EXPECT_EQ(errorOf([&] { s->EnableEvents("ust", "", "tracectl_demo:tick", {}); }),
              "org.tracectl.Tracing1.Error.EventRuleExists");
    s->Destroy({});
}

TEST_F(Disable, AChannelDisabledWhileActiveRecordsNothingUntilAddedAgain) {
    auto s = startTickSession("d-chan", {}, false, {});
    disabledWindow(
        "d-chan", *s,
        [&] {
            s->DisableChannel("ust", "channel0", {});
            const auto channels = s->Channels();
            ASSERT_EQ(channels.size(), 1u);
            EXPECT_FALSE(channels[0].template get<6>());
        },
        [&] {
            s->AddChannel("ust", "channel0", {}); // re-enables it (lttng-enable-channel)
            EXPECT_TRUE(s->Channels()[0].template get<6>());
        });
    s->Destroy({});
}

TEST_F(Disable, AKernelRuleDisabledWhileActiveMissesOnlyTheCallsMadeMeanwhile) {
    ASSERT_TRUE(manager_->KernelTracingAvailable());
    auto s = std::make_unique<SessionClient>(
        *bus_,
        manager_->CreateSession("d-kernel", {{"output-path", sdbus::Variant(output("d-kernel"))}}));
    s->EnableEvents("kernel", "", "write", {{"syscall", sdbus::Variant(true)}});
    // A second rule of another event of the channel: it keeps recording.
    s->EnableEvents("kernel", "", "getppid", {{"syscall", sdbus::Variant(true)}});
    s->Start({});
    pid_t tid = 0;
    std::thread([&] {
        tid = static_cast<pid_t>(::gettid());
        const int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
        // Three phases told apart by the writes' byte counts.
        const auto writes = [&](std::size_t bytes) {
            const std::string text(bytes, 'x');
            for (int i = 0; i < 40; ++i) {
                ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(bytes));
                ::getppid();
            }
        };
        writes(11);
        s->DisableEvents("kernel", "", "write", {});
        EXPECT_FALSE(s->KernelEvents()[0].template get<4>());
        writes(22);
        s->EnableEvents("kernel", "", "write", {{"syscall", sdbus::Variant(true)}});
        writes(33);
        s->DisableChannel("kernel", "channel0", {});
        writes(44);
        s->AddChannel("kernel", "channel0", {});
        writes(55);
        ::close(fd);
    }).join();
    s->Stop({});
    std::map<uint64_t, std::size_t> byCount;
    std::size_t getppids = 0;
    for (const Json& e :
         traceEvents(output("d-kernel"), {"syscall_entry_write", "syscall_entry_getppid"})) {
        if (e["context"]["tid"] != tid)
            continue;
        if (e["name"] == "syscall_entry_getppid")
            ++getppids;
        else
            ++byCount[e["fields"]["count"].get<uint64_t>()];
    }
    EXPECT_EQ(byCount[11], 40u);
    EXPECT_EQ(byCount[22], 0u) << "recorded while its rule was disabled";
    EXPECT_EQ(byCount[33], 40u);
    EXPECT_EQ(byCount[44], 0u) << "recorded while its channel was disabled";
    EXPECT_EQ(byCount[55], 40u);
    // getppid's rule stayed enabled: all but the disabled channel's 40.
    EXPECT_EQ(getppids, 160u);
    s->Destroy({});
}

TEST_F(Disable, BadCallsAreRefusedClearlyAndChangeNothing) {
    auto s = startTickSession("d-bad", {}, false, {});
    EXPECT_EQ(errorOf([&] { s->DisableEvents("ust", "", "tracectl_demo:nope", {}); }),
              "org.tracectl.Tracing1.Error.NoSuchEventRule");
    try {
        s->DisableEvents("ust", "", "tracectl_demo:nope", {});
    } catch (const sdbus::Error& e) {
        EXPECT_NE(e.getMessage().find("tracectl_demo:nope"), std::string::npos) << e.getMessage();
        EXPECT_NE(e.getMessage().find("channel0"), std::string::npos) << e.getMessage();
    }
    EXPECT_EQ(errorOf([&] { s->DisableEvents("ust", "other", "tracectl_demo:tick", {}); }),
              "org.tracectl.Tracing1.Error.InvalidArgument");
    EXPECT_EQ(errorOf([&] { s->DisableEvents("jul", "", "tracectl_demo:tick", {}); }),
              "org.tracectl.Tracing1.Error.InvalidArgument");
    EXPECT_EQ(errorOf([&] { s->DisableChannel("ust", "other", {}); }),
              "org.tracectl.Tracing1.Error.InvalidArgument");
    EXPECT_EQ(errorOf([&] { s->DisableChannel("jul", "channel0", {}); }),
              "org.tracectl.Tracing1.Error.InvalidArgument");
    // An enabled channel: AddChannel still refuses it (no new channel
    // after the first start).
    EXPECT_EQ(errorOf([&] { s->AddChannel("ust", "channel0", {}); }),
              "org.tracectl.Tracing1.Error.WrongState");
    // A disabled one comes back only with its own attributes.
    s->DisableChannel("ust", "channel0", {});
    EXPECT_EQ(
        errorOf([&] {
            s->AddChannel("ust", "channel0", {{"subbuf-count", sdbus::Variant(uint64_t{16})}});
        }),
        "org.tracectl.Tracing1.Error.InvalidArgument");
    EXPECT_FALSE(s->Channels()[0].template get<6>());
    s->AddChannel("ust", "channel0", {{"subbuf-count", sdbus::Variant(uint64_t{4})}});
    EXPECT_TRUE(s->Channels()[0].template get<6>());
    for (const auto& e : s->Events())
        EXPECT_TRUE(e.template get<5>());
    EXPECT_EQ(s->State(), "active");
    s->Destroy({});
}

TEST_F(Disable, RulesThatDifferOnlyByTheirFilterAreToldApartInEvents) {
    auto s = startTickSession("d-filters", {}, false, {});
    s->EnableEvents("ust", "", "tracectl_demo:tick",
                    {{"filter", sdbus::Variant(std::string("seq < 5"))}});
    s->DisableEvents("ust", "", "tracectl_demo:tick", {});
    const auto events = s->Events();
    ASSERT_EQ(events.size(), 2U);
    EXPECT_EQ(events[0].template get<6>(), "");
    EXPECT_EQ(events[1].template get<6>(), "seq < 5");
    for (const auto& e : events)
        EXPECT_FALSE(e.template get<5>());
    // The filtered one is turned back on by itself, by its own filter.
    s->EnableEvents("ust", "", "tracectl_demo:tick",
                    {{"filter", sdbus::Variant(std::string("seq < 5"))}});
    EXPECT_FALSE(s->Events()[0].template get<5>());
    EXPECT_TRUE(s->Events()[1].template get<5>());
    s->Destroy({});
}

TEST_F(Disable, TheTracectlCommandsDisableAndShowIt) {
    const char* cli = std::getenv("TRACECTL");
    ASSERT_NE(cli, nullptr);
    const auto tracectl = [&](std::vector<std::string> argv) {
        argv.insert(argv.begin(), cli);
        return run(argv);
    };
    const auto ok = [&](std::vector<std::string> argv) {
        const RunResult r = tracectl(std::move(argv));
        EXPECT_EQ(r.exitCode, 0) << r.describe();
        return r.out;
    };
    ok({"create", "d-cli", "--output", output("d-cli")});
    ok({"enable-event", "-u", "tracectl_demo:tick", "-s", "d-cli"});
    ok({"enable-event", "-u", "tracectl_demo:done", "-s", "d-cli"});
    ok({"start", "d-cli"});
    EXPECT_NE(ok({"disable-event", "-u", "tracectl_demo:tick", "-s", "d-cli"}).find("disabled"),
              std::string::npos);
    const RunResult unknown = tracectl({"disable-event", "-u", "nope:nope", "-s", "d-cli"});
    EXPECT_EQ(unknown.exitCode, 1) << unknown.describe();
    EXPECT_NE(unknown.err.find("NoSuchEventRule"), std::string::npos) << unknown.describe();
    const RunResult usage = tracectl({"disable-event", "-u", "-s", "d-cli"});
    EXPECT_EQ(usage.exitCode, 2) << usage.describe(); // neither PATTERN nor -a
    ok({"disable-event", "-u", "-a", "-s", "d-cli"});
    ok({"disable-channel", "-u", "channel0", "-s", "d-cli"});
    const std::string shown = ok({"show", "d-cli"});
    EXPECT_NE(shown.find("\"tracectl_demo:done\""), std::string::npos) << shown;
    EXPECT_NE(shown.find("[disabled: channel0]"), std::string::npos) << shown;
    EXPECT_NE(shown.find("[disabled: channel0/tracectl_demo:tick, channel0/tracectl_demo:done]"),
              std::string::npos)
        << shown;
    SessionClient s(*bus_, manager_->GetSession("d-cli"));
    for (const auto& e : s.Events())
        EXPECT_FALSE(e.template get<5>());
    EXPECT_FALSE(s.Channels()[0].template get<6>());
    ok({"enable-channel", "-u", "channel0", "-s", "d-cli"});
    EXPECT_TRUE(s.Channels()[0].template get<6>());
    ok({"destroy", "d-cli"});
}

// `enable-event -u 'a,b'` made one rule named "a,b" (it matched nothing),
// while -k split, tracectl(1) said each comma-separated name is its own
// rule, and `disable-event -u 'a,b'` split and found no rule named "a":
// the rule could not be removed by the name it was made with (a fresh
// user's finding). Each name is now its own rule in both domains, and the
// daemon refuses a ',' in any event pattern: no event name has one.
TEST_F(Disable, ACommaSeparatedUserSpaceListIsOneRuleEachAndTheDaemonRefusesAComma) {
    const char* cli = std::getenv("TRACECTL");
    ASSERT_NE(cli, nullptr);
    const auto tracectl = [&](std::vector<std::string> argv) {
        argv.insert(argv.begin(), cli);
        return run(argv);
    };
    ASSERT_TRUE(tracectl({"create", "d-comma", "--output", output("d-comma")}).ok());
    const RunResult both =
        tracectl({"enable-event", "-u", "tracectl_demo:tick,,tracectl_demo:done", "-s", "d-comma"});
    EXPECT_EQ(both.exitCode, 0) << both.describe();
    SessionClient s(*bus_, manager_->GetSession("d-comma"));
    std::vector<std::string> patterns;
    for (const auto& e : s.Events())
        patterns.push_back(e.template get<1>());
    std::sort(patterns.begin(), patterns.end());
    EXPECT_EQ(patterns, (std::vector<std::string>{"tracectl_demo:done", "tracectl_demo:tick"}));
    const RunResult off =
        tracectl({"disable-event", "-u", "tracectl_demo:tick,tracectl_demo:done", "-s", "d-comma"});
    EXPECT_EQ(off.exitCode, 0) << off.describe();
    for (const auto& e : s.Events())
        EXPECT_FALSE(e.template get<5>()) << e.template get<1>();
    const RunResult none = tracectl({"enable-event", "-u", ",", "-s", "d-comma"});
    EXPECT_EQ(none.exitCode, 2) << none.describe();
    for (const std::string domain : {"ust", "kernel"}) {
        try {
            s.EnableEvents(domain, "", "tracectl_demo:tick,tracectl_demo:done", {});
            ADD_FAILURE() << domain << ": a pattern with a ',' accepted";
        } catch (const sdbus::Error& e) {
            EXPECT_EQ(e.getName(), "org.tracectl.Tracing1.Error.InvalidArgument");
            EXPECT_NE(e.getMessage().find("no event name has one"), std::string::npos)
                << e.getMessage();
        }
    }
    EXPECT_EQ(s.Events().size(), 2u);
    EXPECT_TRUE(tracectl({"destroy", "d-comma"}).ok());
}

} // namespace
