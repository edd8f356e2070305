// Session: the process attribute trackers (lttng-track(1), lttng-untrack(1)).
#include "common/error.hpp"
#include "common/join.hpp"
#include "common/log.hpp"
#include "session/session.hpp"

#include <memory>

namespace tracectl {

void Session::trackProcessAttribute(TracingDomain domain, ProcessAttribute attribute,
                                    const std::vector<uint32_t>& values, bool all, Done done) {
    changeTracker(true, domain, attribute, values, all, std::move(done));
}

void Session::untrackProcessAttribute(TracingDomain domain, ProcessAttribute attribute,
                                      const std::vector<uint32_t>& values, bool all, Done done) {
    changeTracker(false, domain, attribute, values, all, std::move(done));
}

void Session::changeTracker(bool track, TracingDomain domain, ProcessAttribute attribute,
                            const std::vector<uint32_t>& values, bool all, Done done) {
    const char* member = track ? "TrackProcessAttribute" : "UntrackProcessAttribute";
    if (state_ == SessionState::Error)
        throw Error(ErrorCode::WrongState, failedText());
    checkIdle(member, true);
    const std::string name(toString(attribute));
    if (domainOf(attribute) != domain)
        throw Error(ErrorCode::InvalidArgument,
                    "the " + std::string(toString(domain)) + " domain has no " + name +
                        " tracker (ust: vpid, vuid, vgid; kernel: pid, uid, gid)");
    if (domain == TracingDomain::Kernel)
        throw Error(ErrorCode::InvalidArgument,
                    "kernel process tracking (" + name +
                        ") is not supported: tracefs filters an instance's events by pid only "
                        "(set_event_pid), which tracectl does not drive yet, and has no uid or "
                        "gid filter at all");
    ProcessTrackers next = trackers_;
    const bool changed =
        track ? next.track(attribute, values, all) : next.untrack(attribute, values, all);
    if (changed) {
        trackers_ = std::move(next);
        const ProcessTracker& t = trackers_.of(attribute);
        const std::string now =
            t.all ? "every process" : std::to_string(t.values.size()) + " value(s)";
        log::info("session '" + config_.name + "': the " + name + " tracker now tracks " + now,
                  id_.uuid());
        notify({SessionChange::ProcessAttributeTrackers});
    }
    // Every backend learns them (also unchanged: TracesAllUsers may have
    // changed with the call), in order with Start (one not started yet
    // keeps them for its start); `done` gets the first error.
    Join answers(domains_.size(), std::move(done));
    for (DomainBackend* d : domains_)
        d->setProcessTrackers(id_.hex(), trackers_, tracesAllUsers(), answers.add());
}

} // namespace tracectl
