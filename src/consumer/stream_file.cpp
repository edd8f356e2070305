#include "stream_file.hpp"

#include <cerrno>
#include <cstdint>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

namespace tracectl::consumer {

namespace {

[[noreturn]] void throwErrno(int err, const std::string& what) {
    throw std::system_error(err, std::generic_category(), what);
}

// mkdirat + open of one component, refusing symlinks.
UniqueFd openComponent(int parent, const std::string& name, const std::string& where) {
    if (::mkdirat(parent, name.c_str(), kDirMode) < 0 && errno != EEXIST)
        throwErrno(errno, "mkdir " + where);
    UniqueFd fd(::openat(parent, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd)
        throwErrno(errno, "open directory " + where);
    return fd;
}

} // namespace

OutputDir OutputDir::openRoot(const std::filesystem::path& path) {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec)
        throw std::system_error(ec, "create " + path.string());
    UniqueFd fd(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!fd)
        throwErrno(errno, "open " + path.string());
    return OutputDir(std::move(fd));
}

OutputDir OutputDir::adopt(UniqueFd fd) {
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) < 0)
        throwErrno(fd ? errno : EBADF, "the snapshot folder's fd");
    if (!S_ISDIR(st.st_mode))
        throwErrno(ENOTDIR, "the snapshot folder's fd");
    return OutputDir(std::move(fd));
}

OutputDir OutputDir::subdir(std::string_view relative) const {
    UniqueFd current;
    int parent = fd_.get();
    std::string where;
    std::size_t start = 0;
    while (start < relative.size()) {
        std::size_t end = relative.find('/', start);
        if (end == std::string_view::npos)
            end = relative.size();
        const std::string part(relative.substr(start, end - start));
        where += (where.empty() ? "" : "/") + part;
        current = openComponent(parent, part, where);
        parent = current.get();
        start = end + 1;
    }
    if (!current) {
        // Empty path: the same directory, as a new fd.
        current.reset(::fcntl(fd_.get(), F_DUPFD_CLOEXEC, 3));
        if (!current)
            throwErrno(errno, "dup directory fd");
    }
    return OutputDir(std::move(current));
}

UniqueFd OutputDir::createFile(std::string_view name) const {
    const std::string n(name);
    UniqueFd fd(::openat(fd_.get(), n.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                         kFileMode));
    if (!fd)
        throwErrno(errno, "create " + n);
    return fd;
}

void OutputDir::moveEntry(std::string_view from, const OutputDir& toDir,
                          std::string_view to) const {
    const std::string f(from), t(to);
    if (::renameat(fd_.get(), f.c_str(), toDir.fd(), t.c_str()) < 0)
        throwErrno(errno, "rename " + f + " to " + t);
}

bool OutputDir::has(std::string_view name) const noexcept {
    struct stat st {};
    return ::fstatat(fd_.get(), std::string(name).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

StreamFile::StreamFile(const OutputDir& dir, std::string_view name) : fd_(dir.createFile(name)) {}

bool StreamFile::useDirect(bool on) noexcept {
    if (on == direct_)
        return true;
    if (on && directRefused_)
        return false;
    const int flags = ::fcntl(fd_.get(), F_GETFL);
    if (flags < 0 ||
        ::fcntl(fd_.get(), F_SETFL, on ? (flags | O_DIRECT) : (flags & ~O_DIRECT)) < 0) {
        if (on)
            directRefused_ = true;
        return false;
    }
    direct_ = on;
    return true;
}

void StreamFile::write(const void* data, std::size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    std::size_t done = 0;
    while (done < size) {
        const std::size_t left = size - done;
        const bool aligned = reinterpret_cast<std::uintptr_t>(p + done) % kDirectAlignment == 0 &&
                             left % kDirectAlignment == 0 && size_ % kDirectAlignment == 0;
        useDirect(aligned && fd_.valid());
        const ssize_t n = ::write(fd_.get(), p + done, left);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EINVAL && direct_) {
                // The filesystem or device takes no direct I/O (or not at
                // this alignment): the page cache from now on.
                directRefused_ = true;
                useDirect(false);
                continue;
            }
            throwErrno(errno, "write");
        }
        if (n == 0)
            throwErrno(EIO, "write returned 0");
        done += static_cast<std::size_t>(n);
        size_ += static_cast<std::uint64_t>(n);
    }
}

} // namespace tracectl::consumer
