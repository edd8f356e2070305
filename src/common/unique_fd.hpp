// An owned file descriptor: closed exactly once, by its last owner.
#pragma once

#include <unistd.h>
#include <utility>

namespace tracectl {

/// Owns one file descriptor (or none: -1). Move-only; a moved-from, reset or
/// released UniqueFd holds -1, so "is it still mine?" is always `valid()`.
/// close(2) errors are ignored on destruction (Linux closes the fd anyway;
/// see close(2) "Dealing with error returns from close()").
class UniqueFd {
public:
    UniqueFd() noexcept = default;
    /// Takes ownership of `fd` (-1 for none).
    explicit UniqueFd(int fd) noexcept : fd_(fd) {}
    ~UniqueFd() { reset(); }

    UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
    UniqueFd& operator=(UniqueFd&& other) noexcept {
        if (this != &other)
            reset(other.release());
        return *this;
    }
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;

    /// The descriptor, still owned; -1 when empty.
    int get() const noexcept { return fd_; }
    bool valid() const noexcept { return fd_ >= 0; }
    explicit operator bool() const noexcept { return valid(); }

    /// Gives up ownership without closing; the caller now owns the result.
    [[nodiscard]] int release() noexcept { return std::exchange(fd_, -1); }

    /// Closes the current descriptor (if any) and takes `fd` instead.
    void reset(int fd = -1) noexcept {
        const int old = std::exchange(fd_, fd);
        if (old >= 0 && old != fd)
            ::close(old);
    }

private:
    int fd_ = -1;
};

} // namespace tracectl
