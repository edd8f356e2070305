// What the session objects ask of the tracing machinery, which runs on the
// app thread: start, stop and destroy a session, enable events in it, each
// answered later on the D-Bus thread, in the order asked.
#pragma once

#include "common/error.hpp"
#include "tracing/session_snapshot.hpp"

#include <functional>
#include <optional>
#include <string>

namespace tracectl {

class TracingBackend {
public:
    /// Called on the D-Bus thread with the outcome (nullopt: done).
    using Done = std::function<void(std::optional<Error>)>;
    virtual ~TracingBackend() = default;
    virtual void start(SessionSnapshot session, Done done) = 0;
    virtual void stop(std::string idHex, Done done) = 0;
    virtual void destroy(std::string idHex, Done done) = 0;
    /// A new event rule: applied to the apps of the session if it runs.
    /// `tracesAllUsers`: from now on the session also traces other uids'
    /// apps (those registered already join at once if it runs).
    virtual void enableEvents(std::string idHex, EventRule rule, bool tracesAllUsers,
                              Done done) = 0;
    /// Called on the D-Bus thread with the outcome and the archive's path.
    using Rotated = std::function<void(std::optional<Error>, std::string path)>;
    /// A rotation (UstTracer::rotate): `started` once the consumer has begun
    /// (or with the error), then, if it began, `completed` once the archive
    /// is complete (or with why it is not).
    virtual void rotate(std::string idHex, Rotated started, Rotated completed) = 0;
    /// UstTracer::recordSnapshot; `done` gets the snapshot's path or the error.
    virtual void recordSnapshot(std::string idHex, uint64_t maxSize, Rotated done) = 0;
    /// UstTracer::setRotationSchedule; `started`/`completed` are told of
    /// each scheduled rotation, `done` once the schedule is in place.
    virtual void setRotationSchedule(std::string idHex, RotationSchedule schedule, Rotated started,
                                     Rotated completed, Done done) = 0;
};

} // namespace tracectl
