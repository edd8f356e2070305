// The app thread: accepts LTTng-UST application connections, reads their
// registration messages, pairs command and notify sockets, completes the
// registration (tracer version, register_done), and owns the tracer's
// state (the tracer's own round trips to apps run on its app strands,
// app_strands.hpp, and post their results here). It has its own sd-event
// loop so that a slow or hostile app delays only this thread, never the
// D-Bus loop. Reading a registration message never blocks (it is read once
// all of it is queued); the round trips after it are bounded per app: the
// first one that fails or times out (kAppSocketTimeout) drops the app, so a
// hostile app costs this thread one timeout at most.
#pragma once

#include "common/event_loop.hpp"
#include "common/unique_fd.hpp"
#include "fair_queue.hpp"
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
// its share pays for it itself while other uids go on registering. Each
// total is a backstop for the daemon's own resources (fds, threads), at
// least four shares so that no single uid can reach it.
//
// What tells a hostile flood from a burst of real apps is what a peer does,
// not how many peers there are: a real app sends its registration message
// right after connecting, its second socket right after its first, and
// answers the tracer version query at once. So what waits on the app
// itself is bounded by small counts and by time (a connection without a
// message, kPairingTimeout), while what waits on the daemon (apps whose
// turn has not come) is queued, in order and fairly across uids
// (fair_queue.hpp), bounded only by the file descriptors it holds
// (waitingFdShares(): a share of RLIMIT_NOFILE). Nothing is closed for
// being one too many of a burst: an app is dropped only if it breaks the
// protocol, stays silent past a timeout, or its uid holds its whole share
// of the daemon's file descriptors.

/// Most connections of one uid without a complete registration message at
/// once (each is dropped after kPairingTimeout): 1/16 of the total. A
/// connection whose message is already there when it is accepted never
/// counts. When a uid holds its share, its connection waiting longest is
/// closed to make room for the new one (a real app sends its message
/// within microseconds of connecting, so the oldest silent one is the
/// least likely to be one).
inline constexpr std::size_t kMaxUnregisteredConnectionsPerUid = 64;
/// Most connections of all uids without a complete registration message at
/// once: at the total, the oldest of the uid holding the most is closed to
/// make room; 16 uids would have to fill their shares to reach it.
inline constexpr std::size_t kMaxUnregisteredConnections = 1024;
/// Most apps of one uid whose first round trip (the tracer version query)
/// runs at once, each on a worker thread of its own: 1/4 of the total. A
/// peer that registers both sockets and never answers holds one for
/// kAppSocketTimeout. More apps of the uid wait for their turn, in order.
inline constexpr std::size_t kMaxVersionQueriesPerUid = 16;
/// Most apps of all uids whose tracer version query runs at once (worker
/// threads); more wait for their turn, served fairly across uids.
inline constexpr std::size_t kMaxVersionQueries = 64;

class UstAppThread {
public:
    /// Called with each app whose registration completed, on the thread
    /// that ran `ready` (see SetupHandler): must be thread-safe.
    using RegisteredHandler = std::function<void(std::shared_ptr<UstApp>)>;
    /// Called on the app thread before register_done: sets the app up for
    /// the active sessions, so it loses no event after its constructor, and
    /// calls `ready` once, from any thread, when register_done may go: it
    /// makes that round trip itself and touches only the app it holds and
    /// thread-safe things (the registered handler must be thread-safe).
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
        uid_t uid = 0;
        uint64_t seq = 0;       // its place in idleOrder_
        PerUidQuota::Slot slot; // of unregisteredQuota_
    };

    /// A paired app waiting for its turn to ask its tracer version.
    struct QueuedApp {
        UstApp app;
        PerUidQuota::Slot fds; // of waitingFds_: its two sockets
        EventSourcePtr hangUp; // takes it out of the line if it leaves
    };

    void run();
    static int onAccept(sd_event_source* s, int fd, uint32_t revents, void* userdata);
    static int onRegistrationMessage(sd_event_source* s, int fd, uint32_t revents, void* userdata);
    static int onSweep(sd_event_source* s, uint64_t usec, void* userdata);
    /// A connection just accepted from a peer of `uid`: registered at once
    /// if its message is there, else held (unregisteredQuota_) until it is.
    void admit(UniqueFd fd, uid_t uid);
    /// Makes room for a connection of `uid` without a message: closes the
    /// oldest such connection of `uid` if it holds its share, or of the uid
    /// holding the most if all uids hold the total. False if none could be.
    bool makeRoomForIdle(uid_t uid);
    void dropUnregistered(std::map<int, Connection>::iterator it);
    void readRegistration(int fd, uint32_t revents);
    /// Reads the whole registration message queued on `sock` (never blocks)
    /// and pairs the socket with its app's other one.
    void registerSocket(UniqueFd sock);
    /// A paired app: queued for its turn (fair across uids); it is dropped
    /// only if its uid holds its whole share of waitingFds_.
    void complete(UstApp app);
    /// Starts the version queries of queued apps while their uid and the
    /// total allow (kMaxVersionQueriesPerUid, kMaxVersionQueries).
    void startQueued();
    /// Asks `app`'s tracer version on a worker thread, holding `slot` (of
    /// versionQuota_), so an app that never answers holds up nobody else;
    /// finish() goes on.
    void queryVersion(UstApp app, PerUidQuota::Slot slot);
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
    /// File descriptors of registered sockets not yet handed to a version
    /// query: halves waiting for their app's other socket (one each) and
    /// paired apps waiting for their turn (two each); waitingFdShares() of
    /// the daemon's RLIMIT_NOFILE when the thread starts.
    PerUidQuota waitingFds_;
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
    /// The fds of unregistered_ by uid, oldest first (seq grows).
    std::map<std::pair<uid_t, uint64_t>, int> idleOrder_;
    uint64_t nextIdleSeq_ = 1;
    PendingRegistrations pending_;
    FairQueue<QueuedApp> queued_; // before loop_ goes: its sources are freed with it
    std::thread thread_;
};

/// `raw` (a comm name, not necessarily terminated or UTF-8) as printable
/// ASCII: at most `max` bytes, anything outside 0x20-0x7E becomes '?'.
std::string printableProcessName(const char* raw, std::size_t max);

} // namespace tracectl
