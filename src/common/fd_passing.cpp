#include "fd_passing.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <sys/socket.h>
#include <system_error>

namespace tracectl {

namespace {

[[noreturn]] void throwErrno(int err, const char* what) {
    throw std::system_error(err, std::generic_category(), what);
}

// Control buffer big enough for kMaxPassedFds fds, aligned for cmsghdr.
union ControlBuffer {
    char bytes[CMSG_SPACE(sizeof(int) * kMaxPassedFds)];
    cmsghdr align;
};

} // namespace

namespace {

/// One sendmsg(2) of `data` with `fds` attached (SCM_RIGHTS) if any, with
/// MSG_NOSIGNAL and `flags`; restarts on EINTR. Returns what sendmsg
/// returned (>= 0), or -1 with errno EAGAIN/EWOULDBLOCK; throws for any
/// other error.
ssize_t sendOnce(int sock, std::span<const std::byte> data, std::span<const int> fds, int flags) {
    ControlBuffer control{};
    iovec iov{};
    // sendmsg(2) takes a non-const iovec; the kernel only reads it.
    iov.iov_base = const_cast<std::byte*>(data.data());
    iov.iov_len = data.size();
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (!fds.empty()) {
        const std::size_t fdBytes = sizeof(int) * fds.size();
        msg.msg_control = control.bytes;
        msg.msg_controllen = CMSG_SPACE(fdBytes);
        cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(fdBytes);
        std::memcpy(CMSG_DATA(c), fds.data(), fdBytes);
    }
    for (;;) {
        const ssize_t n = ::sendmsg(sock, &msg, MSG_NOSIGNAL | flags);
        if (n >= 0)
            return n;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return -1;
        throwErrno(errno, "sendmsg");
    }
}

void checkSend(const char* who, std::span<const std::byte> data, std::span<const int> fds) {
    if (fds.size() > kMaxPassedFds)
        throw std::invalid_argument(std::string(who) + ": too many fds");
    if (!fds.empty() && data.empty())
        throw std::invalid_argument(std::string(who) + ": fds need at least one data byte");
}

} // namespace

std::size_t sendSomeWithFds(int sock, std::span<const std::byte> data, std::span<const int> fds) {
    checkSend("sendSomeWithFds", data, fds);
    if (data.empty())
        return 0;
    const ssize_t n = sendOnce(sock, data, fds, MSG_DONTWAIT);
    return n < 0 ? 0 : static_cast<std::size_t>(n);
}

void sendWithFds(int sock, std::span<const std::byte> data, std::span<const int> fds) {
    checkSend("sendWithFds", data, fds);
    std::size_t sent = 0;
    bool fdsPending = !fds.empty();
    while (sent < data.size()) {
        const ssize_t n =
            sendOnce(sock, data.subspan(sent), fdsPending ? fds : std::span<const int>(), 0);
        if (n < 0) // EAGAIN on a non-blocking socket: an error like any other here
            throwErrno(EAGAIN, "sendmsg");
        // The fds went with the first byte that was accepted.
        fdsPending = false;
        sent += static_cast<std::size_t>(n);
    }
}

Received recvWithFds(int sock, std::span<std::byte> buffer, std::size_t maxFds, bool nonBlocking) {
    if (maxFds > kMaxPassedFds)
        throw std::invalid_argument("recvWithFds: maxFds above kMaxPassedFds");
    Received result;
    if (buffer.empty())
        return result;

    ControlBuffer control{};
    iovec iov{};
    iov.iov_base = buffer.data();
    iov.iov_len = buffer.size();
    msghdr msg{};
    ssize_t n = 0;
    for (;;) {
        msg = msghdr{};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        // Room for exactly maxFds: one more and the kernel sets MSG_CTRUNC.
        if (maxFds > 0) {
            msg.msg_control = control.bytes;
            msg.msg_controllen = CMSG_SPACE(sizeof(int) * maxFds);
        }
        n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | (nonBlocking ? MSG_DONTWAIT : 0));
        if (n >= 0)
            break;
        if (errno == EINTR)
            continue;
        if (nonBlocking && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            result.wouldBlock = true;
            return result;
        }
        throwErrno(errno, "recvmsg");
    }

    // Take ownership of whatever arrived before judging it, so that a
    // rejected message leaks nothing.
    bool foreign = false;
    if (msg.msg_controllen > 0) {
        for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
                foreign = true;
                continue;
            }
            const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            const unsigned char* p = CMSG_DATA(c);
            for (std::size_t i = 0; i < count; ++i) {
                int fd = -1;
                std::memcpy(&fd, p + i * sizeof(int), sizeof(int));
                result.fds.emplace_back(fd);
            }
        }
    }
    if ((msg.msg_flags & MSG_CTRUNC) != 0 || foreign || result.fds.size() > maxFds) {
        result.fds.clear();
        throwErrno(EPROTO, "recvmsg: unexpected or truncated control data");
    }
    result.bytes = static_cast<std::size_t>(n);
    return result;
}

std::size_t recvExactWithFds(int sock, std::span<std::byte> buffer, std::vector<UniqueFd>& fds,
                             std::size_t maxFds) {
    std::size_t got = 0;
    while (got < buffer.size()) {
        const std::size_t room = maxFds > fds.size() ? maxFds - fds.size() : 0;
        Received r = recvWithFds(sock, buffer.subspan(got), room, false);
        if (r.bytes == 0)
            break;
        got += r.bytes;
        for (auto& fd : r.fds)
            fds.push_back(std::move(fd));
    }
    return got;
}

} // namespace tracectl
