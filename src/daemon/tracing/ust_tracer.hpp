// Traces registered LTTng-UST apps for the active sessions (per-UID or
// per-PID buffers): starts each session's consumer, has it create the ring buffers
// of every (uid, bitness), hands the buffers to each app, creates the
// events, starts and stops tracing, has the buffers of exited apps
// (per-PID) drained and closed, and answers the apps' channel/event/enum
// registrations from the CTF metadata registry, pushing the metadata to the
// consumer as it grows. Facts: LTTNG-NOTES.md, ust-ctl.h.
//
// Threads: every public method runs on the app thread (UstAppThread), which
// owns the sessions and apps; the notify handler runs on the NotifyThread.
// They share the metadata registries and the consumer sockets under
// `shared_` (no app round trip is made while holding it), and the app-handle
// routes through an RCU hash table (handle_routes.hpp).
#pragma once

#include "apps/socket_deadlines.hpp"
#include "apps/ust_app.hpp"
#include "common/event_loop.hpp"
#include "consumer/consumer_client.hpp"
#include "consumer/consumer_launcher.hpp"
#include "handle_routes.hpp"
#include "metadata/trace_registry.hpp"
#include "session_snapshot.hpp"

#include <chrono>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace tracectl {

/// How consumers are started and found.
struct TracerConfig {
    std::string consumerBinary; ///< tracectl-consumerd
    std::string systemdAddress; ///< "" = system bus; used when useSystemd
    bool useSystemd = true;     ///< false: fork/exec
    std::string daemonVersion;
};

class UstTracer {
public:
    explicit UstTracer(TracerConfig config);
    ~UstTracer();
    UstTracer(const UstTracer&) = delete;
    UstTracer& operator=(const UstTracer&) = delete;

    /// A new app (before register_done): traced by every active session
    /// that may trace it. Never throws; failures are logged.
    void onAppRegistered(const std::shared_ptr<UstApp>& app);
    /// An app's sockets closed: forget it (its buffers stay with the consumer).
    void onAppGone(pid_t pid);

    /// Starts tracing `s` (first start: starts its consumer). Throws Error.
    void start(const SessionSnapshot& s);
    /// Stops tracing `s` and flushes every buffer to disk. Throws Error.
    void stop(const std::string& idHex);
    /// Adds `rule` to session `idHex` if it runs (else nothing: the next
    /// start() brings it) and creates its events in every app the session
    /// traces. An app that refuses is logged and keeps its other rules.
    void enableEvents(const std::string& idHex, const EventRule& rule);
    /// The session records every uid's apps from now on (its owner holds
    /// trace-all-users); if it runs, apps of other uids registered already
    /// are set up and started at once.
    void traceAllUsers(const std::string& idHex);
    /// Stops if needed, closes every buffer and ends the consumer. A
    /// rotation under way completes first (or fails, if the consumer cannot
    /// finish it): its `done` is called before this returns.
    void destroy(const std::string& idHex) noexcept;

    /// Told (on the app thread) that a rotation is over: nullopt and the
    /// archive's path, or the error (the archive may be incomplete).
    using RotationDone = std::function<void(std::optional<Error>, const std::string& path)>;
    /// Closes the current trace chunk of session `idHex` and opens the next
    /// (active or stopped): the consumer switches each stream once it has
    /// read what was produced before now, then moves the closed chunk to
    /// `<output>/archives/<begin>-<end>-<index>/` (trace_paths.hpp) and says
    /// so; `done` is called then, never before this returns. Returns that
    /// archive's absolute path. Time stamps never go back, even if the
    /// clock does. Throws Error: WrongState (never started, failed, a
    /// rotation under way), Failed (the consumer refused).
    std::string rotate(const std::string& idHex, RotationDone done);

    /// Writes the current content of every buffer of snapshot session
    /// `idHex` (active or stopped) as a complete trace in a new folder
    /// `<output>/snapshot-1-<YYYYmmdd-HHMMSS>-<n>/` (LTTng's default snapshot
    /// output name; n counts this session's snapshots from 0), made as the
    /// session's owner (the output folder too, if it was deleted), with the
    /// same layout as a normal trace (ust/uid/..., ust/pid/...). `maxSize`
    /// (bytes, 0 = no bound) bounds the sum of the data streams: each
    /// stream keeps at most its newest n sub-buffers, n the largest count for
    /// which n sub-buffers of every stream fit (as lttng snapshot record).
    /// Returns the folder's absolute path once written. Runs on the session's
    /// own consumer (snapshot_record.cpp says why). Throws Error: WrongState
    /// (never started, not a snapshot session, consumer gone),
    /// InvalidArgument (maxSize below one sub-buffer of every stream; the
    /// folder cannot be made), Failed (the consumer could not write it all).
    std::string recordSnapshot(const std::string& idHex, uint64_t maxSize);

