// What systemd hands tracectld and what tracectld tells systemd back:
// socket activation (sd_listen_fds_with_names(3)) and readiness
// (sd_notify(3)). Both are no-ops when not run by systemd.
#pragma once

#include "common/unique_fd.hpp"

#include <map>
#include <string>
#include <string_view>

namespace tracectl {

/// The FileDescriptorName= of the LTTng-UST app socket in tracectld.socket.
inline constexpr std::string_view kAppSocketFdName = "ust";

/// Listening sockets passed by systemd (LISTEN_FDS/LISTEN_FDNAMES/LISTEN_PID),
/// taken once at start-up; the environment variables are unset so children
/// do not see them.
struct ActivationSockets {
    /// The listening AF_UNIX SOCK_STREAM socket named kAppSocketFdName, made
    /// non-blocking; empty if systemd passed none. Passed fds with other
    /// names, or that are not such a socket, are logged and closed.
    UniqueFd appSocket;
    /// Consumer connections a previous daemon kept in systemd's fd store
    /// (restart/consumer_fd_store.hpp), by session id hex: connected
    /// AF_UNIX stream sockets named "consumer-<id hex>".
    std::map<std::string, UniqueFd> consumerConnections;
    /// How many fds systemd passed in all (0: not socket-activated).
    int passed = 0;
};

/// Reads sd_listen_fds_with_names(3). Throws std::system_error if
/// LISTEN_FDS is set but malformed.
ActivationSockets takeActivationSockets();

/// sd_notify(3) "READY=1\nSTATUS=<status>": the bus name is owned and the
/// sockets are served. Harmless without $NOTIFY_SOCKET.
void notifyReady(const std::string& status);

/// sd_notify(3) "STOPPING=1\nSTATUS=<status>".
void notifyStopping(const std::string& status);

} // namespace tracectl
