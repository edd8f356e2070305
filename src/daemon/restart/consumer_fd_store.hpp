// The sessions' consumer connections, kept in systemd's fd store so that a
// restarted tracectld can take the consumers over (tracectld(8), RESTARTS).
//
// Each connection a session's consumer was started with is stored as
// FDNAME=consumer-<session id hex> (sd_pid_notify_with_fds(3), FDSTORE=1;
// the unit's FileDescriptorStoreMax=, systemd.service(5)). systemd keeps the
// stored fds across `systemctl restart` and Restart= (the unit does not go
// inactive in between), and closes them when the unit stops: a consumer
// then sees its connection close, drains its buffers and exits, as it does
// when a daemon without an fd store exits. A restarted daemon gets them
// back with LISTEN_FDS/LISTEN_FDNAMES (sd_listen_fds_with_names(3)), next to
// its socket-activated app socket.
//
// Without a service manager ($NOTIFY_SOCKET unset: the direct spawner,
// tracectld run by hand) nothing is stored and nothing survives a restart.
//
// Threads: the main loop's only.
#pragma once

#include "common/unique_fd.hpp"

#include <map>
#include <string>
#include <vector>

namespace tracectl {

/// FDNAME= prefix of a stored consumer connection; the session's id in hex
/// (32 lowercase digits) follows.
inline constexpr std::string_view kConsumerFdNamePrefix = "consumer-";

class ConsumerFdStore {
public:
    /// `passed`: the connections a previous daemon stored, by session id
    /// hex (from takeActivationSockets()). Storing is enabled when
    /// $NOTIFY_SOCKET is set (read now).
    explicit ConsumerFdStore(std::map<std::string, UniqueFd> passed = {});
    ConsumerFdStore(const ConsumerFdStore&) = delete;
    ConsumerFdStore& operator=(const ConsumerFdStore&) = delete;

    /// True when a service manager may keep fds for this daemon.
    bool enabled() const noexcept { return enabled_; }
    /// Stores `fd` (systemd gets its own duplicate) as session `idHex`'s
    /// connection, replacing any stored before. Returns false, logged, if
    /// not enabled or the manager refused (a unit without
    /// FileDescriptorStoreMax= drops it, and only its journal says so).
    bool keep(const std::string& idHex, int fd);
    /// Removes session `idHex`'s connection from the store (FDSTOREREMOVE=1),
    /// if one was kept: once every other copy is closed too, its consumer
    /// sees the connection close.
    void forget(const std::string& idHex);
    /// True if a previous daemon stored a connection for `idHex` that was
    /// not taken yet.
    bool has(const std::string& idHex) const { return passed_.count(idHex) != 0; }
    /// The connection a previous daemon stored for `idHex` (empty if none);
    /// still in systemd's store (keep() again is not needed).
    UniqueFd take(const std::string& idHex);
    /// Every connection passed and not taken: removed from the store and
    /// closed (their consumers drain and exit). Returns their session ids.
    std::vector<std::string> dropUntaken();

private:
    bool enabled_ = false;
    std::map<std::string, UniqueFd> passed_;
};

/// "consumer-<idHex>" if `name` is such an FDNAME= with a well-formed id
/// (32 lowercase hex digits): the id; else "".
std::string sessionOfConsumerFdName(std::string_view name);

} // namespace tracectl
