// A connected stream socket to lttng-relayd (control or data), blocking
// with a deadline per call.
#pragma once

#include "../unique_fd.hpp"
#include "relayd_errors.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace tracectl::relayd {

/// Owns one connected SOCK_STREAM socket (TCP to a relay; any stream
/// socket when adopted). Every call is bounded by its own timeout: the
/// socket's file status flags are never changed after connect() (sends and
/// receives use MSG_DONTWAIT and poll(2)), so an adopted fd shared with
/// another process behaves the same for it. Sends use MSG_NOSIGNAL: a peer
/// that is gone is an RelaydIoError, never SIGPIPE. Move-only.
class RelaydSocket {
public:
    /// Resolves `host` (an IPv4 or IPv6 literal, brackets allowed around
    /// IPv6, or a name; getaddrinfo(3), which is not bounded by `timeout`)
    /// and connects to the first of its addresses that accepts within the
    /// time left of `timeout` (non-blocking connect(2) then poll(2)).
    /// Throws RelaydIoError naming the address and the errno text, e.g.
    /// "cannot connect to the relay at 127.0.0.1:5342: Connection refused",
    /// "cannot resolve the relay host 'x.invalid': Name or service not known".
    static RelaydSocket connect(const std::string& host, std::uint16_t port,
                                std::chrono::milliseconds timeout);

    /// Takes an fd connected elsewhere (the consumer is handed its relay
    /// sockets). A TCP socket is named by its peer's address
    /// ("127.0.0.1:5342", getpeername(2)); `peerName` names any other.
    /// Throws RelaydIoError if it is not a stream socket.
    static RelaydSocket adopt(UniqueFd fd, std::string peerName = "the relay");

    /// Sends every byte of the pieces, in order, as one stream (sendmsg(2)
    /// with an iovec per piece), within `timeout`. Throws RelaydIoError
    /// (Timeout, PeerClosed for EPIPE/ECONNRESET, or System).
    void sendAll(std::span<const std::span<const std::byte>> pieces,
                 std::chrono::milliseconds timeout);
    void sendAll(std::span<const std::byte> bytes, std::chrono::milliseconds timeout);

    /// Fills `buffer` exactly within `timeout`. Throws RelaydIoError:
    /// PeerClosed when the peer ends the stream first (with how many bytes
    /// came), Timeout, or System.
    void recvExact(std::span<std::byte> buffer, std::chrono::milliseconds timeout);

    int fd() const noexcept { return fd_.get(); }
    /// Gives the connected fd away (to pass it to the consumer).
    UniqueFd release() noexcept { return std::move(fd_); }
    /// "127.0.0.1:5342", "[::1]:5342", or the name given to adopt().
    const std::string& peerName() const noexcept { return peer_; }

private:
    RelaydSocket(UniqueFd fd, std::string peer) : fd_(std::move(fd)), peer_(std::move(peer)) {}

    UniqueFd fd_;
    std::string peer_;
};

} // namespace tracectl::relayd
