// A process a test runs on a pseudo-terminal (as a person would in a terminal emulator): the
// test writes keys to it and reads what it draws. Killed and reaped when the owner goes away.
#pragma once

#include <string>
#include <sys/types.h>
#include <termios.h>
#include <vector>

namespace tracectl::test {

class PtyProcess {
public:
    /// Starts argv (argv[0] searched in PATH) with the test's environment plus `extraEnv`
    /// ("NAME=VALUE") in a session of its own whose controlling terminal, standard input,
    /// output and error are a new pty of `rows` x `columns`. Throws std::runtime_error.
    PtyProcess(const std::vector<std::string>& argv, const std::vector<std::string>& extraEnv,
               unsigned short rows = 40, unsigned short columns = 140);
    /// SIGKILL if still running, reaps, closes both ends of the pty.
    ~PtyProcess();
    PtyProcess(const PtyProcess&) = delete;
    PtyProcess& operator=(const PtyProcess&) = delete;

    pid_t pid() const noexcept { return pid_; }

    /// Appends what the process wrote since the last call to output() (never blocks).
    void readAvailable();
    /// Everything read so far.
    const std::string& output() const noexcept { return output_; }

    /// Writes `keys` as typed.
    void type(const std::string& keys);

    /// The terminal's settings now (the pty's, as the process left them), and as they were
    /// before the process started.
    termios settingsNow() const;
    const termios& settingsAtStart() const noexcept { return initial_; }

    /// Waits up to `timeoutMs` for the process to exit (reading its output meanwhile); returns
    /// its exit status, or -1 if it is still running or died of a signal.
    int wait(int timeoutMs);
    void kill(int sig);

private:
    int master_ = -1;
    int slave_ = -1; // kept open by the test: the settings stay readable after the exit
    pid_t pid_ = -1;
    bool reaped_ = false;
    termios initial_{};
    std::string output_;
};

} // namespace tracectl::test
