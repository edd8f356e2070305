// The session API of tracectld over a real bus: a private system bus with
// the project's bus policy, polkitd, a systemd manager and the daemon, all
// brought up by scripts/sandbox (the same stack the demo runs).
#include "sandbox.hpp"
#include "sandbox_suite.hpp"
#include "signal_recorder.hpp"
#include "tracectl_clients.hpp"

#include <csignal>
#include <cstdlib>
#include <gtest/gtest.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using namespace tracectl::test;
using Options = std::map<std::string, sdbus::Variant>;

namespace {

const char* const kInvalidName = "org.tracectl.Tracing1.Error.InvalidName";
const char* const kInvalidArgument = "org.tracectl.Tracing1.Error.InvalidArgument";
const char* const kSessionExists = "org.tracectl.Tracing1.Error.SessionExists";
const char* const kNoSuchSession = "org.tracectl.Tracing1.Error.NoSuchSession";
const char* const kWrongState = "org.tracectl.Tracing1.Error.WrongState";
const char* const kEventRuleExists = "org.tracectl.Tracing1.Error.EventRuleExists";
const char* const kUnknownObject = "org.freedesktop.DBus.Error.UnknownObject";
const char* const kAccessDenied = "org.freedesktop.DBus.Error.AccessDenied";

std::string tracectlBinary() {
    const char* p = std::getenv("TRACECTL");
    return p != nullptr ? p : "tracectl";
}

class SessionApi : public SandboxSuite {
protected:
    /// Creates a session; its output goes under the sandbox unless given.
    std::string create(const std::string& name, Options options = {}) {
        if (options.count("output-path") == 0 && name.size() < 100 &&
            name.find('/') == std::string::npos && !name.empty() && name[0] != '.')
            options["output-path"] = sdbus::Variant(output(name));
        return manager_->CreateSession(name, options);
    }

    std::string stateOf(const std::string& path) { return SessionClient(*bus_, path).State(); }

    /// The daemon still answers and is the same process as at start-up.
    void expectDaemonServing() {
        EXPECT_EQ(manager_->Version(), TRACECTL_TEST_VERSION);
        EXPECT_TRUE(sandbox_->daemonRunning()) << "tracectld is gone";
    }

    RunResult run(const std::vector<std::string>& argv) { return tracectl::test::run(argv); }
};

} // namespace

TEST_F(SessionApi, IntrospectionShowsManagerSessionAndObjectManager) {
    const RunResult root = run({"busctl", "--system", "introspect", kService, kManagerPath});
    ASSERT_EQ(root.exitCode, 0) << root.err;
    EXPECT_NE(root.out.find("org.tracectl.Tracing1.Manager"), std::string::npos) << root.out;
    EXPECT_NE(root.out.find("org.freedesktop.DBus.ObjectManager"), std::string::npos) << root.out;
    EXPECT_NE(root.out.find(".CreateSession"), std::string::npos) << root.out;

    const std::string path = create("introspected");
    const RunResult session = run({"busctl", "--system", "introspect", kService, path});
    ASSERT_EQ(session.exitCode, 0) << session.err;
    for (const char* member : {"org.tracectl.Tracing1.Session", ".Start", ".Stop", ".Destroy",
                               ".State", ".Owner", ".OutputPath"})
        EXPECT_NE(session.out.find(member), std::string::npos) << member << "\n" << session.out;
}

