// Traces registered LTTng-UST apps for the active sessions (per-UID or
// per-PID buffers): starts each session's consumer, has it create the ring
// buffers of every (uid, bitness) or (pid, bitness), hands the buffers to
// each app, creates the events, starts and stops tracing, has the buffers of
// exited apps (per-PID) drained and closed, and answers the apps'
// channel/event/enum registrations from the CTF metadata registry, pushing
// the metadata to the consumer as it grows. Facts: LTTNG-NOTES.md, ust-ctl.h.
//
// Files: ust_tracer.cpp (sessions: start, stop, destroy, failure),
// ust_traces.cpp (traces: creation, metadata, closing), ust_app_setup.cpp
// (apps joining sessions, event rules), ust_notify.cpp (the notify thread's
// registrations), ust_rotation.cpp (rotations and their schedule),
// snapshot_record.cpp (RecordSnapshot).
//
// Threads and ownership:
// - The main loop (given to attach()) owns every member: sessions, apps, traces, consumer
// connections. Every public
//   method but handleNotify() runs there, and every callback is called
//   there. It never waits for a consumer or an app: consumer requests are
//   asynchronous (ConsumerConnection), app round trips run on the app
//   strands (below); both outcomes come back as callbacks. A callback made
//   and called on the loop holds its session (Traced&), guarded with the
//   session's Lifetime (common/lifetime.hpp); one that runs on, or passes
//   through, another thread names it by a SessionRef and finds it again.
// - The app strands ("tc-apps", app_strands.hpp) make every round trip to
//   an app (AppCommands, app_commands.hpp: set-up, start, stop, events).
//   Jobs of one app run one at a time, in order (its command socket is a
//   request/response stream); jobs of different apps run in parallel. A
//   job gets only what it needs (the shared UstApp, for its command fd; our
//   duplicates of the channel and stream objects; the rules) and a budget
//   of kAppSocketTimeout (SocketDeadlines), and posts its result back to
//   the main loop, where AppInSession and the rest are updated. A hung
//   app holds one strand thread for one budget, never the main loop.
//   Orders that matter:
//   - Routes before the app may name a handle: the set-up job adds each
//     route (pending_routes.hpp) as soon as the app gives the handle,
//     before its next call. The main loop may cancel them at any moment
//     (the app left: onAppGone(); the session goes: destroy(), forget());
//     after cancel() and synchronize() no route to the session is left,
//     whatever the job does next. A result that finds its set-up cancelled
//     (no longer in Traced::settingUp) releases what it made (our copies
//     only) and changes nothing.
//   - One set-up per (session, app): a second join waits for the one in
//     flight (SettingUp::waiters).
//   - Start after set-up, stop after start: the same strand, in order.
//     Start, Stop and EnableEvents answer once their apps' jobs are done.
//   - Rules enabled while a set-up is in flight: the set-up carries the
//     enabled rules known when it began; the others, and the rules and
//     channels disabled or enabled meanwhile, follow once it is done
//     (syncApp(), ust_disable.cpp), before the app starts, so each event
//     reaches the app once.
//   - register_done (onAppRegistered()'s `ready`) after the joins: it runs
//     on the app's strand (withApp()), so no job of the
//     app uses its socket meanwhile.
// - The notify thread calls handleNotify(). It reaches a trace through the
//   RCU handle routes (handle_routes.hpp), and touches only the trace's
//   metadata registry, under that trace's registryMutex (held for
//   in-memory work only), then posts a metadata push to the main loop.
// - One consumer launcher (systemd: one manager connection for every
//   session; or fork/exec), made on the main loop at the first start and
//   attached to its loop: starting, stopping and watching consumer units
//   are asynchronous calls whose callbacks come there.
// - Executors own nothing but what their jobs are given: "tc-objects"
//   reads CreateChannel's ring-buffer objects, "tc-foldermake" makes the
//   output and snapshot folders (a child process as the owner).
// No lock is held across a round trip to another process.
#pragma once

#include "app_set_up.hpp"
#include "apps/app_commands.hpp"
#include "apps/app_strands.hpp"
#include "apps/socket_deadlines.hpp"
#include "apps/ust_app.hpp"
#include "common/event_loop.hpp"
#include "common/executor.hpp"
#include "common/lifetime.hpp"
#include "handle_routes.hpp"
#include "metadata/trace_registry.hpp"
#include "pending_routes.hpp"
#include "recording/consumer_connection.hpp"
#include "recording/consumer_launcher.hpp"
#include "recording/session_consumers.hpp"
#include "relay/relay_session_opener.hpp"
#include "session/session_snapshot.hpp"
#include "session/session_statistics.hpp"

#include <chrono>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tracectl {

class Join;
class ConsumerFdStore;

/// How consumers are started and found.
struct TracerConfig {
    std::string consumerBinary; ///< tracectl-consumerd
    std::string systemdAddress; ///< "" = system bus; used when useSystemd
    bool useSystemd = true;     ///< false: fork/exec
    std::string daemonVersion;
    /// Deadline of one consumer request (ConsumerConnection).
    std::chrono::milliseconds consumerTimeout = kConsumerReplyTimeout;
    /// MemoryMax= of every consumer unit, bytes (0: none). Sessions whose
    /// ring buffers would need more are refused at Start.
    uint64_t consumerMemoryMax = 0;
    /// Where the sessions' consumer connections are kept across a restart,
    /// and found again (nullptr: nowhere). Outlives the tracer.
    ConsumerFdStore* fdStore = nullptr;
};

/// "12 MiB" (rounded up), for messages.
std::string mebibytes(uint64_t bytes);

