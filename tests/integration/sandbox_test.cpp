// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Tests of the integration-test stack itself (scripts/sandbox and the
// Sandbox fixture), with the real components: dbus-daemon, polkitd, a systemd
// user manager and tracectld ($TRACECTLD). Must run as root.

#include "eventually.hpp"
#include "sandbox.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <memory>
#include <optional>
#include <pwd.h>
#include <set>
#include <sstream>
#include <string>
#include <sys/syscall.h>
#include <systemd/sd-bus.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using namespace std::chrono_literals;
using tracectl::test::eventually;
using tracectl::test::RunResult;
using tracectl::test::Sandbox;
namespace fs = std::filesystem;

std::string readFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) {
        s.pop_back();
    }
    return s;
}

// --- a direct sd-bus connection to the manager's private socket, as tracectld
// --- makes it (TRACECTL_SYSTEMD_ADDRESS) ------------------------------------

struct BusUnref {
    void operator()(sd_bus* bus) const noexcept { sd_bus_flush_close_unref(bus); }
};
struct MessageUnref {
    void operator()(sd_bus_message* m) const noexcept { sd_bus_message_unref(m); }
};
struct Free {
    void operator()(char* p) const noexcept { std::free(p); }
};
using BusPtr = std::unique_ptr<sd_bus, BusUnref>;
using MessagePtr = std::unique_ptr<sd_bus_message, MessageUnref>;

class BusError {
public:
    BusError() = default;
    ~BusError() { sd_bus_error_free(&error_); }
    BusError(const BusError&) = delete;
    BusError& operator=(const BusError&) = delete;
    sd_bus_error* get() noexcept { return &error_; }
    [[nodiscard]] std::string message() const {
        return error_.message != nullptr ? error_.message : "(no message)";
    }

private:
    sd_bus_error error_ = SD_BUS_ERROR_NULL;
};

constexpr const char* kSystemd = "org.freedesktop.systemd1";
constexpr const char* kSystemdPath = "/org/freedesktop/systemd1";
constexpr const char* kManager = "org.freedesktop.systemd1.Manager";

BusPtr connectDirect(const std::string& address) {
    sd_bus* raw = nullptr;
    if (sd_bus_new(&raw) < 0) {
        return nullptr;
    }
    BusPtr bus(raw);
    // A peer-to-peer connection: not a bus client, so no Hello.
    if (sd_bus_set_address(bus.get(), address.c_str()) < 0 ||
        sd_bus_set_bus_client(bus.get(), 0) < 0 || sd_bus_start(bus.get()) < 0) {
        return nullptr;
    }
    return bus;
}

// StartTransientUnit(name, "fail", [Description, ExecStart=/bin/sh -c script], []).
std::optional<std::string> startTransientUnit(sd_bus* bus, const std::string& name,
                                              const std::string& script, std::string& error) {
    sd_bus_message* raw = nullptr;
    if (sd_bus_message_new_method_call(bus, &raw, kSystemd, kSystemdPath, kManager,
                                       "StartTransientUnit") < 0) {
        error = "new_method_call failed";
        return std::nullopt;
    }
    MessagePtr call(raw);
    int r = sd_bus_message_append(call.get(), "ss", name.c_str(), "fail");
    if (r >= 0) {
        r = sd_bus_message_append(call.get(), "a(sv)", 2, "Description", "s",
                                  "tracectl sandbox test", "ExecStart", "a(sasb)", 1, "/bin/sh", 3,
                                  "/bin/sh", "-c", script.c_str(), 0);
    }
    if (r >= 0) {
        r = sd_bus_message_append(call.get(), "a(sa(sv))", 0);
    }
    if (r < 0) {
        error = "cannot build StartTransientUnit call";
        return std::nullopt;
    }
    BusError busError;
    sd_bus_message* replyRaw = nullptr;
    if (sd_bus_call(bus, call.get(), 10'000'000, busError.get(), &replyRaw) < 0) {
        error = busError.message();
        return std::nullopt;
    }
    MessagePtr reply(replyRaw);
    const char* job = nullptr;
    if (sd_bus_message_read(reply.get(), "o", &job) < 0 || job == nullptr) {
        error = "bad StartTransientUnit reply";
        return std::nullopt;
    }
    return std::string(job);
}

