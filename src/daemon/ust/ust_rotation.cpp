// UstTracer: rotations (Session.Rotate) and the rotation schedule.
#include "common/error.hpp"
#include "common/log.hpp"
#include "session/trace_paths.hpp"
#include "ust_tracer.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

namespace tracectl {

namespace cp = consumer_protocol;

std::string UstTracer::archiveRoot(const Traced& t) {
    return t.snapshot.relay ? t.relayOutputPath : t.snapshot.outputPath;
}

uint64_t UstTracer::chunkSize(const Traced& t) {
    uint64_t total = 0;
    for (const auto& [key, f] : t.figures)
        total += f.chunkBytes;
    for (const auto& [key, bytes] : t.foreignChunkBytes)
        total += bytes;
    return total;
}

void UstTracer::checkChunkSize(Traced& t) {
    const auto sched = schedules_.find(t.snapshot.idHex);
    if (sched == schedules_.end() || sched->second.schedule.sizeBytes == 0)
        return;
    // Only an active session rotates on its own. While a rotation is under
    // way the figures mix two chunks: the consumer sends the next chunk's
    // at once once it is done, if that chunk holds enough already.
    if (!t.active || t.failed || t.destroying || t.rotating || t.rotationAfterCreation ||
        chunkSize(t) < sched->second.schedule.sizeBytes)
        return;
    rotateOnSchedule(t);
}

void UstTracer::watchChunkSize(Traced& t) {
    const auto sched = schedules_.find(t.snapshot.idHex);
    const uint64_t bytes = sched == schedules_.end() ? 0 : sched->second.schedule.sizeBytes;
    if (!t.greeted || !t.consumer || !t.consumer->usable() || t.failed || bytes == t.watchedBytes)
        return;
    t.watchedBytes = bytes;
    t.consumer->watchChunkSize(bytes, failOnError(t, "to watch the trace chunk's size"));
}

void UstTracer::rotate(const std::string& idHex, RotationDone started, RotationDone completed) {
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end())
        return started(Error(ErrorCode::WrongState,
                             "the session was never started: it has no trace chunk to rotate"),
                       "");
    Traced& t = *it->second;
    if (t.failed)
        return started(
            Error(ErrorCode::WrongState, "the session's consumer is gone; destroy the session"),
            "");
    if (!t.consumer)
        return started(Error(ErrorCode::WrongState, "the session is still starting"), "");
    if (t.rotating || t.rotationAfterCreation.has_value())
        return started(Error(ErrorCode::WrongState,
                             "a rotation is under way" +
                                 (t.rotating ? " (to " + t.rotating->path + ")" : std::string()) +
                                 "; wait for it"),
                       "");
    beginRotation(t, std::move(started), std::move(completed));
}

void UstTracer::appJobAnswered(const SessionRef& ref) {
    Traced* live = find(ref);
    if (live == nullptr || live->appJobsMaking == 0)
        return;
    if (--live->appJobsMaking == 0 && !making(*live))
        creationsOver(*live);
}

void UstTracer::creationsOver(Traced& t) {
    // What waited, and a waiting rotation's answer, may free `t`: what
    // follows each runs only while it lives.
    auto over = t.lifetime.guard([this, &t] {
        if (!t.rotating)
            rotationOver(t);
    });
    auto rotate = t.lifetime.guard([this, &t, over] {
        if (auto w = std::exchange(t.rotationAfterCreation, std::nullopt))
            beginRotation(t, std::move(w->started), std::move(w->completed), w->discard);
        over();
    });
    for (auto& f : std::exchange(t.afterCreations, {}))
        f();
    rotate();
}

void UstTracer::dropWaitingRotations(Traced& t, const std::string& why) {
    if (auto w = std::exchange(t.rotationAfterCreation, std::nullopt))
        w->started(Error(ErrorCode::Failed, "the rotation did not begin: " + why), "");
}