    /// Session `idHex` rotates on its own while active: every
    /// `schedule.timerUs`, and once its current chunk holds
    /// `schedule.sizeBytes` (checked every 100 ms at most; a period
    /// shorter than that is checked at its own pace). `started` and `done`
    /// are told of each such rotation (RotationDone's path is the archive);
    /// a rotation still under way when one is due is not doubled. An
    /// empty schedule ends it. Kept across start/stop; gone with destroy().
    void setRotationSchedule(const std::string& idHex, RotationSchedule schedule,
                             RotationDone started, RotationDone done);

    /// Bounds each exchange with one app (setting a session up in it,
    /// starting, stopping, enabling events) to kAppSocketTimeout in all.
    /// Set before the first start; optional (per-call bounds still hold).
    void boundExchanges(SocketDeadlines* deadlines) { deadlines_ = deadlines; }

    /// Watches `fd` for its peer hanging up, or for `events` (epoll bits;
    /// EPOLLIN on a pidfd: the process exited) (UstAppThread::watchHangUp).
    using HangUpWatcher =
        std::function<EventSourcePtr(int fd, std::function<void()>, uint32_t events)>;
    /// Told (on the app thread) that session `idHex` failed, and why.
    using FailureHandler = std::function<void(const std::string& idHex, const std::string& why)>;
    /// How consumers are watched: when a session's consumer closes its
    /// socket (it exited, was killed or stopped), the session is marked
    /// failed (Stop and Start then fail, Destroy just forgets it; what the
    /// consumer wrote stays on disk) and `onFailure` is told, with the unit's
    /// ActiveState/Result or the process's exit as the reason. Set before
    /// the first start. `watcher` also tells when exited per-PID apps are
    /// really gone (their pidfd), so their buffers can be drained.
    void watchConsumers(HangUpWatcher watcher, FailureHandler onFailure);

    /// Notify-thread entry: one message from `app`'s notify socket.
    /// Returns false if the app must be dropped.
    bool handleNotify(UstApp& app);

private:
    struct Channel {
        std::string name;
        uint32_t chanId = 0;
        std::vector<std::string> contexts; ///< context_type.hpp names
        ConsumerChannel objects;
    };
    struct Trace {
        uid_t uid = 0;
        uint32_t bitness = 0;
        std::string dir;   ///< trace-relative, "ust/uid/<uid>/<bits>-bit"
        metadata::Abi abi; ///< the first app's; later apps must match
        std::unique_ptr<metadata::TraceRegistry> registry;
        ConsumerChannel metadata;
        std::size_t pushed = 0;
        std::vector<Channel> channels;
    };
    struct AppInSession {
        std::shared_ptr<UstApp> app;
        int sessionHandle = -1;
        std::map<std::string, UstObject> channels; // by name, as the app knows them
        std::vector<UstObject> objects;            // its contexts and events
    };
    struct Traced {
        SessionSnapshot snapshot;
        ConsumerSpec spec;
        std::unique_ptr<ConsumerLauncher> launcher;
        std::unique_ptr<ConsumerClient> consumer;
        /// (uid, bitness) per-UID; (pid, bitness) per-PID.
        std::map<std::pair<uint32_t, uint32_t>, std::unique_ptr<Trace>> traces;
        /// Snapshot sessions, per-PID: the traces of exited apps, whose
        /// buffers the consumer keeps for later snapshots until destroy.
        std::vector<std::unique_ptr<Trace>> exited;
        std::map<pid_t, AppInSession> apps;
        bool active = false;
        bool failed = false;
        uint64_t nextKey = 1;
        /// (st_dev, st_ino) of the output folder when the consumer started.
        std::pair<dev_t, ino_t> outputFolder{};
        // Trace chunks: the current one's index, folder ("" = the output
        // folder) and start; the last stamp given (never goes back).
        uint64_t chunkIndex = 0;
        std::string chunkDir;
        std::time_t chunkBegin = 0;
        std::time_t lastStamp = 0;
        uint64_t nextRotationId = 1;
        struct Rotation {
            uint64_t id = 0;
            std::string path; ///< absolute archive folder
            RotationDone done;
        };
        std::optional<Rotation> rotating;
        uint64_t snapshotsTaken = 0; ///< RecordSnapshot: the next folder's <n>
        // The rotation schedule's ticks (timerfd), before its watch.
        UniqueFd scheduleTimer;
        EventSourcePtr scheduleWatch;
        std::chrono::steady_clock::time_point nextTimedRotation;
        // Both before `consumer` closes: declared after it. The consumer's
        // socket (its news, or its hang-up) and its completed-rotations fd.
        EventSourcePtr consumerWatch;
        EventSourcePtr completedWatch;
    };