/// A registering app's register_done waits for the sessions whose buffers
/// are still being made, but not for a consumer that has answered nothing
/// for kUnresponsiveConsumer while a request waited (it may be stopped; a
/// busy one answers something every little while), and never
/// longer than kJoinBeforeRegisterDone in all: past that, the app goes on
/// and such a session joins it once its buffers exist. Below lttng-ust's
/// default register timeout (3 s, LTTNG_UST_REGISTER_TIMEOUT).
inline constexpr std::chrono::milliseconds kJoinBeforeRegisterDone{2000};
inline constexpr std::chrono::milliseconds kUnresponsiveConsumer{100};

class UstTracer final : public SessionConsumers {
public:
    /// Outcome of an operation: nullopt, or the error.
    using Done = std::function<void(std::optional<Error>)>;
    /// Outcome and path of a rotation's archive or a snapshot's folder.
    using RotationDone = std::function<void(std::optional<Error>, const std::string& path)>;
    /// Watches `fd` for its peer hanging up, or for `events` (epoll bits;
    /// EPOLLIN on a pidfd: the process exited) (UstAppRegistrar::watchHangUp).
    using HangUpWatcher =
        std::function<EventSourcePtr(int fd, std::function<void()>, uint32_t events)>;
    /// Told (on the main loop) that session `idHex` failed, and why.
    using FailureHandler = std::function<void(const std::string& idHex, const std::string& why)>;

    /// `commands` makes the round trips to apps (a fake in tests).
    explicit UstTracer(TracerConfig config,
                       std::shared_ptr<AppCommands> commands = makeUstAppCommands());
    /// Drops every session without waiting for anyone: each consumer sees
    /// its connection close, drains its buffers and exits (tracectl-consumerd(8)).
    ~UstTracer() override;
    /// What the destructor does, earlier (daemon exit, before the kernel
    /// domain lets its instances go: the consumers' fds must close first).
    /// Idempotent.
    void dropAll();
    UstTracer(const UstTracer&) = delete;
    UstTracer& operator=(const UstTracer&) = delete;

    /// Wires the tracer to the main loop: `loop` is its loop (every
    /// method and callback runs there), `watcher` watches fds on it, and
    /// `onFailure` is told when a session fails (its consumer died, stopped
    /// answering, or refused something). Call once, before anything else.
    void attach(EventLoop& loop, HangUpWatcher watcher, FailureHandler onFailure);
    /// Told (on the main loop) how many bytes of ring buffers session
    /// `idHex` takes whenever that changes (a trace made or retired).
    using SizeHandler = std::function<void(const std::string& idHex, uint64_t bytes)>;
    void onBufferSize(SizeHandler handler) { onSize_ = std::move(handler); }
    /// Told (on the main loop) what session `idHex`'s consumer wrote,
    /// whenever it reports new figures (at most about once a second while
    /// it writes, and at once when a Stop's flush, a channel's end or a
    /// rotation makes them final).
    using StatisticsHandler =
        std::function<void(const std::string& idHex, const DomainStatistics& statistics)>;
    void onStatistics(StatisticsHandler handler) { onStatistics_ = std::move(handler); }
    /// Bounds each exchange with one app (setting a session up in it,
    /// starting, stopping, enabling events) to kAppSocketTimeout in all
    /// (non-null `deadlines`; null: only the sockets' own per-call bound).
    /// The tracer arms a watchdog of its own: its strand jobs may outlive
    /// the one given.
    void boundExchanges(SocketDeadlines* deadlines) { bounded_ = deadlines != nullptr; }
    /// Runs `job` on app `pid`'s strand (a tc-apps thread), in order with
    /// the tracer's own jobs for the app, so that none uses the app's socket
    /// meanwhile: for round trips made for others (register_done, a
    /// tracepoint list). `job` may touch only what it holds and thread-safe
    /// things (posting to a loop). Thread-safe.
    void withApp(pid_t pid, std::function<void()> job);

    /// A new app (before register_done): joins every active session that
    /// may trace it. `ready` is called once it has joined those whose buffers
    /// exist or come within kJoinBeforeRegisterDone; later sessions join it
    /// on their own. Never throws; failures are logged.
    void onAppRegistered(const std::shared_ptr<UstApp>& app, std::function<void()> ready);
    /// An app's sockets closed: forget it (its buffers stay with the consumer).
    void onAppGone(pid_t pid);

