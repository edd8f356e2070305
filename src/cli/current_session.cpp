#include "current_session.hpp"

#include "common/unique_fd.hpp"
#include "utf8.hpp"

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

namespace tracectl::cli {
namespace {

/// Longest name kept; the daemon's own bound on session names is lower.
constexpr std::size_t kMaxNameBytes = 255;

bool validName(std::string_view name) {
    if (name.empty() || name.size() > kMaxNameBytes || !isValidUtf8(name)) {
        return false;
    }
    for (const char c : name) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            return false;
        }
    }
    return true;
}

std::runtime_error fileError(const std::filesystem::path& file, const std::string& what) {
    return std::runtime_error("current session file " + file.string() + ": " + what);
}

/// Throws unless `dir` is a real folder (not a symbolic link) of the caller's
/// that nobody else may write to: what it holds decides which session a
/// command without a name acts on.
void checkFolder(const std::filesystem::path& dir, const std::filesystem::path& file) {
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0) {
        throw fileError(file, "cannot read " + dir.string() + ": " + std::strerror(errno));
    }
    if (!S_ISDIR(st.st_mode)) {
        throw fileError(file, dir.string() + " is not a folder");
    }
    if (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        throw fileError(file, dir.string() +
                                  " is not yours alone (owner or write permission): refusing it");
    }
}

/// Makes `dir` and the folders above it that are missing ($HOME/.config may not exist yet),
/// mode 0700 as the XDG base directory specification asks of the folders it makes. Throws
/// naming `file`.
void makeFolders(const std::filesystem::path& dir, const std::filesystem::path& file) {
    if (::mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST) {
        return;
    }
    if (errno == ENOENT && dir.has_relative_path() && dir != dir.parent_path()) {
        makeFolders(dir.parent_path(), file);
        if (::mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST) {
            return;
        }
    }
    throw fileError(file, "cannot make " + dir.string() + ": " + std::strerror(errno));
}

} // namespace

CurrentSession::CurrentSession(std::filesystem::path base, std::string busKey) {
    if (base.empty()) {
        return;
    }
    dir_ = std::move(base) / "tracectl";
    file_ = dir_ / ("current-session." + busKey);
}

std::filesystem::path CurrentSession::baseFolder(const char* runtimeDir, const char* configHome,
                                                 const char* home, uid_t owner) {
    const auto absolute = [](const char* value) { return value != nullptr && value[0] == '/'; };
    if (absolute(runtimeDir)) {
        return runtimeDir;
    }
    std::filesystem::path base;
    if (absolute(configHome)) {
        base = configHome;
    } else if (absolute(home)) {
        base = std::filesystem::path(home) / ".config";
    } else {
        return {};
    }
    // Owned by `owner`: the folder, or the nearest existing one above it.
    for (std::filesystem::path at = base;; at = at.parent_path()) {
        struct stat st {};
        if (::stat(at.c_str(), &st) == 0) {
            return st.st_uid == owner ? base : std::filesystem::path();
        }
        if (errno != ENOENT || at == at.parent_path()) {
            return {};
        }
    }
}

std::string CurrentSession::addressBusKey(std::string_view address) {
    std::uint64_t hash = 0xcbf29ce484222325ULL; // FNV-1a, 64 bits
    for (const char c : address) {
        hash ^= static_cast<unsigned char>(c);
        hash *= 0x100000001b3ULL;
    }
    std::array<char, 17> hex{};
    std::snprintf(hex.data(), hex.size(), "%016llx", static_cast<unsigned long long>(hash));
    return "address-" + std::string(hex.data());
}

std::optional<std::string> CurrentSession::read() const {
    if (file_.empty()) {
        return std::nullopt;
    }
    struct stat dirSt {};
    if (::lstat(dir_.c_str(), &dirSt) != 0 && errno == ENOENT) {
        return std::nullopt;
    }
    checkFolder(dir_, file_);
    // O_NONBLOCK: a FIFO put there must not hang the command; it is refused below.
    const UniqueFd fd(::open(file_.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
    if (!fd) {
        if (errno == ENOENT) {
            return std::nullopt;
        }
        throw fileError(file_, std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) {
        throw fileError(file_, std::strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) {
        throw fileError(file_, "is not a regular file; 'tracectl set-session NAME' replaces it");
    }
    std::array<char, kMaxNameBytes + 2> buffer{};
    std::size_t used = 0;
    while (used < buffer.size()) {
        const ssize_t n = ::read(fd.get(), buffer.data() + used, buffer.size() - used);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            throw fileError(file_, std::strerror(errno));
        }
        if (n == 0) {
            break;
        }
        used += static_cast<std::size_t>(n);
    }
    std::string_view text(buffer.data(), used);
    if (!text.empty() && text.back() == '\n') {
        text.remove_suffix(1);
    }
    if (!validName(text)) {
        throw fileError(file_, "does not hold a session name; 'tracectl set-session NAME' "
                               "replaces it");
    }
    return std::string(text);
}

void CurrentSession::write(std::string_view name) const {
    if (file_.empty()) {
        throw std::runtime_error(
            "cannot keep the current session: no XDG_RUNTIME_DIR, and no XDG_CONFIG_HOME or HOME "
            "of yours, to keep it in (name the session on each command)");
    }
    if (!validName(name)) {
        throw fileError(file_, "refusing to keep a session name that is not 1 to 255 bytes of "
                               "printable UTF-8");
    }
    makeFolders(dir_, file_);
    checkFolder(dir_, file_);
    std::filesystem::path temporary = file_;
    temporary += ".XXXXXX";
    std::string pattern = temporary.string();
    const UniqueFd fd(::mkostemp(pattern.data(), O_CLOEXEC)); // mode 0600
    if (!fd) {
        throw fileError(file_, std::strerror(errno));
    }
    const std::string text = std::string(name) + "\n";
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            const int e = errno;
            ::unlink(pattern.c_str());
            throw fileError(file_, std::strerror(e));
        }
        done += static_cast<std::size_t>(n);
    }
    if (::rename(pattern.c_str(), file_.c_str()) != 0) {
        const int e = errno;
        ::unlink(pattern.c_str());
        throw fileError(file_, std::strerror(e));
    }
}

bool CurrentSession::forgetIf(std::string_view name) const noexcept {
    try {
        const auto held = read();
        if (!held || *held != name) {
            return false;
        }
        return ::unlink(file_.c_str()) == 0;
    } catch (...) {
        return false;
    }
}

} // namespace tracectl::cli
