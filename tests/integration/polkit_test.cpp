// polkit authorization and multi-user isolation, against the real stack
// (scripts/sandbox: private system bus with the project's bus policy, the
// real polkitd reading polkit/*.policy and *.rules, a systemd manager,
// tracectld) and real users: alice and bob (ordinary), carol (group
// "tracing"); see multi_user.hpp.
#include "child_process.hpp"
#include "eventually.hpp"
#include "multi_user.hpp"
#include "sandbox.hpp"
#include "sandbox_suite.hpp"
#include "trace_counts.hpp"
#include "tracectl_clients.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace std::chrono_literals;
using namespace tracectl::test;

namespace {

const char* const kGroupRules = "50-org.tracectl.Tracing1-tracing-group.rules";

class Polkit : public MultiUserSuite {
protected:
    void TearDown() override {
        SandboxSuite::TearDown();
        for (const auto& f : extraRules_)
            std::remove(f.c_str());
    }

    std::string stateOf(const std::string& path) { return SessionClient(*bus_, path).State(); }

    /// Runs the demo app as `user`: `ticks` events, to completion.
    static void runAppAs(const std::string& user, int ticks) {
        ChildProcess app({"setpriv", "--reuid=" + user, "--regid=" + user, "--init-groups", "--",
                          demoApp(), std::to_string(ticks), "0"},
                         {}, sandbox_->dir() + "/log/apps.log");
        ASSERT_EQ(app.wait(30000), 0);
    }

    static std::string uidDir(const std::string& out, const std::string& user) {
        return out + "/ust/uid/" + std::to_string(uidOf(user)) + "/" +
               std::to_string(sizeof(long) * 8) + "-bit";
    }

    /// Adds a rules file to the sandbox's polkitd (removed in TearDown).
    void addRules(const std::string& name, const std::string& js) {
        const std::string path = sandbox_->dir() + "/polkit/rules.d/" + name;
        std::ofstream(path) << js;
        chmod(path.c_str(), 0644);
        extraRules_.push_back(path);
    }

    /// Polls `probe` (each try a new client, so nothing is cached) until it
    /// is true or 10 s passed: polkitd reloads rules a moment after a change.
    static bool eventually(const std::function<bool()>& probe) {
        return tracectl::test::eventually(probe, 10s, 100ms);
    }

