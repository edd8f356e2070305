// A tracing session, free of D-Bus types: its identity, configuration,
// event rules, rotation schedule and state machine, with the operations in
// flight, driving its domain backends (domain_backend.hpp). The bus object
// (objects/session_object.hpp) is a view of it: it reads its properties
// and turns its change notifications into PropertiesChanged and signals.
//
// Threads: the main loop owns every session; every method runs there and
// every answer comes there. Nothing else keeps a copy of its state: a
// domain backend gets a snapshot at start and each change after it.
#pragma once

#include "common/error.hpp"
#include "common/lifetime.hpp"
#include "session/channel_config.hpp"
#include "session/domain_backend.hpp"
#include "session/process_trackers.hpp"
#include "session/relay_address.hpp"
#include "session/session_id.hpp"
#include "session/session_recorder.hpp"
#include "session/session_snapshot.hpp"
#include "session/session_statistics.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace tracectl {

/// LTTng's session life cycle, as tracectl exposes it in the `State`
/// property (which reads "rotating" instead of "active" or "stopped" while a
/// rotation is under way: Session::stateName()).
enum class SessionState { Created, Active, Stopped, Error };

/// A Start, Stop or Destroy that has not answered yet: at most one at a
/// time. Rotations and snapshots are tracked apart (Session::rotating(),
/// Session::recordingSnapshot()).
/// Resuming: a restarted daemon takes over what the previous one left
/// (Session::resume()).
enum class SessionOperation { None, Starting, Stopping, Destroying, Resuming };

/// What changed in a session, for its view's PropertiesChanged.
enum class SessionChange {
    State,
    ErrorReason,
    Channels, ///< UST channels
    Events,   ///< UST event rules
    Contexts, ///< UST channels' contexts
    KernelChannels,
    KernelEvents,
    KernelContexts,
    TracesAllUsers,
    ProcessAttributeTrackers, ///< trackProcessAttribute() / untrackProcessAttribute()
    RingBufferSize,
    RotationSchedule,
    Statistics ///< Statistics and ChannelStatistics (the view bounds how often it tells)
};

/// Told of a session's changes, on the main loop (the D-Bus view).
class SessionListener {
public:
    virtual ~SessionListener() = default;
    virtual void changed(const std::vector<SessionChange>& what) = 0;
    /// A rotation (asked for or scheduled) ended: its archive's path, and
    /// the error if it is not whole.
    virtual void rotationEnded(const std::optional<Error>& error, const std::string& path) = 0;
    /// RecordSnapshot wrote the snapshot folder `path`.
    virtual void snapshotRecorded(const std::string& path) = 0;
};

/// `Mode` property: normal (writes as it goes), snapshot (flight
/// recorder), or live (streams to a relay that live viewers read as it
/// goes: the consumer flushes every live timer period, lttng-create(1)
/// --live).
enum class SessionMode { Normal, Snapshot, Live };

/// `BufferOwnership` property: LTTng's buffering schemes.
enum class BufferOwnership { PerUid, PerPid };

std::string_view toString(SessionState s) noexcept;
std::string_view toString(SessionMode m) noexcept;
std::string_view toString(BufferOwnership b) noexcept;

/// What a session is made of; validated by SessionRegistry::create().
struct SessionConfig {
    std::string name;
    uid_t owner = 0;
    std::string outputPath; ///< absolute, normalized; "" for a network session
    /// A network session's relay (lttng-relayd); nullopt: a local session.
    std::optional<RelayAddress> relay;
    /// Live sessions: the live timer period, microseconds (> 0); 0 otherwise.
    uint64_t liveTimerUs = 0;
    SessionMode mode = SessionMode::Normal;
    BufferOwnership bufferOwnership = BufferOwnership::PerUid;
    /// The consumer counts the event records of every packet it writes
    /// (Statistics "events-recorded"): it steps over each record, which
    /// costs consumer CPU at high rates (LTTng's packets carry no count).
    bool countEvents = false;
};

/// What a restarted daemon gives a session it brings back from disk
/// (restart/session_record.hpp): everything a client set, and the state.
struct RestoredSession {
    SessionState state = SessionState::Created;
    std::string errorReason;
    bool everStarted = false;
    bool allUsers = false;
    std::vector<ChannelConfig> channels;
    std::vector<EventRule> rules;
    std::vector<ChannelConfig> kernelChannels;
    std::vector<EventRule> kernelRules;
    ProcessTrackers trackers;
    RotationSchedule schedule;
};

