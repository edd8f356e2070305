// Traces registered LTTng-UST apps for the active sessions (per-UID or
// per-PID buffers): has each session's consumer (its Recording,
// recording/recordings.hpp) create the ring buffers of every (uid, bitness)
// or (pid, bitness), hands the buffers to each app, creates the events,
// starts and stops tracing, has the buffers of exited apps (per-PID)
// drained and closed, and answers the apps' channel/event/enum
// registrations from the CTF metadata registry, pushing the metadata to
// the consumer as it grows. The consumer, its chunks, rotations and
// snapshots are the session's recording's: it asks the tracer, before a
// chunk closes, to describe every stream (RecordingDomain). Facts:
// LTTNG-NOTES.md, ust-ctl.h.
//
// Files: ust_tracer.cpp (sessions: start, stop, destroy, failure),
// ust_traces.cpp (traces: creation, metadata, closing), ust_app_setup.cpp
// (apps joining sessions, event rules), ust_notify.cpp (the notify thread's
// registrations), ust_adoption.cpp (a restarted daemon's takeover and the
// recording's questions).
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
#include "recording/recording_domain.hpp"
#include "recording/recordings.hpp"
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

/// What the tracer is bounded by.
struct TracerConfig {
    /// MemoryMax= of every consumer unit, bytes (0: none): sessions whose
    /// ring buffers would need more are refused at Start.
    uint64_t consumerMemoryMax = 0;
};

/// A registering app's register_done waits for the sessions whose buffers
/// are still being made, but not for a consumer that has answered nothing
/// for kStoppedConsumer while a request waited and whose process is stopped
/// (SIGSTOP, a debugger), nor for one silent for kSilentConsumer whatever
/// its state, and never longer than kJoinBeforeRegisterDone in all: past
/// that, the app goes on and such a session joins it once its buffers
/// exist, and what the app emits until then is lost to it. A consumer that
/// is merely busy (a rotation, a loaded machine) is waited for: going on
/// after 100 ms of its silence lost an app's first events under load.
/// Below lttng-ust's default register timeout (3 s,
/// LTTNG_UST_REGISTER_TIMEOUT).
inline constexpr std::chrono::milliseconds kJoinBeforeRegisterDone{2000};
inline constexpr std::chrono::milliseconds kStoppedConsumer{100};
inline constexpr std::chrono::milliseconds kSilentConsumer{1000};
/// Most threads making round trips to apps at once. An app's start_session
/// lasts as long as it takes to register its event classes (thousands, in
/// some apps), so a burst of such apps into one session must not keep the
/// others' registrations waiting for a thread: each app in a round trip
/// gets one, up to this many (as many as version queries run at once,
/// kMaxVersionQueries in apps/ust_app_registrar.hpp).
inline constexpr std::size_t kMaxAppCallThreads = 64;

class UstTracer final : public RecordingDomain {
public:
    /// Outcome of an operation: nullopt, or the error.
    using Done = std::function<void(std::optional<Error>)>;
    /// Watches `fd` for its peer hanging up, or for `events` (epoll bits;
    /// EPOLLIN on a pidfd: the process exited) (UstAppRegistrar::watchHangUp).
    using HangUpWatcher =
        std::function<EventSourcePtr(int fd, std::function<void()>, uint32_t events)>;

    /// `recordings` (outliving the tracer) holds every session's consumer;
    /// `commands` makes the round trips to apps (a fake in tests).
    UstTracer(TracerConfig config, Recordings& recordings,
              std::shared_ptr<AppCommands> commands = makeUstAppCommands());
    /// Drops every session without waiting for anyone (their recordings
    /// go after: each consumer then drains its buffers and exits).
    ~UstTracer() override;
    /// What the destructor does, earlier (daemon exit, before the
    /// recordings go). Idempotent.
    void dropAll();
    UstTracer(const UstTracer&) = delete;
    UstTracer& operator=(const UstTracer&) = delete;