    /// Starts tracing `s` (first start: starts its consumer, then makes the
    /// buffers of every app it may trace, sets each app up, starts them).
    /// `done` gets WrongState (consumer gone, output folder replaced) or
    /// Failed (the consumer could not be started or refused).
    void start(const SessionSnapshot& s, Done done);
    /// A restarted daemon takes over session `s` (of any kind), whose
    /// consumer a previous daemon started and kept in the fd store: the
    /// consumer drains and closes every channel the previous daemon made
    /// into its current trace chunk, which is then archived as a rotation
    /// does (archives/<begin>-<end>-<index>: its metadata was that
    /// daemon's; on the relay for a network session); new buffers are made
    /// in the next chunk. A live session streams on in its chunk, the next
    /// traces in folders of their own (restartSuffix()); a snapshot
    /// session's consumer keeps the previous daemon's user-space buffers
    /// for the next snapshots (a folder of their own). `active`: the
    /// session was recording, and its apps join now, as at start(); else at
    /// the next start(). `done`: nullopt, or why not (Failed: no connection
    /// was kept, the consumer is gone, refused or did not answer); the
    /// session then has no consumer here, and its unit is stopped.
    void adopt(const SessionSnapshot& s, bool active, Done done);
    /// Stops tracing `s` and has every buffer flushed to disk; `done` once
    /// the consumer has. A consumer that fails to flush fails the session.
    void stop(const std::string& idHex, Done done);
    /// Adds `rule` to session `idHex` (the next start() brings it if the
    /// session does not run) and creates its events in every app the
    /// session traces. An app that refuses is logged and keeps its rules.
    /// `done` (nullopt always), if given, once every app traced answered.
    void enableEvents(const std::string& idHex, const EventRule& rule, Done done = nullptr);
    /// The session records every uid's apps from now on (its owner holds
    /// trace-all-users); if it runs, apps of other uids join it at once.
    void traceAllUsers(const std::string& idHex);
    /// Session `idHex` records only the apps `trackers` admit
    /// (ProcessTrackers::admitsUst() of the app's pid, uid and gid as it
    /// registered) from now on (ust_tracking.cpp). If it runs: an app no
    /// longer admitted stops recording at once (stop_session on its
    /// strand, as LTTng takes it out of the session), one admitted again
    /// starts again, and one never set up joins (its buffers are made
    /// then: per-PID, an app never admitted gets none). `done` (nullopt
    /// always: an app's failure is logged) once every app asked answered.
    /// A session not started yet gets them with its start().
    /// `tracesAllUsers`: as traceAllUsers() (its joins are done here too).
    void setProcessTrackers(const std::string& idHex, const ProcessTrackers& trackers,
                            bool tracesAllUsers, Done done);
    /// Stops if needed, has every buffer drained and closed, ends the
    /// consumer. A rotation under way completes first (or fails): its
    /// `done` is called before this one's. `done` gets nullopt always
    /// (what fails is logged, and the consumer is stopped).
    void destroy(const std::string& idHex, Done done);

    /// Closes the current trace chunk of session `idHex` (active or
    /// stopped) and opens the next: the consumer switches each stream once
    /// it has read what was produced before now, then moves the closed
    /// chunk to `<output>/archives/<begin>-<end>-<index>/` (session/trace_paths.hpp)
    /// and says so. `started` gets the archive's absolute path once the
    /// consumer has begun, or the error (WrongState: never started, failed,
    /// a rotation under way; Failed: the consumer refused); then, if it
    /// began, `completed` once the archive is complete, or why it is not.
    /// Time stamps never go back, even if the clock does.
    void rotate(const std::string& idHex, RotationDone started, RotationDone completed);

    /// Session.Clear (ust_clear.cpp): deletes what session `idHex` recorded
    /// so far, tracing going on. A normal session rotates (as rotate(),
    /// active or stopped) into a new chunk whose metadata is whole, and the
    /// consumer deletes the closed chunk instead of archiving it: earlier
    /// archives stay, and the chunk index and archive names go on as after
    /// a rotation (lttng-tools 2.13 clear.c: a rotation with
    /// LTTNG_TRACE_CHUNK_COMMAND_TYPE_DELETE). A snapshot session's consumer
    /// empties its buffers (ClearBuffers). `done` once the files are
    /// deleted (or the buffers emptied), or with WrongState (failed,
    /// still starting, a rotation under way: LTTng's
    /// LTTNG_ERR_ROTATION_PENDING) or Failed (the consumer refused or could
    /// not delete everything). A session never started has nothing to
    /// clear: nullopt at once.
    void clear(const std::string& idHex, Done done);

    /// Writes the current content of every buffer of snapshot session
    /// `idHex` (active or stopped) as a complete trace in a new folder
    /// `<output>/snapshot-1-<YYYYmmdd-HHMMSS>-<n>/` (LTTng's default snapshot
    /// output name; n counts this session's snapshots from 0), made as the
    /// session's owner, with the same layout as a normal trace. `maxSize`
    /// (bytes, 0 = no bound) bounds the sum of the data streams: each
    /// stream keeps at most its newest n sub-buffers, n the largest count for
    /// which n sub-buffers of every stream fit (as lttng snapshot record).
    /// `done` gets the folder's absolute path once written, or WrongState
    /// (never started, not a snapshot session, consumer gone),
    /// InvalidArgument (maxSize below one sub-buffer of every stream; the
    /// folder cannot be made), Failed (the consumer could not write it all).
    void recordSnapshot(const std::string& idHex, uint64_t maxSize, RotationDone done);

    /// Session `idHex` rotates on its own while active: every
    /// `schedule.timerUs` (each period counted from the previous one's
    /// due time, not from when it was handled), and once its current chunk
    /// holds `schedule.sizeBytes` of every domain's streams (the consumer
    /// says so as soon as it wrote them: WatchChunkSize). A rotation
    /// due while one is under way starts as soon as that one completes.
    /// `started` and `done` are told of each (RotationDone's path is the
    /// archive). An empty schedule ends it. Kept across start/stop.
    void setRotationSchedule(const std::string& idHex, RotationSchedule schedule,
                             RotationDone started, RotationDone done);

    /// Rules `rules` of session `idHex` (told apart with sameEventRule())
    /// off or on in every app it traces, at once (ust_disable.cpp); `done`
    /// (nullopt always: an app's failure is logged) once every app
    /// answered. A session not started keeps nothing (its next snapshot
    /// carries the flags).
    void setRulesEnabled(const std::string& idHex, const std::vector<EventRule>& rules,
                         bool enabled, Done done);
    /// Channel `name` of session `idHex` off or on in every app, likewise.
    void setChannelEnabled(const std::string& idHex, const std::string& name, bool enabled,
                           Done done);

