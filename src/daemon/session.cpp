#include "session.hpp"

#include "common/error.hpp"

namespace tracectl {

std::string_view toString(SessionState s) noexcept {
    switch (s) {
    case SessionState::Created:
        return "created";
    case SessionState::Active:
        return "active";
    case SessionState::Stopped:
        return "stopped";
    }
    return "unknown";
}

std::string_view toString(SessionMode m) noexcept {
    return m == SessionMode::Snapshot ? "snapshot" : "normal";
}

std::string_view toString(BufferOwnership b) noexcept {
    return b == BufferOwnership::PerPid ? "per-pid" : "per-uid";
}

void Session::start() {
    if (state_ == SessionState::Active)
        throw Error(ErrorCode::WrongState, "session '" + config_.name + "' is already active");
    state_ = SessionState::Active;
}

void Session::stop() {
    if (state_ != SessionState::Active)
        throw Error(ErrorCode::WrongState, "session '" + config_.name + "' is not active (state " +
                                               std::string(toString(state_)) + ")");
    state_ = SessionState::Stopped;
}

} // namespace tracectl