/// One session. Calls that do not fit the current state throw
/// tracectl::Error(WrongState) at once and change nothing; the operations
/// that go to the domain backends answer later through their callback,
/// always called exactly once, also when the session was freed meanwhile
/// (with WrongState "the session was destroyed").
class Session {
public:
    using Done = DomainBackend::Done;
    using PathDone = DomainBackend::PathDone;

    /// `domains` (borrowed, outliving the session) are driven for every
    /// operation; `recorder` (borrowed, likewise) holds what the session
    /// records into. Without a recorder (tests of what needs none), Start
    /// starts the domains alone, Rotate, Clear and RecordSnapshot are
    /// refused (WrongState), and a rotation schedule is only kept.
    Session(SessionId id, SessionConfig config, std::chrono::system_clock::time_point created,
            std::vector<DomainBackend*> domains = {}, SessionRecorder* recorder = nullptr)
        : id_(id), config_(std::move(config)), created_(created), domains_(std::move(domains)),
          recorder_(recorder) {}
    /// Answers nothing: operations in flight answer "destroyed" when their
    /// backends do.
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    const SessionId& id() const noexcept { return id_; }
    const SessionConfig& config() const noexcept { return config_; }
    SessionState state() const noexcept { return state_; }
    /// The `State` property: toString(state()), or "rotating" while a
    /// rotation is under way (unless in error).
    std::string stateName() const;
    /// Creation time (CLOCK_REALTIME).
    std::chrono::system_clock::time_point creationTime() const noexcept { return created_; }
    /// The one listener told of changes (nullptr: none). Set by the view.
    void setListener(SessionListener* listener) noexcept { listener_ = listener; }

    /// created|stopped -> active once every domain has started. Refused
    /// (WrongState) while another operation or a snapshot is in flight,
    /// without channels, when active or failed. On a backend's error the
    /// state stays and `done` gets it. A failed network session (its relay
    /// went away) may be started again: every domain lets go of what the
    /// failed run left (DomainBackend::destroy()), then starts it anew, to
    /// a new session on the relay.
    void start(Done done);
    /// active -> stopped once every domain has flushed its buffers. Refused
    /// (WrongState) while another operation or a snapshot is in flight, or
    /// when not active.
    void stop(Done done);
    /// Every domain drops the session; `done` once all have: nullopt, or
    /// the first domain's error when what the session recorded could not
    /// all be delivered (a network session whose relay failed while its
    /// buffers were drained). The session is gone either way. Accepted in every state but while a
    /// Start, Stop or Destroy is in flight; a snapshot in flight then fails as destroyed. The
    /// caller frees the session after `done`.
    void destroy(Done done);
    /// Closes the current trace chunk: `started` with the archive's path
    /// once every domain began (rotationEnded() follows), or the first
    /// error. Refused (WrongState) for a snapshot or a live session (as
    /// LTTng 2.13), while another
    /// operation is in flight, before the first start, in error, and while
    /// a rotation is under way.
    void rotate(PathDone started);
    /// Session.Clear, as lttng-clear(1) (lttng-tools 2.13 clear.c
    /// cmd_clear_session): deletes what was recorded so far and tracing
    /// goes on. A normal session's current trace chunk is deleted (its
    /// archives, if it rotated, stay) and a new one begins, with the whole
    /// metadata; a snapshot session's buffers are emptied. `done` gets
    /// nullopt once that is done, or the first domain's error. Nothing to do
    /// (nullopt at once, as LTTng): before the first start, and for a
    /// stopped session cleared or rotated since it stopped. Refused
    /// (WrongState) in error, while a rotation is under way (LTTng's
    /// LTTNG_ERR_ROTATION_PENDING), while a Start, Stop, Destroy, snapshot
    /// or another clear is in flight. Start, Stop, Rotate and
    /// RecordSnapshot are refused while it runs; Destroy is not (the clear
    /// then fails as destroyed). No rotationEnded() for a clear: no
    /// archive is made.
    void clear(Done done);
    /// Writes a snapshot (snapshot sessions, active or stopped); `done` gets
    /// its folder, and snapshotRecorded() is told. Refused (WrongState)
    /// while another operation or snapshot is in flight, for a normal
    /// session, before the first start and in error.
    void recordSnapshot(uint64_t maxSize, PathDone done);
    /// Replaces the rotation schedule (empty: none); kept across start and
    /// stop. Refused (WrongState) for a snapshot session, and a non-empty
    /// one for a live session.
    void setRotationSchedule(RotationSchedule schedule, Done done);
    const RotationSchedule& rotationSchedule() const noexcept { return schedule_; }