TEST_F(SessionApi, BusctlAndTracectlSeeTheSameSessions) {
    const RunResult made = run({"busctl", "--system", "call", kService, kManagerPath,
                                "org.tracectl.Tracing1.Manager", "CreateSession", "sa{sv}",
                                "from-busctl", "1", "output-path", "s", "/tmp/from-busctl"});
    ASSERT_EQ(made.exitCode, 0) << made.err;

    const RunResult listed = run({tracectlBinary(), "list", "--json"});
    ASSERT_EQ(listed.exitCode, 0) << listed.err;
    const auto sessions = nlohmann::json::parse(listed.out);
    ASSERT_EQ(sessions.size(), 1u) << listed.out;
    EXPECT_EQ(sessions[0]["Name"], "from-busctl");
    EXPECT_EQ(sessions[0]["OutputPath"], "/tmp/from-busctl");
    EXPECT_EQ(sessions[0]["State"], "created");

    const RunResult created =
        run({tracectlBinary(), "create", "from-cli", "--output", "/tmp/from-cli"});
    ASSERT_EQ(created.exitCode, 0) << created.err;
    const RunResult got = run({"busctl", "--system", "call", kService, kManagerPath,
                               "org.tracectl.Tracing1.Manager", "GetSession", "s", "from-cli"});
    ASSERT_EQ(got.exitCode, 0) << got.err;
    const std::string path = manager_->GetSession("from-cli");
    EXPECT_NE(got.out.find(path), std::string::npos) << got.out;
    const RunResult prop = run({"busctl", "--system", "get-property", kService, path,
                                "org.tracectl.Tracing1.Session", "OutputPath"});
    EXPECT_EQ(prop.out, "s \"/tmp/from-cli\"\n");
    EXPECT_EQ(manager_->ListSessions().size(), 2u);
}

TEST_F(SessionApi, TwoWatchersSeeCreateStartStopDestroyInOrder) {
    SignalRecorder first;
    SignalRecorder second;
    const std::string path = create("watched");
    SessionClient session(*bus_, path);
    session.EnableEvents("ust", "", "tracectl_demo:*", {});
    session.Start({});
    session.Stop({});
    session.Destroy({});

    const std::vector<std::string> expected{
        "InterfacesAdded " + path + " org.tracectl.Tracing1.Session",
        "PropertiesChanged " + path + " Channels=<a(sttbuub)>", // channel0, made on first enable
        "PropertiesChanged " + path + " Events=<a(sssiasbs)>",
        "PropertiesChanged " + path + " State=active",
        "PropertiesChanged " + path + " State=stopped",
        "InterfacesRemoved " + path + " org.tracectl.Tracing1.Session",
    };
    EXPECT_EQ(first.waitFor(expected.size(), 5s), expected);
    EXPECT_EQ(second.waitFor(expected.size(), 5s), expected);
}

TEST_F(SessionApi, BadNamesGetInvalidNameAndNothingIsCreated) {
    const std::vector<std::string> bad{
        "",          std::string(1 << 20, 'x'),
        "../x",      "a/b",
        ".hidden",   "..",
        "a\nb",      "\x1b[31mred",
        "tab\there", "c1\xc2\x85",
        "del\x7f",   std::string(201, 'n'),
    };
    for (const auto& name : bad) {
        EXPECT_EQ(errorNameOf([&] { create(name); }), kInvalidName) << name.substr(0, 40);
        EXPECT_EQ(errorNameOf([&] { manager_->GetSession(name); }), kInvalidName);
    }
    EXPECT_TRUE(manager_->ListSessions().empty());
    // Names that are odd but harmless are accepted.
    for (const std::string& name :
         std::vector<std::string>{"with space", "café-日本", "x..y", std::string(200, 'n')})
        EXPECT_EQ(errorNameOf([&] { create(name); }), "no error") << name;
    expectDaemonServing();
}

TEST_F(SessionApi, DuplicateNameGetsSessionExists) {
    const std::string path = create("dup");
    EXPECT_EQ(errorNameOf([&] { create("dup"); }), kSessionExists);
    EXPECT_EQ(manager_->ListSessions(), std::vector<sdbus::ObjectPath>{path});
}

TEST_F(SessionApi, BadOptionsGetInvalidArgument) {
    const std::vector<Options> bad{
        {{"colour", sdbus::Variant(std::string("blue"))}},
        {{"mode", sdbus::Variant(uint32_t{1})}},
        {{"mode", sdbus::Variant(std::string("live-ish"))}},
        {{"buffer-ownership", sdbus::Variant(std::string("per-cpu"))}},
        {{"output-path", sdbus::Variant(std::string("relative/dir"))}},
        {{"output-path", sdbus::Variant(std::string("/tmp/../etc"))}},
        {{"output-path", sdbus::Variant(std::string("/"))}},
    };
    for (const auto& options : bad)
        EXPECT_EQ(errorNameOf([&] { create("opts", options); }), kInvalidArgument);
    EXPECT_TRUE(manager_->ListSessions().empty());
    const std::string path =
        create("snap", {{"mode", sdbus::Variant(std::string("normal"))},
                        {"output-path", sdbus::Variant(std::string("/tmp/snap/./x/"))}});
    SessionClient s(*bus_, path);
    EXPECT_EQ(s.Mode(), "normal");
    EXPECT_EQ(s.OutputPath(), "/tmp/snap/x");
}

