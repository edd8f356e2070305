// What a session records into, as the session state machine (session.hpp)
// drives it: the session's consumer, its output folder or relay session,
// its trace chunks, rotations, clear, snapshots and rotation schedule. One
// recorder serves every session, named by SessionId::hex(); it is
// recording/recordings.hpp's Recordings in the daemon. The domains
// (domain_backend.hpp) decide only what is recorded: they add their
// channels to the session's recording.
//
// Order, which the session keeps: startRecording() before the domains'
// start() (their channels need the consumer), the domains' destroy()
// before endRecording() (they close their channels first).
//
// Threads: called on the main loop only, and answers there, in the order
// of the calls for one session.
#pragma once

#include "session/domain_backend.hpp"

#include <cstdint>
#include <string>

namespace tracectl {

class SessionRecorder {
public:
    using Done = DomainBackend::Done;
    using PathDone = DomainBackend::PathDone;

    virtual ~SessionRecorder() = default;

    /// Before any refusal of the domains (DomainBackend::refuseStart()): the
    /// first start makes the output folder (or opens the relay session),
    /// starts the consumer and greets it; a later one checks that the
    /// consumer and the output folder are still there. Errors: WrongState
    /// (failed, output folder replaced), Failed (the consumer could not be
    /// started), RelayUnavailable, InvalidArgument (the folder).
    virtual void startRecording(SessionSnapshot session, Done done) = 0;
    /// A restarted daemon takes the session's consumer over (kept in
    /// systemd's fd store): what the previous daemon recorded is archived
    /// as a rotation does (a normal session), the consumer goes on. Errors:
    /// Failed (nothing kept, the consumer is gone or refused).
    virtual void resumeRecording(SessionSnapshot session, Done done) = 0;
    /// The session records (true) or not: only an active session rotates
    /// on its schedule.
    virtual void setRecordingActive(std::string idHex, bool active) = 0;
    /// The session is being destroyed (or let go after a failure): what
    /// fails from now on while the domains close their channels (a relay
    /// that stops answering) is the end's to report (endRecording()), and
    /// fails the session no more.
    virtual void recordingEnding(std::string idHex) = 0;
    /// After the domains closed their channels: the consumer drains the
    /// rest, archives nothing more and exits; a rotation under way
    /// completes first or fails. `done` always gets nullopt or
    /// RelayUnavailable (the relay did not get all of it).
    virtual void endRecording(std::string idHex, Done done) = 0;
    /// Closes the current trace chunk: `started` once the consumer has
    /// begun (or with why not: WrongState, Failed), then, if it began,
    /// `completed` once the archive is whole (or with why not).
    virtual void rotate(std::string idHex, PathDone started, PathDone completed) = 0;
    /// Session.Clear: deletes what the session recorded so far (a normal
    /// session's current chunk, a snapshot session's buffer content),
    /// tracing going on. Errors: WrongState (a rotation under way, the
    /// consumer gone), Failed.
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