// MainPID of a service unit, 0 if unknown.
pid_t mainPid(sd_bus* bus, const std::string& unit) {
    BusError busError;
    sd_bus_message* raw = nullptr;
    if (sd_bus_call_method(bus, kSystemd, kSystemdPath, kManager, "GetUnit", busError.get(), &raw,
                           "s", unit.c_str()) < 0) {
        return 0;
    }
    MessagePtr reply(raw);
    const char* path = nullptr;
    if (sd_bus_message_read(reply.get(), "o", &path) < 0) {
        return 0;
    }
    std::uint32_t pid = 0;
    BusError propertyError;
    sd_bus_message* valueRaw = nullptr;
    if (sd_bus_get_property(bus, kSystemd, path, "org.freedesktop.systemd1.Service", "MainPID",
                            propertyError.get(), &valueRaw, "u") < 0) {
        return 0;
    }
    MessagePtr value(valueRaw);
    if (sd_bus_message_read(value.get(), "u", &pid) < 0) {
        return 0;
    }
    return static_cast<pid_t>(pid);
}

std::string uniqueUnitName(const std::string& what) {
    static int counter = 0;
    return "tracectl-sandbox-test-" + what + "-" + std::to_string(::getpid()) + "-" +
           std::to_string(++counter) + ".service";
}

// --- scanning /proc for what a sandbox left ----------------------------------

std::vector<std::string> splitNul(const std::string& s) {
    std::vector<std::string> parts;
    std::string::size_type start = 0;
    while (start < s.size()) {
        const auto end = s.find('\0', start);
        parts.push_back(s.substr(start, end - start));
        if (end == std::string::npos) {
            break;
        }
        start = end + 1;
    }
    return parts;
}

// Live processes (other than this one) referring to dir: marker in the
// environment, dir in the command line, or in mount namespace mntns.
/// Clock ticks since boot now, as /proc/PID/stat counts a start time.
unsigned long long ticksSinceBoot() {
    std::istringstream in(readFile("/proc/uptime"));
    double seconds = 0;
    in >> seconds;
    return static_cast<unsigned long long>(seconds * static_cast<double>(::sysconf(_SC_CLK_TCK)));
}

/// When `pid` started, in clock ticks since boot (field 22 of
/// /proc/PID/stat); 0 if it cannot be read.
unsigned long long startTicks(const std::string& pid) {
    const std::string stat = readFile("/proc/" + pid + "/stat");
    const auto end = stat.rfind(") ");
    if (end == std::string::npos)
        return 0;
    std::istringstream fields(stat.substr(end + 2));
    std::string field;
    for (int i = 3; i <= 22 && fields >> field; ++i) {
    }
    return std::strtoull(field.c_str(), nullptr, 10);
}

/// Processes that name `dir` (environment, command line) or are in the
/// mount namespace `mntns`. A namespace's number is reused once it is gone:
/// with `startedBefore` (clock ticks since boot), a process counts by its
/// namespace only if it started by then, while the sandbox's namespace
/// surely lived (another sandbox's new namespace may have the number since).
std::vector<std::string> processesReferringTo(const std::string& dir, const std::string& mntns,
                                              unsigned long long startedBefore = ~0ULL) {
    std::vector<std::string> found;
    const std::string marker = "TRACECTL_SANDBOX=" + dir;
    for (const auto& entry : fs::directory_iterator("/proc")) {
        const std::string name = entry.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos) {
            continue;
        }
        const auto pid = static_cast<pid_t>(std::stol(name));
        if (pid == ::getpid() || !tracectl::test::processAlive(pid)) {
            continue;
        }
        std::string why;
        for (const auto& var : splitNul(readFile(entry.path() / "environ"))) {
            if (var == marker) {
                why = "environment";
            }
        }
        for (const auto& arg : splitNul(readFile(entry.path() / "cmdline"))) {
            if (arg == dir || arg.find(dir + "/") != std::string::npos) {
                why = "command line";
            }
        }
        std::error_code ec;
        if (!mntns.empty() && fs::read_symlink(entry.path() / "ns" / "mnt", ec).string() == mntns &&
            startTicks(name) <= startedBefore) {
            why = "mount namespace";
        }
        if (!why.empty()) {
            found.push_back(name + " (" + trim(readFile(entry.path() / "comm")) + ", " + why + ")");
        }
    }
    return found;
}

