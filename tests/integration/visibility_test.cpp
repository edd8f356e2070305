// What each caller sees of the daemon's objects on the bus, against the
// real stack and real users (multi_user.hpp): busctl tree and Introspect,
// ObjectManager.GetManagedObjects, Properties, and the signals.
// "May see" a session: root, its owner, or a holder of manage-all-sessions;
// an app object: root, its uid, or a holder of trace-all-users. carol holds
// both (group "tracing"); bob neither.
#include "child_process.hpp"
#include "eventually.hpp"
#include "multi_user.hpp"
#include "sandbox.hpp"
#include "tracectl_clients.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using namespace tracectl::test;

namespace {

const char* const kObjectManager = "org.freedesktop.DBus.ObjectManager";

std::string appPath(pid_t pid) {
    return "/org/tracectl/Tracing1/application/" + std::to_string(pid);
}

/// The last path component (a session's id, an app's pid).
std::string leaf(const std::string& path) {
    return path.substr(path.rfind('/') + 1);
}

/// The lines of `text`, as a set.
std::set<std::string> lineSet(const std::string& text) {
    std::set<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        lines.insert(line);
    return lines;
}

/// The lines of `text` that contain `what`.
std::vector<std::string> linesWith(const std::vector<std::string>& lines, const std::string& what) {
    std::vector<std::string> found;
    std::copy_if(lines.begin(), lines.end(), std::back_inserter(found),
                 [&](const std::string& l) { return l.find(what) != std::string::npos; });
    return found;
}

class Visibility : public MultiUserSuite {
protected:
    /// busctl --system args... as `user` ("root": directly).
    static RunResult busctlAs(const std::string& user, std::vector<std::string> args) {
        args.insert(args.begin(), {"busctl", "--system"});
        return user == "root" ? run(args) : as(user, args);
    }

    /// The demo app run as `user`, alive for the test (killed at the end),
    /// once the daemon lists it (ListApplications as root).
    std::unique_ptr<ChildProcess> startAppAs(const std::string& user) {
        auto app = std::make_unique<ChildProcess>(
            std::vector<std::string>{"setpriv", "--reuid=" + user, "--regid=" + user,
                                     "--init-groups", "--", demoApp(), "1000000", "100000"},
            std::vector<std::string>{}, sandbox_->dir() + "/log/apps.log");
        if (!eventually([&] { return listsApp(app->pid()); }, 10s))
            ADD_FAILURE() << user << "'s app " << appPath(app->pid()) << " was never listed";
        return app;
    }

    /// alice and bob each with a session and a running app.
    struct World {
        std::string aliceSession;
        std::string bobSession;
        std::unique_ptr<ChildProcess> aliceApp;
        std::unique_ptr<ChildProcess> bobApp;
    };
    World makeWorld() {
        World w;
        w.aliceSession = createAs("alice", "vis-alice", homeOutput("alice", "vis-alice"));
        w.bobSession = createAs("bob", "vis-bob", homeOutput("bob", "vis-bob"));
        w.aliceApp = startAppAs("alice");
        w.bobApp = startAppAs("bob");
        return w;
    }

    /// `user`'s GetManagedObjects (one busctl call: a fresh connection) as
    /// busctl's JSON {path: {interface: {property: {type, data}}}}; null,
    /// and `failure` set, if the call fails.
    static nlohmann::json managedObjects(const std::string& user, std::string& failure) {
        const RunResult r = busctlAs(user, {"--json=short", "call", kService, kManagerPath,
                                            kObjectManager, "GetManagedObjects"});
        if (!r.ok()) {
            failure = r.describe();
            return nullptr;
        }
        return nlohmann::json::parse(r.out).at("data").at(0);
    }

    /// The string property `name` of the session at `path` in a
    /// GetManagedObjects answer; "" if it is not there.
    static std::string propertyOf(const nlohmann::json& objects, const std::string& path,
                                  const std::string& name) {
        if (!objects.is_object() || !objects.contains(path))
            return "";
        const auto& ifaces = objects.at(path);
        if (!ifaces.contains(kSessionIface) || !ifaces.at(kSessionIface).contains(name))
            return "";
        const auto& value = ifaces.at(kSessionIface).at(name);
        return value.contains("data") && value.at("data").is_string()
                   ? value.at("data").get<std::string>()
                   : "";
    }

