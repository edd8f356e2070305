// SPDX-License-Identifier: LGPL-2.1-or-later

#include "sandbox.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <sstream>
#include <stdexcept>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <system_error>
#include <unistd.h>

namespace tracectl::test {

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

[[noreturn]] void throwErrno(const std::string& what) {
    throw std::system_error(errno, std::generic_category(), what);
}

class UniqueFd {
public:
    UniqueFd() noexcept = default;
    explicit UniqueFd(int fd) noexcept : fd_(fd) {}
    ~UniqueFd() { reset(); }
    UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    UniqueFd& operator=(UniqueFd&& other) noexcept {
        if (this != &other) {
            reset(std::exchange(other.fd_, -1));
        }
        return *this;
    }
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;

    [[nodiscard]] int get() const noexcept { return fd_; }
    [[nodiscard]] bool valid() const noexcept { return fd_ >= 0; }
    void reset(int fd = -1) noexcept {
        if (fd_ >= 0) {
            ::close(fd_);
        }
        fd_ = fd;
    }

private:
    int fd_ = -1;
};

struct Pipe {
    UniqueFd read;
    UniqueFd write;

    Pipe() {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0) {
            throwErrno("pipe2");
        }
        read.reset(fds[0]);
        write.reset(fds[1]);
    }
};

void setNonBlocking(int fd) {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
        throwErrno("fcntl(O_NONBLOCK)");
    }
}

class FileActions {
public:
    FileActions() {
        if (int rc = ::posix_spawn_file_actions_init(&actions_); rc != 0) {
            throw std::system_error(rc, std::generic_category(), "posix_spawn_file_actions_init");
        }
    }
    ~FileActions() { ::posix_spawn_file_actions_destroy(&actions_); }
    FileActions(const FileActions&) = delete;
    FileActions& operator=(const FileActions&) = delete;

    void dup2(int from, int to) {
        if (int rc = ::posix_spawn_file_actions_adddup2(&actions_, from, to); rc != 0) {
            throw std::system_error(rc, std::generic_category(),
                                    "posix_spawn_file_actions_adddup2");
        }
    }
    [[nodiscard]] const posix_spawn_file_actions_t* get() const noexcept { return &actions_; }

private:
    posix_spawn_file_actions_t actions_{};
};

class SpawnAttr {
public:
    SpawnAttr() {
        if (int rc = ::posix_spawnattr_init(&attr_); rc != 0) {
            throw std::system_error(rc, std::generic_category(), "posix_spawnattr_init");
        }
        // A process group of its own (killed as a whole on timeout), no
        // blocked signals, default dispositions for the usual ones.
        sigset_t empty;
        sigemptyset(&empty);
        sigset_t defaults;
        sigemptyset(&defaults);
        for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD, SIGUSR1, SIGUSR2}) {
            sigaddset(&defaults, sig);
        }
        const short flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
        if (::posix_spawnattr_setflags(&attr_, flags) != 0 ||
            ::posix_spawnattr_setpgroup(&attr_, 0) != 0 ||
            ::posix_spawnattr_setsigmask(&attr_, &empty) != 0 ||
            ::posix_spawnattr_setsigdefault(&attr_, &defaults) != 0) {
            ::posix_spawnattr_destroy(&attr_);
            throw std::runtime_error("posix_spawnattr setup failed");
        }
    }
    ~SpawnAttr() { ::posix_spawnattr_destroy(&attr_); }
    SpawnAttr(const SpawnAttr&) = delete;
    SpawnAttr& operator=(const SpawnAttr&) = delete;

    [[nodiscard]] const posix_spawnattr_t* get() const noexcept { return &attr_; }

private:
    posix_spawnattr_t attr_{};
};

// A spawned child: killed (with its process group) and reaped if still
// running when this goes away.
class Child {
public:
    explicit Child(pid_t pid) noexcept : pid_(pid) {}
    ~Child() {
        if (pid_ > 0 && !reaped_) {
            ::kill(-pid_, SIGKILL);
            ::kill(pid_, SIGKILL);
            int status = 0;
            while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
            }
        }
    }
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;

    [[nodiscard]] pid_t pid() const noexcept { return pid_; }
    void killGroup() const noexcept {
        ::kill(-pid_, SIGKILL);
        ::kill(pid_, SIGKILL);
    }
    // Has it exited (without reaping it)?
    [[nodiscard]] bool exited() const {
        siginfo_t info{};
        if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
            return errno != EINTR;
        }
        return info.si_pid == pid_;
    }
    int wait() {
        int status = 0;
        while (::waitpid(pid_, &status, 0) < 0) {
            if (errno != EINTR) {
                throwErrno("waitpid");
            }
        }
        reaped_ = true;
        return status;
    }