    /// Right after construction, before any listener or operation: takes
    /// what a restarted daemon read back (session_record.hpp). Nothing goes
    /// to the domains: they learn it at the next start, as for any session.
    void restore(RestoredSession r);
    /// After restore() of an active or stopped session: every domain takes
    /// over what the previous daemon left (DomainBackend::resume()); the
    /// state stays, and operations are refused (WrongState) until `done`,
    /// which gets nullopt or the first domain's error (the caller then
    /// fail()s the session, saying why).
    void resume(Done done);
    /// What restore() would need to bring this session back.
    RestoredSession restorable() const;

    /// Any state -> error (a domain's consumer died, stopped answering or
    /// refused a request); only Destroy is accepted then. Logged, told.
    void fail(std::string reason);
    /// Why the session is in state error ("" otherwise).
    const std::string& errorReason() const noexcept { return errorReason_; }
    SessionOperation operation() const noexcept { return operation_; }
    bool rotating() const noexcept { return rotating_; }
    bool recordingSnapshot() const noexcept { return snapshotting_; }
    bool clearing() const noexcept { return clearing_; }

    /// Bytes the session's ring buffers take now (RingBufferSize), as the
    /// domains report it; told if it changed.
    void setRingBufferSize(uint64_t bytes);
    uint64_t ringBufferSize() const noexcept { return ringBufferSize_; }

    /// Domain `domain`'s latest figures (domains report them as their
    /// consumers send them); told if they changed.
    void setStatistics(const std::string& domain, DomainStatistics statistics);
    /// Every domain's figures together: totals summed, the latest
    /// sampledAtUsec, and one entry per channel of the session (zeroes for
    /// a channel no figure came for yet), in the order of channels().
    DomainStatistics statistics() const;

    /// What a domain backend is given at start.
    SessionSnapshot snapshot() const;

    /// Adds a UST channel. Only before the first start (WrongState), at most
    /// kMaxChannels (LimitExceeded), names unique (InvalidArgument); a
    /// snapshot session's channels must overwrite (InvalidArgument).
    void addChannel(ChannelConfig channel, TracingDomain domain = TracingDomain::Ust);
    /// Adds an event rule. An empty channel means kDefaultChannelName, which
    /// is created with default settings if the session has no channel yet
    /// (only before the first start, as LTTng does). Throws InvalidArgument
    /// (no such channel, bad rule), EventRuleExists (the session has the same
    /// rule already: sameEventRule()), LimitExceeded, WrongState; nothing is
    /// changed then. Returns true if the default channel was created.
    /// A rule identical to a disabled one re-enables it instead (LTTng
    /// 2.13: the same enable-event turns a disabled event back on); that
    /// waits for no Start/Stop/Destroy (WrongState while one is in flight).
    /// The rule then goes to every domain backend (applied at once if the
    /// session runs), and `done` gets their outcome.
    bool enableEvents(
        EventRule rule, Done done = [](std::optional<Error>) {});