// Issue 40 B8 and B11, refused by the daemon for every client (D-Bus and
// tracectl alike), with a message that says why: a rule whose exclusion
// excludes every event its pattern matches (it would record nothing, and
// lttng-enable-event(1) refuses it), and a switch, read or live timer
// below 1 ms (at 1 µs the session's consumer used a whole core). Nothing
// is changed; at the floor, each is taken.
TEST_F(SessionApi, ARuleThatRecordsNothingAndTimersBelowAMillisecondAreRefused) {
    using V = sdbus::Variant;
    const std::string path = create("refusals");
    SessionClient s(*bus_, path);
    const auto excluding = [](std::vector<std::string> names) {
        return Options{{"exclusions", V(std::move(names))}};
    };
    EXPECT_EQ(errorNameOf([&] { s.EnableEvents("ust", "", "p:*", excluding({"p:*"})); }),
              kInvalidArgument);
    EXPECT_EQ(errorNameOf([&] {
                  s.EnableEvents("ust", "", "p:ab*", excluding({"p:x", "p:a*"}));
              }),
              kInvalidArgument);
    const RunResult cliRule =
        run({tracectlBinary(), "enable-event", "-u", "p:*", "-x", "p:*", "-s", "refusals"});
    EXPECT_EQ(cliRule.exitCode, 1) << cliRule.describe();
    EXPECT_EQ(cliRule.err, std::string("tracectl: ") + kInvalidArgument +
                               ": exclusion 'p:*' excludes every event 'p:*' matches: the rule "
                               "would record nothing\n")
        << cliRule.describe();
    EXPECT_TRUE(s.Events().empty());
    s.EnableEvents("ust", "", "p:*", excluding({"p:a*"})); // a part of it: taken
    EXPECT_EQ(s.Events().size(), 1u);

    for (const char* timer : {"switch-timer", "read-timer"})
        EXPECT_EQ(errorNameOf([&] {
                      s.AddChannel("ust", "tiny", {{timer, V(uint32_t{1})}});
                  }),
                  kInvalidArgument)
            << timer;
    const RunResult cliTimers = run({tracectlBinary(), "enable-channel", "-u", "tiny", "-s",
                                     "refusals", "--switch-timer", "1", "--read-timer", "1"});
    EXPECT_EQ(cliTimers.exitCode, 1) << cliTimers.describe();
    EXPECT_NE(cliTimers.err.find(std::string(kInvalidArgument) +
                                 ": switch-timer must be 0 (off) or at least 1000 µs, not 1 µs"),
              std::string::npos)
        << cliTimers.describe();
    const RunResult help = run({tracectlBinary(), "enable-channel", "--help"});
    EXPECT_NE(help.out.find("at least 1000"), std::string::npos) << help.out;
    EXPECT_EQ(s.Channels().size(), 1u) << "channel0 only";
    s.AddChannel("ust", "floor",
                 {{"switch-timer", V(uint32_t{1000})}, {"read-timer", V(uint32_t{1000})}});
    EXPECT_EQ(s.Channels().size(), 2u);

    EXPECT_EQ(errorNameOf([&] {
                  manager_->CreateSession(
                      "lv", {{"mode", V(std::string("live"))}, {"live-timer", V(uint64_t{1})}});
              }),
              kInvalidArgument);
    const RunResult cliLive = run({tracectlBinary(), "create", "lv", "--live=999"});
    EXPECT_EQ(cliLive.exitCode, 1) << cliLive.describe();
    EXPECT_NE(cliLive.err.find("live-timer must be a period from 1000 to 4294967295 µs, not 999"),
              std::string::npos)
        << cliLive.describe();
    EXPECT_EQ(manager_->ListSessions().size(), 1u);
    expectDaemonServing();
}