private:
    pid_t pid_;
    bool reaped_ = false;
};

// Blocks SIGPIPE in this thread while alive (writing to a child's stdin after
// it exited must fail with EPIPE, not kill the test); a SIGPIPE raised
// meanwhile is consumed.
class SigpipeBlocker {
public:
    SigpipeBlocker() noexcept {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGPIPE);
        ::pthread_sigmask(SIG_BLOCK, &set, &previous_);
    }
    ~SigpipeBlocker() {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGPIPE);
        sigset_t pending;
        if (::sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1 &&
            sigismember(&previous_, SIGPIPE) == 0) {
            const timespec zero{};
            ::sigtimedwait(&set, nullptr, &zero);
        }
        ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
    }
    SigpipeBlocker(const SigpipeBlocker&) = delete;
    SigpipeBlocker& operator=(const SigpipeBlocker&) = delete;

private:
    sigset_t previous_{};
};

UniqueFd pidfdOpen(pid_t pid) {
#ifdef SYS_pidfd_open
    const long fd = ::syscall(SYS_pidfd_open, pid, 0);
    if (fd >= 0) {
        return UniqueFd(static_cast<int>(fd));
    }
#else
    (void)pid;
#endif
    return UniqueFd();
}

// Reads what is available; returns false at end of file.
bool drain(int fd, std::string& into) {
    char buffer[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n > 0) {
            into.append(buffer, static_cast<std::size_t>(n));
            continue;
        }
        if (n == 0) {
            return false;
        }
        if (errno == EINTR) {
            continue;
        }
        return errno == EAGAIN || errno == EWOULDBLOCK;
    }
}

std::vector<std::string> buildEnvironment(const RunOptions& options) {
    std::map<std::string, std::string> merged;
    for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
        std::string_view kv(*entry);
        const auto eq = kv.find('=');
        if (eq != std::string_view::npos) {
            merged.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
        }
    }
    for (const auto& name : options.unsetEnv) {
        merged.erase(name);
    }
    for (const auto& [name, value] : options.env) {
        merged[name] = value;
    }
    std::vector<std::string> result;
    result.reserve(merged.size());
    for (const auto& [name, value] : merged) {
        result.push_back(name + "=" + value);
    }
    return result;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
    std::vector<char*> result;
    result.reserve(strings.size() + 1);
    for (auto& s : strings) {
        result.push_back(s.data());
    }
    result.push_back(nullptr);
    return result;
}

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

std::optional<std::string> getEnv(const char* name) {
    const char* value = std::getenv(name);
    if (value == nullptr) {
        return std::nullopt;
    }
    return std::string(value);
}

std::string makeTempDir() {
    std::string parent = getEnv("TRACECTL_SANDBOX_TMPDIR").value_or("/tmp");
    std::string templ = parent + "/tracectl-sb-XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) {
        throwErrno("mkdtemp " + templ);
    }
    return templ;
}

} // namespace

std::string RunResult::describe() const {
    std::ostringstream s;
    if (timedOut) {
        s << "timed out";
    } else if (termSignal != 0) {
        s << "killed by signal " << termSignal;
    } else {
        s << "exit " << exitCode;
    }
    if (!err.empty()) {
        s << "; stderr:\n" << err;
    }
    return s.str();
}

