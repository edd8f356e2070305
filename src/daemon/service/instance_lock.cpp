#include "instance_lock.hpp"

#include <cerrno>
#include <charconv>
#include <fcntl.h>
#include <filesystem>
#include <string>
#include <sys/file.h>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

namespace tracectl {

namespace {

std::optional<pid_t> readPid(int fd) {
    char buf[32] = {};
    const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return std::nullopt;
    pid_t pid = 0;
    const auto [end, ec] = std::from_chars(buf, buf + n, pid);
    if (ec != std::errc() || pid <= 0 || end == buf)
        return std::nullopt;
    return pid;
}

} // namespace

std::string InstanceLock::pathIn(const std::string& runDir) {
    return runDir + "/tracectld.lock";
}

std::optional<InstanceLock> InstanceLock::tryAcquire(const std::string& path, Busy& busy) {
    const std::filesystem::path dir = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!dir.empty() && !std::filesystem::exists(dir, ec)) {
        std::filesystem::create_directories(dir);
        chmod(dir.c_str(), 0755);
    }
    UniqueFd fd(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
    if (!fd)
        throw std::system_error(errno, std::generic_category(), "open " + path);
    if (flock(fd.get(), LOCK_EX | LOCK_NB) < 0) {
        if (errno != EWOULDBLOCK)
            throw std::system_error(errno, std::generic_category(), "flock " + path);
        busy.path = path;
        busy.holder = readPid(fd.get());
        return std::nullopt;
    }
    // Ours now: record our pid (for the next one's message).
    const std::string text = std::to_string(getpid()) + "\n";
    if (ftruncate(fd.get(), 0) < 0 || pwrite(fd.get(), text.data(), text.size(), 0) < 0)
        throw std::system_error(errno, std::generic_category(), "write " + path);
    return InstanceLock(path, std::move(fd));
}

} // namespace tracectl
