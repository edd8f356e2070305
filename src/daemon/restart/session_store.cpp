#include "restart/session_store.hpp"

#include "common/log.hpp"
#include "common/unique_fd.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

namespace tracectl {

namespace {

/// Bound of one document: 2 × 64 channels and 2 × 1024 rules fit well.
constexpr off_t kMaxDocumentBytes = 16 * 1024 * 1024;

std::string errnoText() {
    return std::strerror(errno);
}

bool isDocumentName(const std::string& name) {
    return name.size() == 32 + 5 && name.compare(32, 5, ".json") == 0 &&
           SessionId::parseHex(name.substr(0, 32)).has_value();
}

bool writeAll(int fd, const std::string& text) {
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}

} // namespace

SessionStore::SessionStore(std::string directory) : dir_(std::move(directory)) {
    if (dir_.empty())
        return;
    if (::mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST) {
        log::warning("cannot make the session state folder " + dir_ + ": " + errnoText() +
                     "; sessions will not survive a restart");
        return;
    }
    // A folder others may write to would let them forge or remove sessions:
    // not used at all.
    struct stat st {};
    if (::lstat(dir_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
        (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        log::error("the session state folder " + dir_ + " is not a folder of uid " +
                   std::to_string(::geteuid()) +
                   " that only it may write: not used; sessions will not survive a restart");
        dir_.clear();
    }
}

void SessionStore::save(const SessionRecord& record) const {
    if (dir_.empty())
        return;
    const std::string path = dir_ + "/" + record.id.hex() + ".json";
    const std::string tmp = path + ".tmp";
    const std::string text = toStateDocument(record);
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
    // No fsync: the document must outlive a crash of the process, which the
    // rename alone ensures, not a power failure, which the sessions do not
    // outlive either; and the main loop must not wait for a disk.
    if (!fd || !writeAll(fd.get(), text) || ::rename(tmp.c_str(), path.c_str()) != 0) {
        log::warning("cannot save the state of session '" + record.config.name + "' in " + path +
                         ": " + errnoText() + "; it would not survive a restart",
                     record.id.uuid());
        ::unlink(tmp.c_str());
    }
}

void SessionStore::remove(const SessionId& id) const {
    if (dir_.empty())
        return;
    const std::string path = dir_ + "/" + id.hex() + ".json";
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
        log::warning("cannot remove " + path + ": " + errnoText(), id.uuid());
}

void SessionStore::setAside(const SessionId& id) const {
    if (dir_.empty())
        return;
    const std::string path = dir_ + "/" + id.hex() + ".json";
    if (::rename(path.c_str(), (path + ".refused").c_str()) != 0 && errno != ENOENT)
        log::warning("cannot rename " + path + ": " + errnoText(), id.uuid());
}

std::vector<SessionStore::Loaded> SessionStore::loadAll(std::vector<std::string>& refused) const {
    std::vector<Loaded> out;
    if (dir_.empty())
        return out;
    UniqueFd dirFd(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dirFd) {
        if (errno != ENOENT)
            refused.push_back(dir_ + ": " + errnoText());
        return out;
    }
    std::vector<std::string> names;
    {
        const int dup = ::fcntl(dirFd.get(), F_DUPFD_CLOEXEC, 0);
        std::unique_ptr<DIR, int (*)(DIR*)> dir(dup >= 0 ? ::fdopendir(dup) : nullptr, ::closedir);
        if (!dir) {
            if (dup >= 0)
                ::close(dup);
            refused.push_back(dir_ + ": " + errnoText());
            return out;
        }
        while (const dirent* e = ::readdir(dir.get())) {
            const std::string name = e->d_name;
            if (name == "." || name == "..")
                continue;
            if (name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0) {
                ::unlinkat(dirFd.get(), name.c_str(), 0); // a save a crash cut short
                continue;
            }
            if (name.size() > 8 && name.compare(name.size() - 8, 8, ".refused") == 0)
                continue;
            names.push_back(name);
        }
    }
    std::sort(names.begin(), names.end());
    const uid_t self = ::geteuid();
    for (const std::string& name : names) {
        const std::string path = dir_ + "/" + name;
        auto refuse = [&](const std::string& why) {
            refused.push_back(path + ": " + why);
            ::renameat(dirFd.get(), name.c_str(), dirFd.get(), (name + ".refused").c_str());
        };
        if (!isDocumentName(name)) {
            refuse("not a session state document's name (<32 hex digits>.json)");
            continue;
        }
        UniqueFd fd(
            ::openat(dirFd.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        struct stat st {};
        if (!fd || ::fstat(fd.get(), &st) != 0) {
            refuse(errno == ELOOP ? std::string("a symbolic link") : errnoText());
            continue;
        }
        if (!S_ISREG(st.st_mode) || st.st_uid != self || (st.st_mode & 077) != 0) {
            refuse("not a regular file of uid " + std::to_string(self) + " that only it may read");
            continue;
        }
        if (st.st_size > kMaxDocumentBytes) {
            refuse("larger than " + std::to_string(kMaxDocumentBytes) + " bytes");
            continue;
        }
        std::string text(static_cast<std::size_t>(st.st_size), '\0');
        if (::pread(fd.get(), text.data(), text.size(), 0) != st.st_size) {
            refuse("cannot read it: " + errnoText());
            continue;
        }
        try {
            SessionRecord record = fromStateDocument(text);
            if (name.substr(0, 32) != record.id.hex())
                throw StateFileError("its id is not its file's name");
            out.push_back({path, std::move(record)});
        } catch (const StateFileError& e) {
            refuse(e.what());
        }
    }
    return out;
}

} // namespace tracectl
