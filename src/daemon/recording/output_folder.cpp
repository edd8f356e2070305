#include "recording/output_folder.hpp"

#include "common/error.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <string_view>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace tracectl {

namespace {

/// Exit statuses of the checking child.
enum Status {
    Ok = 0,
    NoMkdir = 1,
    NoSwitch = 2,
    NotAFolder = 3,
    NotWritable = 4,
    HasTrace = 5,
    Dangling = 6,
    ForeignLink = 7,
};

/// Every prefix of `path` ("/a", "/a/b", ..., `path`).
std::vector<std::string> prefixesOf(const std::string& path) {
    std::vector<std::string> out;
    for (std::size_t i = 1; i <= path.size(); ++i)
        if (i == path.size() || path[i] == '/')
            out.push_back(path.substr(0, i));
    return out;
}

/// The supplementary groups of `uid` (with `gid`), as initgroups(3) would set them.
/// Called from more than one thread: getpwuid_r(3), never getpwuid(3).
std::vector<gid_t> groupsOf(uid_t uid, gid_t gid) {
    std::vector<gid_t> groups(64);
    std::vector<char> buf(16384);
    struct passwd entry {};
    struct passwd* pw = nullptr;
    while (getpwuid_r(uid, &entry, buf.data(), buf.size(), &pw) == ERANGE &&
           buf.size() < (1u << 20))
        buf.resize(buf.size() * 2);
    if (pw != nullptr) {
        int n = static_cast<int>(groups.size());
        if (getgrouplist(pw->pw_name, gid, groups.data(), &n) < 0) {
            groups.resize(static_cast<std::size_t>(n));
            getgrouplist(pw->pw_name, gid, groups.data(), &n);
        }
        groups.resize(static_cast<std::size_t>(std::max(n, 0)));
    } else {
        groups.assign(1, gid);
    }
    return groups;
}

/// A symbolic link at `prefix` owned by neither `uid` nor root?
bool foreignLink(const std::string& prefix, uid_t uid) {
    struct stat link {};
    return lstat(prefix.c_str(), &link) == 0 && S_ISLNK(link.st_mode) && link.st_uid != uid &&
           link.st_uid != 0;
}

/// Runs `body` as uid:gid with `groups` in a child and returns its Status.
/// Everything the child needs is made before fork(): a child of a threaded
/// process may only make async-signal-safe calls (no malloc). A child that
/// does not finish within `bound` is killed (Error Failed).
template <class Body>
int runAs(uid_t uid, gid_t gid, const std::vector<gid_t>& groups, std::chrono::milliseconds bound,
          const std::string& path, Body body) {
    const pid_t pid = fork();
    if (pid < 0)
        throw Error(ErrorCode::Failed, std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        if (getuid() == 0 &&
            (setgroups(groups.size(), groups.data()) < 0 || setgid(gid) < 0 || setuid(uid) < 0))
            _exit(NoSwitch);
        _exit(body());
    }
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + bound;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            throw Error(ErrorCode::Failed, "checking the output path " + path +
                                               " took too long (a dead network mount?)");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

[[noreturn]] void fail(int code, const std::string& path, uid_t uid) {
    const std::string who = "uid " + std::to_string(uid);
    switch (code) {
    case NotAFolder:
        throw Error(ErrorCode::InvalidArgument, "the output path " + path + " is not a folder");
    case Dangling:
        throw Error(ErrorCode::InvalidArgument,
                    "the output path " + path + " leads nowhere (a symbolic link to nothing?)");
    case NotWritable:
        throw Error(ErrorCode::InvalidArgument, who + " cannot write to the output folder " + path);
    case ForeignLink:
        throw Error(ErrorCode::InvalidArgument,
                    "the output path " + path +
                        " goes through a symbolic link owned by another user; give the real path");
    case HasTrace:
        throw Error(ErrorCode::InvalidArgument,
                    "the output folder " + path +
                        " already holds a trace, or another session writes there (it has a "
                        "\"ust\" or \"archives\" folder); choose another");
    default:
        throw Error(ErrorCode::InvalidArgument, who + " cannot create the output folder " + path);
    }
}

} // namespace

gid_t primaryGidOf(uid_t uid) {
    std::vector<char> buf(16384);
    struct passwd pw {};
    struct passwd* result = nullptr;
    if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &result) == 0 && result != nullptr)
        return pw.pw_gid;
    return static_cast<gid_t>(uid);
}

