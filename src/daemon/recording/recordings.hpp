// Every session's Recording (recording.hpp): the session recorder of the
// session state machine (session/session_recorder.hpp), and what the
// domains reach the session's consumer through.
//
// - Start: the output folder is made as the owner (or the relay session
//   opened), the consumer unit started, connected and greeted, the relay's
//   sockets handed over; then the session starts its domains, which make
//   their channels with keys from newChannelKey().
// - Rotation, clear, snapshots and the rotation schedule are the
//   recording's: one Rotate or RecordSnapshot covers every domain's
//   streams. Before a chunk closes each domain is asked to describe
//   everything in its buffers (RecordingDomain::beforeChunkCloses()).
// - A consumer that dies, stops answering or refuses a request the
//   session cannot do without fails the recording: the domains are told
//   (RecordingDomain::recordingFailed()), and so is the session
//   (FailureHandler).
// - The consumer's figures are kept per key and told per domain.
//
// Files: recordings.cpp (start, consumer, failure, end),
// recording_rotation.cpp (rotation, clear, schedule),
// recording_snapshot.cpp (snapshots), recording_takeover.cpp (a restarted
// daemon's takeover), recording_statistics.cpp (figures, chunk size).
//
// Threads: the main loop owns every Recording; every method runs there and
// every callback is called there. Blocking work runs on executors that own
// nothing but what their jobs get: "tc-foldermake" makes output and
// snapshot folders (a child process as the owner), "tc-relay" opens relay
// sessions, "tc-objects" reads CreateChannel's ring-buffer objects (for
// the connections). The launcher's calls are asynchronous. No lock.
#pragma once

#include "common/event_loop.hpp"
#include "common/executor.hpp"
#include "recording/consumer_connection.hpp"
#include "recording/consumer_launcher.hpp"
#include "recording/recording.hpp"
#include "recording/recording_domain.hpp"
#include "relay/relay_session_opener.hpp"
#include "session/session_recorder.hpp"
#include "session/session_statistics.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tracectl {

class ConsumerFdStore;

/// How consumers are started and found.
struct RecordingConfig {
    std::string consumerBinary; ///< tracectl-consumerd
    std::string systemdAddress; ///< "" = system bus; used when useSystemd
    bool useSystemd = true;     ///< false: fork/exec
    std::string daemonVersion;
    /// Deadline of one consumer request (ConsumerConnection).
    std::chrono::milliseconds consumerTimeout = kConsumerReplyTimeout;
    /// MemoryMax= of every consumer unit, bytes (0: none).
    uint64_t consumerMemoryMax = 0;
    /// Where the sessions' consumer connections are kept across a restart,
    /// and found again (nullptr: nowhere). Outlives the recordings.
    ConsumerFdStore* fdStore = nullptr;
};

/// "12 MiB" (rounded up), for messages.
std::string mebibytes(uint64_t bytes);

class Recordings final : public SessionRecorder {
public:
    using Done = SessionRecorder::Done;
    using PathDone = SessionRecorder::PathDone;
    /// Watches `fd` for `events` (epoll bits) on the main loop.
    using FdWatcher = std::function<EventSourcePtr(int fd, std::function<void()>, uint32_t events)>;
    /// Told (on the main loop) that session `idHex` failed, and why.
    using FailureHandler = std::function<void(const std::string& idHex, const std::string& why)>;
    /// Told (on the main loop) what session `idHex`'s consumer wrote for
    /// domain `domain`'s channels, whenever it reports new figures (at
    /// most about once a second while it writes, and at once when a
    /// flush, a channel's end or a rotation makes them final).
    using StatisticsHandler = std::function<void(
        const std::string& idHex, const std::string& domain, const DomainStatistics& statistics)>;

    explicit Recordings(RecordingConfig config);
    /// Drops every recording without waiting: each consumer sees its
    /// connection close, drains its buffers and exits.
    ~Recordings() override;
    /// What the destructor does, earlier (daemon exit, once the domains let
    /// go). Idempotent.
    void dropAll();
    Recordings(const Recordings&) = delete;
    Recordings& operator=(const Recordings&) = delete;