RunResult run(const std::vector<std::string>& argv, const RunOptions& options) {
    if (argv.empty()) {
        throw std::invalid_argument("run: empty argv");
    }
    std::vector<std::string> args = argv;
    std::vector<char*> argPointers = pointers(args);
    std::vector<std::string> envStrings = buildEnvironment(options);
    std::vector<char*> envPointers = pointers(envStrings);

    const SigpipeBlocker sigpipeBlocker;
    Pipe in;
    Pipe out;
    Pipe err;
    FileActions actions;
    actions.dup2(in.read.get(), STDIN_FILENO);
    actions.dup2(out.write.get(), STDOUT_FILENO);
    actions.dup2(err.write.get(), STDERR_FILENO);
    SpawnAttr attr;

    pid_t pid = 0;
    if (int rc = ::posix_spawnp(&pid, args[0].c_str(), actions.get(), attr.get(),
                                argPointers.data(), envPointers.data());
        rc != 0) {
        RunResult failed;
        failed.exitCode = 127;
        failed.err = "cannot run " + args[0] + ": " + std::strerror(rc) + "\n";
        return failed;
    }
    Child child(pid);
    in.read.reset();
    out.write.reset();
    err.write.reset();

    UniqueFd pidfd = pidfdOpen(pid);
    setNonBlocking(in.write.get());
    setNonBlocking(out.read.get());
    setNonBlocking(err.read.get());
    std::size_t written = 0;
    if (options.input.empty()) {
        in.write.reset();
    }

    RunResult result;
    const auto deadline = Clock::now() + options.timeout;
    bool exited = false;
    while (!exited) {
        const auto now = Clock::now();
        if (now >= deadline) {
            result.timedOut = true;
            child.killGroup();
            break;
        }
        std::vector<pollfd> fds;
        if (out.read.valid()) {
            fds.push_back({out.read.get(), POLLIN, 0});
        }
        if (err.read.valid()) {
            fds.push_back({err.read.get(), POLLIN, 0});
        }
        if (in.write.valid()) {
            fds.push_back({in.write.get(), POLLOUT, 0});
        }
        if (pidfd.valid()) {
            fds.push_back({pidfd.get(), POLLIN, 0});
        }
        auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
        if (!pidfd.valid()) {
            wait = std::min(wait, std::chrono::milliseconds(10)); // poll for the exit
        }
        const int n = ::poll(fds.data(), fds.size(), static_cast<int>(wait.count()) + 1);
        if (n < 0 && errno != EINTR) {
            throwErrno("poll");
        }
        for (const auto& p : fds) {
            if (p.revents == 0) {
                continue;
            }
            if (p.fd == out.read.get() && !drain(p.fd, result.out)) {
                out.read.reset();
            } else if (p.fd == err.read.get() && !drain(p.fd, result.err)) {
                err.read.reset();
            } else if (p.fd == in.write.get()) {
                const ssize_t w =
                    ::write(p.fd, options.input.data() + written, options.input.size() - written);
                if (w > 0) {
                    written += static_cast<std::size_t>(w);
                }
                if ((w < 0 && errno != EAGAIN && errno != EINTR) ||
                    written == options.input.size() || (p.revents & (POLLERR | POLLHUP)) != 0) {
                    in.write.reset();
                }
            }
        }
        exited = child.exited();
    }
    // Whatever the child wrote before it exited is in the pipes now; do not
    // wait for end of file (something it started may hold the pipes).
    if (out.read.valid()) {
        drain(out.read.get(), result.out);
    }
    if (err.read.valid()) {
        drain(err.read.get(), result.err);
    }
    const int status = child.wait();
    if (WIFEXITED(status)) {
        result.exitCode = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        result.termSignal = WTERMSIG(status);
    }
    return result;
}

RunResult run(const std::vector<std::string>& argv, const Env& env,
              std::chrono::milliseconds timeout) {
    RunOptions options;
    options.env = env;
    options.timeout = timeout;
    return run(argv, options);
}

std::string shellUnquote(std::string_view value) {
    std::string result;
    for (std::size_t i = 0; i < value.size(); ++i) {
        const char c = value[i];
        if (c == '\'') {
            const auto end = value.find('\'', i + 1);
            if (end == std::string_view::npos) {
                throw std::invalid_argument("unterminated ' in " + std::string(value));
            }
            result.append(value.substr(i + 1, end - i - 1));
            i = end;
        } else if (c == '"') {
            for (++i; i < value.size() && value[i] != '"'; ++i) {
                if (value[i] == '\\' && i + 1 < value.size() &&
                    std::string_view("\"\\$`").find(value[i + 1]) != std::string_view::npos) {
                    ++i;
                }
                result.push_back(value[i]);
            }
            if (i >= value.size()) {
                throw std::invalid_argument("unterminated \" in " + std::string(value));
            }
        } else if (c == '\\' && i + 1 < value.size()) {
            result.push_back(value[++i]);
        } else {
            result.push_back(c);
        }
    }
    return result;
}