    /// The session and application paths of a GetManagedObjects answer.
    static std::set<std::string> sessionsAndApps(const nlohmann::json& objects) {
        std::set<std::string> paths;
        for (const auto& [path, ifaces] : objects.items())
            if (path.rfind(std::string(kManagerPath) + "/session/", 0) == 0 ||
                path.rfind(std::string(kManagerPath) + "/application/", 0) == 0)
                paths.insert(path);
        return paths;
    }
};

TEST_F(Visibility, BusctlTreeAndIntrospectShowOnlyWhatTheUserMaySee) {
    const World w = makeWorld();
    const std::string aliceApp = appPath(w.aliceApp->pid());
    const std::string bobApp = appPath(w.bobApp->pid());

    const RunResult bobTree = busctlAs("bob", {"tree", "--list", kService});
    ASSERT_TRUE(bobTree.ok()) << bobTree.describe();
    const auto bobSees = lineSet(bobTree.out);
    for (const std::string& path : {std::string(kManagerPath), w.bobSession, bobApp})
        EXPECT_TRUE(bobSees.count(path)) << path << " missing from bob's tree:\n" << bobTree.out;
    EXPECT_FALSE(bobSees.count(w.aliceSession)) << "bob's tree shows alice's session";
    EXPECT_FALSE(bobSees.count(aliceApp)) << "bob's tree shows alice's app";

    for (const std::string user : {"carol", "root"}) {
        const RunResult tree = busctlAs(user, {"tree", "--list", kService});
        ASSERT_TRUE(tree.ok()) << user << ": " << tree.describe();
        const auto sees = lineSet(tree.out);
        for (const std::string& path : {w.aliceSession, aliceApp, w.bobSession, bobApp})
            EXPECT_TRUE(sees.count(path)) << path << " missing from " << user << "'s tree:\n"
                                          << tree.out;
    }

    // The introspection data bob gets names his nodes, not alice's.
    std::string bobXml;
    for (const std::string& path :
         {std::string(kManagerPath), std::string(kManagerPath) + "/session",
          std::string(kManagerPath) + "/application"}) {
        const RunResult xml = busctlAs("bob", {"introspect", "--xml-interface", kService, path});
        EXPECT_TRUE(xml.ok()) << path << ": " << xml.describe();
        bobXml += xml.out;
    }
    EXPECT_NE(bobXml.find("\"" + leaf(w.bobSession) + "\""), std::string::npos) << bobXml;
    EXPECT_NE(bobXml.find("\"" + leaf(bobApp) + "\""), std::string::npos) << bobXml;
    EXPECT_EQ(bobXml.find(leaf(w.aliceSession)), std::string::npos) << bobXml;
    EXPECT_EQ(bobXml.find("\"" + leaf(aliceApp) + "\""), std::string::npos) << bobXml;
}

TEST_F(Visibility, GetManagedObjectsListsExactlyWhatTheCallerMaySee) {
    const World w = makeWorld();
    const std::string aliceApp = appPath(w.aliceApp->pid());
    const std::string bobApp = appPath(w.bobApp->pid());

    // root: everything (also checks how the answer is read).
    std::string failure;
    const nlohmann::json roots = managedObjects("root", failure);
    ASSERT_FALSE(roots.is_null()) << failure;
    EXPECT_EQ(sessionsAndApps(roots),
              (std::set<std::string>{w.aliceSession, aliceApp, w.bobSession, bobApp}));
    EXPECT_EQ(propertyOf(roots, w.aliceSession, "Name"), "vis-alice") << roots.dump();

    // bob: his session and his app, nothing of alice's.
    const nlohmann::json bobs = managedObjects("bob", failure);
    EXPECT_FALSE(bobs.is_null()) << "bob's GetManagedObjects failed: " << failure;
    EXPECT_EQ(sessionsAndApps(bobs), (std::set<std::string>{w.bobSession, bobApp})) << bobs.dump();

    // carol, on a fresh connection (no ListSessions before): alice's
    // session with its properties, and alice's app.
    const nlohmann::json carols = managedObjects("carol", failure);
    EXPECT_FALSE(carols.is_null()) << "carol's GetManagedObjects failed: " << failure;
    EXPECT_EQ(sessionsAndApps(carols),
              (std::set<std::string>{w.aliceSession, aliceApp, w.bobSession, bobApp}))
        << carols.dump();
    EXPECT_EQ(propertyOf(carols, w.aliceSession, "Name"), "vis-alice") << carols.dump();
    EXPECT_EQ(propertyOf(carols, w.aliceSession, "State"), "created") << carols.dump();
}

TEST_F(Visibility, PropertiesAndIntrospectionOfAnotherUsersObjects) {
    const World w = makeWorld();
    const std::string aliceApp = appPath(w.aliceApp->pid());
    const std::string session = std::string("'") + kSessionIface + "'";

    // bob: nothing of alice's session or app.
    EXPECT_EQ(errorOf(call("bob", w.aliceSession, "org.freedesktop.DBus.Properties.Get",
                           {session, "'State'"})),
              kAccessDenied);
    EXPECT_EQ(
        errorOf(call("bob", w.aliceSession, "org.freedesktop.DBus.Properties.GetAll", {session})),
        kAccessDenied);
    // Its interface description he may read: it is the same for every
    // session (gdbus reads it to type the arguments of its calls), and it
    // names no property value and no other object.
    const RunResult described =
        call("bob", w.aliceSession, "org.freedesktop.DBus.Introspectable.Introspect");
    EXPECT_EQ(errorOf(described), "no error");
    EXPECT_NE(described.out.find(kSessionIface), std::string::npos) << described.out;
    EXPECT_EQ(described.out.find("vis-alice"), std::string::npos) << described.out;
    EXPECT_EQ(errorOf(call("bob", aliceApp, "org.freedesktop.DBus.Properties.Get",
                           {"'org.tracectl.Tracing1.Application'", "'Name'"})),
              kAccessDenied);
    // ...nor its methods (unchanged; polkit_test tries every one).
    EXPECT_EQ(errorOf(call("bob", w.aliceSession, std::string(kSessionIface) + ".Start", {"{}"})),
              kInteractive);
    EXPECT_EQ(errorOf(call("bob", w.aliceSession, std::string(kSessionIface) + ".Destroy",
                           {"{'interactive': <true>}"})),
              kAccessDenied);
    // His own he reads.
    const RunResult own =
        busctlAs("bob", {"get-property", kService, w.bobSession, kSessionIface, "State"});
    EXPECT_EQ(own.out, "s \"created\"\n") << own.describe();

    // An app answers only at the path it was published at: not with a
    // leading zero, nor at its pid plus 2^32 (which wrapped onto it).
    const std::string apps = "/org/tracectl/Tracing1/application/";
    for (const std::string& alias : {apps + "0" + std::to_string(w.aliceApp->pid()),
                                     apps + std::to_string((1LL << 32) + w.aliceApp->pid())})
        EXPECT_EQ(errorOf(call("root", alias, "org.freedesktop.DBus.Properties.Get",
                               {"'org.tracectl.Tracing1.Application'", "'Name'"})),
                  "org.freedesktop.DBus.Error.UnknownObject")
            << alias;

    // carol, each read on a fresh connection (one busctl call, nothing before).
    const RunResult state =
        busctlAs("carol", {"get-property", kService, w.aliceSession, kSessionIface, "State"});
    EXPECT_EQ(state.out, "s \"created\"\n") << state.describe();
    const std::string name = ApplicationClient(*bus_, aliceApp).Name();
    const RunResult appName = busctlAs(
        "carol", {"get-property", kService, aliceApp, "org.tracectl.Tracing1.Application", "Name"});
    EXPECT_EQ(appName.out, "s \"" + name + "\"\n") << appName.describe();
}

class SignalListener {
public:
    /// Starts signal-listener as `user` (helloDaemon first unless `silent`)
    /// and waits for its "ready".
    SignalListener(const std::string& user, const std::string& logPath, bool silent = false)
        : log_(logPath) {
        const char* exe = std::getenv("TRACECTL_SIGNAL_LISTENER");
        if (exe == nullptr)
            throw std::runtime_error("TRACECTL_SIGNAL_LISTENER is not set");
        std::remove(log_.c_str());
        std::vector<std::string> argv{
            "setpriv", "--reuid=" + user, "--regid=" + user, "--init-groups", "--", exe};
        if (silent)
            argv.push_back("--no-hello");
        argv.push_back("120");
        process_ = std::make_unique<ChildProcess>(argv, std::vector<std::string>{}, log_);
        if (!eventually([&] { return ready(); }, 10s))
            throw std::runtime_error(user + "'s signal-listener is not ready:\n" + text());
    }