    // SessionConsumers: the kernel domain's way to the session's consumer.
    void whenConsumerReady(const std::string& idHex,
                           std::function<void(std::optional<Error>)> ready) override;
    ConsumerConnection* consumerOf(const std::string& idHex) override;
    std::optional<int64_t> clockOffsetOf(const std::string& idHex) override;
    std::string traceDirSuffixOf(const std::string& idHex) override;
    void onForeignStatistics(FiguresHandler handler) override {
        onForeignStatistics_ = std::move(handler);
    }
    void onConsumerGone(ReleaseHandler handler) override { onConsumerGone_ = std::move(handler); }

    /// Notify-thread entry: one message from `app`'s notify socket.
    /// Returns false if the app must be dropped.
    bool handleNotify(UstApp& app);

private:
    using TraceKey = std::pair<uint32_t, uint32_t>; ///< (uid or pid, bitness)
    struct Channel {
        std::string name;
        uint32_t chanId = 0;
        std::vector<std::string> contexts; ///< session/context_type.hpp names
        ConsumerChannel objects;
    };
    struct Trace {
        TraceKey key;
        uid_t uid = 0;
        uint32_t bitness = 0;
        std::string dir;   ///< trace-relative, "ust/uid/<uid>/<bits>-bit"
        metadata::Abi abi; ///< the first app's; later apps must match
        /// Guards `registry` and `pushed`: the notify thread registers, the
        /// main loop reads what to push. Held for in-memory work only.
        std::mutex registryMutex;
        std::unique_ptr<metadata::TraceRegistry> registry;
        std::size_t pushed = 0; ///< metadata bytes sent (or queued) to the consumer
        ConsumerChannel metadata;
        std::vector<Channel> channels;
    };
    struct AppInSession {
        std::shared_ptr<UstApp> app;
        int sessionHandle = -1;
        bool started = false;
        std::map<std::string, UstObject> channels; // by name, as the app knows them
        std::vector<UstObject> objects;            // its contexts
        /// One rule's event in the app: the object (filled by the job that
        /// creates it, on the app's strand; read only by later jobs of that
        /// strand; empty if the app refused it) and the state asked of it.
        struct Event {
            std::shared_ptr<UstObject> object = std::make_shared<UstObject>();
            bool enabled = true;
        };
        std::map<std::size_t, Event> events;    // by index in Traced::snapshot.rules
        std::set<std::string> disabledChannels; // as asked of the app
    };
    /// Told once the trace an app needs exists (nullptr and why, if not).
    using TraceReady = std::function<void(Trace*, std::optional<Error>)>;
    /// An app's set-up in a session, while its job runs.
    struct SettingUp {
        std::shared_ptr<UstApp> app;
        std::shared_ptr<PendingRoutes> routes; ///< shared with the job
        std::vector<Done> waiters;             ///< joins told once it is over
    };
    struct Traced {
        uint64_t serial = 0; ///< tells this session from a later one of the same id
        SessionSnapshot snapshot;
        ConsumerSpec spec;
        /// Its unit was started (or tried): stop it, or ask how it ended.
        bool launched = false;
        std::unique_ptr<ConsumerConnection> consumer;
        bool greeted = false; ///< the consumer answered Hello (and took the relay's sockets)
        /// adopt(): until the previous daemon's chunk is archived, other
        /// domains wait (whenConsumerReady()): their channels go to the next.
        bool adopting = false;
        /// A live session taken over: what its trace folders get after
        /// their name (restartSuffix()); "" otherwise.
        std::string traceDirSuffix;
        /// Its connection is in config_.fdStore (forgotten when let go).
        bool storedFd = false;
        /// A network session's relay session, made before its consumer
        /// starts; its sockets go to the consumer with AttachRelayd.
        std::optional<OpenedRelaySession> relay;
        /// CLOCK_REALTIME - CLOCK_MONOTONIC (ns), measured once at the first
        /// start: the clock offset of every trace of the session.
        int64_t clockOffset = 0;
        /// Other domains waiting for the consumer (whenConsumerReady()).
        std::vector<std::function<void(std::optional<Error>)>> whenGreeted;
        std::map<TraceKey, std::unique_ptr<Trace>> traces;
        /// Traces whose channels the consumer is making, with who waits.
        std::map<TraceKey, std::vector<TraceReady>> creating;
        /// Snapshot sessions, per-PID: the traces of exited apps, whose
        /// buffers the consumer keeps for later snapshots until destroy.
        std::vector<std::unique_ptr<Trace>> exited;
        std::map<pid_t, AppInSession> apps;
        /// Apps whose set-up job runs (not in `apps` yet).
        std::map<pid_t, SettingUp> settingUp;
        bool starting = false; ///< start() under way: apps joining are started at its end
        bool active = false;
        bool failed = false;
        std::string failure; ///< why, once failed
        /// Told why once the session fails (a Start waiting for the reason).
        std::vector<std::function<void(const std::string&)>> whenFailed;
        bool destroying = false;
        uint64_t nextKey = 1;
        /// Every consumer channel made, by key: its channel's name ("" for
        /// metadata channels), kept after the channel is gone (its figures
        /// still count).
        std::map<uint64_t, std::string> channelOfKey;
        /// The consumer's last figures, per channel key.
        std::map<uint64_t, consumer_protocol::ChannelFigures> figures;
        /// The other domains' channels' chunkBytes, per key (their figures
        /// are theirs; the chunk's size is the session's).
        std::map<uint64_t, uint64_t> foreignChunkBytes;
        /// The WatchChunkSize bytes the consumer was given.
        uint64_t watchedBytes = 0;
        /// Keys of the consumer channels destroyed since the last rotation
        /// (an exited app's, per-PID): their chunk bytes were the old
        /// chunk's once it is archived.
        std::vector<uint64_t> closedKeys;
        uint64_t sampledAtUsec = 0; ///< of the consumer's last figures
        /// (st_dev, st_ino) of the output folder when the consumer started.
        std::pair<dev_t, ino_t> outputFolder{};
        // Trace chunks: the current one's index, folder ("" = the output
        // folder) and start; the last stamp given (never goes back).
        uint64_t chunkIndex = 0;
        std::string chunkDir;
        std::time_t chunkBegin = 0;
        /// A network session: its folder on the relay, relative to the
        /// relay's output folder (CREATE_SESSION's reply:
        /// "<hostname>/<session>-<YYYYmmdd-HHMMSS>"); archives are named below
        /// it. Chunk `chunkIndex` is the relay's trace chunk of that id, made
        /// at `chunkBegin`, so that the relay's archive names are ours.
        std::string relayOutputPath;
        std::time_t lastStamp = 0;
        uint64_t nextRotationId = 1;
        struct Rotation {
            uint64_t id = 0;
            /// The archive folder: absolute, or for a network session relative
            /// to the relay's output folder (relayOutputPath/archives/...).
            std::string path;
            RotationDone completed;
            /// `started` was told it began: only then is `completed` called.
            bool begun = false;
            bool discard = false; ///< Session.Clear: the closed chunk is deleted
        };
        std::optional<Rotation> rotating;
        uint64_t snapshotsTaken = 0; ///< RecordSnapshot: the next folder's <n>
        // The rotation schedule's ticks (timerfd), before its watch.
        UniqueFd scheduleTimer;
        EventSourcePtr scheduleWatch;
        std::chrono::steady_clock::time_point nextTimedRotation;
        bool rotationDue = false; ///< a scheduled rotation waits for the one under way
        /// The rotation waiting for the traces under way (`creating`) to
        /// exist: one at most (rotate() refuses a second one meanwhile, a
        /// due scheduled one sets rotationDue).
        struct WaitingRotation {
            RotationDone started, completed;
            bool discard = false;
        };
        std::optional<WaitingRotation> rotationAfterCreation;
        /// Run once no trace is being made (a Stop waiting for them).
        std::vector<std::function<void()>> afterCreations;
        /// App set-ups and starts whose jobs have not answered: until they
        /// do, an app may not have registered its channels (lttng-ust does
        /// it in start_session), and a chunk closed meanwhile could hold
        /// packets of a stream class its metadata lacks.
        std::size_t appJobsMaking = 0;
        /// Last (gone first): the continuations of this session on the main
        /// loop (consumer replies and handlers, the launcher's answers,
        /// joins, timers) are guarded with it and hold the Traced itself;
        /// once it is freed they do nothing, or answer their caller.
        Lifetime lifetime;
    };
    /// Names a session where a Traced& cannot be held: in what runs on or
    /// passes through other threads (app strand jobs, executor jobs, whose
    /// results are posted back), and in lists of several sessions (an
    /// app's registration, the watch of an exited app). Found again only if
    /// it still exists and is the same one (find()).
    struct SessionRef {
        std::string idHex;
        uint64_t serial = 0;
    };
    SessionRef refOf(const Traced& t) const { return {t.snapshot.idHex, t.serial}; }
    Traced* find(const SessionRef& ref);