std::string stateValue(const std::string& dir, const std::string& key) {
    std::istringstream lines(readFile(dir + "/state"));
    std::string line;
    while (std::getline(lines, line)) {
        if (line.rfind(key + "=", 0) == 0) {
            return line.substr(key.size() + 1);
        }
    }
    return {};
}

bool mountedUnder(const std::string& dir) {
    return readFile("/proc/self/mountinfo").find(dir) != std::string::npos;
}

std::vector<std::string> cgroupsNamed(const std::string& name) {
    std::vector<std::string> found;
    if (name.empty()) {
        return found;
    }
    std::error_code ec;
    for (const auto& hierarchy : fs::directory_iterator("/sys/fs/cgroup", ec)) {
        if (fs::exists(hierarchy.path() / name)) {
            found.push_back((hierarchy.path() / name).string());
        }
    }
    if (fs::exists(fs::path("/sys/fs/cgroup") / name)) {
        found.push_back("/sys/fs/cgroup/" + name);
    }
    return found;
}

// --- one stack shared by the tests that only look at it -----------------------

class SandboxStack : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        if (::geteuid() != 0) {
            return;
        }
        const auto start = std::chrono::steady_clock::now();
        sandbox_ = Sandbox::tryCreate(error_);
        upTime_ = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - start);
    }
    static void TearDownTestSuite() { sandbox_.reset(); }
    void SetUp() override {
        if (::geteuid() != 0) {
            GTEST_SKIP() << "needs root";
        }
        ASSERT_TRUE(sandbox_) << error_;
    }

    static Sandbox& sandbox() { return *sandbox_; }

    static inline std::unique_ptr<Sandbox> sandbox_;
    static inline std::string error_;
    static inline std::chrono::milliseconds upTime_{};
};

TEST_F(SandboxStack, ExportsTheEnvironment) {
    RecordProperty("up_ms", static_cast<int>(upTime_.count()));
    const auto& env = sandbox().env();
    ASSERT_EQ(env.size(), 5U);
    EXPECT_EQ(env.at("DBUS_SYSTEM_BUS_ADDRESS"),
              "unix:path=" + sandbox().dir() + "/run/system_bus_socket");
    EXPECT_EQ(env.at("TRACECTL_SYSTEMD_ADDRESS"),
              "unix:path=" + sandbox().dir() + "/xdg/systemd/private");
    EXPECT_EQ(env.at("LTTNG_HOME"), sandbox().dir() + "/lttng-home");
    EXPECT_EQ(env.at("TRACECTL_SANDBOX"), sandbox().dir());
    // tracectl's current session, kept in the sandbox (tracectl(1), CURRENT SESSION).
    EXPECT_EQ(env.at("XDG_CONFIG_HOME"), sandbox().dir() + "/cli-config");
    for (const auto& [name, value] : env) {
        const char* current = std::getenv(name.c_str());
        ASSERT_NE(current, nullptr) << name;
        EXPECT_EQ(current, value) << name;
    }
    EXPECT_TRUE(fs::is_directory(sandbox().lttngHome()));
    // "env" prints the same lines again.
    const RunResult again = sandbox().script({"env", sandbox().dir()});
    ASSERT_TRUE(again.ok()) << again.describe();
    EXPECT_NE(again.out.find("export TRACECTL_SANDBOX=" + sandbox().dir() + "\n"),
              std::string::npos);
}

TEST_F(SandboxStack, SystemBusAnswers) {
    const RunResult id = sandbox().busctl(
        {"call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId"});
    ASSERT_TRUE(id.ok()) << id.describe();
    EXPECT_EQ(id.out.rfind("s \"", 0), 0U) << id.out;
}

