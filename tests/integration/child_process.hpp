// A process a test starts and keeps running in the background (e.g. an
// instrumented app), killed and reaped when the owner goes away.
#pragma once

#include <csignal>
#include <string>
#include <sys/types.h>
#include <vector>

namespace tracectl::test {

class ChildProcess {
public:
    /// Starts argv (argv[0] searched in PATH) with the test's environment
    /// plus `extraEnv` ("NAME=VALUE"), stdout and stderr to `logPath`
    /// (appended). Throws std::runtime_error if it cannot start.
    ChildProcess(const std::vector<std::string>& argv, const std::vector<std::string>& extraEnv,
                 const std::string& logPath);
    /// Sends SIGKILL if still running, and reaps.
    ~ChildProcess();
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    pid_t pid() const noexcept { return pid_; }
    /// Waits up to `timeoutMs` for the process to exit; returns its exit
    /// status, or -1 if it is still running (or died of a signal).
    int wait(int timeoutMs);
    void kill(int sig = SIGKILL);

private:
    pid_t pid_ = -1;
    bool reaped_ = false;
};

} // namespace tracectl::test