    /// Result of makeFolder(): the folder's fd (O_PATH) and (st_dev, st_ino),
    /// or the error.
    struct MadeFolder {
        std::optional<Error> error;
        UniqueFd fd;
        std::pair<dev_t, ino_t> id{};
    };
    /// makeOutputFolder(path, uid, gid, claim) on folderMakers_, then
    /// opens it; `then` is called on the loop with the outcome.
    void makeFolder(std::string path, uid_t uid, gid_t gid, bool claim,
                    std::function<void(MadeFolder)> then);

    // ust_tracer.cpp: sessions.
    /// May `t` record `app`? Its owner may trace it (the app's uid is the
    /// owner's, or the session traces every user), and every UST tracker
    /// of `t` admits it.
    bool mayTrace(const Traced& t, const UstApp& app) const;
    /// Ring-buffer bytes one trace (one uid, or pid, and bitness) of `t`
    /// takes in its consumer: every channel's sub-buffers on every possible
    /// CPU, and the metadata channel.
    static uint64_t bytesPerTrace(const Traced& t);
    /// The traces `t` would have if it started now (>= 1).
    std::size_t tracesAtStart(const Traced& t) const;
    /// bytesPerTrace() x `traces` (0: the traces `t` has or is making).
    uint64_t bufferBytes(const Traced& t, std::size_t traces) const;
    /// "2 uid(s) x 4 CPUs x (4 x 262144 bytes)", for messages.
    std::string bufferFormula(const Traced& t, std::size_t traces) const;
    /// Throws Error(WrongState) if the (non-snapshot) session's output
    /// folder is no longer the one its consumer was started on.
    void checkOutputFolderKept(const Traced& t) const;
    /// A network session's first start: openRelaySession() on an executor,
    /// then launch(); `done` with Error(RelayUnavailable) if the relay
    /// cannot be had.
    void openRelay(Traced& t, Done done);
    /// What openRelayOffLoop() gives back: the relay session, or why not.
    struct RelayOutcome {
        std::optional<OpenedRelaySession> opened;
        std::optional<Error> error; ///< RelayUnavailable or InvalidArgument
    };
    using RelayOpened = std::function<void(RelayOutcome)>;
    /// openRelaySession(params) on relayConnects_; `then` on the loop with
    /// the outcome (the session may be gone by then: look it up again).
    void openRelayOffLoop(const RelaySessionParams& params, RelayOpened then);
    /// What CREATE_SESSION says of `t` on its relay (its name, this host,
    /// its id and creation time: the relay's folder for it).
    RelaySessionParams relayParams(const Traced& t) const;
    /// After Hello: AttachRelayd with the relay's sockets (network
    /// sessions; nothing to do otherwise), then `done`.
    void attachRelay(Traced& t, Done done);
    /// Where `t`'s archives go: its output folder, or for a network session
    /// its folder on the relay (relative to the relay's output folder).
    static std::string archiveRoot(const Traced& t);
    /// Bytes of `t`'s current chunk (for size-scheduled rotations): the
    /// chunk bytes its consumer last reported for every channel, of every
    /// domain (local or network alike).
    static uint64_t chunkSize(const Traced& t);
    /// A size-scheduled `t` that is active and holds its size now rotates
    /// (after each Statistics of its consumer).
    void checkChunkSize(Traced& t);
    /// Tells `t`'s consumer the size its schedule rotates at (or 0) if it
    /// was not told already (WatchChunkSize): it sends its figures once the
    /// chunk holds that much.
    void watchChunkSize(Traced& t);
    /// startConsumer(), then startApps(); a consumer that could not be
    /// started ends `t` (nothing of it is kept) and `done` says why.
    void launch(Traced& t, Done done);
    /// Starts `t`'s consumer unit (asynchronously) on its output folder,
    /// made already, then connects to it and says Hello; `done` after the
    /// Hello's reply, or with why the unit could not be started. Throws
    /// Error(Failed) for what fails at once (a socketpair, the launcher).
    void startConsumer(Traced& t, Done done);
    /// Once the unit runs: the connection to it, then Hello; `done` after
    /// the Hello's reply.
    void connectConsumer(Traced& t, UniqueFd ours, Done done);
    /// The connection to `t`'s consumer, on `ours`, with its handlers
    /// (rotations, statistics, loss, output failures).
    void makeConnection(Traced& t, UniqueFd ours);
    /// t.spec for `t`'s consumer unit (its name, command line, user).
    void describeConsumer(Traced& t) const;
    /// adopt(): the consumer answered Adopt with `reply`; its chunk is
    /// archived, then the apps join if `active`.
    void adopted(Traced& t, const consumer_protocol::AdoptReply& reply, bool active, Done done);
    /// The end of a takeover (adopted()): the domains waiting for the
    /// consumer go on, then the apps join if `active`.
    void resumeAfterTakeover(Traced& t, bool active, Done done);
    /// Stops `t`'s consumer unit if it runs, and lets it go if it failed
    /// (asynchronously; nobody waits).
    void stopConsumerUnit(Traced& t);
    /// The second half of start(): every app joins, then starts.
    void startApps(Traced& t, Done done);
    /// The consumer connection of `t` is lost: fail the session.
    void consumerLost(Traced& t, const std::string& why);
    /// Marks `t` failed for good (state error, `why` as its reason), stops
    /// its consumer if it still runs. `tellOwner` false: the failure
    /// handler is not told (adopt(), whose caller learns why from its
    /// `done` and words the session's reason itself).
    void failSession(Traced& t, const std::string& why, bool tellOwner = true);
    /// A callback that fails session `t` if a consumer request failed,
    /// saying `what` was asked.
    Done failOnError(Traced& t, std::string what);
    /// Every apps' session in `t` stops (on their strands); `done`
    /// (nullopt always) once they are quiescent.
    void stopApps(Traced& t, Done done);
    /// The second half of stop(), once the apps are quiescent: flushes
    /// (flushAllOnceMade()); a consumer that cannot fails the session.
    void flushStopped(Traced& t, Done done);
    /// flushAll() once no trace of `t` is being made any more.
    void flushAllOnceMade(Traced& t, Done done);
    /// Pushes the metadata and flushes every channel of every trace of `t`;
    /// `done` after the consumer's replies.
    void flushAll(Traced& t, Done done);
    /// Frees `t` (its routes first, then a grace period).
    void forget(Traced& t);
    /// Tells the domains waiting for `t`'s consumer, and those using it,
    /// that it will not serve them (`why`).
    void releaseConsumer(Traced& t, const std::string& why);

