// Sessions across a restart of tracectld, against the real stack: each
// session's state is kept in the state folder and a new daemon brings the
// sessions back, with the same D-Bus paths and properties; what cannot be
// taken over comes back in state error with the reason; a state document
// that is corrupt, from another version or hostile is refused, set aside
// and logged, and the daemon starts anyway.
#include "multi_user.hpp"
#include "sandbox_suite.hpp"
#include "trace_counts.hpp"

#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace tracectl::test {
namespace {

namespace fs = std::filesystem;

std::string tracectlCli() {
    const char* p = std::getenv("TRACECTL");
    return p != nullptr ? p : "tracectl";
}

class RestartTest : public SandboxSuite {
protected:
    /// The properties a restart must keep, as busctl prints them (all but the
    /// ones that say what runs: State, ErrorReason, statistics, buffer sizes).
    std::string kept(const std::string& path) {
        const RunResult r = sandbox_->busctl({"get-property",
                                              "org.tracectl.Tracing1",
                                              path,
                                              "org.tracectl.Tracing1.Session",
                                              "Id",
                                              "Name",
                                              "Owner",
                                              "TracesAllUsers",
                                              "ProcessAttributeTrackers",
                                              "Mode",
                                              "OutputPath",
                                              "OutputUrl",
                                              "LiveTimer",
                                              "BufferOwnership",
                                              "Channels",
                                              "RotationSchedule",
                                              "Events",
                                              "Contexts",
                                              "KernelChannels",
                                              "KernelEvents",
                                              "KernelContexts",
                                              "CreationTime"});
        EXPECT_TRUE(r.ok()) << r.describe();
        return r.out;
    }

    std::string stateDir() const { return sandbox_->lttngHome() + "/.lttng/tracectld-sessions"; }

    void reconnect() {
        bus_ = sdbus::createSystemBusConnection();
        manager_ = std::make_unique<ManagerClient>(*bus_);
    }

