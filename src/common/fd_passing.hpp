// Bytes and file descriptors over a connected AF_UNIX SOCK_STREAM socket:
// the fds travel as one SCM_RIGHTS control message (unix(7), cmsg(3))
// attached to the first byte of a send.
#pragma once

#include "unique_fd.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace tracectl {

/// The most fds one send or receive carries. The kernel's own limit is
/// SCM_MAX_FD (253); ours is lower so a receive buffer stays small.
inline constexpr std::size_t kMaxPassedFds = 32;

/// Sends every byte of `data` (which must not be empty when `fds` is not:
/// fds ride on a byte), with `fds` (at most kMaxPassedFds, not closed or
/// consumed: the receiver gets duplicates) attached to the first sendmsg(2).
/// Restarts on EINTR and on short writes; never raises SIGPIPE
/// (MSG_NOSIGNAL). Blocks if `sock` is blocking; on a non-blocking socket
/// EAGAIN is an error like any other.
/// Throws std::system_error (errno; EPIPE when the peer is gone) or
/// std::invalid_argument for fds without data / too many fds.
void sendWithFds(int sock, std::span<const std::byte> data, std::span<const int> fds = {});

/// One sendmsg(2) of as much of `data` as the socket takes now, with `fds`
/// (as sendWithFds()) attached to it; MSG_DONTWAIT and MSG_NOSIGNAL.
/// Restarts on EINTR. Returns the bytes accepted: 0 when the socket's buffer
/// is full (EAGAIN; the fds were not sent either). Throws std::system_error
/// (EPIPE when the peer is gone) or std::invalid_argument as sendWithFds().
std::size_t sendSomeWithFds(int sock, std::span<const std::byte> data,
                            std::span<const int> fds = {});

/// What one recvWithFds() call got.
struct Received {
    std::size_t bytes = 0;     ///< bytes stored at the start of the buffer; 0 = EOF
    std::vector<UniqueFd> fds; ///< fds that arrived with them (close-on-exec set)
    bool wouldBlock = false;   ///< non-blocking call and nothing was there
};

/// One recvmsg(2) into `buffer` (at most buffer.size() bytes, possibly fewer:
/// a stream socket returns what is there), accepting up to `maxFds` fds
/// (<= kMaxPassedFds) with MSG_CMSG_CLOEXEC. `nonBlocking` adds MSG_DONTWAIT.
/// Restarts on EINTR.
/// Rejects, closing every fd that did arrive: truncated control data
/// (MSG_CTRUNC, i.e. more fds than `maxFds` or a control message that did not
/// fit), and any control message other than SOL_SOCKET/SCM_RIGHTS.
/// Throws std::system_error: EPROTO for those rejections, errno otherwise
/// (ECONNRESET when the peer vanished with unread data).
Received recvWithFds(int sock, std::span<std::byte> buffer, std::size_t maxFds,
                     bool nonBlocking = false);

/// Blocking: fills all of `buffer` unless EOF comes first, appending the fds
/// that arrive to `fds` (never more than `maxFds` in total: more is EPROTO).
/// Returns the number of bytes read: buffer.size(), or less at EOF.
/// Reads nothing beyond `buffer`, so data that follows on the socket stays
/// there for the next reader (e.g. liblttng-ust-ctl).
/// Throws std::system_error as recvWithFds().
std::size_t recvExactWithFds(int sock, std::span<std::byte> buffer, std::vector<UniqueFd>& fds,
                             std::size_t maxFds);

} // namespace tracectl