    /// Wires the recordings to the main loop: `loop` is where every method
    /// and callback runs, `watcher` watches fds there (the schedule's
    /// timer), `onFailure` is told when a session fails. Call once, first.
    void attach(EventLoop& loop, FdWatcher watcher, FailureHandler onFailure);
    void onStatistics(StatisticsHandler handler) { onStatistics_ = std::move(handler); }
    /// `domain` (outliving this) is asked before each chunk closes and told
    /// of failures, in the order added.
    void addDomain(RecordingDomain& domain) { domains_.push_back(&domain); }

    // SessionRecorder (session/session_recorder.hpp).
    void startRecording(SessionSnapshot s, Done done) override;
    void resumeRecording(SessionSnapshot s, Done done) override;
    void setRecordingActive(std::string idHex, bool active) override;
    void recordingEnding(std::string idHex) override;
    void endRecording(std::string idHex, Done done) override;
    /// Closes the current trace chunk of session `idHex` (active or
    /// stopped) and opens the next: the consumer switches each stream once
    /// it has read what was produced before now, then moves the closed
    /// chunk to `<output>/archives/<begin>-<end>-<index>/`
    /// (session/trace_paths.hpp) and says so. `started` gets the archive's
    /// absolute path once the consumer has begun, or the error
    /// (WrongState: never started, failed, a rotation under way; Failed:
    /// the consumer refused); then, if it began, `completed` once the
    /// archive is complete, or why it is not. Time stamps never go back,
    /// even if the clock does.
    void rotate(std::string idHex, PathDone started, PathDone completed) override;
    /// A normal session rotates (as rotate()) into a new chunk whose
    /// metadata is whole, and the consumer deletes the closed chunk
    /// instead of archiving it (lttng-tools 2.13 clear.c: a rotation with
    /// LTTNG_TRACE_CHUNK_COMMAND_TYPE_DELETE); a snapshot session's
    /// consumer empties its buffers (ClearBuffers). Never started: nullopt.
    void clear(std::string idHex, Done done) override;
    /// Writes the current content of every buffer of snapshot session
    /// `idHex` as a complete trace in a new folder
    /// `<output>/snapshot-1-<YYYYmmdd-HHMMSS>-<n>/` (LTTng's default
    /// snapshot output name; n counts the session's snapshots from 0), made
    /// as the owner, or on the relay. `maxSize` (bytes, 0 = no bound)
    /// bounds the sum of the data streams: each stream keeps its newest n
    /// sub-buffers, n the largest count for which n sub-buffers of every
    /// stream fit (as lttng snapshot record). Errors: WrongState (never
    /// started, not a snapshot session, consumer gone), InvalidArgument
    /// (maxSize below one sub-buffer of every stream; the folder cannot be
    /// made), RelayUnavailable, Failed (not all of it was written).
    void recordSnapshot(std::string idHex, uint64_t maxSize, PathDone done) override;
    /// Session `idHex` rotates on its own while active: every
    /// `schedule.timerUs` (each period counted from the previous one's due
    /// time), and once its current chunk holds `schedule.sizeBytes` of
    /// every domain's streams (the consumer says so as soon as it wrote
    /// them: WatchChunkSize). One due while another is under way starts
    /// once that one completes. Kept across start and stop.
    void setRotationSchedule(std::string idHex, RotationSchedule schedule, PathDone started,
                             PathDone completed, Done done) override;

