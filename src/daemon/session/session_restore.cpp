// Session::restore() and restorable(): a session as a restarted daemon
// brings it back (restart/session_record.hpp).
#include "common/join.hpp"
#include "session/domain_answers.hpp"
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

void Session::resume(Done done) {
    operation_ = SessionOperation::Resuming;
    const bool active = state_ == SessionState::Active;
    auto finish = lifetime_.guard(
        [this, done, active](std::optional<Error> e) {
            operation_ = SessionOperation::None;
            if (!e && active && recorder_ != nullptr)
                recorder_->setRecordingActive(id_.hex(), true);
            done(std::move(e));
        },
        [done](std::optional<Error>) { done(session_detail::destroyedError()); });
    // The recording first (the consumer taken over, what the previous
    // daemon recorded archived), then the domains make their channels.
    auto domains = lifetime_.guard(
        [this, finish, active](std::optional<Error> e) {
            if (e)
                return finish(std::move(e));
            Join all(domains_.size(), finish);
            const SessionSnapshot s = snapshot();
            for (DomainBackend* d : domains_)
                d->resume(s, active, all.add());
        },
        finish);
    if (recorder_ == nullptr)
        return domains(std::nullopt);
    recorder_->resumeRecording(snapshot(), domains);
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
