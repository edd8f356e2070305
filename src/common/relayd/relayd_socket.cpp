// RelaydSocket: deadlines with poll(2), MSG_DONTWAIT and MSG_NOSIGNAL.
#include "relayd_socket.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <vector>

namespace tracectl::relayd {

namespace {

using Clock = std::chrono::steady_clock;

std::string errnoText(int err) {
    return std::strerror(err);
}

/// Milliseconds left until `deadline`, rounded up, for poll(2); 0 when past.
int msLeft(Clock::time_point deadline) {
    const auto left = deadline - Clock::now();
    if (left <= Clock::duration::zero())
        return 0;
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    return ms > 1'000'000'000 ? 1'000'000'000 : static_cast<int>(ms);
}

/// Waits for `events` on `fd` until `deadline`. Returns false on timeout;
/// revents (which may be POLLERR/POLLHUP) otherwise. Throws on poll errors.
short waitFor(int fd, short events, Clock::time_point deadline, const std::string& peer) {
    for (;;) {
        pollfd pfd{fd, events, 0};
        const int ms = msLeft(deadline);
        const int n = ::poll(&pfd, 1, ms);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            const int err = errno;
            throw RelaydIoError(RelaydIoError::Kind::System, err,
                                "poll on the connection to " + peer + ": " + errnoText(err));
        }
        if (n == 0) {
            if (msLeft(deadline) == 0)
                return 0;
            continue;
        }
        return pfd.revents;
    }
}

std::string formatAddress(const sockaddr* addr, socklen_t length) {
    char host[NI_MAXHOST] = {};
    char service[NI_MAXSERV] = {};
    if (::getnameinfo(addr, length, host, sizeof host, service, sizeof service,
                      NI_NUMERICHOST | NI_NUMERICSERV) != 0)
        return "?";
    if (addr->sa_family == AF_INET6)
        return std::string("[") + host + "]:" + service;
    return std::string(host) + ":" + service;
}

struct AddrInfoDeleter {
    void operator()(addrinfo* info) const noexcept { ::freeaddrinfo(info); }
};

[[noreturn]] void throwTimeout(const std::string& what, std::chrono::milliseconds timeout) {
    throw RelaydIoError(RelaydIoError::Kind::Timeout, ETIMEDOUT,
                        what + ": not done within " + std::to_string(timeout.count()) + " ms (" +
                            errnoText(ETIMEDOUT) + ")");
}

/// One non-blocking connect to `addr`; returns the connected fd, or the errno.
UniqueFd tryConnect(const addrinfo& addr, Clock::time_point deadline, int& err) {
    UniqueFd fd(::socket(addr.ai_family, addr.ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                         addr.ai_protocol));
    if (!fd) {
        err = errno;
        return {};
    }
    // Every command and every packet goes out in one sendmsg(2): nothing
    // is gained by Nagle's algorithm, and on the data connection, where
    // the relay never answers, it holds each packet's last segment until
    // the relay's delayed ACK (up to 40 ms a packet: a consumer draining
    // 25 packets a second).
    const int on = 1;
    if (::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) != 0) {
        err = errno;
        return {};
    }
    if (::connect(fd.get(), addr.ai_addr, addr.ai_addrlen) == 0)
        return fd;
    if (errno != EINPROGRESS) {
        err = errno;
        return {};
    }
    const short revents = waitFor(fd.get(), POLLOUT, deadline, "the relay");
    if (revents == 0) {
        err = ETIMEDOUT;
        return {};
    }
    int soError = 0;
    socklen_t length = sizeof soError;
    if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &soError, &length) != 0) {
        err = errno;
        return {};
    }
    if (soError != 0) {
        err = soError;
        return {};
    }
    return fd;
}

} // namespace

RelaydSocket RelaydSocket::connect(const std::string& host, std::uint16_t port,
                                   std::chrono::milliseconds timeout) {
    const Clock::time_point deadline = Clock::now() + timeout;
    std::string name = host;
    if (name.size() >= 2 && name.front() == '[' && name.back() == ']')
        name = name.substr(1, name.size() - 2);
    const std::string service = std::to_string(port);

    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_protocol = IPPROTO_TCP;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* found = nullptr;
    const int gai = ::getaddrinfo(name.c_str(), service.c_str(), &hints, &found);
    if (gai != 0) {
        const int err = gai == EAI_SYSTEM ? errno : 0;
        throw RelaydIoError(RelaydIoError::Kind::System, err,
                            "cannot resolve the relay host '" + host +
                                "': " + (gai == EAI_SYSTEM ? errnoText(err) : gai_strerror(gai)));
    }
    const std::unique_ptr<addrinfo, AddrInfoDeleter> list(found);

    std::string failures;
    int lastErr = 0;
    bool literal = false;
    for (const addrinfo* addr = list.get(); addr != nullptr; addr = addr->ai_next) {
        const std::string where = formatAddress(addr->ai_addr, addr->ai_addrlen);
        char numeric[NI_MAXHOST] = {};
        if (::getnameinfo(addr->ai_addr, addr->ai_addrlen, numeric, sizeof numeric, nullptr, 0,
                          NI_NUMERICHOST) == 0 &&
            name == numeric)
            literal = true;
        int err = 0;
        UniqueFd fd = tryConnect(*addr, deadline, err);
        if (fd)
            return RelaydSocket(std::move(fd), where);
        lastErr = err;
        if (!failures.empty())
            failures += "; ";
        failures += where + ": " +
                    (err == ETIMEDOUT ? "no answer within " + std::to_string(timeout.count()) +
                                            " ms (" + errnoText(err) + ")"
                                      : errnoText(err));
    }
    const std::string message =
        literal ? "cannot connect to the relay at " + failures
                : "cannot connect to the relay at " + host + ":" + service + " (" + failures + ")";
    throw RelaydIoError(lastErr == ETIMEDOUT ? RelaydIoError::Kind::Timeout
                                             : RelaydIoError::Kind::System,
                        lastErr, message);
}