TEST_F(SandboxStack, PolkitOwnsItsNameAndAnswers) {
    const RunResult owned = sandbox().busctl({"call", "org.freedesktop.DBus",
                                              "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                              "NameHasOwner", "s", "org.freedesktop.PolicyKit1"});
    ASSERT_TRUE(owned.ok()) << owned.describe();
    EXPECT_EQ(trim(owned.out), "b true");

    // polkitd dropped to its own user, which its bus policy lets own the name.
    const RunResult uid = sandbox().busctl({"call", "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                            "org.freedesktop.DBus", "GetConnectionUnixUser", "s",
                                            "org.freedesktop.PolicyKit1"});
    ASSERT_TRUE(uid.ok()) << uid.describe();
    if (const passwd* pw = ::getpwnam("polkitd"); pw != nullptr) {
        EXPECT_EQ(trim(uid.out), "u " + std::to_string(pw->pw_uid));
    }

    // A real authorization check through the sandbox bus (root is allowed).
    const RunResult check =
        tracectl::test::run({"pkcheck", "--action-id", "org.freedesktop.policykit.exec",
                             "--process", std::to_string(::getpid())});
    EXPECT_TRUE(check.ok()) << check.describe();
}

TEST_F(SandboxStack, SystemdManagerAnswersOnItsPrivateSocket) {
    BusPtr bus = connectDirect(sandbox().systemdAddress());
    ASSERT_TRUE(bus) << "cannot connect to " << sandbox().systemdAddress();
    BusError error;
    char* raw = nullptr;
    ASSERT_GE(sd_bus_get_property_string(bus.get(), kSystemd, kSystemdPath, kManager, "Version",
                                         error.get(), &raw),
              0)
        << error.message();
    std::unique_ptr<char, Free> version(raw);
    EXPECT_NE(std::string(version.get()), "");

    const RunResult state = sandbox().systemctl({"show", "-p", "SystemState", "--value"});
    ASSERT_TRUE(state.ok()) << state.describe();
    EXPECT_EQ(trim(state.out), "running");
}

// What tracectld will do: StartTransientUnit over the private socket, from
// outside the manager's mount namespace; the unit runs for real, sees the
// sandbox's environment, is in the sandbox's cgroup tree and its MainPID is a
// pid of ours (no PID namespace in between).
TEST_F(SandboxStack, SystemdStartsTransientUnitsOverThePrivateSocket) {
    BusPtr bus = connectDirect(sandbox().systemdAddress());
    ASSERT_TRUE(bus);
    const std::string unit = uniqueUnitName("sleep");
    const fs::path ran = fs::path(sandbox().dir()) / (unit + ".ran");
    std::string error;
    const auto job = startTransientUnit(
        bus.get(), unit, "echo \"$TRACECTL_SANDBOX\" >'" + ran.string() + "'; exec sleep 300",
        error);
    ASSERT_TRUE(job) << error;
    EXPECT_EQ(job->rfind("/org/freedesktop/systemd1/job/", 0), 0U) << *job;

    ASSERT_TRUE(eventually([&] { return !readFile(ran).empty(); })) << "the unit did not run";
    EXPECT_EQ(trim(readFile(ran)), sandbox().dir());

    pid_t pid = 0;
    ASSERT_TRUE(eventually([&] {
        pid = mainPid(bus.get(), unit);
        return pid > 0 && trim(readFile("/proc/" + std::to_string(pid) + "/comm")) == "sleep";
    }));
    const std::string cgroup = readFile("/proc/" + std::to_string(pid) + "/cgroup");
    EXPECT_NE(cgroup.find("/app.slice/" + unit), std::string::npos) << cgroup;
    EXPECT_NE(cgroup.find("tracectl-sandbox-"), std::string::npos) << cgroup;

    BusError stopError;
    sd_bus_message* reply = nullptr;
    ASSERT_GE(sd_bus_call_method(bus.get(), kSystemd, kSystemdPath, kManager, "StopUnit",
                                 stopError.get(), &reply, "ss", unit.c_str(), "replace"),
              0)
        << stopError.message();
    MessagePtr stopReply(reply);
    EXPECT_TRUE(eventually([&] { return !tracectl::test::processAlive(pid); }));
}

// The command-line tools work against the manager from outside its namespace
// too (XDG_RUNTIME_DIR=DIR/xdg), and busctl against its user bus.
TEST_F(SandboxStack, SystemdRunAndSystemctlWork) {
    const std::string unit = uniqueUnitName("true");
    const RunResult started =
        tracectl::test::run({"systemd-run", "--user", "--unit=" + unit, "-p", "Type=oneshot", "-p",
                             "RemainAfterExit=yes", "/bin/true"},
                            {{"XDG_RUNTIME_DIR", sandbox().runtimeDir()}});
    ASSERT_TRUE(started.ok()) << started.describe();
    EXPECT_TRUE(eventually([&] {
        return trim(sandbox().systemctl({"is-active", unit}).out) == "active";
    }));
    EXPECT_TRUE(sandbox().systemctl({"stop", unit}).ok());

    const RunResult version =
        tracectl::test::run({"busctl", "--address=" + sandbox().userBusAddress(), "get-property",
                             "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                             "org.freedesktop.systemd1.Manager", "Version"});
    EXPECT_TRUE(version.ok()) << version.describe();
}

TEST_F(SandboxStack, DaemonOwnsItsName) {
    const pid_t daemon = sandbox().daemonPid();
    ASSERT_GT(daemon, 0);
    ASSERT_TRUE(sandbox().daemonRunning()) << "tracectld is not running; log:\n"
                                           << sandbox().readLog("tracectld");
    const RunResult owned = sandbox().busctl(
        {"call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
         "GetConnectionUnixProcessID", "s", "org.tracectl.Tracing1"});
    ASSERT_TRUE(owned.ok()) << owned.describe();
    EXPECT_EQ(trim(owned.out), "u " + std::to_string(daemon));

    // The project's bus policy is in force: interfaces it does not list are refused.
    const RunResult denied =
        sandbox().busctl({"call", "org.tracectl.Tracing1", "/", "org.example.NotAllowed", "Foo"});
    EXPECT_FALSE(denied.ok());
    EXPECT_NE(denied.err.find("Access denied"), std::string::npos) << denied.err;
    // Only the interfaces issue 4 lists: not even Peer.
    const RunResult ping = sandbox().busctl(
        {"call", "org.tracectl.Tracing1", "/", "org.freedesktop.DBus.Peer", "Ping"});
    EXPECT_FALSE(ping.ok());
    EXPECT_NE(ping.err.find("Access denied"), std::string::npos) << ping.err;
    const RunResult introspect =
        sandbox().busctl({"call", "org.tracectl.Tracing1", "/org/tracectl/Tracing1",
                          "org.freedesktop.DBus.Introspectable", "Introspect"});
    EXPECT_TRUE(introspect.ok()) << introspect.describe();
}

TEST_F(SandboxStack, UpIsRefusedWhereASandboxRuns) {
    const RunResult up = sandbox().script({"up", sandbox().dir()});
    EXPECT_NE(up.exitCode, 0);
    EXPECT_NE(up.err.find("already runs"), std::string::npos) << up.err;
    EXPECT_TRUE(up.out.empty()) << up.out;
    // ... and left the running one alone.
    const RunResult status = sandbox().script({"status", sandbox().dir()});
    EXPECT_EQ(status.exitCode, 0) << status.out << status.err;
}

TEST_F(SandboxStack, DaemonCanBeKilledAndRestarted) {
    const pid_t before = sandbox().daemonPid();
    ASSERT_GT(before, 0);
    ASSERT_TRUE(sandbox().daemonRunning());
    const RunResult killed = sandbox().stopDaemon(SIGKILL);
    ASSERT_TRUE(killed.ok()) << killed.describe();
    EXPECT_FALSE(sandbox().daemonRunning());
    EXPECT_FALSE(tracectl::test::processAlive(before));
    const RunResult started = sandbox().startDaemon();
    ASSERT_TRUE(started.ok()) << started.describe();
    const pid_t after = sandbox().daemonPid();
    EXPECT_TRUE(sandbox().daemonRunning());
    EXPECT_NE(after, before);
    const RunResult restarted = sandbox().restartDaemon();
    ASSERT_TRUE(restarted.ok()) << restarted.describe();
    EXPECT_TRUE(sandbox().daemonRunning());
    EXPECT_NE(sandbox().daemonPid(), after);
}

// --- taking stacks down --------------------------------------------------------

TEST(SandboxLifecycle, DownLeavesNothingBehindAndIsIdempotent) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "needs root";
    }
    std::optional<Sandbox> sandbox(std::in_place);
    const std::string dir = sandbox->dir();
    const std::string mntns = stateValue(dir, "mntns");
    const std::string cgroup = stateValue(dir, "cgroup");
    ASSERT_FALSE(mntns.empty());
    auto pids = sandbox->pids();
    for (const char* name : {"dbus-daemon", "polkitd", "systemd", "tracectld", "watcher"}) {
        ASSERT_TRUE(pids.count(name)) << name;
        EXPECT_TRUE(tracectl::test::processAlive(pids[name])) << name;
    }
    EXPECT_FALSE(processesReferringTo(dir, mntns).empty());
    EXPECT_FALSE(cgroupsNamed(cgroup).empty());

    // A unit process too: it must go with the manager.
    const std::string unit = uniqueUnitName("down");
    const RunResult started =
        tracectl::test::run({"systemd-run", "--user", "--unit=" + unit, "sleep", "300"},
                            {{"XDG_RUNTIME_DIR", sandbox->runtimeDir()}});
    ASSERT_TRUE(started.ok()) << started.describe();
    pid_t unitPid = 0;
    ASSERT_TRUE(eventually([&] {
        unitPid = std::atoi(
            trim(sandbox->systemctl({"show", "-p", "MainPID", "--value", unit}).out).c_str());
        return unitPid > 0;
    }));
    pids["unit"] = unitPid;

    // Keep the directory to look at it after down.
    ASSERT_EQ(::setenv("TRACECTL_SANDBOX_KEEP", "1", 1), 0);
    const unsigned long long downBegan = ticksSinceBoot();
    const auto start = std::chrono::steady_clock::now();
    const RunResult down = sandbox->down();
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    ::unsetenv("TRACECTL_SANDBOX_KEEP");
    RecordProperty("down_ms", static_cast<int>(took.count()));
    EXPECT_TRUE(down.ok()) << down.describe();
    EXPECT_TRUE(down.out.empty()) << down.out;

    for (const auto& [name, pid] : pids) {
        EXPECT_FALSE(tracectl::test::processAlive(pid)) << name << " " << pid << " survived";
    }
    const auto left = processesReferringTo(dir, mntns, downBegan);
    EXPECT_TRUE(left.empty()) << "left: " << ::testing::PrintToString(left);
    EXPECT_FALSE(mountedUnder(dir));
    EXPECT_TRUE(cgroupsNamed(cgroup).empty()) << ::testing::PrintToString(cgroupsNamed(cgroup));
    EXPECT_FALSE(fs::exists(dir + "/pids"));
    EXPECT_EQ(std::getenv("TRACECTL_SANDBOX"), nullptr) << "environment not restored";

    // Twice is fine, and quiet.
    const RunResult again = tracectl::test::run({Sandbox::scriptPath(), "down", dir});
    EXPECT_TRUE(again.ok()) << again.describe();
    EXPECT_TRUE(again.out.empty() && again.err.empty()) << again.out << again.err;
    const RunResult status = tracectl::test::run({Sandbox::scriptPath(), "status", dir});
    EXPECT_EQ(status.exitCode, 3) << status.out << status.err;

    sandbox.reset();
    std::error_code ec;
    fs::remove_all(dir, ec);
}

TEST(SandboxLifecycle, DownOfAMissingSandboxSucceeds) {
    const RunResult down =
        tracectl::test::run({Sandbox::scriptPath(), "down", "/tmp/tracectl-sb-does-not-exist"});
    EXPECT_TRUE(down.ok()) << down.describe();
    EXPECT_TRUE(down.err.empty()) << down.err;
}

// "up --owner-pid" (which the fixture always passes) takes the stack down
// when the owner dies without calling down, say a crashed test.
TEST(SandboxLifecycle, DeathOfTheOwnerTakesTheStackDown) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "needs root";
    }
    const RunResult owner = tracectl::test::run({"sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!"});
    ASSERT_TRUE(owner.ok()) << owner.describe();
    const pid_t ownerPid = std::atoi(owner.out.c_str());
    ASSERT_GT(ownerPid, 0);
    // Killed at the end if still there, through a pidfd: the owner is no
    // child of ours (init reaps it), so by then its pid may be another
    // process's (suites run side by side; a plain kill(pid) here once took
    // another sandbox's polkitd).
    struct KillOnExit {
        int pidfd;
        ~KillOnExit() {
            if (pidfd >= 0) {
                ::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
                ::close(pidfd);
            }
        }
    } ownerGuard{static_cast<int>(::syscall(SYS_pidfd_open, ownerPid, 0))};
    ASSERT_GE(ownerGuard.pidfd, 0) << "pidfd_open " << ownerPid;

    char templ[] = "/tmp/tracectl-sb-XXXXXX";
    ASSERT_NE(::mkdtemp(templ), nullptr);
    const std::string dir = templ;
    const RunResult up = tracectl::test::run(
        {Sandbox::scriptPath(), "up", dir, "--no-daemon", "--owner-pid", std::to_string(ownerPid)});
    ASSERT_TRUE(up.ok()) << up.describe();
    const std::string mntns = stateValue(dir, "mntns");
    // Until the owner dies the sandbox's namespace surely lives: only
    // processes started by then count by their namespace.
    const unsigned long long ownerKilled = ticksSinceBoot();
    ASSERT_EQ(::syscall(SYS_pidfd_send_signal, ownerGuard.pidfd, SIGKILL, nullptr, 0), 0);
    EXPECT_TRUE(eventually(
        [&] {
            return tracectl::test::run({Sandbox::scriptPath(), "status", dir}).exitCode == 3 &&
                   processesReferringTo(dir, mntns, ownerKilled).empty();
        },
        15s))
        << ::testing::PrintToString(processesReferringTo(dir, mntns, ownerKilled));
    const RunResult down = tracectl::test::run({Sandbox::scriptPath(), "down", dir});
    EXPECT_TRUE(down.ok()) << down.describe();
    std::error_code ec;
    fs::remove_all(dir, ec);
}