    /// Wires the tracer to the main loop: `loop` is its loop (every
    /// method and callback runs there), `watcher` watches fds on it, and
    /// Call once, before anything else.
    void attach(EventLoop& loop, HangUpWatcher watcher);
    /// Told (on the main loop) how many bytes of ring buffers session
    /// `idHex` takes whenever that changes (a trace made or retired).
    using SizeHandler = std::function<void(const std::string& idHex, uint64_t bytes)>;
    void onBufferSize(SizeHandler handler) { onSize_ = std::move(handler); }
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

    /// Why `s` cannot start: its ring buffers would need more memory than
    /// its consumer may have (InvalidArgument), or nullopt.
    std::optional<Error> refuseStart(const SessionSnapshot& s) const;
    /// Starts tracing `s`, whose recording is started (makes the buffers of
    /// every app it may trace, sets each app up, starts them). `done` gets
    /// WrongState (consumer gone) or Failed (the consumer refused the
    /// buffers: the session's recording fails).
    void start(const SessionSnapshot& s, Done done);
    /// A restarted daemon takes over session `s` (of any kind), whose
    /// recording was taken over already (its consumer closed the previous
    /// daemon's channels): `active`: the session was recording, and its
    /// apps join now, as at start(); else at the next start(). `done`:
    /// nullopt, or why not.
    void resume(const SessionSnapshot& s, bool active, Done done);
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
    /// Stops if needed, has every buffer of the session drained and closed
    /// (the recording ends after). `done` gets nullopt always (what fails
    /// is logged).
    void destroy(const std::string& idHex, Done done);

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

    // RecordingDomain (recording/recording_domain.hpp; ust_adoption.cpp).
    /// Once no trace of the session is being made and no app job that
    /// registers channels runs: the channels no app registered are
    /// declared and every trace's metadata pushed, then `ready`.
    void beforeChunkCloses(const std::string& idHex, Ready ready) override;
    /// Pushes what the apps registered meanwhile.
    void afterChunkBoundary(const std::string& idHex) override;
    /// The session stops recording here (failed; its consumer goes).
    void recordingFailed(const std::string& idHex, const std::string& why) override;

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
        /// Its recording's consumer connection (Recordings::connectionOf()),
        /// set when the Traced is made: the recording outlives it (the
        /// session ends its domains first). Read by the notify thread too.
        ConsumerConnection* connection = nullptr;
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
        /// Its recording failed (RecordingDomain::recordingFailed()).
        bool failed = false;
        std::string failure; ///< why, once failed
        bool destroying = false;
        /// Run once no trace is being made (a Stop's flush, a chunk to
        /// close waiting for them).
        std::vector<std::function<void()>> afterCreations;
        /// The recording's beforeChunkCloses() calls waiting for them: told
        /// with an error if the session goes first.
        std::vector<Ready> chunkWaiters;
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
    /// The session's consumer connection (its recording's; requests on a
    /// broken one answer errors). Any thread.
    static ConsumerConnection& consumer(const Traced& t) { return *t.connection; }
    /// A Traced for `s` in sessions_, on its recording's connection; throws
    /// Error(Failed) if the session has no recording.
    Traced& makeTraced(const SessionSnapshot& s);
    /// The second half of start(): every app joins, then starts.
    void startApps(Traced& t, Done done);
    /// The session's recording fails (`why`): told to Recordings, which
    /// tells every domain and the session.
    void failSession(Traced& t, const std::string& why);
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
    // ust_traces.cpp: traces.
    /// Calls `ready` with the trace of `app`'s (uid or pid, bitness) in `t`,
    /// made first (asynchronously) if needed; with an error if `app`'s ABI
    /// differs from the trace's or the consumer could not make it.
    void withTrace(Traced& t, const UstApp& app, TraceReady ready);
    void createTrace(Traced& t, const UstApp& app, TraceKey key);
    /// App `pid` (of `uid`, `bitness`) left per-UID session `t`: its trace's
    /// data channels get ProducerGone (stalled sub-buffers).
    void tellProducerGone(Traced& t, pid_t pid, uint32_t uid, uint32_t bitness);
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
    /// of the app may still write. Then too, sessions `shared`, whose
    /// per-UID buffers (of `uid`) it wrote into, get tellProducerGone().
    void retireWhenExited(pid_t pid, uint32_t uid, uint32_t bitness, std::vector<SessionRef> refs,
                          std::vector<SessionRef> shared);
    // ust_tracking.cpp: process attribute trackers.
    /// Stops the session in app `a` only (stop_session, on its strand);
    /// `done` (nullopt always) once answered. A failure is logged.
    void stopInApp(Traced& t, AppInSession& a, Done done);
    /// Forgets the routes of every object `a` holds in its app.
    void eraseRoutes(pid_t pid, const AppInSession& a);
    /// An armed budget for one exchange with `app`, if boundExchanges() was
    /// given. Any thread.
    std::optional<SocketDeadlines::Armed> budgetFor(const UstApp& app);
    /// Why an app call failed: `e`, or that the app did not answer within
    /// kAppSocketTimeout when `budget` expired (the watchdog cut it off).
    static std::string whyAppCallFailed(const Error& e,
                                        const std::optional<SocketDeadlines::Armed>& budget);

