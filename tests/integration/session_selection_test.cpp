// Which sessions tracectl commands act on (issue "Event rules as LTTng users
// write them", item 5): the current session, kept per user in
// $XDG_RUNTIME_DIR, else $HOME/.config (set by create and set-session, used by every command
// given no session, shown by status), and start/stop/destroy --all and
// --glob PATTERN as LTTng 2.14 has them. Real tracectl against the
// sandbox's tracectld.
#include "sandbox_suite.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace tracectl::test {
namespace {

std::string tracectlBinary() {
    const char* p = std::getenv("TRACECTL");
    return p != nullptr ? p : "tracectl";
}

class SessionSelection : public SandboxSuite {
protected:
    void SetUp() override {
        SandboxSuite::SetUp();
        runtime_ = sandbox_->dir() + "/xdg-runtime-" +
                   ::testing::UnitTest::GetInstance()->current_test_info()->name();
        std::filesystem::remove_all(runtime_);
        std::filesystem::create_directories(runtime_);
    }

    /// tracectl ARGS with this test's runtime folder.
    RunResult tracectl(std::vector<std::string> args) {
        args.insert(args.begin(), tracectlBinary());
        return run(args, Env{{"XDG_RUNTIME_DIR", runtime_}});
    }
    void create(const std::string& name) {
        const RunResult r = tracectl({"create", name, "--output", output(name)});
        ASSERT_TRUE(r.ok()) << r.describe();
    }
    std::string stateOf(const std::string& name) {
        return SessionClient(*bus_, manager_->GetSession(name)).State();
    }
    std::string currentFile() const {
        // The sandbox's bus is not the system bus at its default address:
        // the file is keyed by address (current_session.hpp).
        for (const auto& entry : std::filesystem::directory_iterator(runtime_ + "/tracectl"))
            return entry.path().string();
        return {};
    }
    std::string current() const {
        std::ifstream in(currentFile());
        std::string name;
        std::getline(in, name);
        return name;
    }