// A mount namespace's number is reused once the namespace is gone. "down"
// run again on a sandbox already taken down (the owner's watcher took it
// down, then the test's own "down") once found another sandbox's systemd in
// the namespace now bearing the recorded number, and killed it.
TEST(SandboxLifecycle, DownLeavesAnotherSandboxInAReusedNamespaceNumberAlone) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "needs root";
    }
    std::optional<Sandbox> gone(std::in_place);
    const std::string dir = gone->dir();
    const std::string cgroup = stateValue(dir, "cgroup");
    ASSERT_FALSE(cgroup.empty());
    ASSERT_EQ(::setenv("TRACECTL_SANDBOX_KEEP", "1", 1), 0);
    const RunResult first = gone->down();
    ::unsetenv("TRACECTL_SANDBOX_KEEP");
    ASSERT_TRUE(first.ok()) << first.describe();

    Sandbox other;
    const std::string otherNs = stateValue(other.dir(), "mntns");
    ASSERT_FALSE(otherNs.empty());
    auto otherPids = other.pids();
    ASSERT_TRUE(otherPids.count("systemd"));
    // The state the first sandbox would have kept had its first "down" not
    // finished, with its namespace's number now the other sandbox's.
    {
        std::ofstream state(dir + "/state");
        state << "cgroup=" << cgroup << "\nmntns=" << otherNs << "\n";
    }
    const RunResult again = tracectl::test::run({Sandbox::scriptPath(), "down", dir});
    EXPECT_TRUE(again.ok()) << again.describe();
    for (const char* name : {"dbus-daemon", "polkitd", "systemd", "tracectld"}) {
        EXPECT_TRUE(tracectl::test::processAlive(otherPids[name])) << name << " was killed";
    }
    gone.reset();
    std::error_code ec;
    fs::remove_all(dir, ec);
}

