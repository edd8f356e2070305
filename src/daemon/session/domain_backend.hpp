// A tracing domain ("ust" today; "kernel" and the ip provider next) as the
// session state machine (session.hpp) drives it: start, stop with every
// buffer flushed, destroy, new event rules, rotation, snapshot, rotation
// schedule. One backend serves every session, named by SessionId::hex();
// a backend in which a session has nothing to do answers at once.
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
    /// Whether rotate(), recordSnapshot() and setRotationSchedule() are
    /// this domain's to do. False for a domain whose buffers another
    /// domain's consumer rotates and snapshots with its own (the kernel
    /// domain's channels live in the consumer the UST tracer drives): the
    /// session then asks it nothing of the sort.
    virtual bool writesChunks() const noexcept { return true; }
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
    /// Closes the current trace chunk: `started` once the consumer has begun
    /// (or with the error: WrongState, Failed), then, if it began,
    /// `completed` once the archive is whole (or with why not).
    virtual void rotate(std::string idHex, PathDone started, PathDone completed) = 0;
    /// Session.Clear: deletes what the session recorded so far (a normal
    /// session's current chunk, a snapshot session's buffer content),
    /// tracing going on; `done` once deleted. Asked of chunk writers only.
    /// Errors: WrongState (a rotation under way, the consumer gone),
    /// Failed.
    virtual void clear(std::string idHex, Done done) = 0;
    /// Writes the buffers' content as a trace of its own; `maxSize` bytes
    /// bounds its data streams (0: no bound). Errors: WrongState,
    /// InvalidArgument, Failed.
    virtual void recordSnapshot(std::string idHex, uint64_t maxSize, PathDone done) = 0;
    /// From now on the session rotates on its own as `schedule` says (empty:
    /// never); `started`/`completed` are told of each such rotation, `done`
    /// once the schedule is in place.
    virtual void setRotationSchedule(std::string idHex, RotationSchedule schedule, PathDone started,
                                     PathDone completed, Done done) = 0;
};

} // namespace tracectl