TEST_F(SessionApi, CallsThatDoNotFitTheStateGetWrongState) {
    const std::string path = create("states");
    SessionClient s(*bus_, path);
    EXPECT_EQ(errorNameOf([&] { s.Stop({}); }), kWrongState);
    EXPECT_EQ(stateOf(path), "created");
    // No channel: nothing could ever be recorded (lttng-start(1) refuses too).
    EXPECT_EQ(errorNameOf([&] { s.Start({}); }), kWrongState);
    EXPECT_EQ(stateOf(path), "created");
    s.EnableEvents("ust", "", "tracectl_demo:*", {});
    s.Start({});
    EXPECT_EQ(errorNameOf([&] { s.Start({}); }), kWrongState);
    EXPECT_EQ(stateOf(path), "active");
    s.Stop({});
    EXPECT_EQ(errorNameOf([&] { s.Stop({}); }), kWrongState);
    EXPECT_EQ(stateOf(path), "stopped");
    s.Start({});
    EXPECT_EQ(stateOf(path), "active");
    s.Destroy({}); // from active
}

TEST_F(SessionApi, DestroyedSessionsAreGone) {
    const std::string path = create("gone");
    SessionClient s(*bus_, path);
    s.Destroy({});
    EXPECT_EQ(errorNameOf([&] { s.Destroy({}); }), kUnknownObject);
    EXPECT_EQ(errorNameOf([&] { s.Start({}); }), kUnknownObject);
    EXPECT_EQ(errorNameOf([&] { manager_->GetSession("gone"); }), kNoSuchSession);
    EXPECT_EQ(errorNameOf([&] { manager_->GetSession("never-made"); }), kNoSuchSession);
    EXPECT_TRUE(manager_->ListSessions().empty());
    create("gone"); // the name is free again
    expectDaemonServing();
}

TEST_F(SessionApi, ClientsThatVanishMidCallDoNotHurtTheDaemon) {
    // A client that sends a call and closes its connection before the reply.
    for (int i = 0; i < 20; ++i) {
        auto bus = sdbus::createSystemBusConnection();
        auto proxy = sdbus::createProxy(*bus, kService, kManagerPath);
        auto call = proxy->createMethodCall("org.tracectl.Tracing1.Manager", "CreateSession");
        call << ("vanished-" + std::to_string(i)) << Options{};
        proxy->callMethod(
            call, [](sdbus::MethodReply&, const sdbus::Error*) {}, 1'000'000);
    }
    // A client process killed right after sending.
    for (int i = 0; i < 10; ++i) {
        const std::string cmd = "busctl --system call " + std::string(kService) + " " +
                                kManagerPath +
                                " org.tracectl.Tracing1.Manager CreateSession 'sa{sv}' killed-" +
                                std::to_string(i) + " 0 & kill -9 $!; wait";
        run({"sh", "-c", cmd});
    }
    expectDaemonServing();
    // Whatever was created is whole: listed, with a working object.
    for (const auto& path : manager_->ListSessions()) {
        SessionClient s(*bus_, path);
        EXPECT_EQ(s.State(), "created");
        EXPECT_EQ(manager_->GetSession(s.Name()), path);
    }
}

