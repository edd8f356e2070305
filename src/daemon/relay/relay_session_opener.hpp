// What the session daemon does on a network session's relay before its
// consumer streams there (lttng-tools 2.13 src/bin/lttng-sessiond/cmd.c,
// consumer.c: the session daemon connects to lttng-relayd, sends VERSION,
// GET_CONFIGURATION and CREATE_SESSION on the control connection, connects
// the data connection, then hands both sockets to the consumer). These are
// blocking calls, each bounded by a deadline: run them on an executor,
// never on the main loop.
#pragma once

#include "common/error.hpp"
#include "common/unique_fd.hpp"
#include "session/relay_address.hpp"

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace tracectl {

/// How long one connection attempt or one exchange with the relay may take.
inline constexpr std::chrono::milliseconds kRelayTimeout{5'000};
/// Threads of each executor that talks to relays: how many relays that
/// stall may be waited for at once before the next waits its turn.
inline constexpr std::size_t kRelayThreads = 4;

/// What CREATE_SESSION needs of the session.
struct RelaySessionParams {
    RelayAddress address;
    std::string sessionName;
    std::string hostname;     ///< this machine's, as the relay's folders show it
    uint32_t liveTimerUs = 0; ///< 0: not a live session
    /// A snapshot's relay session (CREATE_SESSION's snapshot flag, as
    /// lttng-sessiond sets it for a snapshot output, consumer.c
    /// consumer_send_relayd_socket: the relay keeps no index for its
    /// streams and names a closed chunk <session folder>/<chunk name>).
    bool snapshot = false;
    std::array<uint8_t, 16> daemonUuid{}; ///< not all zero (the relay refuses a nil one)
    uint64_t sessionId = 0;               ///< ours, unique in this daemon
    uint64_t creationTime = 0;            ///< seconds since the Epoch
};

/// A relay session made, and the two connected sockets for the consumer.
struct OpenedRelaySession {
    UniqueFd control;
    UniqueFd data;
    uint64_t relaySessionId = 0;
    uint32_t minor = 0;     ///< the protocol minor both sides use (2.<minor>)
    std::string outputPath; ///< where the relay writes it, below its -o folder
};

/// Connects both endpoints, negotiates the version, asks the configuration
/// and creates the session. Throws tracectl::Error(RelayUnavailable) whose
/// message names the URL and the failure ("cannot stream to the relay at
/// net://127.0.0.1:5342:5343: cannot connect to the relay at
/// 127.0.0.1:5342: Connection refused"), or Error(InvalidArgument) for a
/// session the protocol cannot carry (a name too long).
OpenedRelaySession openRelaySession(const RelaySessionParams& params,
                                    std::chrono::milliseconds timeout = kRelayTimeout);

/// Manager.CreateSession's check: the relay answers on both endpoints and
/// speaks a protocol version we can use (VERSION on the control
/// connection); then both connections are closed. Throws as
/// openRelaySession().
void probeRelay(const RelayAddress& address, std::chrono::milliseconds timeout = kRelayTimeout);

/// This host's name for the relay's folders (gethostname(2)); "localhost"
/// if it has none.
std::string relayHostname();

/// A random UUID made once per daemon process: the relay tells session
/// daemons apart by it (lttng-sessiond's sessiond_uuid).
const std::array<uint8_t, 16>& daemonRelayUuid();

} // namespace tracectl
