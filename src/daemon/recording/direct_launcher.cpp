// ConsumerLauncher by fork/exec, for machines where no systemd manager
// answers: the same protocol over the same socketpair, without the unit's
// sandboxing. Each child's exit is seen through its pidfd (pidfd_open(2))
// on the loop; a stop is SIGTERM, then SIGKILL from a loop timer.
#include "common/error.hpp"
#include "common/lifetime.hpp"
#include "common/log.hpp"
#include "consumer_launcher.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <grp.h>
#include <map>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tracectl {

namespace {

/// How a waitpid(2) status ended a process, in the session's words.
std::string describeStatus(int status) {
    if (WIFEXITED(status))
        return "exited with status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status))
        return std::string("killed by signal ") + strsignal(WTERMSIG(status));
    return "ended";
}

class DirectLauncher final : public ConsumerLauncher {
public:
    DirectLauncher(EventLoop& loop, LauncherTimeouts timeouts) : loop_(loop), timeouts_(timeouts) {}

    ~DirectLauncher() override {
        // Nothing is called back any more; the children are not left behind.
        for (auto& [unit, c] : children_) {
            ::kill(c->pid, SIGKILL);
            waitpid(c->pid, nullptr, 0);
        }
    }

    const char* kind() const noexcept override { return "direct"; }

    void start(const ConsumerSpec& spec, UniqueFd stdinSocket, Done done) override {
        std::vector<std::string> argv{spec.binary};
        argv.insert(argv.end(), spec.args.begin(), spec.args.end());
        std::vector<char*> argp;
        for (auto& a : argv)
            argp.push_back(a.data());
        argp.push_back(nullptr);
        const pid_t pid = fork();
        if (pid < 0)
            return later(std::move(done),
                         Error(ErrorCode::Failed, std::string("fork: ") + std::strerror(errno)));
        if (pid == 0) {
            // Child: only async-signal-safe calls until exec.
            if (dup2(stdinSocket.get(), STDIN_FILENO) < 0)
                _exit(127);
            const int devnull = open("/dev/null", O_WRONLY);
            if (devnull >= 0)
                dup2(devnull, STDOUT_FILENO);
            if (setgroups(0, nullptr) < 0 && getuid() == 0)
                _exit(127);
            if (setgid(spec.gid) < 0 || setuid(spec.uid) < 0)
                _exit(127);
            execv(argp[0], argp.data());
            _exit(127);
        }
        auto child = std::make_unique<Child>();
        child->owner = this;
        child->unit = spec.unitName;
        child->pid = pid;
        const long fd = syscall(SYS_pidfd_open, pid, 0);
        if (fd < 0) {
            const int e = errno;
            ::kill(pid, SIGKILL);
            waitpid(pid, nullptr, 0);
            return later(std::move(done),
                         Error(ErrorCode::Failed, std::string("pidfd_open: ") + std::strerror(e)));
        }
        child->pidfd = UniqueFd(static_cast<int>(fd));
        sd_event_source* s = nullptr;
        const int r =
            sd_event_add_io(loop_.get(), &s, child->pidfd.get(), EPOLLIN, &onExit, child.get());
        if (r < 0) {
            ::kill(pid, SIGKILL);
            waitpid(pid, nullptr, 0);
            return later(std::move(done), Error(ErrorCode::Failed,
                                                std::string("watching pid: ") + std::strerror(-r)));
        }
        child->watch.reset(s);
        ended_.erase(spec.unitName);
        children_[spec.unitName] = std::move(child);
        later(std::move(done), std::nullopt);
    }

    void stop(const ConsumerSpec& spec, Done done) override {
        ended_.erase(spec.unitName);
        const auto it = children_.find(spec.unitName);
        if (it == children_.end())
            return later(std::move(done), std::nullopt);
        Child& c = *it->second;
        if (done)
            c.stopped.push_back(std::move(done));
        terminate(c);
    }

    void whenEnded(const ConsumerSpec& spec, std::chrono::milliseconds timeout,
                   Ended ended) override {
        const auto it = children_.find(spec.unitName);
        if (it == children_.end()) {
            const auto e = ended_.find(spec.unitName);
            std::string reason =
                e != ended_.end() ? e->second : std::string("not started by this daemon");
            if (e != ended_.end())
                ended_.erase(e);
            loop_.defer(lifetime_.guard([ended = std::move(ended), reason] { ended(reason); }));
            return;
        }
        Child& c = *it->second;
        c.ended.push_back(std::move(ended));
        if (!c.endedDeadline)
            c.endedDeadline = loop_.addTimer(timeout, [this, unit = spec.unitName] {
                const auto live = children_.find(unit);
                if (live == children_.end())
                    return;
                Child& still = *live->second;
                still.endedDeadline.reset();
                // Still running: whoever waited learns so, and it is stopped.
                for (auto& e : std::exchange(still.ended, {}))
                    e(std::nullopt);
                if (const auto again = children_.find(unit); again != children_.end())
                    terminate(*again->second);
            });
    }

private:
    struct Child {
        DirectLauncher* owner = nullptr;
        std::string unit;
        pid_t pid = -1;
        UniqueFd pidfd;
        EventSourcePtr watch;         ///< pidfd readable: it exited
        EventSourcePtr killTimer;     ///< SIGKILL, once SIGTERM was not enough
        EventSourcePtr endedDeadline; ///< whenEnded()'s bound
        bool terminating = false;     ///< SIGTERM sent
        std::vector<Done> stopped;    ///< stop() waiters
        std::vector<Ended> ended;     ///< whenEnded() waiters
    };

    /// Calls `done` with `e` from the loop, unless the launcher is gone by then.
    void later(Done done, std::optional<Error> e) {
        if (done)
            loop_.defer(lifetime_.guard([done = std::move(done), e = std::move(e)] { done(e); }));
    }

    void terminate(Child& c) {
        if (c.terminating)
            return;
        c.terminating = true;
        ::kill(c.pid, SIGTERM);
        c.killTimer = loop_.addTimer(timeouts_.job, [&c] {
            log::warning(c.unit + " did not end on SIGTERM: killed");
            ::kill(c.pid, SIGKILL);
        });
    }

    static int onExit(sd_event_source*, int, uint32_t, void* userdata) {
        auto& c = *static_cast<Child*>(userdata);
        c.owner->reap(c.unit);
        return 0;
    }

    void reap(const std::string& unit) {
        const auto it = children_.find(unit);
        if (it == children_.end())
            return;
        int status = 0;
        if (waitpid(it->second->pid, &status, WNOHANG) != it->second->pid)
            return; // not yet (a pidfd is readable once the process is a zombie)
        std::unique_ptr<Child> c = std::move(it->second);
        children_.erase(it);
        const std::string reason = describeStatus(status);
        if (c->ended.empty() && c->stopped.empty())
            ended_[unit] = reason; // for a later whenEnded()
        for (auto& e : std::exchange(c->ended, {}))
            e(reason);
        for (auto& d : std::exchange(c->stopped, {}))
            d(std::nullopt);
    }

    EventLoop& loop_;
    LauncherTimeouts timeouts_;
    std::map<std::string, std::unique_ptr<Child>> children_;
    std::map<std::string, std::string> ended_; ///< unit name -> how its process ended
    Lifetime lifetime_;                        ///< last: gone first
};

} // namespace

std::unique_ptr<ConsumerLauncher> makeDirectLauncher(EventLoop& loop, LauncherTimeouts timeouts) {
    return std::make_unique<DirectLauncher>(loop, timeouts);
}

} // namespace tracectl