    /// Its output so far.
    std::string text() const {
        std::ifstream in(log_);
        return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    }
    /// Its "signal ..." lines so far.
    std::vector<std::string> signals() const {
        std::vector<std::string> lines;
        for (const auto& l : allLines())
            if (l.rfind("signal ", 0) == 0)
                lines.push_back(l);
        return lines;
    }
    /// Waits up to 10 s for a signal line containing `what`.
    bool waitFor(const std::string& what) const {
        return eventually([&] { return !linesWith(signals(), what).empty(); }, 10s);
    }

private:
    bool ready() const { return text().find("ready\n") != std::string::npos; }
    std::vector<std::string> allLines() const {
        std::vector<std::string> lines;
        std::istringstream in(text());
        for (std::string line; std::getline(in, line);)
            lines.push_back(line);
        return lines;
    }

    std::string log_;
    std::unique_ptr<ChildProcess> process_;
};

TEST_F(Visibility, SignalsGoOnlyToCallersWhoMaySeeTheObject) {
    const std::string logs = sandbox_->dir() + "/log/";
    const SignalListener bobs("bob", logs + "listener-bob.log");
    const SignalListener carols("carol", logs + "listener-carol.log");
    const SignalListener silent("root", logs + "listener-silent.log", true);

    // alice: create (and enable events), start, rotate, destroy.
    const std::string alices = createAs("alice", "vis-sig", homeOutput("alice", "vis-sig"));
    ASSERT_EQ(errorOf(call("alice", alices, std::string(kSessionIface) + ".Start", {"{}"})),
              "no error");
    const RunResult rotated = call("alice", alices, std::string(kSessionIface) + ".Rotate", {"{}"});
    ASSERT_TRUE(rotated.ok()) << rotated.describe();
    const std::string archive = quoted(rotated.out);
    const std::string completed =
        "signal " + alices + " " + kSessionIface + " RotationCompleted " + archive;
    ASSERT_TRUE(carols.waitFor(completed)) << carols.text();
    ASSERT_EQ(errorOf(call("alice", alices, std::string(kSessionIface) + ".Destroy", {"{}"})),
              "no error");
    // bob: a session of his own, last.
    const std::string bobsSession =
        createAs("bob", "vis-sig-bob", homeOutput("bob", "vis-sig-bob"));

    // One sender, so each listener gets its signals in the daemon's order:
    // once bob's own InterfacesAdded is there, whatever of alice's was sent
    // to him is there too.
    const std::string added =
        std::string("signal ") + kManagerPath + " " + kObjectManager + " InterfacesAdded ";
    ASSERT_TRUE(bobs.waitFor(added + bobsSession)) << bobs.text();
    EXPECT_EQ(linesWith(bobs.signals(), alices), std::vector<std::string>{}) << bobs.text();

    ASSERT_TRUE(carols.waitFor(added + bobsSession)) << carols.text();
    const auto carolSaw = carols.signals();
    EXPECT_EQ(linesWith(carolSaw, added + alices).size(), 1u) << carols.text();
    EXPECT_EQ(linesWith(carolSaw, completed).size(), 1u) << carols.text();
    EXPECT_FALSE(
        linesWith(carolSaw, std::string(kObjectManager) + " InterfacesRemoved " + alices).empty())
        << carols.text();

    // A connection that never called the daemon gets nothing, root's too.
    // An observation window, not a wait: nothing must arrive in it.
    observeFor(300ms);
    EXPECT_EQ(silent.signals(), std::vector<std::string>{}) << silent.text();
}

} // namespace