    // What the domains use.
    /// Session `idHex`'s consumer connection once greeted (and taken over),
    /// while usable; nullptr otherwise. Never keep it: ask again after
    /// each callback.
    ConsumerConnection* consumerOf(const std::string& idHex);
    /// Session `idHex`'s consumer connection whatever its state (requests
    /// on a broken one answer errors), or nullptr if it has no recording.
    ConsumerConnection* connectionOf(const std::string& idHex);
    /// CLOCK_REALTIME - CLOCK_MONOTONIC (ns) that every trace of the
    /// session describes its clock with, or nullopt if it has no recording.
    std::optional<int64_t> clockOffsetOf(const std::string& idHex) const;
    /// What the session's trace folders get after their name
    /// (restartSuffix(): a live session a restarted daemon took over), or "".
    std::string traceDirSuffixOf(const std::string& idHex) const;
    /// The consumer unit's name, for messages ("" if none).
    std::string unitOf(const std::string& idHex) const;
    /// Why the session's recording failed, or nullopt (also without one).
    std::optional<std::string> failureOf(const std::string& idHex) const;
    /// `told` with why once the recording fails (at once if it has); never
    /// if it ends without failing.
    void whenFailed(const std::string& idHex, std::function<void(const std::string&)> told);
    /// A new consumer channel key of session `idHex` (unique across its
    /// domains, and across a restart: a taken-over consumer says which it
    /// used), for a channel `use` describes.
    uint64_t newChannelKey(const std::string& idHex, ChannelUse use);
    /// The domain asked the consumer to close channel `key` (DestroyChannel).
    void channelClosed(const std::string& idHex, uint64_t key);
    /// The session fails for good (state error, `why` as its reason): its
    /// consumer is stopped, the domains and the session are told.
    void fail(const std::string& idHex, const std::string& why);
    /// One more app of `domain` refused because the consumer had no
    /// resources for its buffers (it is out of fds): counted in the
    /// session's statistics ("apps-refused"); the session goes on.
    void noteAppRefused(const std::string& idHex, const std::string& domain = "ust");
    /// A callback that fails session `idHex` if a consumer request failed,
    /// saying `what` was asked.
    Done failOnError(const std::string& idHex, std::string what);

private:
    /// `f`, called on the loop later (never inside the call that was
    /// given it): the session's answers.
    Done posted(Done f);
    PathDone posted(PathDone f);

    struct RecordingRef {
        std::string idHex;
        uint64_t serial = 0;
    };
    RecordingRef refOf(const Recording& r) const { return {r.snapshot.idHex, r.serial}; }
    Recording* find(const RecordingRef& ref);
    Recording* find(const std::string& idHex);
    const Recording* find(const std::string& idHex) const;

    // recordings.cpp
    /// The folder made by makeFolder(): its fd (O_PATH) and (st_dev, st_ino),
    /// or the error.
    struct MadeFolder {
        std::optional<Error> error;
        UniqueFd fd;
        std::pair<dev_t, ino_t> id{};
    };
    /// makeOutputFolder(path, uid, gid, claim) on folderMakers_, then
    /// opens it; `then` on the loop with the outcome.
    void makeFolder(std::string path, uid_t uid, gid_t gid, bool claim,
                    std::function<void(MadeFolder)> then);
    /// Throws Error(WrongState) if the (non-snapshot) session's output
    /// folder is no longer the one its consumer was started on.
    void checkOutputFolderKept(const Recording& r) const;
    /// What openRelayOffLoop() gives back: the relay session, or why not.
    struct RelayOutcome {
        std::optional<OpenedRelaySession> opened;
        std::optional<Error> error; ///< RelayUnavailable or InvalidArgument
    };
    using RelayOpened = std::function<void(RelayOutcome)>;
    /// openRelaySession(params) on relayConnects_; `then` on the loop.
    void openRelayOffLoop(const RelaySessionParams& params, RelayOpened then);
    /// What CREATE_SESSION says of `r` on its relay.
    RelaySessionParams relayParams(const Recording& r) const;
    /// A network session's first start: its relay session, then launch().
    void openRelay(Recording& r, Done done);
    /// After Hello: AttachRelayd with the relay's sockets (network
    /// sessions), then `done`.
    void attachRelay(Recording& r, Done done);
    /// startConsumer(); a consumer that could not be started ends `r`
    /// (nothing of it is kept) and `done` says why.
    void launch(Recording& r, Done done);
    /// Starts `r`'s consumer unit on its output folder, made already, then
    /// connects to it and says Hello; `done` after the reply. Throws
    /// Error(Failed) for what fails at once.
    void startConsumer(Recording& r, Done done);
    void connectConsumer(Recording& r, UniqueFd ours, Done done);
    /// The connection to `r`'s consumer, on `ours`, with its handlers.
    void makeConnection(Recording& r, UniqueFd ours);
    /// r.spec for `r`'s consumer unit.
    void describeConsumer(Recording& r) const;
    /// Stops `r`'s consumer unit if it runs (asynchronously; nobody waits).
    void stopConsumerUnit(Recording& r);
    /// The connection of `r` is lost: fail the session with the unit's fate.
    void consumerLost(Recording& r, const std::string& why);
    /// Marks `r` failed (its reason `why`), stops its consumer, tells the
    /// domains and, if `tellOwner`, the session.
    void failRecording(Recording& r, const std::string& why, bool tellOwner = true);
    /// Forgets `r` (the fd store's copy too) and frees it.
    void forget(Recording& r);
    /// Ring-buffer bytes of `r`'s open channels (for messages).
    static uint64_t bufferBytes(const Recording& r);
    /// launcher_, made at the first call. Throws Error(Failed) if the
    /// manager cannot be reached.
    ConsumerLauncher& launcher();

