// The app thread: accepts LTTng-UST application connections, reads their
// registration messages, pairs command and notify sockets, completes the
// registration (tracer version, register_done), and runs every later
// command round trip to apps. It has its own sd-event loop so that a slow
// or hostile app delays only this thread, never the D-Bus loop. Reading a
// registration message never blocks (it is read once all of it is queued);
// the round trips after it are bounded per app: the first one that fails or
// times out (kAppSocketTimeout) drops the app, so a hostile app costs this
// thread one timeout at most.
#pragma once

#include "common/event_loop.hpp"
#include "common/unique_fd.hpp"
#include "pending_registrations.hpp"
#include "per_uid_quota.hpp"
#include "socket_deadlines.hpp"
#include "ust_app.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <lttng/ust-abi.h>
#include <map>
#include <memory>
#include <sys/epoll.h>
#include <thread>
#include <vector>

namespace tracectl {

/// Bound on every blocking call on an app socket (SO_RCVTIMEO/SO_SNDTIMEO);
/// the first call that exceeds it drops the app (no further call is made).
/// lttng-sessiond's default app socket timeout is 5 s.
inline constexpr std::chrono::seconds kAppSocketTimeout{3};
/// How long the first socket of an app waits for its second one, and how
/// long a connection may take to send its whole registration message.
inline constexpr std::chrono::seconds kPairingTimeout{5};
// Bounds on what peers of the app socket can make the daemon hold. The
// socket is world-connectable (0666, as liblttng-ust expects), so each bound
// is split by peer uid (SO_PEERCRED, per_uid_quota.hpp): a uid that uses up
// its share is refused (a rate-limited warning names it) while other uids
// go on registering. Each total is a backstop for the daemon's own
// resources (fds, threads), at least four shares so that no single uid can
// reach it: only that many colluding uids could. A legitimate app holds one
// unit of each for milliseconds, so a share is far more than one user's
// burst of starting apps.

/// Most connections of one uid waiting for their registration message at
/// once (each is dropped after kPairingTimeout): 1/16 of the total.
inline constexpr std::size_t kMaxUnregisteredConnectionsPerUid = 64;
/// Most connections of all uids waiting for their registration message at
/// once: 16 uids would have to fill their shares to reach it.
inline constexpr std::size_t kMaxUnregisteredConnections = 1024;
/// Most registered sockets of one uid waiting for the other socket of their
/// app (each for kPairingTimeout at most): 1/16 of the total.
inline constexpr std::size_t kMaxPendingHalvesPerUid = 64;
/// Most registered sockets of all uids waiting for their app's other socket.
inline constexpr std::size_t kMaxPendingHalves = 1024;
/// Most apps of one uid whose first round trip (the tracer version query)
/// runs at once. A peer that registers both sockets and never answers holds
/// one for kAppSocketTimeout: 1/4 of the total.
inline constexpr std::size_t kMaxVersionQueriesPerUid = 16;
/// Most apps of all uids whose tracer version query runs at once, each on a
/// worker thread of its own; more are refused (logged) until some finish.
/// lttng-ust connects again later.
inline constexpr std::size_t kMaxVersionQueries = 64;

class UstAppThread {
public:
    /// Called on the app thread with each app whose registration completed.
    using RegisteredHandler = std::function<void(std::shared_ptr<UstApp>)>;
    /// Called on the app thread before register_done: sets the app up for
    /// the active sessions, so it loses no event after its constructor, and
    /// calls `ready` (once, on the app thread) when register_done may go.
    using SetupHandler =
        std::function<void(const std::shared_ptr<UstApp>&, std::function<void()> ready)>;

    /// Starts the thread serving `listenFd` (from listenForApps()).
    UstAppThread(UniqueFd listenFd, RegisteredHandler onRegistered, SetupHandler setUp = {});
    /// Stops the thread and closes every socket it still holds.
    ~UstAppThread();
    UstAppThread(const UstAppThread&) = delete;
    UstAppThread& operator=(const UstAppThread&) = delete;

    /// Thread-safe: runs `job` on the app thread (command round trips).
    void submit(std::function<void()> job) { loop_.post(std::move(job)); }
    /// The app thread's loop, for sources of work owned on that thread.
    EventLoop& loop() noexcept { return loop_; }

    /// The watchdog bounding whole exchanges with apps (socket_deadlines.hpp):
    /// each registration gets kAppSocketTimeout in all; the tracer uses it
    /// for its own exchanges.
    SocketDeadlines& deadlines() noexcept { return deadlines_; }

    /// Calls `onHangUp` once, on the app thread, when the peer of socket
    /// `fd` closes or shuts its end down (EPOLLRDHUP/EPOLLHUP/EPOLLERR), or
    /// when one of `events` (epoll bits) occurs: EPOLLIN for a pidfd
    /// fires when its process has exited. Call on the app thread; the watch
    /// ends when the returned source is freed, which must happen before
    /// `fd` is closed. Throws std::system_error.
    EventSourcePtr watchHangUp(int fd, std::function<void()> onHangUp,
                               uint32_t events = EPOLLRDHUP);

private:
    struct Connection {
        UniqueFd fd;
        EventSourcePtr source;
        std::chrono::steady_clock::time_point since;
        PerUidQuota::Slot slot; // of unregisteredQuota_
    };

    void run();
    static int onAccept(sd_event_source* s, int fd, uint32_t revents, void* userdata);
    static int onRegistrationMessage(sd_event_source* s, int fd, uint32_t revents, void* userdata);
    static int onSweep(sd_event_source* s, uint64_t usec, void* userdata);
    void readRegistration(int fd, uint32_t revents);
    /// A paired app: asks its tracer version on a worker thread, so an app
    /// that never answers holds up nobody else; finish() goes on.
    void complete(UstApp app);
    /// Back on the app thread with the version query's outcome `r`: has the
    /// app set up for the active sessions, then sends register_done.
    void finish(const std::shared_ptr<UstApp>& app, int r, lttng_ust_abi_tracer_version v);

    /// A version query in flight: its worker and its app (cut off at exit).
    struct VersionQuery {
        std::shared_ptr<UstApp> app;
        std::jthread worker;
        PerUidQuota::Slot slot; // of versionQuota_
    };

    SocketDeadlines deadlines_; // outlives the threads using it
    // Before everything holding their slots, so they outlive them all.
    PerUidQuota unregisteredQuota_{kMaxUnregisteredConnectionsPerUid, kMaxUnregisteredConnections};
    PerUidQuota pendingQuota_{kMaxPendingHalvesPerUid, kMaxPendingHalves};
    PerUidQuota versionQuota_{kMaxVersionQueriesPerUid, kMaxVersionQueries};
    EventLoop loop_;
    std::map<uint64_t, VersionQuery> versionQueries_; // app thread; joined before loop_ goes
    uint64_t nextQuery_ = 1;
    UniqueFd listenFd_;
    RegisteredHandler onRegistered_;
    SetupHandler setUp_;
    EventSourcePtr listenSource_;
    EventSourcePtr sweepTimer_;
    std::map<int, Connection> unregistered_; // by fd
    PendingRegistrations pending_;
    std::thread thread_;
};

/// `raw` (a comm name, not necessarily terminated or UTF-8) as printable
/// ASCII: at most `max` bytes, anything outside 0x20-0x7E becomes '?'.
std::string printableProcessName(const char* raw, std::size_t max);

} // namespace tracectl
