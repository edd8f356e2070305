// The project's error codes: one table for the daemon, the consumer and the
// CLI, mapping each code to its D-Bus error name and an errno (the way
// systemd's bus-error.c and udisks' error domain do it).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace tracectl {

/// Every error tracectl reports to a client. The D-Bus names are
/// `org.tracectl.Tracing1.Error.<Name>`; see errorInfo().
enum class ErrorCode {
    NoSuchSession,     ///< no session of that name/path visible to the caller
    SessionExists,     ///< the caller already has a session of that name
    InvalidName,       ///< a session (or channel) name breaks the naming rules
    InvalidArgument,   ///< an option key, type or value is not acceptable
    WrongState,        ///< the call does not fit the session's current state
    LimitExceeded,     ///< a per-user resource bound was reached
    EventRuleExists,   ///< the same event rule is enabled in that channel already
    KernelUnavailable, ///< the kernel domain cannot be used here (no writable tracefs)
    NoSuchEventRule,   ///< DisableEvents named a pattern no rule of that channel has
    RelayUnavailable,  ///< a network session's lttng-relayd cannot be reached or refused it
    Failed,            ///< an internal failure; the message says what
};

/// One row of the table: the D-Bus error name and the closest errno.
struct ErrorInfo {
    std::string_view dbusName;
    int errnoValue;
};

/// The row for `code`. Total over ErrorCode; never throws.
const ErrorInfo& errorInfo(ErrorCode code) noexcept;

/// The D-Bus error name prefix shared by every entry of the table.
inline constexpr std::string_view kErrorPrefix = "org.tracectl.Tracing1.Error.";

/// A domain error: thrown by D-Bus-free code, turned into a D-Bus error
/// reply (name from errorInfo(), message as given) at the object layer.
class Error : public std::runtime_error {
public:
    Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
    ErrorCode code() const noexcept { return code_; }

private:
    ErrorCode code_;
};

} // namespace tracectl