    // recording_rotation.cpp
    /// Asks every domain from `next` on whether `r`'s chunk may close
    /// (RecordingDomain::beforeChunkCloses()), passes again until all
    /// answer within one (`allAtOnce`: none answered later so far); `then`
    /// with nullopt, or the first error.
    void askDomains(Recording& r, std::size_t next, bool allAtOnce,
                    std::function<void(std::optional<Error>)> then);
    /// Tells every domain the consumer took the boundary.
    void afterBoundary(Recording& r);
    /// rotate() once the checks passed. `discard` (clear()): the consumer
    /// deletes the closed chunk.
    void beginRotation(Recording& r, PathDone started, PathDone completed, bool discard = false);
    /// beginRotation()'s second half, once the domains are ready.
    void sendRotate(Recording& r, PathDone started, PathDone completed, bool discard);
    void onRotationCompleted(Recording& r, consumer_protocol::RotationCompleted done);
    /// The rotation under way, if any, fails with `why`.
    void abandonRotation(Recording& r, const std::string& why);
    /// No rotation is under way any more: runs a due scheduled one.
    void rotationOver(Recording& r);
    void armSchedule(Recording& r);
    void scheduleTick(Recording& r);
    void rotateOnSchedule(Recording& r);
    /// Where `r`'s archives go: its output folder, or its folder on the relay.
    static std::string archiveRoot(const Recording& r);

    // recording_snapshot.cpp
    struct SnapshotTarget {
        UniqueFd dir;
        std::optional<OpenedRelaySession> relay;
        std::string chunkName;
    };
    void sendSnapshot(Recording& r, const std::string& path, uint64_t packetsPerStream,
                      SnapshotTarget target, PathDone done);
    void snapshotToRelay(Recording& r, const std::string& name, uint64_t packetsPerStream,
                         PathDone done);

    // recording_takeover.cpp
    /// The consumer answered Adopt with `reply`: its chunk is archived.
    void adopted(Recording& r, const consumer_protocol::AdoptReply& reply, Done done);

    // recording_statistics.cpp
    void onConsumerStatistics(Recording& r, consumer_protocol::Statistics s);
    void publishStatistics(Recording& r);
    /// Bytes of `r`'s current chunk, every domain's.
    static uint64_t chunkSize(const Recording& r);
    /// A size-scheduled `r` that is active and holds its size now rotates.
    void checkChunkSize(Recording& r);
    /// Tells `r`'s consumer the size its schedule rotates at, if not told.
    void watchChunkSize(Recording& r);

    RecordingConfig config_;
    /// Reads CreateChannel's objects; before the recordings, so it is
    /// joined after every connection shut its objects sockets down.
    Executor objectReaders_{2, "tc-objects"};
    /// Makes output and snapshot folders as the session's owner (a dead
    /// network mount may hold it to its bound): off the loop.
    Executor folderMakers_{1, "tc-foldermake"};
    /// Network sessions' relay sessions: blocking connects, apart from the
    /// folders, so a stalled relay holds up neither local sessions nor the
    /// other relays.
    Executor relayConnects_{kRelayThreads, "tc-relay"};
    EventLoop* loop_ = nullptr;
    std::shared_ptr<LoopPoster> poster_;
    FdWatcher watcher_;
    FailureHandler onFailure_;
    StatisticsHandler onStatistics_;
    std::vector<RecordingDomain*> domains_;
    /// Every session's consumers', attached to loop_; made by launcher().
    std::unique_ptr<ConsumerLauncher> launcher_;
    struct Scheduled {
        RotationSchedule schedule;
        PathDone started, completed;
    };
    std::map<std::string, Scheduled> schedules_; ///< by session, started or not
    uint64_t nextSerial_ = 1;
    std::map<std::string, std::unique_ptr<Recording>> recordings_;
};

} // namespace tracectl