TEST_F(SessionApi, OwnerComesFromTheBusCredentials) {
    const std::string rootSession = create("roots");
    const std::vector<std::string> asNobody{"setpriv", "--reuid=65534", "--regid=65534",
                                            "--clear-groups", "--"};
    auto nobody = [&](std::vector<std::string> argv) {
        argv.insert(argv.begin(), asNobody.begin(), asNobody.end());
        return run(argv);
    };
    const RunResult made = nobody({"busctl", "--system", "call", kService, kManagerPath,
                                   "org.tracectl.Tracing1.Manager", "CreateSession", "sa{sv}",
                                   "nobodys", "1", "output-path", "s", "/tmp/nobodys"});
    ASSERT_EQ(made.exitCode, 0) << made.err;
    const std::string path =
        made.out.substr(made.out.find('"') + 1, made.out.rfind('"') - made.out.find('"') - 1);
    EXPECT_EQ(SessionClient(*bus_, path).Owner(), 65534u);

    // nobody sees only its own session and cannot touch root's.
    const RunResult listed = nobody({tracectlBinary(), "list", "--json"});
    ASSERT_EQ(listed.exitCode, 0) << listed.err;
    const auto sessions = nlohmann::json::parse(listed.out);
    ASSERT_EQ(sessions.size(), 1u) << listed.out;
    EXPECT_EQ(sessions[0]["Name"], "nobodys");
    EXPECT_EQ(sessions[0]["Owner"], 65534);

    // polkit's manage-all-sessions (auth_admin_keep) would need a password:
    // without "interactive" that is InteractiveAuthorizationRequired; with it
    // and no authentication agent, AccessDenied.
    auto startAs = [&](const std::string& options) {
        return nobody({"gdbus", "call", "--system", "--dest", kService, "--object-path",
                       rootSession, "--method", "org.tracectl.Tracing1.Session.Start", options});
    };
    const RunResult start = startAs("{}");
    EXPECT_NE(start.exitCode, 0);
    EXPECT_NE(start.err.find("org.freedesktop.DBus.Error.InteractiveAuthorizationRequired"),
              std::string::npos)
        << start.err;
    const RunResult startAsking = startAs("{'interactive': <true>}");
    EXPECT_NE(startAsking.exitCode, 0);
    EXPECT_NE(startAsking.err.find(kAccessDenied), std::string::npos) << startAsking.err;
    const RunResult viaCli = nobody({tracectlBinary(), "start", "roots"});
    EXPECT_EQ(viaCli.exitCode, 1) << viaCli.err;
    EXPECT_NE(viaCli.err.find(kNoSuchSession), std::string::npos) << viaCli.err;
    EXPECT_EQ(stateOf(rootSession), "created");
}