    std::vector<std::string> extraRules_;
};

TEST_F(Polkit, AliceTracesHerOwnAppAndBobCannotReadHerTrace) {
    const std::string out = homeOutput("alice", "own");
    const std::string path = createAs("alice", "own", out);
    EXPECT_EQ(errorOf(call("alice", path, "org.tracectl.Tracing1.Session.Start", {"{}"})),
              "no error");
    runAppAs("alice", 50);
    EXPECT_EQ(errorOf(call("alice", path, "org.tracectl.Tracing1.Session.Stop", {"{}"})),
              "no error");
    EXPECT_EQ(stateOf(path), "stopped");

    // alice reads her trace herself.
    const RunResult read = as("alice", {"babeltrace2", out});
    ASSERT_TRUE(read.ok()) << read.describe();
    EXPECT_NE(read.out.find("tracectl_demo:tick:"), std::string::npos);
    EXPECT_EQ(countTicksIfAny(uidDir(out, "alice")), 50);

    // Every folder and file is hers: folders 0750, files 0640.
    const std::string metadata = uidDir(out, "alice") + "/metadata";
    struct stat st {};
    ASSERT_EQ(stat(metadata.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, uidOf("alice"));
    EXPECT_EQ(st.st_mode & 07777, 0640u);
    ASSERT_EQ(stat(uidDir(out, "alice").c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, uidOf("alice"));
    EXPECT_EQ(st.st_mode & 07777, 0750u);
    ASSERT_EQ(stat((out + "/ust").c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, uidOf("alice"));

    // bob can read none of it, even knowing the paths.
    EXPECT_FALSE(as("bob", {"cat", metadata}).ok());
    EXPECT_FALSE(as("bob", {"ls", out}).ok());
    EXPECT_FALSE(as("bob", {"babeltrace2", out}).ok());
}

TEST_F(Polkit, BobNeitherSeesNorControlsAlicesSession) {
    const std::string path = createAs("alice", "mine", homeOutput("alice", "mine"));
    ASSERT_EQ(errorOf(call("alice", path, "org.tracectl.Tracing1.Session.Start", {"{}"})),
              "no error");

    // Not listed, not found by name, not readable, not in GetManagedObjects.
    EXPECT_FALSE(lists("bob", path));
    EXPECT_TRUE(lists("alice", path));
    EXPECT_EQ(
        errorOf(call("bob", kManagerPath, "org.tracectl.Tracing1.Manager.GetSession", {"'mine'"})),
        kNoSuchSession);
    EXPECT_EQ(errorOf(call("bob", path, "org.freedesktop.DBus.Properties.Get",
                           {std::string("'") + kSessionIface + "'", "'State'"})),
              kAccessDenied);
    EXPECT_EQ(errorOf(call("bob", path, "org.freedesktop.DBus.Properties.GetAll",
                           {std::string("'") + kSessionIface + "'"})),
              kAccessDenied);
    // GetManagedObjects answers bob with what he may see, without hers
    // (visibility_test checks the whole list).
    const RunResult objects =
        call("bob", kManagerPath, "org.freedesktop.DBus.ObjectManager.GetManagedObjects");
    EXPECT_EQ(errorOf(objects), "no error");
    EXPECT_EQ(objects.out.find(path), std::string::npos) << objects.out;
    const RunResult aliceObjects =
        call("alice", kManagerPath, "org.freedesktop.DBus.ObjectManager.GetManagedObjects");
    EXPECT_NE(aliceObjects.out.find(path), std::string::npos) << aliceObjects.describe();

    // No method of hers: manage-all-sessions needs an administrator's
    // password (auth_admin_keep), which bob cannot give without an agent.
    struct Attempt {
        std::string method;
        std::vector<std::string> args;
    };
    const std::vector<Attempt> attempts{
        {"Stop", {}},
        {"Start", {}},
        {"Destroy", {}},
        {"AddContext", {"'ust'", "''", "'vpid'"}},
        {"AddChannel", {"'ust'", "'bobs'"}},
        {"EnableEvents", {"'ust'", "''", "'*'"}},
        {"Rotate", {}},
        {"Clear", {}},
        {"SetRotationSchedule", {}},
        {"RecordSnapshot", {}},
    };
    for (const auto& a : attempts) {
        auto args = a.args;
        args.push_back("{}");
        EXPECT_EQ(errorOf(call("bob", path, std::string(kSessionIface) + "." + a.method, args)),
                  kInteractive)
            << a.method;
        args.back() = "{'interactive': <true>}";
        EXPECT_EQ(errorOf(call("bob", path, std::string(kSessionIface) + "." + a.method, args)),
                  kAccessDenied)
            << a.method;
    }
    EXPECT_EQ(stateOf(path), "active");
    SessionClient s(*bus_, path);
    EXPECT_FALSE(std::filesystem::exists(s.OutputPath() + "/archives")) << "bob rotated it";
    EXPECT_EQ(s.Events().size(), 1u);
    EXPECT_EQ(s.Channels().size(), 1u);
    // Her own session she clears with trace-own, as she rotates it.
    EXPECT_EQ(errorOf(call("alice", path, "org.tracectl.Tracing1.Session.Clear", {"{}"})),
              "no error");
    EXPECT_EQ(errorOf(call("alice", path, "org.tracectl.Tracing1.Session.Stop", {"{}"})),
              "no error");
}

TEST_F(Polkit, AlicesSessionRecordsBobsAppOnlyWithTraceAllUsers) {
    const std::string out = homeOutput("alice", "others");
    const std::string path = createAs("alice", "others", out);
    SessionClient s(*bus_, path);
    EXPECT_FALSE(s.TracesAllUsers());
    ASSERT_EQ(errorOf(call("alice", path, "org.tracectl.Tracing1.Session.Start", {"{}"})),
              "no error");
    runAppAs("bob", 30);
    runAppAs("alice", 20);
    ASSERT_EQ(errorOf(call("alice", path, "org.tracectl.Tracing1.Session.Stop", {"{}"})),
              "no error");
    EXPECT_EQ(countTicksIfAny(uidDir(out, "alice")), 20);
    EXPECT_EQ(access((out + "/ust/uid/" + std::to_string(uidOf("bob"))).c_str(), F_OK), -1)
        << "bob's app was traced by alice's session";

    // With a rule granting alice trace-all-users, EnableEvents by alice
    // makes her next session trace every user.
    addRules("10-test-alice-all-users.rules",
             "polkit.addRule(function(action, subject) {\n"
             "    if (action.id == \"org.tracectl.Tracing1.trace-all-users\" &&\n"
             "        subject.user == \"alice\") return polkit.Result.YES;\n"
             "});\n");
    const std::string out2 = homeOutput("alice", "others2");
    std::string path2;
    ASSERT_TRUE(eventually([&] {
        if (!path2.empty())
            SessionClient(*bus_, path2).Destroy({});
        run({"rm", "-rf", out2});
        path2 = createAs("alice", "others2", out2);
        return SessionClient(*bus_, path2).TracesAllUsers();
    })) << "polkitd did not apply the new rule";
    ASSERT_EQ(errorOf(call("alice", path2, "org.tracectl.Tracing1.Session.Start", {"{}"})),
              "no error");
    runAppAs("bob", 30);
    ASSERT_EQ(errorOf(call("alice", path2, "org.tracectl.Tracing1.Session.Stop", {"{}"})),
              "no error");
    EXPECT_EQ(countTicksIfAny(uidDir(out2, "bob")), 30);
    // Trace files stay alice's, whoever the app belonged to.
    struct stat st {};
    ASSERT_EQ(stat((uidDir(out2, "bob") + "/metadata").c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, uidOf("alice"));
}

TEST_F(Polkit, TracingGroupMayDoWhatRootMayUntilTheRulesFileGoes) {
    const std::string alices = createAs("alice", "g", homeOutput("alice", "g"));
    ASSERT_EQ(errorOf(call("alice", alices, "org.tracectl.Tracing1.Session.Start", {"{}"})),
              "no error");
    // carol sees and controls alice's session, without a password.
    EXPECT_TRUE(lists("carol", alices));
    EXPECT_EQ(
        quoted(
            call("carol", kManagerPath, "org.tracectl.Tracing1.Manager.GetSession", {"'g'"}).out),
        alices);
    // Her properties: on a fresh connection too (before any other call).
    const std::string script =
        "import dbus, sys\n"
        "bus = dbus.SystemBus()\n"
        "props = dbus.Interface(bus.get_object('org.tracectl.Tracing1', sys.argv[1]),\n"
        "                       'org.freedesktop.DBus.Properties')\n"
        "try:\n"
        "    print('before: ' + props.Get('org.tracectl.Tracing1.Session', 'State'))\n"
        "except dbus.DBusException as e:\n"
        "    print('before: ' + e.get_dbus_name())\n"
        "bus.get_object('org.tracectl.Tracing1', '/org/tracectl/Tracing1').ListSessions(\n"
        "    dbus_interface='org.tracectl.Tracing1.Manager')\n"
        "print('after: ' + props.Get('org.tracectl.Tracing1.Session', 'State'))\n";
    const RunResult props = as("carol", {"/usr/bin/python3", "-c", script, alices});
    EXPECT_EQ(props.out, "before: active\nafter: active\n") << props.describe();
    EXPECT_EQ(errorOf(call("carol", alices, "org.tracectl.Tracing1.Session.Stop", {"{}"})),
              "no error");
    EXPECT_EQ(stateOf(alices), "stopped");
    // Her own sessions trace every user, as root's do.
    const std::string carols = createAs("carol", "c", "/tmp/tracectl-polkit-carol");
    EXPECT_TRUE(SessionClient(*bus_, carols).TracesAllUsers());
    // Kernel: allowed (trace-kernel).
    EXPECT_EQ(errorOf(call("carol", carols, "org.tracectl.Tracing1.Session.EnableEvents",
                           {"'kernel'", "''", "'sched_switch'", "{}"})),
              "no error");
    EXPECT_EQ(errorOf(call("bob", kManagerPath, "org.tracectl.Tracing1.Manager.CreateSession",
                           {"'k'", "{}"})),
              "no error");
    const std::string bobs =
        quoted(call("bob", kManagerPath, "org.tracectl.Tracing1.Manager.GetSession", {"'k'"}).out);
    EXPECT_EQ(errorOf(call("bob", bobs, "org.tracectl.Tracing1.Session.EnableEvents",
                           {"'kernel'", "''", "'sched_switch'", "{}"})),
              kInteractive);

    // Without the rules file, carol is an ordinary user again.
    const std::string rules = sandbox_->dir() + "/polkit/rules.d/" + kGroupRules;
    const std::string aside = sandbox_->dir() + "/" + kGroupRules + ".aside";
    ASSERT_EQ(std::rename(rules.c_str(), aside.c_str()), 0);
    const bool gone = eventually([&] { return !lists("carol", alices); });
    EXPECT_TRUE(gone) << "polkitd did not notice the rules file was removed";
    EXPECT_EQ(errorOf(call("carol", alices, "org.tracectl.Tracing1.Session.Start", {"{}"})),
              kInteractive);
    EXPECT_EQ(stateOf(alices), "stopped");
    ASSERT_EQ(std::rename(aside.c_str(), rules.c_str()), 0);
    EXPECT_TRUE(eventually([&] { return lists("carol", alices); }));
}

TEST_F(Polkit, AuthAdminWithoutAnAgentNeedsInteractionOrIsDenied) {
    addRules("10-test-bob-auth-admin.rules",
             "polkit.addRule(function(action, subject) {\n"
             "    if (action.id == \"org.tracectl.Tracing1.trace-own\" &&\n"
             "        subject.user == \"bob\") return polkit.Result.AUTH_ADMIN;\n"
             "});\n");
    ASSERT_TRUE(eventually([&] {
        return errorOf(call("bob", kManagerPath, "org.tracectl.Tracing1.Manager.CreateSession",
                            {"'x'", "{}"})) == kInteractive;
    }));
    // interactive=true: polkit may ask an agent, but bob has none.
    EXPECT_EQ(errorOf(call("bob", kManagerPath, "org.tracectl.Tracing1.Manager.CreateSession",
                           {"'x'", "{'interactive': <true>}"})),
              kAccessDenied);
    // A wrong type for the option is an argument error, before polkit.
    EXPECT_EQ(errorOf(call("bob", kManagerPath, "org.tracectl.Tracing1.Manager.CreateSession",
                           {"'x'", "{'interactive': <'yes'>}"})),
              kInvalidArgument);
    // alice is not concerned.
    EXPECT_EQ(errorOf(call("alice", kManagerPath, "org.tracectl.Tracing1.Manager.CreateSession",
                           {"'x'", "{}"})),
              "no error");
    // The tracectl client: --interactive sets the option.
    const char* tracectl = std::getenv("TRACECTL");
    ASSERT_NE(tracectl, nullptr);
    const RunResult plain = as("bob", {tracectl, "create", "y", "--output", "/tmp/tracectl-y"});
    EXPECT_NE(plain.err.find("InteractiveAuthorizationRequired"), std::string::npos)
        << plain.describe();
    const RunResult asking =
        as("bob", {tracectl, "--interactive", "create", "y", "--output", "/tmp/tracectl-y"});
    EXPECT_NE(asking.err.find("AccessDenied"), std::string::npos) << asking.describe();
}

TEST_F(Polkit, ListTracepointsWithOptionsLetsPolkitAskForTraceKernel) {
    // alice lacks trace-kernel (auth_admin_keep). ListTracepoints has no options: without the
    // message flag polkit may not ask. ListTracepointsWithOptions takes "interactive": polkit
    // may ask an agent, alice has none, so she is denied (AccessDenied, not
    // InteractiveAuthorizationRequired).
    const std::string manager = "org.tracectl.Tracing1.Manager.";
    EXPECT_EQ(errorOf(call("alice", kManagerPath, manager + "ListTracepoints", {"'kernel'"})),
              kInteractive);
    EXPECT_EQ(errorOf(call("alice", kManagerPath, manager + "ListTracepointsWithOptions",
                           {"'kernel'", "{}"})),
              kInteractive);
    const RunResult asked = call("alice", kManagerPath, manager + "ListTracepointsWithOptions",
                                 {"'kernel'", "{'interactive': <true>}"});
    EXPECT_EQ(errorOf(asked), kAccessDenied);
    EXPECT_NE(asked.err.find("org.tracectl.Tracing1.trace-kernel"), std::string::npos)
        << asked.describe();
    EXPECT_EQ(errorOf(call("alice", kManagerPath, manager + "ListTracepointsWithOptions",
                           {"'kernel'", "{'color': <true>}"})),
              kInvalidArgument);
    EXPECT_EQ(errorOf(call("alice", kManagerPath, manager + "ListTracepointsWithOptions",
                           {"'ust'", "{}"})),
              kInvalidArgument);
}

TEST_F(Polkit, DefaultOutputPathIsTheCallersOwn) {
    const std::string method = "org.tracectl.Tracing1.Manager.DefaultOutputPath";
    const RunResult alices = call("alice", kManagerPath, method, {"'web'"});
    ASSERT_TRUE(alices.ok()) << alices.describe();
    EXPECT_NE(alices.out.find("'/home/alice/lttng-traces/web-"), std::string::npos) << alices.out;
    const RunResult bobs = call("bob", kManagerPath, method, {"'web'"});
    EXPECT_NE(bobs.out.find("'/home/bob/lttng-traces/web-"), std::string::npos) << bobs.out;
    EXPECT_EQ(errorOf(call("alice", kManagerPath, method, {"'a/b'"})),
              "org.tracectl.Tracing1.Error.InvalidName");
}

TEST_F(Polkit, TheAllowInteractiveAuthorizationFlagCountsAsTheOption) {
    const std::string path = createAs("alice", "flag", homeOutput("alice", "flag"));
    // bob on alice's session needs manage-all-sessions (auth_admin_keep).
    // gdbus --interactive sets ALLOW_INTERACTIVE_AUTHORIZATION on the call.
    auto start = [&](bool flag) {
        std::vector<std::string> argv{"gdbus",  "call",     "--system",
                                      "--dest", kService,   "--object-path",
                                      path,     "--method", std::string(kSessionIface) + ".Start"};
        if (flag)
            argv.push_back("--interactive");
        argv.push_back("{}");
        return as("bob", argv);
    };
    // The flag alone lets polkit ask an agent; bob has none: denied.
    const RunResult flagged = start(true);
    EXPECT_EQ(errorOf(flagged), kAccessDenied) << flagged.describe();
    EXPECT_NE(flagged.err.find("no authentication agent answered"), std::string::npos)
        << flagged.describe();
    // Neither flag nor option: polkit may not ask.
    EXPECT_EQ(errorOf(start(false)), kInteractive);
    EXPECT_EQ(stateOf(path), "created");
}

TEST_F(Polkit, PolkitdStoppedFailsClosedAndTheDaemonRecovers) {
    const std::string path = createAs("alice", "p", homeOutput("alice", "p"));
    ASSERT_TRUE(sandbox_->script({"polkit-stop", sandbox_->dir()}).ok());
    const RunResult refused =
        call("alice", kManagerPath, "org.tracectl.Tracing1.Manager.CreateSession", {"'q'", "{}"});
    EXPECT_EQ(errorOf(refused), kAccessDenied);
    EXPECT_NE(refused.err.find("polkit"), std::string::npos) << refused.err;
    EXPECT_EQ(errorOf(call("alice", path, "org.tracectl.Tracing1.Session.Start", {"{}"})),
              kAccessDenied);
    EXPECT_EQ(stateOf(path), "created");
    // Listing fails closed too: only what needs no polkit (her own).
    EXPECT_TRUE(lists("alice", path));
    EXPECT_FALSE(lists("carol", path));
    // root needs no polkit; the daemon still serves.
    EXPECT_TRUE(sandbox_->daemonRunning());
    EXPECT_EQ(manager_->ListSessions().size(), 1u);

    ASSERT_TRUE(sandbox_->script({"polkit-start", sandbox_->dir()}).ok());
    EXPECT_EQ(errorOf(call("alice", path, "org.tracectl.Tracing1.Session.Start", {"{}"})),
              "no error");
    EXPECT_EQ(stateOf(path), "active");
    EXPECT_TRUE(lists("carol", path));
}

TEST_F(Polkit, TheLoopServesOthersWhilePolkitThinks) {
    // polkitd runs this rule for bob's trace-own: it takes 2 s to answer,
    // and leaves `asked` as it begins to think.
    const std::string asked = "/tmp/tracectl-polkit-bob-asked-" + std::to_string(getpid());
    const std::string rule = "polkit.addRule(function(action, subject) {\n"
                             "    if (action.id == \"org.tracectl.Tracing1.trace-own\" &&\n"
                             "        subject.user == \"bob\") {\n"
                             "        polkit.spawn([\"/bin/sh\", \"-c\", \": > " +
                             asked + "; exec /bin/sleep 2\"]);\n" +
                             "        return polkit.Result.YES;\n"
                             "    }\n"
                             "});\n";
    addRules("10-test-bob-slow.rules", rule);
    // Wait until the rule applies (a CreateSession of bob's then takes > 1.5 s).
    ASSERT_TRUE(eventually([&] {
        const auto t0 = std::chrono::steady_clock::now();
        call("bob", kManagerPath, "org.tracectl.Tracing1.Manager.CreateSession",
             {"'slow-probe'", "{}"});
        return std::chrono::steady_clock::now() - t0 > 1500ms;
    }));
    std::filesystem::remove(asked); // left by the probes
    std::thread slow([&] {
        call("bob", kManagerPath, "org.tracectl.Tracing1.Manager.CreateSession", {"'slow'", "{}"});
    });
    // polkitd runs the rule: bob's call now waits for it.
    const bool thinking = eventually([&] { return std::filesystem::exists(asked); });
    const auto t0 = std::chrono::steady_clock::now();
    const auto listed = manager_->ListSessions();
    const auto took = std::chrono::steady_clock::now() - t0;
    slow.join();
    std::filesystem::remove(asked);
    ASSERT_TRUE(thinking) << "polkitd never ran the slow rule for bob's call";
    EXPECT_LT(took, 500ms) << "the daemon waited for polkitd instead of serving root";
    std::printf("root's ListSessions during bob's 2 s polkit check: %.1f ms\n",
                std::chrono::duration<double, std::milli>(took).count());
    EXPECT_TRUE(lists("bob", quoted(call("bob", kManagerPath,
                                         "org.tracectl.Tracing1.Manager.GetSession", {"'slow'"})
                                        .out)));
}

TEST_F(Polkit, OutputPathsOtherUsersControlAreRefused) {
    struct Case {
        std::string output;
        std::string why;
    };
    // bob plants a symbolic link to a folder anyone may write.
    const std::string target = "/tmp/tracectl-bob-target-" + std::to_string(getpid());
    const std::string link = "/tmp/tracectl-bob-link-" + std::to_string(getpid());
    as("bob", {"mkdir", "-m", "0777", target});
    as("bob", {"chmod", "0777", target});
    as("bob", {"ln", "-sfn", target, link});
    const std::vector<Case> cases{
        {"/home/bob/from-alice", "cannot create the output folder"},
        {"/etc/tracectl-from-alice", "cannot create the output folder"},
        {link + "/trace", "symbolic link owned by another user"},
    };
    int i = 0;
    for (const auto& c : cases) {
        const std::string name = "out" + std::to_string(i++);
        // Refused at CreateSession (checked as alice, nothing made)...
        const RunResult made =
            call("alice", kManagerPath, "org.tracectl.Tracing1.Manager.CreateSession",
                 {"'" + name + "'", "{'output-path': <'" + c.output + "'>}"});
        EXPECT_EQ(errorOf(made), kInvalidArgument) << c.output;
        EXPECT_NE(made.err.find(c.why), std::string::npos) << made.err;
        EXPECT_EQ(errorOf(call("alice", kManagerPath, "org.tracectl.Tracing1.Manager.GetSession",
                               {"'" + name + "'"})),
                  kNoSuchSession);
        // ...and at Start, when the obstacle came later (root made the
        // session's folder possible at first: an empty writable parent).
        const std::string later = "/tmp/tracectl-later-" + std::to_string(getpid());
        run({"rm", "-rf", later});
        run({"mkdir", "-m", "0777", later});
        const std::string path = createAs("alice", name, later + "/x");
        run({"rm", "-rf", later});
        ASSERT_TRUE(run({"ln", "-s", c.output.substr(0, c.output.rfind('/')), later}).ok());
        run({"chown", "-h", "bob:bob", later});
        const RunResult started =
            call("alice", path, "org.tracectl.Tracing1.Session.Start", {"{}"});
        EXPECT_EQ(errorOf(started), kInvalidArgument) << c.output;
        run({"rm", "-f", later});
        EXPECT_EQ(access(c.output.c_str(), F_OK), -1) << c.output << " was made";
    }
    // The same path without a planted link works.
    const std::string ok = createAs("alice", "direct", target + "/trace");
    EXPECT_EQ(errorOf(call("alice", ok, "org.tracectl.Tracing1.Session.Start", {"{}"})),
              "no error");
    SessionClient(*bus_, ok).Stop({});
    run({"rm", "-rf", target, link});
}

} // namespace

// A site restricts network outputs in a rules file: CreateSession asks for
// trace-own with the detail "output-url" (the relay the session would
// stream to, "" for a local session), as polkit/50-...-tracing-group.rules
// shows.
TEST_F(Polkit, ARulesFileMayRestrictNetworkOutputsByTheirRelay) {
    addRules("10-test-alice-loopback-relays-only.rules",
             "polkit.addRule(function(action, subject) {\n"
             "    if (action.id != \"org.tracectl.Tracing1.trace-own\" ||\n"
             "        subject.user != \"alice\") return polkit.Result.NOT_HANDLED;\n"
             "    var url = action.lookup(\"output-url\");\n"
             "    if (url && url.indexOf(\"net://127.0.0.1:\") != 0) return polkit.Result.NO;\n"
             "    return polkit.Result.NOT_HANDLED;\n"
             "});\n");
    const auto create = [&](const std::string& name, const std::string& options) {
        return call("alice", kManagerPath, "org.tracectl.Tracing1.Manager.CreateSession",
                    {"'" + name + "'", options});
    };
    ASSERT_TRUE(eventually([&] {
        return errorOf(create("far", "{'url': <'net://[::1]:5342:5343'>}")) == kAccessDenied;
    })) << "polkitd did not apply the rule";
    // The same normalized URL whichever way it is spelled.
    EXPECT_EQ(errorOf(create("far2", "{'control-url': <'tcp6://[::1]:5342'>, "
                                     "'data-url': <'tcp://[::1]:5343'>}")),
              kAccessDenied);
    EXPECT_EQ(errorOf(create("far3", "{'mode': <'live'>, 'url': <'net6://[::1]'>}")),
              kAccessDenied);
    // A relay the rule allows passes polkit, then the relay check (nothing
    // listens there).
    const RunResult near = create("near", "{'url': <'net://127.0.0.1:1:2'>}");
    EXPECT_EQ(errorOf(near), "org.tracectl.Tracing1.Error.RelayUnavailable") << near.err;
    EXPECT_NE(near.err.find("127.0.0.1:1"), std::string::npos) << near.err;
    // A local session has no output-url: the rule lets it be.
    const std::string path = createAs("alice", "local", homeOutput("alice", "local"));
    EXPECT_FALSE(path.empty());
    for (const char* name : {"far", "far2", "far3", "near"})
        EXPECT_EQ(errorOf(call("alice", kManagerPath, "org.tracectl.Tracing1.Manager.GetSession",
                               {std::string("'") + name + "'"})),
                  kNoSuchSession)
            << name;
}
