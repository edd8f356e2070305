#include "remove_tree.hpp"

#include "common/unique_fd.hpp"

#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <string>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace tracectl::consumer {

namespace {

[[noreturn]] void fail(const std::string& what) {
    throw std::system_error(errno, std::generic_category(), what);
}

/// The names in directory `fd` (not "." and "..").
std::vector<std::string> entries(int fd, const std::string& path) {
    // fdopendir() takes the fd it is given: hand it a copy.
    const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (copy < 0)
        fail("removing " + path);
    DIR* dir = ::fdopendir(copy);
    if (dir == nullptr) {
        ::close(copy);
        fail("removing " + path);
    }
    std::vector<std::string> names;
    errno = 0;
    while (const dirent* e = ::readdir(dir)) {
        const std::string n = e->d_name;
        if (n != "." && n != "..")
            names.push_back(n);
    }
    const int readError = errno;
    ::closedir(dir);
    if (readError != 0) {
        errno = readError;
        fail("reading " + path);
    }
    return names;
}

void removeIn(int dirFd, const std::string& name, const std::string& path, int depth) {
    if (::unlinkat(dirFd, name.c_str(), 0) == 0 || errno == ENOENT)
        return;
    if (errno != EISDIR && errno != EPERM) // EPERM: Linux says so for a directory
        fail("removing " + path);
    if (depth >= kMaxRemoveDepth) {
        errno = ELOOP;
        fail("removing " + path);
    }
    const UniqueFd sub(
        ::openat(dirFd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!sub) {
        if (errno == ENOENT)
            return;
        fail("removing " + path);
    }
    for (const std::string& n : entries(sub.get(), path))
        removeIn(sub.get(), n, path + "/" + n, depth + 1);
    if (::unlinkat(dirFd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
        fail("removing " + path);
}

} // namespace

void removeTree(int dirFd, std::string_view name) {
    const std::string n(name);
    if (n.empty() || n == "." || n == ".." || n.find('/') != std::string::npos) {
        errno = EINVAL;
        fail("removing '" + n + "'");
    }
    removeIn(dirFd, n, n, 0);
}

} // namespace tracectl::consumer