bool processAlive(pid_t pid) {
    if (pid <= 0) {
        return false;
    }
    const std::string stat = readFile("/proc/" + std::to_string(pid) + "/stat");
    const auto paren = stat.rfind(')');
    if (paren == std::string::npos || paren + 2 >= stat.size()) {
        return false;
    }
    const char state = stat[paren + 2];
    return state != 'Z' && state != 'X';
}

// --- Sandbox -----------------------------------------------------------------

std::string Sandbox::scriptPath() {
    if (auto path = getEnv("TRACECTL_SANDBOX_SCRIPT")) {
        return *path;
    }
    if (auto root = getEnv("TRACECTL_SOURCE_ROOT")) {
        return *root + "/scripts/sandbox";
    }
    throw std::runtime_error("neither TRACECTL_SANDBOX_SCRIPT (path of scripts/sandbox) nor "
                             "TRACECTL_SOURCE_ROOT is set");
}

Sandbox::Sandbox() : Sandbox(Options{}) {}

Sandbox::Sandbox(Options options) : options_(std::move(options)), dir_(makeTempDir()) {
    try {
        std::vector<std::string> argv = {scriptPath(), "up", dir_, "--owner-pid",
                                         std::to_string(::getpid())};
        if (options_.activation) {
            argv.emplace_back("--activation");
            if (!options_.daemon.empty()) {
                argv.emplace_back("--daemon");
                argv.push_back(options_.daemon);
            }
        } else if (!options_.startDaemon) {
            argv.emplace_back("--no-daemon");
        } else if (!options_.daemon.empty()) {
            argv.emplace_back("--daemon");
            argv.push_back(options_.daemon);
        }
        RunOptions runOptions;
        runOptions.timeout = options_.upTimeout;
        const RunResult up = run(argv, runOptions);
        if (!up.ok()) {
            throw std::runtime_error("scripts/sandbox up " + dir_ + " failed (" + up.describe() +
                                     ")");
        }
        std::istringstream lines(up.out);
        std::string line;
        while (std::getline(lines, line)) {
            if (line.empty()) {
                continue;
            }
            constexpr std::string_view kPrefix = "export ";
            const auto eq = line.find('=');
            if (line.rfind(kPrefix, 0) != 0 || eq == std::string::npos) {
                throw std::runtime_error("scripts/sandbox up: unexpected output line: " + line);
            }
            env_[line.substr(kPrefix.size(), eq - kPrefix.size())] =
                shellUnquote(line.substr(eq + 1));
        }
        for (const char* name : {"DBUS_SYSTEM_BUS_ADDRESS", "TRACECTL_SYSTEMD_ADDRESS",
                                 "LTTNG_HOME", "TRACECTL_SANDBOX"}) {
            if (env_.count(name) == 0) {
                throw std::runtime_error(std::string("scripts/sandbox up did not export ") + name);
            }
        }
        // Where tracectl keeps the current session when XDG_RUNTIME_DIR is
        // unset (tracectl(1) CURRENT SESSION): the sandbox's, not the
        // user's ~/.config.
        env_.emplace("XDG_CONFIG_HOME", dir_ + "/cli-config");
    } catch (...) {
        keepDir_ = true; // for its logs
        down();
        throw;
    }
    if (options_.applyEnvironment) {
        applyEnvironment();
    }
}

Sandbox::~Sandbox() {
    try {
        RunResult result = down();
        if (!result.ok()) {
            std::cerr << "tracectl::test::Sandbox: down " << dir_ << ": " << result.describe()
                      << "\n";
        }
    } catch (const std::exception& e) {
        std::cerr << "tracectl::test::Sandbox: down " << dir_ << ": " << e.what() << "\n";
    }
}

std::unique_ptr<Sandbox> Sandbox::tryCreate(std::string& error, Options options) {
    try {
        return std::make_unique<Sandbox>(std::move(options));
    } catch (const std::exception& e) {
        error = e.what();
        return nullptr;
    }
}

std::unique_ptr<Sandbox> Sandbox::tryCreate(std::string& error) {
    return tryCreate(error, Options{});
}

void Sandbox::applyEnvironment() {
    for (const auto& [name, value] : env_) {
        savedEnv_.emplace_back(name, getEnv(name.c_str()));
        if (::setenv(name.c_str(), value.c_str(), 1) != 0) {
            throwErrno("setenv " + name);
        }
    }
}