void UstTracer::beginRotation(Traced& t, RotationDone started, RotationDone completed,
                              bool discard) {
    if (making(t)) {
        if (t.rotationAfterCreation)
            return started(Error(ErrorCode::WrongState, "a rotation is under way; wait for it"),
                           "");
        t.rotationAfterCreation =
            Traced::WaitingRotation{std::move(started), std::move(completed), discard};
        return;
    }
    // Names stay unique and ordered even if the clock steps back: the stamps
    // never decrease and the index always grows.
    const std::time_t now = std::max(std::time(nullptr), t.lastStamp);
    cp::Rotate request;
    request.id = t.nextRotationId++;
    request.oldChunk = t.chunkDir;
    request.newChunk = chunkDir(now, t.chunkIndex + 1);
    request.archive = archiveDir(t.chunkBegin, now, t.chunkIndex);
    request.discard = discard;
    // A network session's consumer closes relay chunk `chunkIndex` at
    // `now`: the relay archives it under the same name (chunkStamp() is
    // lttng-tools 2.13 trace-chunk.c's generate_chunk_name format), below
    // the session's folder on the relay.
    request.chunkIndex = t.chunkIndex;
    request.boundaryTime = static_cast<uint64_t>(now);
    const std::string path = archiveRoot(t) + "/" + request.archive;
    t.rotating = Traced::Rotation{request.id, path, std::move(completed), false, discard};
    declareOrphanChannels(t);
    for (auto& [key, trace] : t.traces)
        pushMetadata(t, *trace); // the old chunk's metadata is whole
    auto rotated = [this, &t, request, now, path, started](std::optional<Error> e) {
        const bool ours = t.rotating && t.rotating->id == request.id;
        if (e && ours && !ConsumerConnection::isRefusal(*e) && !t.failed) {
            // Not answered in time, or the connection broke: the consumer may
            // carry the rotation out all the same, and would refuse every
            // later one; what it writes from now on is not the session's
            // chunk any more. The session fails, saying why.
            failSession(t, "the consumer " + t.spec.unitName + " failed a rotation (" + e->what() +
                               "); it was stopped");
            return started(Error(ErrorCode::Failed, std::string("rotating: ") + e->what() +
                                                        "; the session is now in state error"),
                           path);
        }
        if (e || !ours) {
            if (ours) {
                t.rotating.reset();
                rotationOver(t);
            }
            return started(
                Error(ErrorCode::Failed,
                      std::string("rotating: ") + (e ? e->what() : "the session failed meanwhile")),
                path);
        }
        t.chunkDir = request.newChunk;
        t.chunkBegin = t.lastStamp = now;
        ++t.chunkIndex;
        log::info("session '" + t.snapshot.name + "': " +
                  (request.discard ? "clearing, into " : "rotating into ") + request.newChunk);
        // The consumer has taken its boundary: what apps registered until
        // now (queued already, or pushed here) goes behind it, then the
        // old chunk's metadata is closed.
        for (auto& [key, trace] : t.traces)
            pushMetadata(t, *trace);
        t.consumer->rotateMetadata(request.id, failOnError(t, "to switch the metadata"));
        t.rotating->begun = true;
        started(std::nullopt, path);
    };
    t.consumer->rotate(request, t.lifetime.guard(std::move(rotated), [started, path] {
        started(Error(ErrorCode::Failed, "the session was destroyed meanwhile"), path);
    }));
}

void UstTracer::onRotationCompleted(Traced& t, cp::RotationCompleted d) {
    if (!t.rotating || t.rotating->id != d.id) {
        log::warning("session '" + t.snapshot.name + "': the consumer completed rotation " +
                     std::to_string(d.id) + ", which is not under way");
        return;
    }
    auto r = std::move(*t.rotating);
    t.rotating.reset();
    // The channels closed before this rotation wrote into the chunk just
    // archived: the current chunk holds nothing of theirs (the live ones'
    // figures came just before, from the consumer).
    for (const uint64_t key : std::exchange(t.closedKeys, {}))
        if (const auto f = t.figures.find(key); f != t.figures.end())
            f->second.chunkBytes = 0;
    publishStatistics(t);
    if (d.ok) {
        log::info("session '" + t.snapshot.name + "': " +
                  (r.discard ? "cleared: the closed chunk was deleted"
                             : "rotation archived in " + r.path));
        r.completed(std::nullopt, r.path);
    } else if (r.discard) {
        r.completed(Error(ErrorCode::Failed, "the clear is incomplete: " + d.message), r.path);
    } else {
        r.completed(
            Error(ErrorCode::Failed, "the rotation to " + r.path + " is incomplete: " + d.message),
            r.path);
    }
    rotationOver(t);
}

void UstTracer::abandonRotation(Traced& t, const std::string& why) {
    if (!t.rotating)
        return;
    auto r = std::move(*t.rotating);
    t.rotating.reset();
    // Not begun: its Rotate is in flight, and its callback tells `started`
    // (the rotation no longer being `ours`); a rotation that did not begin
    // is never completed (rotate()).
    if (!r.begun)
        return;
    r.completed(Error(ErrorCode::Failed, "the rotation to " + r.path + " did not complete: " + why),
                r.path);
}

