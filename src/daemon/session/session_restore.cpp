// Session::restore() and restorable(): a session as a restarted daemon
// brings it back (state/session_record.hpp).
#include "session/session.hpp"

namespace tracectl {

void Session::restore(RestoredSession r) {
    state_ = r.state;
    errorReason_ = std::move(r.errorReason);
    everStarted_ = r.everStarted;
    allUsers_ = r.allUsers;
    channels_ = std::move(r.channels);
    rules_ = std::move(r.rules);
    kernelChannels_ = std::move(r.kernelChannels);
    kernelRules_ = std::move(r.kernelRules);
    trackers_ = std::move(r.trackers);
    schedule_ = r.schedule;
}

RestoredSession Session::restorable() const {
    RestoredSession r;
    r.state = state_;
    r.errorReason = errorReason_;
    r.everStarted = everStarted_;
    r.allUsers = allUsers_;
    r.channels = channels_;
    r.rules = rules_;
    r.kernelChannels = kernelChannels_;
    r.kernelRules = kernelRules_;
    r.trackers = trackers_;
    r.schedule = schedule_;
    return r;
}

} // namespace tracectl