    std::vector<std::string> sessionPaths() {
        auto paths = manager_->ListSessions();
        std::vector<std::string> out(paths.begin(), paths.end());
        std::sort(out.begin(), out.end());
        return out;
    }
};

TEST_F(RestartTest, SessionsComeBackWithTheirPathsAndSettings) {
    // A session set up but never started, with a bit of everything.
    auto kept1 = std::make_unique<SessionClient>(
        *bus_, manager_->CreateSession(
                   "configured", {{"output-path", sdbus::Variant(output("configured"))},
                                  {"buffer-ownership", sdbus::Variant(std::string("per-pid"))}}));
    kept1->AddChannel("ust", "fast",
                      {{"subbuf-size", sdbus::Variant(uint64_t{16384})},
                       {"subbuf-count", sdbus::Variant(uint64_t{8})}});
    kept1->EnableEvents(
        "ust", "fast", "tracectl_demo:*",
        {{"loglevel", sdbus::Variant(std::string("TRACE_INFO"))},
         {"exclusions", sdbus::Variant(std::vector<std::string>{"tracectl_demo:done"})},
         {"filter", sdbus::Variant(std::string("seq < 5"))}});
    kept1->EnableEvents("ust", "fast", "tracectl_demo:done", {});
    kept1->DisableEvents("ust", "fast", "tracectl_demo:done", {});
    kept1->AddContext("ust", "fast", "vpid", {});
    kept1->TrackProcessAttribute("ust", "vuid", {0}, {});
    kept1->SetRotationSchedule({{"timer-us", sdbus::Variant(uint64_t{3600000000})}});
    const std::string configuredPath = kept1->getObjectPath();
    // A session that records when the daemon dies.
    auto ran = startTickSession("running", {}, false, {});
    const std::string runningPath = ran->getObjectPath();
    const RunResult app = run({demoApp(), "50", "1000"}, {}, std::chrono::seconds(30));
    ASSERT_TRUE(app.ok()) << app.describe();
    const auto before = kept(configuredPath);
    const auto beforeRunning = kept(runningPath);
    const auto pathsBefore = sessionPaths();
    kept1.reset();
    ran.reset();

    // SIGKILL: nothing is said on the way out.
    const RunResult stop = sandbox_->stopDaemon(SIGKILL);
    ASSERT_TRUE(stop.ok()) << stop.describe();
    const RunResult start = sandbox_->startDaemon();
    ASSERT_TRUE(start.ok()) << start.describe();
    reconnect();

    EXPECT_EQ(sessionPaths(), pathsBefore);
    EXPECT_EQ(kept(configuredPath), before);
    EXPECT_EQ(kept(runningPath), beforeRunning);
    SessionClient configured(*bus_, configuredPath);
    EXPECT_EQ(configured.State(), "created");
    EXPECT_EQ(configured.Name(), "configured");
    EXPECT_EQ(configured.BufferOwnership(), "per-pid");
    EXPECT_EQ(configured.RotationSchedule().get<0>(), 3600000000u);
    SessionClient running(*bus_, runningPath);
    EXPECT_EQ(running.State(), "error");
    EXPECT_NE(running.ErrorReason().find("tracectld restarted while the session was active"),
              std::string::npos)
        << running.ErrorReason();
    // What it recorded before the kill was written by its consumer.
    EXPECT_TRUE(eventually([&] { return countTicksOnceReadable(output("running")) == 50; },
                           std::chrono::seconds(20)))
        << countTicksIfAny(output("running"));
    try {
        running.Start({});
        ADD_FAILURE() << "a failed local session started";
    } catch (const sdbus::Error& e) {
        EXPECT_EQ(e.getName(), "org.tracectl.Tracing1.Error.WrongState");
    }
    running.Destroy({});

    // The configured session works as if nothing happened: its rules record.
    configured.Start({});
    const RunResult app2 = run({demoApp(), "20", "1000"}, {}, std::chrono::seconds(30));
    ASSERT_TRUE(app2.ok()) << app2.describe();
    configured.Stop({});
    const nlohmann::json counts = countEvents(output("configured"));
    EXPECT_EQ(counts["events"].value("tracectl_demo:tick", 0), 5) << counts.dump();
    EXPECT_FALSE(counts["events"].contains("tracectl_demo:done")) << counts.dump();
    configured.Destroy({});
    EXPECT_TRUE(fs::is_empty(stateDir())) << "a destroyed session leaves no state";
}

TEST_F(RestartTest, CorruptOrHostileStateIsRefusedAndTheDaemonStarts) {
    // A good document to copy from.
    std::string good;
    std::string modelHex;
    {
        SessionClient model(
            *bus_,
            manager_->CreateSession("model", {{"output-path", sdbus::Variant(output("model"))}}));
        modelHex = model.getObjectPath().substr(model.getObjectPath().rfind('/') + 1);
        std::ifstream in(stateDir() + "/" + modelHex + ".json");
        std::stringstream text;
        text << in.rdbuf();
        good = text.str();
        model.Destroy({});
    }
    ASSERT_NE(good.find("\"name\":\"model\""), std::string::npos) << good;

    auto put = [&](const std::string& hex, const std::string& content, mode_t mode = 0600) {
        const std::string path = stateDir() + "/" + hex + ".json";
        std::ofstream(path) << content;
        chmod(path.c_str(), mode);
        return path;
    };
    auto withId = [&](std::string doc, const std::string& hex) {
        return doc.replace(doc.find(modelHex), modelHex.size(), hex);
    };
    auto replaced = [](std::string doc, const std::string& from, const std::string& to) {
        const auto at = doc.find(from);
        EXPECT_NE(at, std::string::npos) << from;
        return at == std::string::npos ? doc : doc.replace(at, from.size(), to);
    };
    const std::string h1(32, '1'), h2(32, '2'), h3(32, '3'), h4(32, '4'), h5(32, '5'), h6(32, '6');
    put(h1, withId(good, h1).substr(0, good.size() / 2));
    put(h2, replaced(withId(good, h2), "\"version\":1", "\"version\":99"));
    // Another user's folder: nobody may not write below /root.
    put(h3, replaced(replaced(withId(good, h3), "\"owner\":0", "\"owner\":65534"),
                     "\"output_path\":\"" + output("model") + "\"",
                     "\"output_path\":\"/root/tracectl-hostile\""));
    put(h4,
        replaced(withId(good, h4), "\"consumer_unit\":\"\"", "\"consumer_unit\":\"ssh.service\""));
    put(h5, replaced(withId(good, h5), "\"name\":\"model\"", "\"name\":\"readable\""), 0644);
    const std::string survivor =
        replaced(withId(good, h6), "\"name\":\"model\"", "\"name\":\"survivor\"");
    put(h6, survivor);

    const RunResult restart = sandbox_->restartDaemon();
    ASSERT_TRUE(restart.ok()) << restart.describe();
    reconnect();
    const auto paths = manager_->ListSessions();
    ASSERT_EQ(paths.size(), 1u);
    SessionClient s(*bus_, paths[0]);
    EXPECT_EQ(s.Name(), "survivor");
    EXPECT_EQ(s.State(), "created");
    const std::string log = sandbox_->readLog("tracectld");
    for (const auto& [hex, why] :
         std::vector<std::pair<std::string, std::string>>{{h1, "not JSON"},
                                                          {h2, "version 99"},
                                                          {h3, "/root/tracectl-hostile"},
                                                          {h4, "ssh.service"},
                                                          {h5, "only it may read"}}) {
        EXPECT_NE(log.find(hex + ".json: "), std::string::npos) << hex << "\n" << log;
        EXPECT_NE(log.find(why), std::string::npos) << why << "\n" << log;
        EXPECT_TRUE(fs::exists(stateDir() + "/" + hex + ".json.refused")) << hex;
        EXPECT_FALSE(fs::exists(stateDir() + "/" + hex + ".json")) << hex;
    }
    s.Destroy({});
    for (const auto& e : fs::directory_iterator(stateDir()))
        fs::remove(e.path());
}

TEST_F(RestartTest, WhatPolkitGrantedIsAskedAgainAfterARestart) {
    ensureUsers();
    const uid_t alice = uidOf("alice");
    // alice's folder, where her session may write.
    const std::string folder = sandbox_->dir() + "/alice-traces";
    fs::create_directories(folder);
    ASSERT_EQ(chown(folder.c_str(), alice, alice), 0);
    // A session of alice's that recorded every user's apps and the kernel
    // (as if polkit had granted her both), as its state document says.
    std::string doc;
    std::string hex;
    {
        SessionClient model(
            *bus_,
            manager_->CreateSession("granted", {{"output-path", sdbus::Variant(folder + "/k")}}));
        model.AddChannel("kernel", "k0", {});
        model.EnableEvents("kernel", "k0", "sched:sched_switch", {});
        hex = model.getObjectPath().substr(model.getObjectPath().rfind('/') + 1);
        std::ifstream in(stateDir() + "/" + hex + ".json");
        std::stringstream text;
        text << in.rdbuf();
        doc = text.str();
        model.Destroy({});
    }
    auto edit = [&](const std::string& from, const std::string& to) {
        const auto at = doc.find(from);
        ASSERT_NE(at, std::string::npos) << from << " in " << doc;
        doc.replace(at, from.size(), to);
    };
    edit("\"owner\":0", "\"owner\":" + std::to_string(alice));
    edit("\"all_users\":false", "\"all_users\":true");
    {
        const std::string path = stateDir() + "/" + hex + ".json";
        std::ofstream(path) << doc;
        chmod(path.c_str(), 0600);
    }
    const RunResult restart = sandbox_->restartDaemon();
    ASSERT_TRUE(restart.ok()) << restart.describe();
    reconnect();
    const std::string path = "/org/tracectl/Tracing1/session/" + hex;
    SessionClient s(*bus_, path);
    EXPECT_EQ(s.Owner(), alice);
    EXPECT_FALSE(s.TracesAllUsers()) << "trace-all-users is asked again, not restored";
    // Starting kernel tracing asks trace-kernel again, which alice lacks.
    const RunResult start = run({"setpriv", "--reuid=alice", "--regid=alice", "--init-groups", "--",
                                 tracectlCli(), "start", "granted"});
    EXPECT_EQ(start.exitCode, 1) << start.describe();
    EXPECT_TRUE(start.err.find(kInteractive) != std::string::npos ||
                start.err.find(kAccessDenied) != std::string::npos)
        << start.err;
    EXPECT_EQ(s.State(), "created");
    s.Destroy({});
}

} // namespace
} // namespace tracectl::test