void UstTracer::rotationOver(Traced& t) {
    if (t.rotationDue && t.active && !t.failed && !t.destroying && !t.rotating &&
        !t.rotationAfterCreation)
        rotateOnSchedule(t);
}

void UstTracer::setRotationSchedule(const std::string& idHex, RotationSchedule schedule,
                                    RotationDone started, RotationDone done) {
    if (schedule.any())
        schedules_[idHex] = Scheduled{schedule, std::move(started), std::move(done)};
    else
        schedules_.erase(idHex);
    if (const auto it = sessions_.find(idHex); it != sessions_.end())
        armSchedule(*it->second);
}

void UstTracer::armSchedule(Traced& t) {
    const auto it = schedules_.find(t.snapshot.idHex);
    t.rotationDue = false;
    if (it == schedules_.end() || t.failed || !hangUpWatcher_) {
        watchChunkSize(t);
        t.scheduleWatch.reset();
        t.scheduleTimer.reset();
        return;
    }
    const RotationSchedule& s = it->second.schedule;
    // The size is the consumer's to watch: it sends its figures once the
    // chunk holds that much (checkChunkSize()).
    watchChunkSize(t);
    if (s.timerUs == 0) {
        t.scheduleWatch.reset();
        t.scheduleTimer.reset();
        return;
    }
    const uint64_t tickUs = s.timerUs;
    // Due times are counted from here, one period after another, whenever
    // each tick happens to be handled (CLOCK_MONOTONIC: a wall-clock step
    // changes nothing).
    t.nextTimedRotation = std::chrono::steady_clock::now() + std::chrono::microseconds(s.timerUs);
    t.scheduleWatch.reset();
    t.scheduleTimer.reset(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
    if (!t.scheduleTimer) {
        log::warning("session '" + t.snapshot.name +
                     "': no rotation schedule: timerfd_create: " + std::strerror(errno));
        return;
    }
    itimerspec spec{};
    spec.it_interval.tv_sec = static_cast<time_t>(tickUs / 1'000'000);
    spec.it_interval.tv_nsec = static_cast<long>(tickUs % 1'000'000 * 1000);
    spec.it_value = spec.it_interval;
    timerfd_settime(t.scheduleTimer.get(), 0, &spec, nullptr);
    t.scheduleWatch = hangUpWatcher_(t.scheduleTimer.get(),
                                     t.lifetime.guard([this, &t] { scheduleTick(t); }), EPOLLIN);
}

void UstTracer::scheduleTick(Traced& t) {
    const auto sched = schedules_.find(t.snapshot.idHex);
    if (sched == schedules_.end())
        return;
    uint64_t expirations = 0;
    (void)!read(t.scheduleTimer.get(), &expirations, sizeof expirations);
    if (t.scheduleWatch)
        sd_event_source_set_enabled(t.scheduleWatch.get(), SD_EVENT_ONESHOT);
    // Only an active session rotates on its own.
    if (!t.active || t.failed || t.destroying)
        return;
    const RotationSchedule& s = sched->second.schedule;
    const auto now = std::chrono::steady_clock::now();
    if (s.timerUs == 0 || now < t.nextTimedRotation)
        return;
    // The next one is due a period after this one was, not after now: a
    // tick handled late does not push every later rotation back. After a
    // long stall, one rotation catches up, then the cadence resumes.
    const auto period = std::chrono::microseconds(s.timerUs);
    t.nextTimedRotation += period;
    if (t.nextTimedRotation <= now)
        t.nextTimedRotation = now + period;
    if (t.rotating || t.rotationAfterCreation.has_value()) {
        t.rotationDue = true; // starts as soon as the one under way completes
        return;
    }
    rotateOnSchedule(t);
}

void UstTracer::rotateOnSchedule(Traced& t) {
    t.rotationDue = false;
    const auto sched = schedules_.find(t.snapshot.idHex);
    if (sched == schedules_.end())
        return;
    beginRotation(
        t,
        [started = sched->second.started, name = t.snapshot.name](std::optional<Error> e,
                                                                  const std::string& path) {
            if (e) {
                log::warning("session '" + name + "': scheduled rotation: " + e->what());
                return;
            }
            started(std::nullopt, path);
        },
        sched->second.done);
}

} // namespace tracectl