TEST_F(SessionApi, ChannelsAndEventRulesAreValidatedAndShown) {
    const std::string path = create("chans");
    SessionClient s(*bus_, path);
    SignalRecorder signals;
    s.EnableEvents(
        "ust", "", "tracectl_demo:*",
        {{"loglevel", sdbus::Variant(std::string("TRACE_INFO"))},
         {"exclusions", sdbus::Variant(std::vector<std::string>{"tracectl_demo:done"})}});
    const auto channels = s.Channels();
    ASSERT_EQ(channels.size(), 1u);
    EXPECT_EQ(channels[0].get<0>(), "channel0");
    const auto events = s.Events();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].get<0>(), "channel0");
    EXPECT_EQ(events[0].get<1>(), "tracectl_demo:*");
    EXPECT_EQ(events[0].get<2>(), "at-least");
    EXPECT_EQ(events[0].get<3>(), 6);
    EXPECT_EQ(events[0].get<4>(), std::vector<std::string>{"tracectl_demo:done"});
    // The same rule again (channel0 by name, the level by number) is
    // refused, as LTTng refuses it, and listed once.
    EXPECT_EQ(
        errorNameOf([&] {
            s.EnableEvents(
                "ust", "channel0", "tracectl_demo:*",
                {{"loglevel", sdbus::Variant(int32_t{6})},
                 {"exclusions", sdbus::Variant(std::vector<std::string>{"tracectl_demo:done"})}});
        }),
        kEventRuleExists);
    const RunResult again = run({tracectlBinary(), "enable-event", "-u", "tracectl_demo:*", "-s",
                                 "chans", "--loglevel", "info", "-x", "tracectl_demo:done"});
    EXPECT_EQ(again.exitCode, 1) << again.describe();
    EXPECT_EQ(again.err, std::string("tracectl: ") + kEventRuleExists +
                             ": session 'chans' already has the event rule 'tracectl_demo:*' in "
                             "channel 'channel0', log level TRACE_INFO or more severe, excluding "
                             "'tracectl_demo:done'\n")
        << again.describe();
    EXPECT_EQ(s.Events().size(), 1u);
    s.AddChannel("ust", "big",
                 {{"subbuf-size", sdbus::Variant(uint64_t{1 << 20})},
                  {"subbuf-count", sdbus::Variant(uint32_t{8})}});
    EXPECT_EQ(s.Channels().size(), 2u);
    const auto lines = signals.waitFor(1, 5s);
    ASSERT_FALSE(lines.empty());
    EXPECT_EQ(lines[0].rfind("PropertiesChanged " + path + " Channels=", 0), 0u) << lines[0];

    // The two buffer modes as lttng-enable-channel(1) names them: --discard (the default but
    // in a snapshot session, whose channels overwrite) or --overwrite, never both.
    const RunResult discard =
        run({tracectlBinary(), "enable-channel", "-u", "dropping", "-s", "chans", "--discard"});
    EXPECT_TRUE(discard.ok()) << discard.describe();
    const RunResult both = run({tracectlBinary(), "enable-channel", "-u", "both", "-s", "chans",
                                "--discard", "--overwrite"});
    EXPECT_EQ(both.exitCode, 2) << both.describe();
    EXPECT_NE(both.err.find("--discard: excludes --overwrite: a channel has one buffer mode"),
              std::string::npos)
        << both.describe();
    const auto modes = s.Channels();
    ASSERT_EQ(modes.size(), 3u) << "channel0, big and dropping";
    for (const auto& c : modes)
        EXPECT_EQ(c.get<3>(), false) << c.get<0>() << ": discard mode";
    create("snapchans", {{"mode", sdbus::Variant(std::string("snapshot"))}});
    const RunResult snapshotDiscard =
        run({tracectlBinary(), "enable-channel", "-u", "dropping", "-s", "snapchans", "--discard"});
    EXPECT_EQ(snapshotDiscard.exitCode, 1) << snapshotDiscard.describe();
    EXPECT_NE(snapshotDiscard.err.find("must be in overwrite mode"), std::string::npos)
        << snapshotDiscard.describe();

    using V = sdbus::Variant;
    const std::vector<std::pair<std::string, Options>> badChannels{
        {"x", {{"subbuf-size", V(uint64_t{3000})}}},
        {"x", {{"subbuf-count", V(uint64_t{3})}}},
        {"x", {{"overwrite", V(std::string("yes"))}}},
        {"x", {{"subbuf-size", V(int32_t{-4096})}}},
        {"x", {{"colour", V(true)}}},
        {"big", {}}, // exists
    };
    // Not a structured binding: clang before 16 (scripts/check-names'
    // clang-tidy) does not let a lambda capture one.
    for (const auto& bad : badChannels)
        EXPECT_EQ(errorNameOf([&] { s.AddChannel("ust", bad.first, bad.second); }),
                  kInvalidArgument)
            << bad.first;
    EXPECT_EQ(errorNameOf([&] { s.AddChannel("java", "k", {}); }), kInvalidArgument);
    EXPECT_EQ(errorNameOf([&] { s.AddChannel("ust", "../x", {}); }), kInvalidName);
    EXPECT_EQ(errorNameOf([&] { s.EnableEvents("ust", "nope", "*", {}); }), kInvalidArgument);
    EXPECT_EQ(errorNameOf([&] { s.EnableEvents("ust", "big", "a*b", {}); }), kInvalidArgument);
    EXPECT_EQ(errorNameOf([&] {
                  s.EnableEvents("ust", "big", "*", {{"loglevel", V(std::string("LOUD"))}});
              }),
              kInvalidArgument);
    EXPECT_EQ(errorNameOf([&] {
                  s.EnableEvents("ust", "big", "*",
                                 {{"loglevel", V(int32_t{3})}, {"loglevel-only", V(int32_t{3})}});
              }),
              kInvalidArgument);
    EXPECT_EQ(s.Events().size(), 1u);
    s.Start({});
    s.Stop({});
    EXPECT_EQ(errorNameOf([&] { s.AddChannel("ust", "late", {}); }), kWrongState);
    expectDaemonServing();
}