RelaydSocket RelaydSocket::adopt(UniqueFd fd, std::string peerName) {
    int type = 0;
    socklen_t length = sizeof type;
    if (!fd || ::getsockopt(fd.get(), SOL_SOCKET, SO_TYPE, &type, &length) != 0) {
        const int err = fd ? errno : EBADF;
        throw RelaydIoError(RelaydIoError::Kind::System, err,
                            "the connection to " + peerName +
                                " is not a socket: " + errnoText(err));
    }
    if (type != SOCK_STREAM)
        throw RelaydIoError(RelaydIoError::Kind::System, EPROTOTYPE,
                            "the connection to " + peerName + " is not a stream socket");
    // A TCP connection names its peer's address, as connect() does, so that
    // every later error says which relay failed.
    sockaddr_storage peer{};
    socklen_t peerLength = sizeof peer;
    if (::getpeername(fd.get(), reinterpret_cast<sockaddr*>(&peer), &peerLength) == 0 &&
        (peer.ss_family == AF_INET || peer.ss_family == AF_INET6))
        peerName = formatAddress(reinterpret_cast<const sockaddr*>(&peer), peerLength);
    return RelaydSocket(std::move(fd), std::move(peerName));
}

void RelaydSocket::sendAll(std::span<const std::byte> bytes, std::chrono::milliseconds timeout) {
    const std::span<const std::byte> pieces[] = {bytes};
    sendAll(pieces, timeout);
}

void RelaydSocket::sendAll(std::span<const std::span<const std::byte>> pieces,
                           std::chrono::milliseconds timeout) {
    const Clock::time_point deadline = Clock::now() + timeout;
    std::vector<iovec> iov;
    iov.reserve(pieces.size());
    for (const auto& piece : pieces)
        if (!piece.empty())
            iov.push_back({const_cast<std::byte*>(piece.data()), piece.size()});
    std::size_t first = 0;
    while (first < iov.size()) {
        msghdr msg{};
        msg.msg_iov = iov.data() + first;
        msg.msg_iovlen = std::min<std::size_t>(iov.size() - first, IOV_MAX);
        const ssize_t sent = ::sendmsg(fd_.get(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent < 0) {
            const int err = errno;
            if (err == EINTR)
                continue;
            if (err == EAGAIN || err == EWOULDBLOCK) {
                const short revents = waitFor(fd_.get(), POLLOUT, deadline, peer_);
                if (revents == 0)
                    throwTimeout("sending to " + peer_, timeout);
                continue; // POLLERR/POLLHUP: the next sendmsg reports the error
            }
            const bool closed = err == EPIPE || err == ECONNRESET;
            throw RelaydIoError(
                closed ? RelaydIoError::Kind::PeerClosed : RelaydIoError::Kind::System, err,
                (closed ? "the relay closed the connection (" + peer_ + ")"
                        : "sending to " + peer_) +
                    ": " + errnoText(err));
        }
        auto left = static_cast<std::size_t>(sent);
        while (first < iov.size() && left >= iov[first].iov_len) {
            left -= iov[first].iov_len;
            ++first;
        }
        if (left > 0) {
            iov[first].iov_base = static_cast<std::byte*>(iov[first].iov_base) + left;
            iov[first].iov_len -= left;
        }
    }
}

void RelaydSocket::recvExact(std::span<std::byte> buffer, std::chrono::milliseconds timeout) {
    const Clock::time_point deadline = Clock::now() + timeout;
    std::size_t got = 0;
    while (got < buffer.size()) {
        const ssize_t n = ::recv(fd_.get(), buffer.data() + got, buffer.size() - got, MSG_DONTWAIT);
        if (n > 0) {
            got += static_cast<std::size_t>(n);
            continue;
        }
        if (n == 0)
            throw RelaydIoError(RelaydIoError::Kind::PeerClosed, ECONNRESET,
                                "the relay closed the connection (" + peer_ + ") after " +
                                    std::to_string(got) + " of the " +
                                    std::to_string(buffer.size()) + " reply bytes expected");
        const int err = errno;
        if (err == EINTR)
            continue;
        if (err == EAGAIN || err == EWOULDBLOCK) {
            const short revents = waitFor(fd_.get(), POLLIN, deadline, peer_);
            if (revents == 0)
                throwTimeout("waiting for " + std::to_string(buffer.size() - got) +
                                 " more reply bytes from " + peer_,
                             timeout);
            continue;
        }
        const bool closed = err == ECONNRESET;
        throw RelaydIoError(closed ? RelaydIoError::Kind::PeerClosed : RelaydIoError::Kind::System,
                            err, "receiving from " + peer_ + ": " + errnoText(err));
    }
}

} // namespace tracectl::relayd
