// The errors of the lttng-relayd producer protocol: one base, three kinds
// (malformed bytes, a broken connection, a well-formed refusal).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tracectl::relayd {

/// Every error the relayd codec and connections throw.
class RelaydError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Bytes that do not follow the protocol: a reply of the wrong size, a
/// length beyond what lttng-relayd 2.13 itself accepts, a string without
/// its terminator, or an argument that cannot be encoded (a name too long
/// or holding a NUL). The connection is out of step after it.
class RelaydProtocolError : public RelaydError {
public:
    using RelaydError::RelaydError;
};

/// The socket failed: the peer closed it, a deadline passed, or a system
/// call failed. `errnoValue()` is the errno (ETIMEDOUT for a deadline,
/// ECONNRESET for a peer that closed the connection mid-exchange).
class RelaydIoError : public RelaydError {
public:
    enum class Kind { PeerClosed, Timeout, System };
    RelaydIoError(Kind kind, int errnoValue, const std::string& message)
        : RelaydError(message), kind_(kind), errno_(errnoValue) {}
    Kind kind() const noexcept { return kind_; }
    int errnoValue() const noexcept { return errno_; }

private:
    Kind kind_;
    int errno_;
};

/// A well-formed reply whose ret_code is not LTTNG_OK (10, lttng-tools
/// include/lttng/lttng-error.h). `code()` is the relay's lttng_error_code
/// (e.g. 11 LTTNG_ERR_UNK, 25 LTTNG_ERR_FATAL, 152 LTTNG_ERR_INVALID_PROTOCOL),
/// or the unexpected value itself for DATA_PENDING / END_DATA_PENDING.
/// The connection stays in step (the whole reply was read).
class RelaydRefused : public RelaydError {
public:
    RelaydRefused(std::string command, std::uint32_t code, const std::string& message)
        : RelaydError(message), command_(std::move(command)), code_(code) {}
    const std::string& command() const noexcept { return command_; }
    std::uint32_t code() const noexcept { return code_; }

private:
    std::string command_;
    std::uint32_t code_;
};

} // namespace tracectl::relayd
