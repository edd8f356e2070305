#include "save_load/auto_load.hpp"

#include "common/unique_fd.hpp"
#include "session_file/session_xml.hpp"

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

struct DirCloser {
    void operator()(DIR* d) const noexcept { closedir(d); }
};

std::string errnoText(int e) {
    return std::strerror(e);
}

/// The text of the file `name` in `dir`, or the reason it is refused.
bool readOne(int dir, const std::string& path, const std::string& name, uid_t user,
             std::string& text, std::string& why) {
    UniqueFd fd(openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd) {
        why = path + ": " + (errno == ELOOP ? std::string("a symbolic link") : errnoText(errno));
        return false;
    }
    struct stat st {};
    if (fstat(fd.get(), &st) != 0) {
        why = path + ": " + errnoText(errno);
        return false;
    }
    if (!S_ISREG(st.st_mode)) {
        why = path + ": not a regular file";
        return false;
    }
    if (st.st_uid != 0 && st.st_uid != user) {
        why = path + ": owned by uid " + std::to_string(st.st_uid) + ", not by root" +
              (user != 0 ? " or uid " + std::to_string(user) : std::string());
        return false;
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        why = path + ": writable by others than its owner";
        return false;
    }
    if (static_cast<std::size_t>(st.st_size) > session_file::kMaxSessionFileBytes) {
        why =
            path + ": larger than " + std::to_string(session_file::kMaxSessionFileBytes) + " bytes";
        return false;
    }
    text.resize(static_cast<std::size_t>(st.st_size));
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = read(fd.get(), text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            why = path + ": " + (n < 0 ? errnoText(errno) : std::string("shrank while read"));
            return false;
        }
        done += static_cast<std::size_t>(n);
    }
    return true;
}

} // namespace

std::vector<AutoLoadFile> readAutoLoadFiles(const std::string& directory, uid_t user,
                                            std::vector<std::string>& refusals) {
    std::vector<AutoLoadFile> files;
    UniqueFd dirFd(open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dirFd) {
        if (errno != ENOENT)
            refusals.push_back(directory + ": " + errnoText(errno));
        return files;
    }
    const int dup = fcntl(dirFd.get(), F_DUPFD_CLOEXEC, 0);
    std::unique_ptr<DIR, DirCloser> dir(dup >= 0 ? fdopendir(dup) : nullptr);
    if (!dir) {
        if (dup >= 0)
            close(dup);
        refusals.push_back(directory + ": " + errnoText(errno));
        return files;
    }
    std::vector<std::string> names;
    while (const dirent* e = readdir(dir.get())) {
        const std::string name = e->d_name;
        constexpr std::string_view kSuffix = ".lttng";
        if (name.size() > kSuffix.size() &&
            name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0)
            names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
        AutoLoadFile f{directory + "/" + name, {}};
        std::string why;
        if (readOne(dirFd.get(), f.path, name, user, f.text, why))
            files.push_back(std::move(f));
        else
            refusals.push_back(why);
    }
    return files;
}

} // namespace tracectl