    /// Disables, at once if the session runs and kept across start and stop,
    /// every event rule of `channel` (empty: kDefaultChannelName) of
    /// `domain` whose pattern is exactly `pattern` (whatever its log level,
    /// filter and exclusions), or every rule of the channel if `pattern` is
    /// empty (lttng-disable-event(1) --all-events). A rule disabled already
    /// stays so, and counts as found (LTTng 2.13's event_ust_disable_tracepoint()
    /// in lttng-tools src/bin/lttng-sessiond/event.c skips it). Throws,
    /// with nothing changed: WrongState (session in error, a Start/Stop/
    /// Destroy in flight), InvalidArgument (no such channel),
    /// NoSuchEventRule (no rule of the channel has that pattern; for an
    /// empty pattern: the channel has no rule). `done` gets the domains'
    /// outcome (the apps' and tracefs' failures are theirs: logged).
    void disableEvents(
        TracingDomain domain, const std::string& channel, const std::string& pattern,
        Done done = [](std::optional<Error>) {});
    /// Disables channel `channel` of `domain`: it records nothing, at once
    /// if the session runs, until re-enabled with addChannel() of the same
    /// name (reenableChannel()). Disabling a disabled channel succeeds
    /// (lttng-tools channel.c channel_ust_disable()). Throws WrongState
    /// (error, busy), InvalidArgument (no such channel), nothing changed.
    void disableChannel(
        TracingDomain domain, const std::string& channel, Done done = [](std::optional<Error>) {});
    /// The channel `name` of `domain`, or nullptr.
    const ChannelConfig* findChannel(TracingDomain domain, const std::string& name) const;
    /// Re-enables disabled channel `name` (lttng-enable-channel(1) on an
    /// existing channel), also after the first start. `attributes`, if
    /// given, must be the channel's own (sameChannelAttributes()), else
    /// InvalidArgument. Throws InvalidArgument (no such channel, or it is
    /// enabled: addChannel() refuses a second channel of that name),
    /// WrongState (error, busy); nothing changed then.
    void reenableChannel(
        TracingDomain domain, const std::string& name,
        const std::optional<ChannelConfig>& attributes, Done done = [](std::optional<Error>) {});

    /// Records context field `type` (context_type.hpp) with every event of
    /// `channel`, or of every channel if `channel` is empty; with no channel
    /// at all, channel0 is created first, as lttng-add-context(1) does. Only
    /// before the first start (WrongState). Throws InvalidArgument (unknown
    /// type or channel, a channel that records `type` already). Returns true
    /// if the default channel was created.
    /// Kernel channels take the kernel context types (context_type.hpp
    /// kernelContextBit()); the UST ones the others.
    bool addContext(TracingDomain domain, const std::string& channel, const std::string& type);
    bool addContext(const std::string& channel, const std::string& type) {
        return addContext(TracingDomain::Ust, channel, type);
    }

    /// UST channels and rules.
    const std::vector<ChannelConfig>& channels() const noexcept { return channels_; }
    const std::vector<EventRule>& eventRules() const noexcept { return rules_; }
    /// Kernel channels (each records `tid` unless told otherwise) and rules.
    const std::vector<ChannelConfig>& kernelChannels() const noexcept { return kernelChannels_; }
    const std::vector<EventRule>& kernelEventRules() const noexcept { return kernelRules_; }
    /// True once the session was started at least once.
    bool everStarted() const noexcept { return everStarted_; }

    /// True if the session records the apps of every uid: its owner is
    /// root, or traceAllUsers() was called (the owner held polkit's
    /// trace-all-users). Otherwise only the owner's apps are recorded.
    bool tracesAllUsers() const noexcept { return config_.owner == 0 || allUsers_; }
    /// From now on the session records every uid's apps (never undone; the
    /// domains learn it with the next enableEvents() or start()).
    /// Returns true if that is new (and tells the listener).
    bool traceAllUsers();