    // ust_traces.cpp: traces.
    /// Calls `ready` with the trace of `app`'s (uid or pid, bitness) in `t`,
    /// made first (asynchronously) if needed; with an error if `app`'s ABI
    /// differs from the trace's or the consumer could not make it.
    void withTrace(Traced& t, const UstApp& app, TraceReady ready);
    void createTrace(Traced& t, const UstApp& app, TraceKey key);
    /// Sends the metadata of `trace` not sent yet; `done` after the reply.
    void pushMetadata(Traced& t, Trace& trace, Done done);
    /// pushMetadata() whose failure fails the session.
    void pushMetadata(Traced& t, Trace& trace);
    /// Notify thread: queues the metadata of `trace` not sent yet, ahead of
    /// any request the main loop makes later (ConsumerConnection::
    /// enqueueMetadata), before the app is answered: an event of the
    /// registered class is never in a chunk whose metadata lacks it.
    /// Call with trace.registryMutex held.
    void queueMetadataLocked(Traced& t, Trace& trace);
    /// Before a chunk is closed (a rotation, Stop's flush): the channels
    /// without context fields of every trace that no app of `t` holds or is
    /// being set up with (its apps died before registering them) are
    /// declared, so the empty packets the consumer writes for them at the
    /// boundary have a stream class in the chunk's metadata. Channels with
    /// context fields wait for an app: only it can give their layout.
    void declareOrphanChannels(Traced& t);
    /// Declares the channels of `trace` no app registered (TraceRegistry::
    /// declareUnregisteredChannels).
    void declareUnregisteredChannels(Traced& t, Trace& trace);
    /// Drops our copies of `trace`'s channels and has the consumer read
    /// each to the end and close it (DestroyChannel), metadata last.
    void closeInConsumer(Traced& t, Trace& trace, Done done);
    /// Per-PID: the app of trace `key` exited; has the consumer drain and
    /// close its channels, then forgets the trace. Call after the app's
    /// routes are gone and synchronized.
    void retirePerPidTrace(Traced& t, TraceKey key);
    /// After `app` failed to join `t`: retires the per-PID trace made for
    /// it, if any (per-UID traces stay for the uid's other apps).
    void abandonSetUp(Traced& t, const UstApp& app);