void Sandbox::restoreEnvironment() {
    for (auto it = savedEnv_.rbegin(); it != savedEnv_.rend(); ++it) {
        if (it->second) {
            ::setenv(it->first.c_str(), it->second->c_str(), 1);
        } else {
            ::unsetenv(it->first.c_str());
        }
    }
    savedEnv_.clear();
}

RunResult Sandbox::down() {
    if (down_) {
        RunResult nothing;
        nothing.exitCode = 0;
        return nothing;
    }
    RunOptions runOptions;
    runOptions.timeout = 60s;
    RunResult result = run({scriptPath(), "down", dir_}, runOptions);
    down_ = true;
    restoreEnvironment();
    if (keepDir_ || !result.ok() || getEnv("TRACECTL_SANDBOX_KEEP")) {
        std::cerr << "tracectl::test::Sandbox: keeping " << dir_ << " (logs in " << dir_
                  << "/log)\n";
    } else {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    return result;
}

std::string Sandbox::busAddress() const {
    return env_.at("DBUS_SYSTEM_BUS_ADDRESS");
}

std::string Sandbox::systemdAddress() const {
    return env_.at("TRACECTL_SYSTEMD_ADDRESS");
}

std::string Sandbox::userBusAddress() const {
    return "unix:path=" + runtimeDir() + "/bus";
}

std::string Sandbox::runtimeDir() const {
    return dir_ + "/xdg";
}

std::string Sandbox::unitDir() const {
    return dir_ + "/config/systemd/user";
}

std::string Sandbox::lttngHome() const {
    return env_.at("LTTNG_HOME");
}

std::string Sandbox::logPath(std::string_view component) const {
    return dir_ + "/log/" + std::string(component) + ".log";
}

std::string Sandbox::readLog(std::string_view component) const {
    return readFile(logPath(component));
}

std::map<std::string, pid_t> Sandbox::pids() const {
    std::map<std::string, pid_t> result;
    std::istringstream lines(readFile(dir_ + "/pids"));
    std::string name;
    long pid = 0;
    std::string start;
    while (lines >> name >> pid >> start) {
        result[name] = static_cast<pid_t>(pid);
    }
    return result;
}

pid_t Sandbox::daemonPid() const {
    const auto all = pids();
    const auto it = all.find("tracectld");
    return it == all.end() ? 0 : it->second;
}

bool Sandbox::daemonRunning() const {
    // The script records the start time too, so a recycled pid does not count.
    std::istringstream lines(readFile(dir_ + "/pids"));
    std::string name;
    long pid = 0;
    std::string start;
    while (lines >> name >> pid >> start) {
        if (name != "tracectld") {
            continue;
        }
        const std::string stat = readFile("/proc/" + std::to_string(pid) + "/stat");
        const auto paren = stat.rfind(')');
        if (paren == std::string::npos) {
            return false;
        }
        std::istringstream fields(stat.substr(paren + 2));
        std::string field;
        std::string state;
        for (int i = 3; i <= 22 && fields >> field; ++i) {
            if (i == 3) {
                state = field;
            }
            if (i == 22) {
                return state != "Z" && state != "X" && field == start;
            }
        }
        return false;
    }
    return false;
}

RunResult Sandbox::stopDaemon(int signal) {
    if (signal == 0) {
        return script({"daemon-stop", dir_});
    }
    return script({"daemon-stop", dir_, "--signal", std::to_string(signal)});
}

RunResult Sandbox::startDaemon() {
    std::vector<std::string> args = {"daemon-start", dir_};
    if (!options_.daemon.empty()) {
        args.emplace_back("--daemon");
        args.push_back(options_.daemon);
    }
    return script(args);
}

RunResult Sandbox::restartDaemon() {
    RunResult stopped = stopDaemon();
    if (!stopped.ok()) {
        return stopped;
    }
    return startDaemon();
}

RunResult Sandbox::busctl(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {"busctl", "--address=" + busAddress()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
}

RunResult Sandbox::systemctl(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {"systemctl", "--user", "--no-pager"};
    argv.insert(argv.end(), args.begin(), args.end());
    RunOptions runOptions;
    runOptions.env = {{"XDG_RUNTIME_DIR", runtimeDir()}};
    runOptions.unsetEnv = {"DBUS_SESSION_BUS_ADDRESS"};
    return run(argv, runOptions);
}

RunResult Sandbox::script(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {scriptPath()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
}

} // namespace tracectl::test
