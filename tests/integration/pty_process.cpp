#include "pty_process.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <pty.h>
#include <stdexcept>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace tracectl::test {

PtyProcess::PtyProcess(const std::vector<std::string>& argv,
                       const std::vector<std::string>& extraEnv, unsigned short rows,
                       unsigned short columns) {
    winsize size{};
    size.ws_row = rows;
    size.ws_col = columns;
    if (openpty(&master_, &slave_, nullptr, nullptr, &size) != 0)
        throw std::runtime_error(std::string("openpty: ") + std::strerror(errno));
    fcntl(master_, F_SETFD, FD_CLOEXEC);
    fcntl(slave_, F_SETFD, FD_CLOEXEC);
    fcntl(master_, F_SETFL, fcntl(master_, F_GETFL) | O_NONBLOCK);
    tcgetattr(slave_, &initial_);

    // Everything the child needs is made before fork: after it, only async-signal-safe calls.
    std::vector<std::string> args = argv;
    std::vector<char*> argp;
    for (auto& a : args)
        argp.push_back(a.data());
    argp.push_back(nullptr);
    // The test's environment, less what extraEnv replaces, plus extraEnv.
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string entry = *e;
        const std::string name = entry.substr(0, entry.find('='));
        bool replaced = false;
        for (const std::string& extra : extraEnv)
            replaced = replaced || extra.substr(0, extra.find('=')) == name;
        if (!replaced)
            env.push_back(entry);
    }
    env.insert(env.end(), extraEnv.begin(), extraEnv.end());
    std::vector<char*> envp;
    for (auto& e : env)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
        setsid();
        ioctl(slave_, TIOCSCTTY, 0);
        dup2(slave_, STDIN_FILENO);
        dup2(slave_, STDOUT_FILENO);
        dup2(slave_, STDERR_FILENO);
        execvpe(argp[0], argp.data(), envp.data());
        _exit(127);
    }
    if (pid_ < 0) {
        const int error = errno;
        ::close(master_);
        ::close(slave_);
        throw std::runtime_error(std::string("fork: ") + std::strerror(error));
    }
}

PtyProcess::~PtyProcess() {
    if (!reaped_) {
        ::kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
    ::close(master_);
    ::close(slave_);
}

void PtyProcess::readAvailable() {
    char buffer[4096];
    for (;;) {
        const ssize_t n = ::read(master_, buffer, sizeof buffer);
        if (n <= 0)
            return; // EAGAIN: nothing more now
        output_.append(buffer, static_cast<std::size_t>(n));
    }
}

void PtyProcess::type(const std::string& keys) {
    std::size_t done = 0;
    while (done < keys.size()) {
        const ssize_t n = ::write(master_, keys.data() + done, keys.size() - done);
        if (n < 0 && errno != EINTR && errno != EAGAIN)
            throw std::runtime_error(std::string("write to pty: ") + std::strerror(errno));
        if (n > 0)
            done += static_cast<std::size_t>(n);
    }
}

termios PtyProcess::settingsNow() const {
    termios now{};
    tcgetattr(slave_, &now);
    return now;
}

void PtyProcess::kill(int sig) {
    if (!reaped_)
        ::kill(pid_, sig);
}

int PtyProcess::wait(int timeoutMs) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    for (;;) {
        readAvailable();
        int status = 0;
        if (!reaped_ && waitpid(pid_, &status, WNOHANG) == pid_) {
            reaped_ = true;
            readAvailable();
            return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        }
        if (reaped_ || std::chrono::steady_clock::now() >= deadline)
            return -1;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

} // namespace tracectl::test