    /// Sets `app` up in the running session `t` and starts it there;
    /// a failure is logged (the app goes on untraced by `t`).
    void joinRunning(Traced& t, const std::shared_ptr<UstApp>& app);
    bool mayTrace(const Traced& t, const UstApp& app) const;
    /// Throws Error(WrongState) if the (non-snapshot) session's output
    /// folder is no longer the one its consumer was started on.
    void checkOutputFolderKept(const Traced& t) const;
    void startConsumer(Traced& t);
    /// The consumer of session `idHex` hung up: fail the session.
    void consumerGone(std::string idHex); // a copy: the watch holding it goes
    /// The consumer of `idHex` sent something or hung up: rotations it
    /// finished are completed, a hang-up fails the session.
    void serviceConsumer(const std::string& idHex);
    /// Calls the `done` of every rotation of `t` the consumer finished.
    void completeRotations(Traced& t, std::vector<consumer_protocol::RotationCompleted> done);
    /// (Re)arms the schedule's ticks of `t`, or ends them.
    void armSchedule(Traced& t);
    /// A tick of `idHex`'s schedule: rotates if due.
    void scheduleTick(const std::string& idHex);
    /// The rotation under way, if any, fails with `why`.
    void abandonRotation(Traced& t, const std::string& why);
    /// Marks `t` failed for good (state error, `why` as its reason), stops
    /// its consumer if it still runs.
    void failSession(Traced& t, const std::string& why);
    /// The per-UID trace of `app`'s (uid, bitness), made on first use.
    /// Throws Error(Failed) if `app`'s ABI differs from the trace's. Call
    /// with shared_ held.
    Trace& traceFor(Traced& t, const UstApp& app);
    void setUpApp(Traced& t, const std::shared_ptr<UstApp>& app);
    /// Per-PID: the app of trace `key` exited; has the consumer drain and
    /// close its channels, then forgets the trace. Call after the app's
    /// routes are gone and synchronized. Never throws (logged).
    /// After `app` failed to be set up in `t`: retires the per-PID trace made
    /// for it, if any (per-UID traces stay for the uid's other apps).
    void abandonSetUp(Traced& t, const UstApp& app);
    void retirePerPidTrace(Traced& t, std::pair<uint32_t, uint32_t> key);
    /// Per-PID traces of app `pid` (bitness `bitness`) in sessions `ids`:
    /// retired once the process has exited (its pidfd says so), since
    /// lttng-ust closes its sockets in a destructor while other threads
    /// of the app may still write.
    void retireWhenExited(pid_t pid, uint32_t bitness, std::vector<std::string> ids);
    /// Declares the channels of `trace` no app registered (TraceRegistry::
    /// declareUnregisteredChannels) and pushes the metadata. Caller holds shared_.
    void declareUnregisteredChannels(Traced& t, Trace& trace);
    void pushMetadata(Traced& t, Trace& trace); // holds shared_
    /// Drops our copies of `trace`'s channels and has the consumer read
    /// each to the end and close it (DestroyChannel), metadata last.
    /// Throws Error as the consumer client does. Caller holds shared_.
    void closeInConsumer(Traced& t, Trace& trace);
    /// Creates, configures and enables the events of `rule` on the app's
    /// channel `chan`; the event object joins `a.objects`. Throws Error.
    void createEvent(AppInSession& a, lttng_ust_abi_object_data* chan, const EventRule& rule);

    /// An armed budget for one exchange with `app`, if boundExchanges() was given.
    std::optional<SocketDeadlines::Armed> budgetFor(const UstApp& app);

    TracerConfig config_;
    SocketDeadlines* deadlines_ = nullptr;
    HangUpWatcher hangUpWatcher_;
    FailureHandler onFailure_;
    std::map<std::string, std::unique_ptr<Traced>> sessions_; // app thread only
    std::map<pid_t, std::shared_ptr<UstApp>> apps_;           // app thread only
    /// A pidfd of each registered app (pidfd_open at registration; absent
    /// if that failed), and the watches of exited apps not yet gone.
    std::map<pid_t, UniqueFd> pidfds_;
    struct Scheduled {
        RotationSchedule schedule;
        RotationDone started, done;
    };
    std::map<std::string, Scheduled> schedules_; // by session, app thread only
    std::map<pid_t, std::pair<UniqueFd, EventSourcePtr>> exitWatches_;

    /// The session and trace of an app's session handle; the channel id of
    /// an app's channel handle. Inside an RcuReadSection only. Throw
    /// std::out_of_range for an unknown handle.
    std::pair<Traced&, Trace&> routeOf(pid_t pid, int sessionHandle) const;
    uint32_t channelIdOf(pid_t pid, int channelHandle) const;
    /// Forgets the routes of every object `a` holds in its app.
    void eraseRoutes(pid_t pid, const AppInSession& a);

    std::mutex shared_; // guards the registries and the consumer sockets
    /// (pid, session or channel handle) -> Traced, Trace, channel id: read by
    /// the notify thread without locks (RCU); see handle_routes.hpp for
    /// when a Traced may be freed.
    HandleRoutes routes_;
};

} // namespace tracectl