void checkOutputFolder(const std::string& path, uid_t uid, gid_t gid) {
    const std::vector<std::string> prefixes = prefixesOf(path);
    const std::vector<gid_t> groups = groupsOf(uid, gid);
    const std::string ustEntry = path + "/ust";
    const std::string archivesEntry = path + "/archives";
    const int code = runAs(uid, gid, groups, std::chrono::seconds(2), path, [&]() -> int {
        const char* deepest = "/";
        for (const auto& prefix : prefixes) {
            if (foreignLink(prefix, uid))
                return ForeignLink;
            struct stat st {};
            if (stat(prefix.c_str(), &st) < 0) {
                if (errno != ENOENT)
                    return NoMkdir; // EACCES: cannot even look
                struct stat link {};
                if (lstat(prefix.c_str(), &link) == 0)
                    return Dangling;
                // The rest is to be made in `deepest`, as the owner.
                return access(deepest, W_OK | X_OK) == 0 ? Ok : NoMkdir;
            }
            if (!S_ISDIR(st.st_mode))
                return NotAFolder;
            deepest = prefix.c_str();
        }
        if (access(path.c_str(), W_OK | X_OK) < 0)
            return NotWritable;
        struct stat entry {};
        // After a rotation "ust" has moved into archives/: that still claims it.
        if (lstat(ustEntry.c_str(), &entry) == 0 || lstat(archivesEntry.c_str(), &entry) == 0)
            return HasTrace;
        return Ok;
    });
    if (code != Ok)
        fail(code, path, uid);
}

void makeOutputFolder(const std::string& path, uid_t uid, gid_t gid, bool claim) {
    const std::vector<std::string> prefixes = prefixesOf(path);
    const std::vector<gid_t> groups = groupsOf(uid, gid);
    const std::string ustEntry = path + "/ust";
    const std::string archivesEntry = path + "/archives";
    const int code = runAs(uid, gid, groups, std::chrono::seconds(10), path, [&]() -> int {
        for (const auto& prefix : prefixes) {
            if (foreignLink(prefix, uid))
                return ForeignLink;
            if (mkdir(prefix.c_str(), 0750) < 0 && errno != EEXIST)
                return NoMkdir;
        }
        struct stat st {};
        if (stat(path.c_str(), &st) < 0)
            return errno == ENOENT ? Dangling : NotAFolder;
        if (!S_ISDIR(st.st_mode))
            return NotAFolder;
        if (access(path.c_str(), W_OK | X_OK) < 0)
            return NotWritable;
        if (!claim) // a snapshot session's folder: its snapshots claim their own
            return Ok;
        // After a rotation "ust" has moved into archives/: that still claims it.
        struct stat archives {};
        if (lstat(archivesEntry.c_str(), &archives) == 0)
            return HasTrace;
        // Made now, not when the first app comes: it claims the folder
        // (mkdir is atomic), so a second session started on it is refused.
        if (mkdir(ustEntry.c_str(), 0750) < 0)
            return errno == EEXIST ? HasTrace : NotWritable;
        return Ok;
    });
    if (code != Ok)
        fail(code, path, uid);
}

namespace {

/// rmdir of `dir` (relative to `parent`) and of its empty sub-folders,
/// depth first; symbolic links and files are never followed or removed.
/// Async-signal-safe (it runs in runAs()'s child): getdents64 into a
/// buffer on the stack, no allocation.
bool removeEmptyTree(int parent, const char* dir, int depth) {
    if (depth > 16)
        return false;
    const int fd = openat(parent, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct Entry { // struct linux_dirent64, getdents64(2)
        ino64_t ino;
        off64_t off;
        unsigned short reclen;
        unsigned char type;
        char name[1];
    };
    alignas(8) char buf[2048];
    bool empty = true;
    for (;;) {
        const long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n <= 0) {
            empty = empty && n == 0;
            break;
        }
        for (long at = 0; at < n;) {
            const auto* e = reinterpret_cast<const Entry*>(buf + at);
            at += e->reclen;
            const std::string_view name(e->name);
            if (name == "." || name == "..")
                continue;
            struct stat st {};
            const bool folder =
                e->type == DT_DIR ||
                (e->type == DT_UNKNOWN && fstatat(fd, e->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                 S_ISDIR(st.st_mode));
            if (!folder || !removeEmptyTree(fd, e->name, depth + 1))
                empty = false;
        }
    }
    close(fd);
    return empty && unlinkat(parent, dir, AT_REMOVEDIR) == 0;
}

} // namespace

bool removeEmptyFolder(const std::string& path, uid_t uid, gid_t gid) {
    try {
        const std::vector<gid_t> groups = groupsOf(uid, gid);
        const int code = runAs(uid, gid, groups, std::chrono::seconds(2), path, [&]() -> int {
            return removeEmptyTree(AT_FDCWD, path.c_str(), 0) ? Ok : NotWritable;
        });
        return code == Ok;
    } catch (const std::exception&) {
        return false;
    }
}

} // namespace tracectl
