// A tracing session, free of D-Bus types: its identity, configuration and
// state machine. The bus object (session_object.hpp) wraps it.
#pragma once

#include "session_id.hpp"

#include <chrono>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace tracectl {

/// LTTng's session life cycle, as tracectl exposes it in the `State`
/// property. `rotating` and `error` come with rotation and consumers.
enum class SessionState { Created, Active, Stopped };

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

private:
    SessionId id_;
    SessionConfig config_;
    std::chrono::system_clock::time_point created_;
    SessionState state_ = SessionState::Created;
};

} // namespace tracectl