    /// No trace of `t` is being made any more: what waited runs.
    void creationsOver(Traced& t);
    /// True while traces of `t` are being made, or apps set up or started
    /// (Traced::appJobsMaking): a chunk to close and Stop's flush wait.
    static bool making(const Traced& t) noexcept {
        return !t.creating.empty() || t.appJobsMaking != 0;
    }
    /// An app job counted in appJobsMaking answered: creationsOver() if it
    /// was the last thing being made.
    void appJobAnswered(const SessionRef& ref);

    // ust_notify.cpp: the notify thread's side.
    /// The session and trace of an app's session handle; the channel id of
    /// an app's channel handle. Inside an RcuReadSection only. Throw
    /// std::out_of_range for an unknown handle.
    std::pair<Traced&, Trace&> routeOf(pid_t pid, int sessionHandle) const;
    uint32_t channelIdOf(pid_t pid, int channelHandle) const;

    TracerConfig config_;
    Recordings& recordings_;
    EventLoop* loop_ = nullptr;
    std::shared_ptr<LoopPoster> poster_; ///< loop_'s, for the notify thread
    std::shared_ptr<AppCommands> commands_;
    /// Bounds the strand jobs' exchanges (boundExchanges()); outlives them.
    SocketDeadlines deadlines_;
    bool bounded_ = false;
    HangUpWatcher hangUpWatcher_;
    SizeHandler onSize_;
    /// The record layouts `trace`'s registry learned since the last call, as
    /// DeclareLayouts for its consumer channels (none if the session does
    /// not count events, or is a snapshot session). Under trace.registryMutex.
    static std::vector<consumer_protocol::DeclareLayouts> takeLayoutsLocked(const Traced& t,
                                                                            Trace& trace);
    /// Tells onSize_ what `t`'s traces take now.
    void reportSize(const Traced& t);
    uint64_t nextSerial_ = 1;
    std::map<std::string, std::unique_ptr<Traced>> sessions_;
    std::map<pid_t, std::shared_ptr<UstApp>> apps_;
    /// A pidfd of each registered app (pidfd_open at registration; absent
    /// if that failed), and the watches of exited apps not yet gone.
    std::map<pid_t, UniqueFd> pidfds_;
    std::map<pid_t, std::pair<UniqueFd, EventSourcePtr>> exitWatches_;
    /// (pid, session or channel handle) -> Traced, Trace, channel id: read by
    /// the notify thread without locks (RCU); see handle_routes.hpp for
    /// when a Traced may be freed.
    HandleRoutes routes_;
    /// Every app round trip (see the top). Last: its running jobs use the
    /// members above, and finish before those go.
    AppStrands appCalls_{3, "tc-apps", kMaxAppCallThreads};
};

} // namespace tracectl
