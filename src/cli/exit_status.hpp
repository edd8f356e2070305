// Exit status of the tracectl command and how a D-Bus error name maps to it.
#pragma once

#include <algorithm>
#include <array>
#include <string_view>

namespace tracectl::cli {

/// What `tracectl` returns to the shell (documented in `tracectl --help`).
enum class ExitStatus : int {
    Success = 0,     ///< the command did what was asked (also `--help`, `--version`)
    DaemonError = 1, ///< the daemon answered with a D-Bus error (or an unusable reply), or a
                     ///< local file could not be read or written (save, load); also
                     ///< Error.RelayUnavailable: tracectld answered, its lttng-relayd did not
    Usage = 2,       ///< the command line could not be parsed; `top` without a terminal
    Unreachable = 3, ///< the bus or the daemon cannot be reached
};

/// The text of the "Exit status" section of `tracectl --help`.
inline constexpr std::string_view kExitStatusHelp =
    "Exit status:\n"
    "  0  success\n"
    "  1  the daemon answered with an error (e.g. no such session, access denied,\n"
    "     the session's lttng-relayd cannot be reached: RelayUnavailable), or a\n"
    "     local file could not be read or written (save, load)\n"
    "  2  usage error: the command line could not be parsed (or top has no terminal)\n"
    "  3  the bus or the tracectld daemon cannot be reached\n"
    "\n"
    "Errors are reported on one line on stderr:\n"
    "  tracectl: <D-Bus error name>: <message>";

/// D-Bus error names meaning the call never reached a daemon that answered it: the name has
/// no owner (and cannot be activated), the daemon died or hung, or the connection broke
/// (sd-bus reports a broken connection with an errno-derived name).
inline constexpr std::array<std::string_view, 11> kUnreachableErrorNames{
    "org.freedesktop.DBus.Error.ServiceUnknown",
    "org.freedesktop.DBus.Error.NameHasNoOwner",
    "org.freedesktop.DBus.Error.NoReply",
    "org.freedesktop.DBus.Error.Disconnected",
    "org.freedesktop.DBus.Error.TimedOut",
    "org.freedesktop.DBus.Error.Timeout",
    "org.freedesktop.DBus.Error.NoServer",
    "System.Error.ECONNREFUSED",
    "System.Error.ECONNRESET",
    "System.Error.ENOTCONN",
    "System.Error.EPIPE",
};

/// The exit status for a method call that failed with the D-Bus error `error_name`:
/// `unreachable` for the names in `unreachable_error_names`, `daemon_error` otherwise.
/// org.tracectl.Tracing1.Error.RelayUnavailable is `daemon_error` on purpose: status 3 tells
/// a script that tracectld itself is down, and a relay that is down is not that.
constexpr ExitStatus exitStatusForError(std::string_view errorName) noexcept {
    const bool unreachable = std::find(kUnreachableErrorNames.begin(), kUnreachableErrorNames.end(),
                                       errorName) != kUnreachableErrorNames.end();
    return unreachable ? ExitStatus::Unreachable : ExitStatus::DaemonError;
}

} // namespace tracectl::cli
