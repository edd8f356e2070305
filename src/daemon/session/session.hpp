// A tracing session, free of D-Bus types: its identity, configuration and
// state machine. The bus object (objects/session_object.hpp) wraps it.
#pragma once

#include "session/channel_config.hpp"
#include "session/session_id.hpp"

#include <chrono>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace tracectl {

/// LTTng's session life cycle, as tracectl exposes it in the `State`
/// property (which reads "rotating" instead of "active" or "stopped" while a
/// Rotate is under way: SessionObject keeps that).
enum class SessionState { Created, Active, Stopped, Error };

/// `Mode` property: normal (writes as it goes) or snapshot (flight recorder).
enum class SessionMode { Normal, Snapshot };

/// `BufferOwnership` property: LTTng's buffering schemes.
enum class BufferOwnership { PerUid, PerPid };

std::string_view toString(SessionState s) noexcept;
std::string_view toString(SessionMode m) noexcept;
std::string_view toString(BufferOwnership b) noexcept;

/// What a session is made of; validated by SessionRegistry::create().
struct SessionConfig {
    std::string name;
    uid_t owner = 0;
    std::string outputPath; ///< absolute, normalized
    SessionMode mode = SessionMode::Normal;
    BufferOwnership bufferOwnership = BufferOwnership::PerUid;
};

/// One session. Transitions throw tracectl::Error(WrongState) when the call
/// does not fit the current state, and change nothing then.
class Session {
public:
    Session(SessionId id, SessionConfig config, std::chrono::system_clock::time_point created)
        : id_(id), config_(std::move(config)), created_(created) {}

    const SessionId& id() const noexcept { return id_; }
    const SessionConfig& config() const noexcept { return config_; }
    SessionState state() const noexcept { return state_; }
    /// Creation time (CLOCK_REALTIME).
    std::chrono::system_clock::time_point creationTime() const noexcept { return created_; }

    /// created|stopped -> active.
    void start();
    /// active -> stopped.
    void stop();
    /// Any state -> error (the consumer died, stopped answering or refused a
    /// request); only Destroy is accepted then.
    void fail(std::string reason);
    /// Why the session is in state error ("" otherwise).
    const std::string& errorReason() const noexcept { return errorReason_; }

    /// Adds a UST channel. Only before the first start (WrongState), at most
    /// kMaxChannels (LimitExceeded), names unique (InvalidArgument); a
    /// snapshot session's channels must overwrite (InvalidArgument).
    void addChannel(ChannelConfig channel);
    /// Adds an event rule. An empty channel means kDefaultChannelName, which
    /// is created with default settings if the session has no channel yet
    /// (only before the first start, as LTTng does). Throws InvalidArgument
    /// (no such channel, bad rule), EventRuleExists (the session has the same
    /// rule already: sameEventRule()), LimitExceeded, WrongState; nothing is
    /// changed then. Returns true if the default channel was created.
    bool enableEvents(EventRule rule);

    /// Records context field `type` (context_type.hpp) with every event of
    /// `channel`, or of every channel if `channel` is empty; with no channel
    /// at all, channel0 is created first, as lttng-add-context(1) does. Only
    /// before the first start (WrongState). Throws InvalidArgument (unknown
    /// type or channel, a channel that records `type` already). Returns true
    /// if the default channel was created.
    bool addContext(const std::string& channel, const std::string& type);

    const std::vector<ChannelConfig>& channels() const noexcept { return channels_; }
    const std::vector<EventRule>& eventRules() const noexcept { return rules_; }
    /// True once the session was started at least once.
    bool everStarted() const noexcept { return everStarted_; }

    /// True if the session records the apps of every uid: its owner is
    /// root, or traceAllUsers() was called (the owner held polkit's
    /// trace-all-users). Otherwise only the owner's apps are recorded.
    bool tracesAllUsers() const noexcept { return config_.owner == 0 || allUsers_; }
    /// From now on the session records every uid's apps (never undone).
    /// Returns true if that is new.
    bool traceAllUsers() noexcept {
        const bool changed = !tracesAllUsers();
        allUsers_ = true;
        return changed;
    }

private:
    SessionId id_;
    SessionConfig config_;
    std::chrono::system_clock::time_point created_;
    SessionState state_ = SessionState::Created;
    bool everStarted_ = false;
    bool allUsers_ = false;
    std::string errorReason_;
    std::vector<ChannelConfig> channels_;
    std::vector<EventRule> rules_;
};

} // namespace tracectl
