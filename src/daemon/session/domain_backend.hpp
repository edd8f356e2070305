// A tracing domain (UstDomain "ust"; KernelDomain "kernel", the ip provider
// included) as the session state machine (session.hpp) drives it: refusing
// or making a start, a restarted daemon's takeover (resume), stop with every
// buffer flushed, destroy, new event rules, rules and channels turned off
// and on, process trackers. A domain decides only what is recorded: the
// session's recording (session_recorder.hpp, the consumer and its chunks)
// is not a domain's; a domain adds its channels to it. One backend serves
// every session, named by SessionId::hex(); a backend in which a session
// has nothing to do answers at once.
//
// Threads: called on the main loop only, and answers there (a backend
// that works on a thread of its own posts its answers back). Answers come
// in the order the calls were made for one session.
#pragma once

#include "common/error.hpp"
#include "session/session_snapshot.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tracectl {

class DomainBackend {
public:
    /// The outcome (nullopt: done).
    using Done = std::function<void(std::optional<Error>)>;
    /// The outcome and the absolute path of a rotation's archive or a
    /// snapshot's folder.
    using PathDone = std::function<void(std::optional<Error>, std::string path)>;

    virtual ~DomainBackend() = default;

    /// The domain's name, as in the D-Bus `domain` arguments ("ust").
    virtual std::string_view name() const noexcept = 0;
    /// Why `session` cannot start in this domain (before its recording
    /// starts: nothing is made for a session refused here), or nullopt.
    virtual std::optional<Error> refuseStart(const SessionSnapshot& session) {
        (void)session;
        return std::nullopt;
    }
    /// Starts tracing `session` (the first start also makes its buffers).
    /// Errors: WrongState, Failed (the consumer could not be started or
    /// refused).
    virtual void start(SessionSnapshot session, Done done) = 0;
    /// A restarted daemon takes session `session` over where the previous
    /// daemon left it (`active`: it was recording; else stopped after a
    /// start): what that daemon made is taken over, or why not (Failed).
    /// A domain in which the session has nothing answers nullopt at once
    /// (the default).
    virtual void resume(SessionSnapshot session, bool active, Done done) {
        (void)session;
        (void)active;
        done(std::nullopt);
    }
    /// Stops tracing; `done` once every buffer is on disk.
    virtual void stop(std::string idHex, Done done) = 0;
    /// Drops everything of the session (stopping it first); `done` always
    /// gets nullopt (what fails is logged).
    virtual void destroy(std::string idHex, Done done) = 0;
    /// A new event rule, applied at once if the session runs.
    /// `tracesAllUsers`: the session records every uid's apps from now on.
    virtual void enableEvents(std::string idHex, EventRule rule, bool tracesAllUsers,
                              Done done) = 0;
    /// Turns `rules` (the session's, all of one domain, told apart with
    /// sameEventRule()) off or on: at once if the session runs (an app,
    /// or tracefs, stops or resumes recording their events), and from then
    /// on. A backend in which the session has not started keeps nothing:
    /// the snapshot of the next start carries EventRule::enabled. A rule
    /// turned on for the first time in an app is created there then (an
    /// app gets each rule's event once). Rules of another domain: nothing.
    virtual void setEventRulesEnabled(std::string idHex, std::vector<EventRule> rules, bool enabled,
                                      Done done) = 0;
    /// Turns channel `channel` of `domain` off (it records nothing) or
    /// back on, as setEventRulesEnabled() does for rules.
    virtual void setChannelEnabled(std::string idHex, TracingDomain domain, std::string channel,
                                   bool enabled, Done done) = 0;
    /// The session's process attribute trackers changed to `trackers`
    /// (session/process_trackers.hpp): from now on only the processes they
    /// admit are recorded; while the session runs, one no longer admitted
    /// stops recording at once and one newly admitted starts. A backend
    /// that does not know the session yet gets them with its start().
    /// `tracesAllUsers`: the session records every uid's apps from now on
    /// (as enableEvents()). Errors: InvalidArgument (trackers of this
    /// domain it cannot apply).
    virtual void setProcessTrackers(std::string idHex, ProcessTrackers trackers,
                                    bool tracesAllUsers, Done done) = 0;
};

} // namespace tracectl