    std::string runtime_;
};

TEST_F(SessionSelection, CreateMakesTheSessionCurrentAndCommandsGivenNoSessionUseIt) {
    create("first");
    create("second");
    EXPECT_EQ(current(), "second");

    RunResult r = tracectl({"enable-event", "-u", "tracectl_demo:tick"});
    ASSERT_TRUE(r.ok()) << r.describe();
    EXPECT_EQ(SessionClient(*bus_, manager_->GetSession("second")).Events().size(), 1U);
    EXPECT_TRUE(SessionClient(*bus_, manager_->GetSession("first")).Events().empty());

    r = tracectl({"start"});
    ASSERT_TRUE(r.ok()) << r.describe();
    EXPECT_EQ(r.out, "Tracing started for session second.\n");
    EXPECT_EQ(stateOf("second"), "active");
    EXPECT_EQ(stateOf("first"), "created");

    r = tracectl({"status"});
    ASSERT_TRUE(r.ok()) << r.describe();
    EXPECT_EQ(r.out.rfind("Current session: second\n", 0), 0U) << r.out;
    EXPECT_NE(r.out.find("active"), std::string::npos) << r.out;

    r = tracectl({"set-session", "first"});
    ASSERT_TRUE(r.ok()) << r.describe();
    EXPECT_EQ(current(), "first");
    r = tracectl({"enable-event", "-u", "tracectl_demo:*"});
    ASSERT_TRUE(r.ok()) << r.describe();
    r = tracectl({"start"});
    ASSERT_TRUE(r.ok()) << r.describe();
    EXPECT_EQ(stateOf("first"), "active");
    r = tracectl({"rotate", "--wait"});
    ASSERT_TRUE(r.ok()) << r.describe();
    EXPECT_NE(r.out.find("Rotation of session first complete: " + output("first") + "/archives/"),
              std::string::npos)
        << r.out;
    r = tracectl({"stop"});
    ASSERT_TRUE(r.ok()) << r.describe();
    EXPECT_EQ(stateOf("first"), "stopped");
    EXPECT_EQ(stateOf("second"), "active");

    // Destroying the current session leaves none; with one session left,
    // commands fall back to it.
    r = tracectl({"destroy"});
    ASSERT_TRUE(r.ok()) << r.describe();
    EXPECT_EQ(r.out, "Session first destroyed.\n");
    EXPECT_EQ(currentFile(), "");
    r = tracectl({"stop"});
    ASSERT_TRUE(r.ok()) << r.describe();
    EXPECT_EQ(stateOf("second"), "stopped");
}

TEST_F(SessionSelection, AStaleOrMissingCurrentSessionIsAClearError) {
    create("gone");
    create("other");
    ASSERT_TRUE(tracectl({"set-session", "gone"}).ok());
    SessionClient(*bus_, manager_->GetSession("gone")).Destroy({}); // not through tracectl
    RunResult r = tracectl({"start"});
    EXPECT_EQ(r.exitCode, 1) << r.describe();
    EXPECT_NE(r.err.find("the current session 'gone' does not exist any more"), std::string::npos)
        << r.err;
    EXPECT_EQ(stateOf("other"), "created"); // nothing else was touched

    r = tracectl({"set-session", "no-such-session"});
    EXPECT_EQ(r.exitCode, 1) << r.describe();
    EXPECT_NE(r.err.find("NoSuchSession"), std::string::npos) << r.err;
    EXPECT_EQ(current(), "gone"); // a refused set-session changes nothing

    // A file that does not hold a name is reported, never used.
    std::ofstream(currentFile(), std::ios::trunc) << "two\nlines\n";
    r = tracectl({"status"});
    EXPECT_EQ(r.exitCode, 1) << r.describe();
    EXPECT_NE(r.err.find("does not hold a session name"), std::string::npos) << r.err;

    // Without a runtime folder (a shell with no login session: su, sudo, a
    // container), create makes the session current all the same, kept in
    // $HOME/.config/tracectl as lttng keeps it in $HOME/.lttngrc: the next
    // command needs no -s, although other sessions exist.
    const std::string home = sandbox_->dir() + "/home-" + runtime_.substr(runtime_.rfind('/') + 1);
    std::filesystem::create_directories(home);
    RunOptions noRuntime;
    noRuntime.unsetEnv = {"XDG_RUNTIME_DIR", "XDG_CONFIG_HOME"};
    noRuntime.env = {{"HOME", home}};
    r = run({tracectlBinary(), "create", "no-runtime", "--output", output("no-runtime")},
            noRuntime);
    EXPECT_TRUE(r.ok()) << r.describe();
    EXPECT_EQ(r.err, "");
    r = run({tracectlBinary(), "enable-event", "-u", "tracectl_demo:tick"}, noRuntime);
    EXPECT_TRUE(r.ok()) << r.describe();
    EXPECT_EQ(SessionClient(*bus_, manager_->GetSession("no-runtime")).Events().size(), 1U);
    EXPECT_TRUE(SessionClient(*bus_, manager_->GetSession("other")).Events().empty());
    ASSERT_TRUE(std::filesystem::is_directory(home + "/.config/tracectl"));
    r = run({tracectlBinary(), "set-session", "other"}, noRuntime);
    EXPECT_TRUE(r.ok()) << r.describe();
    r = run({tracectlBinary(), "status"}, noRuntime);
    EXPECT_EQ(r.out.rfind("Current session: other\n", 0), 0U) << r.describe();
    // With nowhere to keep it, create says so and how to name the session.
    RunOptions nowhere;
    nowhere.unsetEnv = {"XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "HOME"};
    r = run({tracectlBinary(), "create", "unnamed", "--output", output("unnamed")}, nowhere);
    EXPECT_TRUE(r.ok()) << r.describe();
    EXPECT_NE(r.err.find("note: session unnamed is not the current session"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("-s unnamed"), std::string::npos) << r.err;
    EXPECT_EQ(stateOf("unnamed"), "created");
    r = run({tracectlBinary(), "set-session", "unnamed"}, nowhere);
    EXPECT_EQ(r.exitCode, 1) << r.describe();
    EXPECT_NE(r.err.find("no XDG_RUNTIME_DIR, and no XDG_CONFIG_HOME or HOME of yours"),
              std::string::npos)
        << r.err;
    // A runtime folder that cannot hold the file is a warning, and the
    // session exists all the same.
    std::filesystem::remove(currentFile());
    std::filesystem::remove(runtime_ + "/tracectl");
    std::ofstream(runtime_ + "/tracectl") << "a file where the folder goes\n";
    r = tracectl({"create", "unkept", "--output", output("unkept")});
    EXPECT_TRUE(r.ok()) << r.describe();
    EXPECT_NE(r.err.find("warning: current session file"), std::string::npos) << r.err;
    EXPECT_EQ(stateOf("unkept"), "created");
}

TEST_F(SessionSelection, StartStopAndDestroyTakeAllOrAGlob) {
    for (const char* name : {"web-1", "web-2", "db-1"}) {
        create(name);
        SessionClient(*bus_, manager_->GetSession(name))
            .EnableEvents("ust", "", "tracectl_demo:tick", {});
    }
    create("empty"); // no channel: Start refuses it

    RunResult r = tracectl({"start", "--glob", "web-*"});
    ASSERT_TRUE(r.ok()) << r.describe();
    EXPECT_EQ(r.out, "Tracing started for session web-1.\nTracing started for session web-2.\n");
    EXPECT_EQ(stateOf("db-1"), "created");

    // --all: the active ones are warnings, the refused one an error naming
    // it, and the others start all the same.
    r = tracectl({"start", "--all"});
    EXPECT_EQ(r.exitCode, 1) << r.describe();
    EXPECT_EQ(r.out, "Tracing started for session db-1.\n");
    EXPECT_NE(r.err.find("warning: tracing already started for session web-1"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("warning: tracing already started for session web-2"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("empty: org.tracectl.Tracing1.Error.WrongState"), std::string::npos)
        << r.err;
    EXPECT_EQ(stateOf("db-1"), "active");

    r = tracectl({"stop", "-g", "db-?"});
    ASSERT_TRUE(r.ok()) << r.describe();
    EXPECT_EQ(r.out, "Tracing stopped for session db-1.\n");
    EXPECT_EQ(stateOf("web-1"), "active");

    r = tracectl({"destroy", "--glob", "web-*"});
    ASSERT_TRUE(r.ok()) << r.describe();
    EXPECT_EQ(r.out, "Session web-1 destroyed.\nSession web-2 destroyed.\n");
    EXPECT_EQ(manager_->ListSessions().size(), 2U);

    r = tracectl({"destroy", "--glob", "nothing-*"});
    ASSERT_TRUE(r.ok()) << r.describe();
    EXPECT_EQ(r.out, "No sessions to destroy.\n");
    r = tracectl({"stop", "--all"});
    ASSERT_TRUE(r.ok()) << r.describe();
    EXPECT_NE(r.err.find("warning: tracing already stopped for session db-1"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("warning: session empty was never started"), std::string::npos) << r.err;
    EXPECT_EQ(tracectl({"stop", "--glob", ""}).exitCode, 2);

    r = tracectl({"destroy", "--all"});
    ASSERT_TRUE(r.ok()) << r.describe();
    EXPECT_TRUE(manager_->ListSessions().empty());
}

TEST_F(SessionSelection, ANameWithAllOrGlobIsAUsageError) {
    create("lonely");
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"start", "lonely", "--all"},
          std::vector<std::string>{"stop", "--all", "--glob", "x*"},
          std::vector<std::string>{"destroy", "lonely", "-g", "l*"},
          std::vector<std::string>{"start", "--glob"}, std::vector<std::string>{"set-session"}}) {
        const RunResult r = tracectl(args);
        EXPECT_EQ(r.exitCode, 2) << args.front() << ": " << r.describe();
    }
    EXPECT_EQ(stateOf("lonely"), "created");
}

TEST_F(SessionSelection, ListTakesLttngsNameUserspaceAndKernelForms) {
    create("listed");
    RunResult r = tracectl({"list", "listed"});
    ASSERT_TRUE(r.ok()) << r.describe();
    const RunResult show = tracectl({"show", "listed"});
    ASSERT_TRUE(show.ok()) << show.describe();
    // The same view but for what changes between two reads (none here: a
    // created session's figures stay 0).
    EXPECT_EQ(r.out, show.out);

    r = tracectl({"list", "-u", "--json"});
    ASSERT_TRUE(r.ok()) << r.describe();
    EXPECT_EQ(r.out.front(), '[') << r.out;
    const RunResult apps = tracectl({"list-apps", "--tracepoints", "--json"});
    EXPECT_EQ(r.out, apps.out);

    r = tracectl({"list", "-k"});
    const RunResult kernel = tracectl({"list-tracepoints", "-k"});
    EXPECT_EQ(r.exitCode, kernel.exitCode) << r.describe();
    EXPECT_EQ(r.out, kernel.out);
    if (kernel.ok()) {
        EXPECT_NE(r.out.find("sched:sched_switch"), std::string::npos);
    }

    EXPECT_EQ(tracectl({"list", "listed", "-u"}).exitCode, 2);
    EXPECT_EQ(tracectl({"list", "-u", "-k"}).exitCode, 2);
    r = tracectl({"list", "no-such"});
    EXPECT_EQ(r.exitCode, 1) << r.describe();
}

TEST_F(SessionSelection, CreateWithoutANameMakesAnAutoSessionAsLttngCreateDoes) {
    const RunResult r = tracectl({"create", "--snapshot"});
    ASSERT_TRUE(r.ok()) << r.describe();
    const std::string name = current();
    ASSERT_EQ(name.size(), std::string("auto-YYYYmmdd-HHMMSS").size()) << name;
    EXPECT_EQ(name.rfind("auto-", 0), 0U) << name;
    for (const std::size_t i : {5, 6, 7, 8, 9, 10, 11, 12, 14, 15, 16, 17, 18, 19})
        EXPECT_TRUE(name[i] >= '0' && name[i] <= '9') << name;
    SessionClient session(*bus_, manager_->GetSession(name));
    // The tests run as root, whose home (passwd) is /root.
    EXPECT_EQ(session.OutputPath(), "/root/lttng-traces/" + name);
    EXPECT_EQ(session.Mode(), "snapshot");
    EXPECT_NE(r.out.find("Session " + name + " created"), std::string::npos) << r.out;
}

TEST_F(SessionSelection, ViewTakesAViewerAndRotateTakesNoWaitAsLttngDoes) {
    create("viewed");
    ASSERT_TRUE(tracectl({"enable-event", "-u", "tracectl_demo:tick"}).ok());
    ASSERT_TRUE(tracectl({"start"}).ok());
    RunResult r = tracectl({"rotate", "--no-wait"});
    ASSERT_TRUE(r.ok()) << r.describe();
    EXPECT_NE(r.out.find("Rotation of session viewed under way, archive: " + output("viewed") +
                         "/archives/"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(tracectl({"rotate", "--wait", "--no-wait"}).exitCode, 2);
    // The viewer's words, then the trace folder.
    r = tracectl({"view", "-e", "echo  viewed-by"});
    ASSERT_TRUE(r.ok()) << r.describe();
    EXPECT_EQ(r.out, "viewed-by " + output("viewed") + "\n");
    r = tracectl({"view", "-e", " "});
    EXPECT_EQ(r.exitCode, 2) << r.describe();
    r = tracectl({"view", "-e", "/no/such/viewer"});
    EXPECT_EQ(r.exitCode, 1) << r.describe();
    EXPECT_NE(r.err.find("cannot run /no/such/viewer"), std::string::npos) << r.err;
}

// Every verb that takes a session in LTTng 2.13 with -s/--session takes it
// so here (issue 40 E: 'tracectl enable-rotation -s NAME' was refused):
// add-context, disable-channel, disable-event, disable-rotation,
// enable-channel, enable-event, enable-rotation, snapshot record, track and
// untrack. Each acts on the session it names, not on the current one.
TEST_F(SessionSelection, EveryVerbLttngGivesSessionTakesIt) {
    create("other"); // the current session: none of the commands below may touch it
    const std::string path =
        manager_->CreateSession("named", {{"output-path", sdbus::Variant(output("named"))}});
    const std::string snapPath = manager_->CreateSession(
        "named-snap", {{"output-path", sdbus::Variant(output("named-snap"))},
                       {"mode", sdbus::Variant(std::string("snapshot"))}});
    const std::vector<std::vector<std::string>> commands = {
        {"enable-channel", "-u", "c", "-s", "named"},
        {"enable-event", "-u", "p:*", "-c", "c", "--session", "named"},
        {"add-context", "-u", "-t", "vpid", "-c", "c", "-s", "named"},
        {"track", "-u", "--vpid", "5", "-s", "named"},
        {"untrack", "-u", "--vpid", "5", "--session", "named"},
        {"enable-rotation", "--timer", "10s", "-s", "named"},
        {"disable-rotation", "--timer", "--session", "named"},
        {"disable-event", "-u", "p:*", "-c", "c", "-s", "named"},
        {"disable-channel", "-u", "c", "-s", "named"},
    };
    for (const auto& args : commands) {
        const RunResult r = tracectl(args);
        EXPECT_TRUE(r.ok()) << ::testing::PrintToString(args) << ": " << r.describe();
    }
    SessionClient named(*bus_, path);
    EXPECT_EQ(named.Channels().size(), 1u);
    EXPECT_EQ(named.Events().size(), 1u);
    EXPECT_EQ(named.Contexts().size(), 1u);
    SessionClient other(*bus_, manager_->GetSession("other"));
    EXPECT_TRUE(other.Channels().empty());
    EXPECT_TRUE(other.Events().empty());
    SessionClient snap(*bus_, snapPath);
    snap.EnableEvents("ust", "", "p:*", {});
    snap.Start({});
    const RunResult record = tracectl({"snapshot", "record", "-s", "named-snap"});
    EXPECT_TRUE(record.ok()) << record.describe();
    snap.Stop({});
}

TEST_F(SessionSelection, VersionNamesTheClientAndTheDaemon) {
    const RunResult r = tracectl({"version"});
    ASSERT_TRUE(r.ok()) << r.describe();
    EXPECT_EQ(r.out, std::string("tracectl ") + TRACECTL_TEST_VERSION + "\ntracectld " +
                         manager_->Version() + "\n");
}

} // namespace
} // namespace tracectl::test
