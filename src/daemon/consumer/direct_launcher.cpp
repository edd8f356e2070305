// ConsumerLauncher by fork/exec, for machines where no systemd manager
// answers: the same protocol over the same socketpair, without the unit's
// sandboxing.
#include "common/error.hpp"
#include "consumer_launcher.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <grp.h>
#include <map>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace tracectl {

namespace {

class DirectLauncher final : public ConsumerLauncher {
public:
    ~DirectLauncher() override {
        for (auto& [unit, pid] : children_) {
            ::kill(pid, SIGKILL);
            waitpid(pid, nullptr, 0);
        }
    }

    const char* kind() const noexcept override { return "direct"; }

    void start(const ConsumerSpec& spec, UniqueFd stdinSocket) override {
        std::vector<std::string> argv{spec.binary};
        argv.insert(argv.end(), spec.args.begin(), spec.args.end());
        std::vector<char*> argp;
        for (auto& a : argv)
            argp.push_back(a.data());
        argp.push_back(nullptr);
        const pid_t pid = fork();
        if (pid < 0)
            throw Error(ErrorCode::Failed, std::string("fork: ") + std::strerror(errno));
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
        children_[spec.unitName] = pid;
    }

    void stop(const ConsumerSpec& spec) override {
        ended_.erase(spec.unitName);
        const auto it = children_.find(spec.unitName);
        if (it == children_.end())
            return;
        ::kill(it->second, SIGTERM);
        for (int i = 0; i < 200; ++i) {
            if (waitpid(it->second, nullptr, WNOHANG) == it->second) {
                children_.erase(it);
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        ::kill(it->second, SIGKILL);
        waitpid(it->second, nullptr, 0);
        children_.erase(it);
    }

    bool running(const ConsumerSpec& spec) override {
        const auto it = children_.find(spec.unitName);
        if (it == children_.end())
            return false;
        int status = 0;
        if (waitpid(it->second, &status, WNOHANG) == it->second) {
            ended_[spec.unitName] =
                WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                : WIFSIGNALED(status)
                    ? std::string("killed by signal ") + strsignal(WTERMSIG(status))
                    : "ended";
            children_.erase(it);
            return false;
        }
        return true;
    }

    std::string stopReason(const ConsumerSpec& spec) override {
        const auto it = ended_.find(spec.unitName);
        return it != ended_.end() ? it->second : "not started by this daemon";
    }

private:
    std::map<std::string, pid_t> children_;
    std::map<std::string, std::string> ended_; ///< unit name -> how its process ended
};

} // namespace

std::unique_ptr<ConsumerLauncher> makeDirectLauncher() {
    return std::make_unique<DirectLauncher>();
}

} // namespace tracectl
