// LTTng-UST applications registering with tracectld: the bundled app, built
// against Debian's liblttng-ust and nothing of tracectl, started for real
// with the sandbox's LTTNG_HOME, appears as an Application object.
#include "child_process.hpp"
#include "sandbox.hpp"
#include "signal_recorder.hpp"
#include "tracectl_clients.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace std::chrono_literals;
using namespace tracectl::test;

namespace {

std::string demoApp() {
    const char* p = std::getenv("TRACECTL_DEMO_APP");
    return p != nullptr ? p : "tracectl-demo-app";
}

class Applications : public ::testing::Test {
protected:
    static void SetUpTestSuite() { sandbox_ = std::make_unique<Sandbox>(); }
    static void TearDownTestSuite() { sandbox_.reset(); }

    void SetUp() override {
        bus_ = sdbus::createSystemBusConnection();
        manager_ = std::make_unique<ManagerClient>(*bus_);
    }

    /// Starts the demo app emitting `count` events `intervalUs` apart.
    std::unique_ptr<ChildProcess> startApp(int count, int intervalUs,
                                           std::vector<std::string> prefix = {}) {
        std::vector<std::string> argv = std::move(prefix);
        argv.insert(argv.end(), {demoApp(), std::to_string(count), std::to_string(intervalUs)});
        return std::make_unique<ChildProcess>(argv, std::vector<std::string>{},
                                              sandbox_->dir() + "/log/apps.log");
    }

    /// Waits until the app of `pid` is listed (or not), up to 10 s.
    bool waitListed(pid_t pid, bool listed) {
        const std::string path = "/org/tracectl/Tracing1/application/" + std::to_string(pid);
        for (int i = 0; i < 1000; ++i) {
            const auto apps = manager_->ListApplications();
            const bool present = std::find(apps.begin(), apps.end(), path) != apps.end();
            if (present == listed)
                return true;
            std::this_thread::sleep_for(10ms);
        }
        return false;
    }

    static std::string appPath(pid_t pid) {
        return "/org/tracectl/Tracing1/application/" + std::to_string(pid);
    }

    static std::unique_ptr<Sandbox> sandbox_;
    std::unique_ptr<sdbus::IConnection> bus_;
    std::unique_ptr<ManagerClient> manager_;
};

std::unique_ptr<Sandbox> Applications::sandbox_;

} // namespace

TEST_F(Applications, ARunningAppIsAnObjectWithItsCredentialsAndTracepoints) {
    SignalRecorder signals;
    auto app = startApp(1, 0, {});
    // The app registers, emits and exits quickly; a long-lived one is below.
    auto longLived = startApp(1000, 10000);
    ASSERT_TRUE(waitListed(longLived->pid(), true));

    ApplicationClient client(*bus_, appPath(longLived->pid()));
    EXPECT_EQ(client.Pid(), static_cast<uint32_t>(longLived->pid()));
    EXPECT_EQ(client.Uid(), getuid());
    EXPECT_EQ(client.Gid(), getgid());
    EXPECT_EQ(client.Name(), "tracectl-demo-a"); // comm is 15 bytes at most
    EXPECT_EQ(client.Bitness(), sizeof(long) * 8);
    EXPECT_EQ(client.TracerVersion().rfind("2.13.", 0), 0u) << client.TracerVersion();
    EXPECT_GT(client.RegisteredAt(), 0u);

    const auto tracepoints = client.ListTracepoints();
    auto levelOf = [&](const std::string& event) {
        for (const auto& tp : tracepoints)
            if (tp.get<0>() == "tracectl_demo" && tp.get<1>() == event)
                return tp.get<2>();
        return -1;
    };
    EXPECT_EQ(levelOf("tick"), 6);        // LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO
    EXPECT_EQ(levelOf("debug_note"), 14); // LTTNG_UST_TRACEPOINT_LOGLEVEL_DEBUG
    EXPECT_EQ(levelOf("done"), 13);       // the default, DEBUG_LINE

    longLived->kill(SIGTERM);
    ASSERT_TRUE(waitListed(longLived->pid(), false));
    const auto lines = signals.waitFor(2, 5s);
    const std::string path = appPath(longLived->pid());
    const auto added = std::find(lines.begin(), lines.end(),
                                 "InterfacesAdded " + path + " org.tracectl.Tracing1.Application");
    const auto removed =
        std::find(lines.begin(), lines.end(),
                  "InterfacesRemoved " + path + " org.tracectl.Tracing1.Application");
    EXPECT_NE(added, lines.end());
    EXPECT_NE(removed, lines.end());
    EXPECT_LT(added, removed);
    EXPECT_EQ(app->wait(10000), 0);
}

TEST_F(Applications, AnAppWaitingBeforeTheDaemonStartsIsWokenAndRegisters) {
    ASSERT_TRUE(sandbox_->stopDaemon().ok());
    auto app = startApp(1000, 10000);
    std::this_thread::sleep_for(300ms); // the app finds no daemon and waits on the wake-up page
    ASSERT_TRUE(sandbox_->startDaemon().ok());
    bus_ = sdbus::createSystemBusConnection();
    manager_ = std::make_unique<ManagerClient>(*bus_);
    EXPECT_TRUE(waitListed(app->pid(), true));
}

TEST_F(Applications, AnotherUsersAppCarriesItsUidAndIsHiddenFromOthers) {
    auto app = startApp(1000, 10000,
                        {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"});
    ASSERT_TRUE(waitListed(app->pid(), true));
    ApplicationClient client(*bus_, appPath(app->pid()));
    EXPECT_EQ(client.Uid(), 65534u);
    EXPECT_EQ(client.Gid(), 65534u);
    // uid 1 (daemon) sees no app; nobody sees its own.
    const RunResult asDaemonUser =
        run({"setpriv", "--reuid=1", "--regid=1", "--clear-groups", "--", "busctl", "--system",
             "call", kService, kManagerPath, "org.tracectl.Tracing1.Manager", "ListApplications"});
    EXPECT_EQ(asDaemonUser.out, "ao 0\n") << asDaemonUser.describe();
    const RunResult asNobody = run({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                    "--", "busctl", "--system", "call", kService, kManagerPath,
                                    "org.tracectl.Tracing1.Manager", "ListApplications"});
    EXPECT_NE(asNobody.out.find(appPath(app->pid())), std::string::npos) << asNobody.describe();
}

TEST_F(Applications, HostileConnectionsAreDroppedAndRealAppsStillRegister) {
    const std::string socketPath = sandbox_->lttngHome() + "/.lttng/lttng-ust-sock-8";
    auto connectRaw = [&] {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strncpy(addr.sun_path, socketPath.c_str(), sizeof addr.sun_path - 1);
        EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0)
            << std::strerror(errno);
        return fd;
    };
    std::vector<int> fds;
    // Garbage of every size, a silent connection, and one closed at once.
    for (std::size_t size : {1u, 7u, 64u, 200u, 4096u}) {
        const int fd = connectRaw();
        const std::string junk(size, '\xa5');
        EXPECT_EQ(write(fd, junk.data(), junk.size()), static_cast<ssize_t>(junk.size()));
        fds.push_back(fd);
    }
    fds.push_back(connectRaw());
    close(connectRaw());

    auto app = startApp(1000, 10000);
    EXPECT_TRUE(waitListed(app->pid(), true));
    EXPECT_TRUE(sandbox_->daemonRunning());
    for (int fd : fds)
        close(fd);
    EXPECT_EQ(manager_->ListApplications().size(), 1u);
    const std::string log = sandbox_->readLog("tracectld");
    EXPECT_NE(log.find("refused: bad registration message"), std::string::npos) << log;
}