    // ust_app_setup.cpp: apps in sessions.
    /// `app` joins `t`: its trace is made if needed, then it is set up, and
    /// started if `t` is active. `done` gets an error only when the
    /// session's consumer could not make the buffers; the app's own failures
    /// (it left, it refused a call) are logged here and end in nullopt.
    void join(Traced& t, const std::shared_ptr<UstApp>& app, Done done);
    /// Sets `app` up in `t` with `trace`'s buffers: a job on the app's
    /// strand; `done` once it is over (setUpDone()). Throws Error if our
    /// copies of the buffers' objects cannot be made.
    void beginSetUp(Traced& t, Trace& trace, const std::shared_ptr<UstApp>& app, Done done);
    /// Back on the main loop with the set-up job's `result` (its events by
    /// rule index): syncApp() then brings the app to the rules and channels
    /// as they are now, before its start.
    void setUpDone(const SessionRef& ref, TraceKey key, const std::shared_ptr<UstApp>& app,
                   const std::shared_ptr<PendingRoutes>& routes, AppSetUpResult result);
    /// Cancels the set-ups of `t` in flight (of app `only`, if given): their
    /// routes go; returns who waited for them (to be called with nullopt).
    std::vector<Done> cancelSetUps(Traced& t, std::optional<pid_t> only = std::nullopt);
    /// Starts the session in app `a` (start_session, on its strand); a
    /// failure is logged; `done` (nullopt always), if given, once answered.
    void startInApp(Traced& t, AppInSession& a, Done done = nullptr);
    /// Creates and enables the event of rule `index` of `t` in app `a` (on
    /// its strand); it is `a.events[index]` at once. Failures are logged;
    /// `done` (nullopt always), if given, once answered.
    void createEventInApp(Traced& t, AppInSession& a, std::size_t index, Done done = nullptr);

    // ust_disable.cpp: rules and channels turned off and on.
    /// Brings app `a` to what `t` asks: each enabled rule of a channel it
    /// has gets its event (made once), each event and channel enabled or
    /// disabled as its rule or channel is; jobs on its strand, each with a
    /// step of `join` (if given).
    void syncApp(Traced& t, AppInSession& a, Join* join);
    /// The join of a request's app jobs: `done`, if given, gets nullopt once
    /// every app answered, whatever each said (an app's failure is logged
    /// where it happens, and the request stands).
    static Join joinOfApps(Done done);
    /// enable/disable of `object` (filled by an earlier job of the strand)
    /// or of handle `handle` (if `object` is null) in `a`, on its strand.
    void toggleInApp(Traced& t, AppInSession& a, std::shared_ptr<UstObject> object, int handle,
                     bool enabled, Done done);
    /// Per-PID traces of app `pid` (bitness `bitness`) in sessions `refs`:
    /// retired once the process has exited (its pidfd says so), since
    /// lttng-ust closes its sockets in a destructor while other threads
    /// of the app may still write.
    void retireWhenExited(pid_t pid, uint32_t bitness, std::vector<SessionRef> refs);
    // ust_tracking.cpp: process attribute trackers.
    /// Stops the session in app `a` only (stop_session, on its strand);
    /// `done` (nullopt always) once answered. A failure is logged.
    void stopInApp(Traced& t, AppInSession& a, Done done);
    /// Forgets the routes of every object `a` holds in its app.
    void eraseRoutes(pid_t pid, const AppInSession& a);
    /// An armed budget for one exchange with `app`, if boundExchanges() was
    /// given. Any thread.
    std::optional<SocketDeadlines::Armed> budgetFor(const UstApp& app);

    // snapshot_record.cpp: snapshots.
    /// Where one snapshot goes: a local folder (`dir`, an O_PATH fd of it),
    /// or for a network output the relay session opened for it alone
    /// (`relay`) and the name of its trace chunk there (`chunkName`).
    struct SnapshotTarget {
        UniqueFd dir;
        std::optional<OpenedRelaySession> relay;
        std::string chunkName;
    };
    /// recordSnapshot()'s second half, once its output exists: the consumer
    /// writes it (`path`: the folder, or on the relay the chunk's folder
    /// relative to the relay's output folder).
    void sendSnapshot(Traced& t, const std::string& path, uint64_t packetsPerStream,
                      SnapshotTarget target, RotationDone done);
    /// A network snapshot session's RecordSnapshot: opens a relay session
    /// for snapshot folder `name` on an executor, then sendSnapshot();
    /// `done` with Error(RelayUnavailable) naming the relay if it cannot be
    /// had (the session is left as it was).
    void snapshotToRelay(Traced& t, const std::string& name, uint64_t packetsPerStream,
                         RotationDone done);

