// Blocking whole reads and writes for the stand-in peers of the unit tests
// (a fake relay on a socketpair or a loopback socket).
#pragma once

#include <cstddef>
#include <span>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

namespace tracectl::test {

/// Reads exactly `size` bytes into `data`; false at EOF or on an error first.
inline bool readAll(int fd, std::byte* data, std::size_t size) {
    std::size_t got = 0;
    while (got < size) {
        const ssize_t n = ::read(fd, data + got, size - got);
        if (n <= 0)
            return false;
        got += static_cast<std::size_t>(n);
    }
    return true;
}

/// Sends every byte of `bytes` (MSG_NOSIGNAL); stops quietly at the first
/// failure (a peer gone is what some tests make happen).
inline void writeAll(int fd, std::span<const std::byte> bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
        if (n <= 0)
            return;
        done += static_cast<std::size_t>(n);
    }
}

} // namespace tracectl::test