TEST(Run, CapturesOutputStatusAndTimesOut) {
    tracectl::test::RunOptions options;
    options.input = "in\n";
    const RunResult r = tracectl::test::run({"sh", "-c", "cat; echo err >&2; exit 3"}, options);
    EXPECT_EQ(r.exitCode, 3);
    EXPECT_EQ(r.out, "in\n");
    EXPECT_EQ(r.err, "err\n");
    const RunResult env = tracectl::test::run({"sh", "-c", "echo $X"}, {{"X", "42"}});
    EXPECT_EQ(env.out, "42\n");
    const RunResult slow = tracectl::test::run({"sleep", "10"}, {}, 200ms);
    EXPECT_TRUE(slow.timedOut);
    EXPECT_FALSE(slow.ok());
    // A background process holding stdout does not make run() wait for it.
    const auto start = std::chrono::steady_clock::now();
    const RunResult bg = tracectl::test::run({"sh", "-c", "sleep 3 & echo done"});
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
    EXPECT_EQ(bg.out, "done\n");
    const RunResult missing = tracectl::test::run({"/nonexistent/program"});
    EXPECT_EQ(missing.exitCode, 127);
}

TEST(Run, ShellUnquote) {
    using tracectl::test::shellUnquote;
    EXPECT_EQ(shellUnquote("unix:path=/tmp/x"), "unix:path=/tmp/x");
    EXPECT_EQ(shellUnquote("'/tmp/a b'"), "/tmp/a b");
    EXPECT_EQ(shellUnquote("'it'\\''s'"), "it's");
    EXPECT_EQ(shellUnquote("\"a\\\"b\""), "a\"b");
}

} // namespace