    // ust_rotation.cpp: rotations.
    /// rotate() once the checks passed. While a trace's buffers are being
    /// made, it waits for them (creationsOver()): archived before its first
    /// app registered its channels, such a trace's packets would have no
    /// stream class in the archive's metadata.
    /// `discard` (clear()): the consumer deletes the closed chunk.
    void beginRotation(Traced& t, RotationDone started, RotationDone completed,
                       bool discard = false);
    /// No trace of `t` is being made any more: waiting rotations begin.
    void creationsOver(Traced& t);
    /// True while traces of `t` are being made, or apps set up or started
    /// (Traced::appJobsMaking): rotations and Stop's flush wait for that.
    static bool making(const Traced& t) noexcept {
        return !t.creating.empty() || t.appJobsMaking != 0;
    }
    /// An app job counted in appJobsMaking answered: creationsOver() if it
    /// was the last thing being made.
    void appJobAnswered(const SessionRef& ref);
    /// The rotation waiting in `t`, if any, fails with `why` (the session ends).
    void dropWaitingRotations(Traced& t, const std::string& why);
    void onRotationCompleted(Traced& t, consumer_protocol::RotationCompleted done);
    /// The rotation under way, if any, fails with `why`: its `completed` is
    /// told if it began; if its Rotate is still in flight, only its
    /// `started` will be (with an error), once that request ends.
    void abandonRotation(Traced& t, const std::string& why);
    /// No rotation is under way any more: runs what waited for that.
    void rotationOver(Traced& t);
    /// (Re)arms the schedule's ticks of `t`, or ends them.
    void armSchedule(Traced& t);
    /// A tick of `t`'s schedule: rotates if due.
    void scheduleTick(Traced& t);
    /// Starts the scheduled rotation of `t` that is due.
    void rotateOnSchedule(Traced& t);

    // ust_notify.cpp: the notify thread's side.
    /// The session and trace of an app's session handle; the channel id of
    /// an app's channel handle. Inside an RcuReadSection only. Throw
    /// std::out_of_range for an unknown handle.
    std::pair<Traced&, Trace&> routeOf(pid_t pid, int sessionHandle) const;
    uint32_t channelIdOf(pid_t pid, int channelHandle) const;

    TracerConfig config_;
    /// Reads CreateChannel's objects; before the sessions, so it is joined
    /// after every connection shut its objects sockets down.
    Executor objectReaders_{2, "tc-objects"};
    /// Makes output and snapshot folders, each in a child process as the
    /// session's owner (ust/output_folder.hpp; bounded, but a dead
    /// network mount may hold it to its bound): off the loop. Owns nothing
    /// but the copies its jobs hold.
    Executor folderMakers_{1, "tc-foldermake"};
    /// Network sessions' relay sessions (first Start, each network
    /// snapshot): blocking connects and exchanges, several at once, apart
    /// from the output folders, so that a relay that stalls holds up
    /// neither local sessions nor the other relays.
    Executor relayConnects_{kRelayThreads, "tc-relay"};
    EventLoop* loop_ = nullptr;
    /// Every session's consumers', attached to loop_; made by launcher().
    /// Its callbacks are never called once it is freed (with the tracer).
    std::unique_ptr<ConsumerLauncher> launcher_;
    /// launcher_, made at the first call (systemd: connects to the manager).
    /// Throws Error(Failed) if the manager cannot be reached.
    ConsumerLauncher& launcher();
    std::shared_ptr<LoopPoster> poster_; ///< loop_'s, for the notify thread
    std::shared_ptr<AppCommands> commands_;
    /// Bounds the strand jobs' exchanges (boundExchanges()); outlives them.
    SocketDeadlines deadlines_;
    bool bounded_ = false;
    HangUpWatcher hangUpWatcher_;
    FailureHandler onFailure_;
    SizeHandler onSize_;
    StatisticsHandler onStatistics_;
    FiguresHandler onForeignStatistics_;
    ReleaseHandler onConsumerGone_;
    /// The record layouts `trace`'s registry learned since the last call, as
    /// DeclareLayouts for its consumer channels (none if the session does
    /// not count events, or is a snapshot session). Under trace.registryMutex.
    static std::vector<consumer_protocol::DeclareLayouts> takeLayoutsLocked(const Traced& t,
                                                                            Trace& trace);
    /// The consumer of `t` sent figures: kept, summed, told.
    void onConsumerStatistics(Traced& t, consumer_protocol::Statistics s);
    /// Tells onStatistics_ `t`'s figures, summed per channel.
    void publishStatistics(Traced& t);
    /// Tells onSize_ what `t`'s traces take now.
    void reportSize(const Traced& t);
    uint64_t nextSerial_ = 1;
    std::map<std::string, std::unique_ptr<Traced>> sessions_;
    std::map<pid_t, std::shared_ptr<UstApp>> apps_;
    /// A pidfd of each registered app (pidfd_open at registration; absent
    /// if that failed), and the watches of exited apps not yet gone.
    std::map<pid_t, UniqueFd> pidfds_;
    struct Scheduled {
        RotationSchedule schedule;
        RotationDone started, done;
    };
    std::map<std::string, Scheduled> schedules_; // by session
    std::map<pid_t, std::pair<UniqueFd, EventSourcePtr>> exitWatches_;
    /// (pid, session or channel handle) -> Traced, Trace, channel id: read by
    /// the notify thread without locks (RCU); see handle_routes.hpp for
    /// when a Traced may be freed.
    HandleRoutes routes_;
    /// Every app round trip (see the top). Last: its running jobs use the
    /// members above, and finish before those go.
    AppStrands appCalls_{3, "tc-apps"};
};

} // namespace tracectl