    /// lttng-track(1): adds `values` to the tracker of `attribute` in
    /// domain `domain` (ProcessTrackers::track(): with `all`, back to every
    /// process). lttng-untrack(1): untrackProcessAttribute() removes them
    /// (ProcessTrackers::untrack(): with `all`, nothing is tracked).
    /// Accepted in every state but error and while a Start, Stop or
    /// Destroy is in flight (WrongState); the change is told
    /// (ProcessAttributeTrackers) and goes to every domain backend at once
    /// (DomainBackend::setProcessTrackers(): applied at once if the
    /// session runs); `done` gets their outcome. Throws InvalidArgument: an
    /// attribute of the other domain (vpid/vuid/vgid are "ust", pid/uid/gid
    /// "kernel"), and any kernel attribute: tracefs filters an instance's
    /// events by pid only (set_event_pid), which tracectl does not drive
    /// yet, and has no uid or gid filter at all (KERNEL-NOTES.md); plus
    /// ProcessTrackers' errors. Nothing changes when it throws.
    void trackProcessAttribute(
        TracingDomain domain, ProcessAttribute attribute, const std::vector<uint32_t>& values,
        bool all, Done done = [](std::optional<Error>) {});
    void untrackProcessAttribute(
        TracingDomain domain, ProcessAttribute attribute, const std::vector<uint32_t>& values,
        bool all, Done done = [](std::optional<Error>) {});
    const ProcessTrackers& processTrackers() const noexcept { return trackers_; }

private:
    /// start()'s work once checked: every domain starts.
    void startDomains(Done done);
    /// start() of a failed network session: every domain destroys what it
    /// holds of it, then startDomains().
    void restartAfterFailure(Done done);
    /// trackProcessAttribute()'s and untrackProcessAttribute()'s checks
    /// and work; `track` says which.
    void changeTracker(bool track, TracingDomain domain, ProcessAttribute attribute,
                       const std::vector<uint32_t>& values, bool all, Done done);
    /// Throws WrongState naming `member` while a Start/Stop/Destroy is in
    /// flight, or a snapshot or clear unless `evenDuringSnapshot`.
    void checkIdle(const char* member, bool evenDuringSnapshot = false) const;
    /// Throws WrongState for a snapshot session (no chunk to rotate).
    void refuseInSnapshotMode(const char* member) const;
    /// Throws WrongState for a live session (LTTng 2.13 does not rotate one).
    void refuseInLiveMode(const char* member) const;
    /// "session 'NAME' failed (REASON); destroy it" (a network session may
    /// also be started again), for WrongState refusals in state error.
    std::string failedText() const;
    void notify(std::vector<SessionChange> what);
    std::vector<ChannelConfig>& channelsOf(TracingDomain d);
    /// The channel `name` of `domain`; throws InvalidArgument ("session ...
    /// has no ... channel named ...") when there is none.
    ChannelConfig& channelNamed(TracingDomain domain, const std::string& name);
    /// The recorder, or throws WrongState naming `member` if there is none.
    SessionRecorder& recorder(const char* member) const;
    /// start()'s second half: the recording, then the domains.
    void startRecordingAndDomains(Done done);
    /// Gives schedule_ to the recorder (recorder_ set), its rotations
    /// followed as Rotate's; `done` once it is in place.
    void applySchedule(Done done);
    /// Removes `rule` (refused by a domain) and, if it made it and nothing
    /// else uses it, the default channel; tells the listener.
    void takeBack(const EventRule& rule, bool createdDefault);
    /// channel0 of domain `d` with its defaults (overwrite in snapshot mode).
    ChannelConfig defaultChannel(TracingDomain d) const;
    void rotationEnded(const std::optional<Error>& error, const std::string& path);
    /// Sets `enabled` on the rules of `domain` that `select` picks (their
    /// indexes), tells the listener, and has every domain apply it; `done`
    /// with the outcome.
    void setRulesEnabled(TracingDomain domain, const std::vector<std::size_t>& which, bool enabled,
                         Done done);
    /// Throws WrongState while in error or a Start/Stop/Destroy is in flight.
    void checkMayToggle(const char* member) const;

    SessionId id_;
    SessionConfig config_;
    std::chrono::system_clock::time_point created_;
    std::vector<DomainBackend*> domains_;
    SessionRecorder* recorder_ = nullptr;
    SessionListener* listener_ = nullptr;
    SessionState state_ = SessionState::Created;
    SessionOperation operation_ = SessionOperation::None;
    bool rotating_ = false;     ///< a rotation began and has not ended
    bool snapshotting_ = false; ///< a RecordSnapshot awaits the domains
    bool clearing_ = false;     ///< a Clear awaits the domains
    /// Stopped, and cleared or rotated since: the current chunk holds
    /// nothing (LTTng's cleared_after_last_stop, rotated_after_last_stop).
    bool emptySinceStop_ = false;
    /// Which of the two emptied it last: "rotated" or "cleared".
    const char* emptiedBy_ = "";
    RotationSchedule schedule_;
    uint64_t ringBufferSize_ = 0;
    std::map<std::string, DomainStatistics, std::less<>> statistics_; ///< by domain
    bool everStarted_ = false;
    /// When a failed network session was last started again (seconds
    /// since the Epoch): SessionSnapshot::relayCreationTime.
    std::optional<int64_t> restartedAt_;
    bool allUsers_ = false;
    std::string errorReason_;
    std::vector<ChannelConfig> channels_;
    std::vector<EventRule> rules_;
    std::vector<ChannelConfig> kernelChannels_;
    std::vector<EventRule> kernelRules_;
    ProcessTrackers trackers_;
    /// Last (gone first): the domains' answers arriving once the session
    /// is gone do nothing, or say "the session was destroyed".
    Lifetime lifetime_;
};

} // namespace tracectl
