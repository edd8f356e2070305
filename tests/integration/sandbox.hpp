// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Integration-test fixture: a real stack (private system bus, polkitd, a
// systemd user manager, tracectld) brought up by scripts/sandbox, and a way to
// run commands against it.
//
// Typical use, one stack per test suite:
//
//     class MyTest : public ::testing::Test {
//     protected:
//         static void SetUpTestSuite() { sandbox_ = tracectl::test::Sandbox::tryCreate(error_); }
//         static void TearDownTestSuite() { sandbox_.reset(); }
//         void SetUp() override { ASSERT_TRUE(sandbox_) << error_; }
//         static inline std::unique_ptr<tracectl::test::Sandbox> sandbox_;
//         static inline std::string error_;
//     };
//
// The constructor exports DBUS_SYSTEM_BUS_ADDRESS, TRACECTL_SYSTEMD_ADDRESS,
// LTTNG_HOME and TRACECTL_SANDBOX into this process's environment (so every
// command run() starts talks to the stack); the destructor takes the stack
// down and restores the previous values.
//
// Environment: TRACECTL_SANDBOX_SCRIPT (path of scripts/sandbox; default
// $TRACECTL_SOURCE_ROOT/scripts/sandbox),
// TRACECTLD (the daemon binary, read by the script), TRACECTL_SANDBOX_TMPDIR
// (parent of the sandbox directories, default /tmp), TRACECTL_SANDBOX_KEEP
// (non-empty: keep the directory, with its logs, after a successful down).

#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace tracectl::test {

using Env = std::map<std::string, std::string>;

struct RunOptions {
    // Not an aggregate, so that run(argv, {{"NAME", "value"}}) means an Env.
    RunOptions() = default;

    // Added to (or replacing in) the environment of this process.
    Env env;
    // Removed from the environment.
    std::vector<std::string> unsetEnv;
    // The command (its whole process group) is killed with SIGKILL after this.
    std::chrono::milliseconds timeout{std::chrono::seconds(30)};
    // Written to the command's stdin, which is then closed.
    std::string input;
};

struct RunResult {
    int exitCode = -1;     // exit status; -1 if killed by a signal or not run
    int termSignal = 0;    // the signal that killed it, 0 if it exited
    bool timedOut = false; // killed because the timeout expired
    std::string out;       // stdout
    std::string err;       // stderr

    [[nodiscard]] bool ok() const noexcept { return exitCode == 0 && !timedOut; }
    // "exit 1" / "killed by signal 9" / "timed out", and stderr: for assertion messages.
    [[nodiscard]] std::string describe() const;
};

// Runs argv (argv[0] searched in PATH; no shell) in a process group of its own
// and waits for it, capturing stdout and stderr. It stops reading once the
// command has exited, even if a process it left behind holds its pipes.
RunResult run(const std::vector<std::string>& argv, const RunOptions& options = {});
RunResult run(const std::vector<std::string>& argv, const Env& env,
              std::chrono::milliseconds timeout = std::chrono::seconds(30));

// Reverses run()'s "export NAME=VALUE" quoting: '...', "...", backslashes.
std::string shellUnquote(std::string_view value);

// True if pid names a live process (not a zombie).
bool processAlive(pid_t pid);

class Sandbox {
public:
    struct Options {
        // tracectld to run (--daemon); empty: $TRACECTLD, else the script's default.
        std::string daemon;
        // false: --no-daemon, the rest of the stack only.
        bool startDaemon = true;
        // true: --activation, tracectld is not started but its per-user
        // units (socket + service) and the session bus activation file are
        // installed in the user manager, which starts it on first use.
        bool activation = false;
        // Apply the exported variables to this process's environment.
        bool applyEnvironment = true;
        // Bound on "scripts/sandbox up".
        std::chrono::milliseconds upTimeout{std::chrono::seconds(60)};
    };

    // Brings the stack up; throws std::runtime_error (with the script's
    // stderr) if it does not come up.
    Sandbox();
    explicit Sandbox(Options options);
    // Takes the stack down (see down()); reports problems on stderr.
    ~Sandbox();

    Sandbox(const Sandbox&) = delete;
    Sandbox& operator=(const Sandbox&) = delete;
    Sandbox(Sandbox&&) = delete;
    Sandbox& operator=(Sandbox&&) = delete;

    // Like the constructor, but returns nullptr and sets error on failure
    // (for SetUpTestSuite, where an exception would be hard to report).
    static std::unique_ptr<Sandbox> tryCreate(std::string& error, Options options);
    static std::unique_ptr<Sandbox> tryCreate(std::string& error);

    [[nodiscard]] const std::string& dir() const noexcept { return dir_; }
    // The variables "up" exported (DBUS_SYSTEM_BUS_ADDRESS, ...).
    [[nodiscard]] const Env& env() const noexcept { return env_; }
    [[nodiscard]] std::string busAddress() const;     // the private system bus
    [[nodiscard]] std::string systemdAddress() const; // the manager's private socket
    [[nodiscard]] std::string userBusAddress() const; // the manager's user bus (for busctl)
    [[nodiscard]] std::string runtimeDir() const;     // XDG_RUNTIME_DIR of the manager
    [[nodiscard]] std::string unitDir() const;        // where user units are loaded from
    [[nodiscard]] std::string lttngHome() const;
    [[nodiscard]] std::string logPath(std::string_view component) const;
    [[nodiscard]] std::string readLog(std::string_view component) const;

    // Processes of the stack as recorded by the script: name -> pid
    // (dbus-daemon, polkitd, systemd, tracectld, watcher).
    [[nodiscard]] std::map<std::string, pid_t> pids() const;
    // The pid of the last tracectld started (0 if none was), running or not.
    [[nodiscard]] pid_t daemonPid() const;
    // Does that tracectld run? Use this, not kill(daemonPid(), 0): a killed
    // daemon can stay a zombie for a while (it is reparented to PID 1, which
    // reaps lazily on the build VMs) and kill(pid, 0) succeeds on zombies.
    [[nodiscard]] bool daemonRunning() const;

    // Stops tracectld: SIGTERM, bounded wait, SIGKILL (signal 0), or sends
    // signal and waits for it to die.
    RunResult stopDaemon(int signal = 0);
    // Starts tracectld again and waits for its bus name.
    RunResult startDaemon();
    RunResult restartDaemon();

    // busctl --address=<bus> args...
    [[nodiscard]] RunResult busctl(const std::vector<std::string>& args) const;
    // systemctl --user args... against the sandbox's manager.
    [[nodiscard]] RunResult systemctl(const std::vector<std::string>& args) const;
    // scripts/sandbox args...
    [[nodiscard]] RunResult script(const std::vector<std::string>& args) const;

    // Takes the stack down and checks nothing is left; idempotent. The
    // directory is removed afterwards unless down failed or
    // TRACECTL_SANDBOX_KEEP is set.
    RunResult down();
    [[nodiscard]] bool isDown() const noexcept { return down_; }

    // Path of scripts/sandbox (see the environment above).
    static std::string scriptPath();

private:
    void applyEnvironment();
    void restoreEnvironment();

    Options options_;
    std::string dir_;
    Env env_;
    std::vector<std::pair<std::string, std::optional<std::string>>> savedEnv_;
    bool down_ = false;
    bool keepDir_ = false;
};

} // namespace tracectl::test
