// Recordings: rotations (Session.Rotate), Session.Clear and the rotation
// schedule.
#include "common/error.hpp"
#include "common/log.hpp"
#include "recording/recordings.hpp"
#include "session/trace_paths.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

namespace tracectl {

namespace cp = consumer_protocol;

std::string Recordings::archiveRoot(const Recording& r) {
    return r.snapshot.relay ? r.relayOutputPath : r.snapshot.outputPath;
}

void Recordings::askDomains(Recording& r, std::size_t next, bool allAtOnce,
                            std::function<void(std::optional<Error>)> then) {
    if (next == domains_.size()) {
        if (allAtOnce)
            return then(std::nullopt);
        // One answered later: another may have begun making buffers since
        // it was asked. Ready means ready within one pass.
        return askDomains(r, 0, true, std::move(then));
    }
    auto inCall = std::make_shared<bool>(true);
    domains_[next]->beforeChunkCloses(
        r.snapshot.idHex,
        r.lifetime.guard(
            [this, &r, next, allAtOnce, inCall, then](std::optional<Error> e) {
                if (e)
                    return then(std::move(e));
                askDomains(r, next + 1, allAtOnce && *inCall, then);
            },
            [then](std::optional<Error>) { then(Error(ErrorCode::Failed, "the session ended")); }));
    *inCall = false;
}

void Recordings::afterBoundary(Recording& r) {
    for (RecordingDomain* d : domains_)
        d->afterChunkBoundary(r.snapshot.idHex);
}

void Recordings::rotate(std::string idHex, PathDone started, PathDone completed) {
    started = posted(std::move(started));
    completed = posted(std::move(completed));
    Recording* found = find(idHex);
    if (found == nullptr)
        return started(Error(ErrorCode::WrongState,
                             "the session was never started: it has no trace chunk to rotate"),
                       "");
    Recording& r = *found;
    if (r.failed)
        return started(
            Error(ErrorCode::WrongState, "the session's consumer is gone; destroy the session"),
            "");
    if (!r.greeted)
        return started(Error(ErrorCode::WrongState, "the session is still starting"), "");
    if (r.rotating || r.closingChunk)
        return started(Error(ErrorCode::WrongState,
                             "a rotation is under way" +
                                 (r.rotating ? " (to " + r.rotating->path + ")" : std::string()) +
                                 "; wait for it"),
                       "");
    beginRotation(r, std::move(started), std::move(completed));
}

void Recordings::beginRotation(Recording& r, PathDone started, PathDone completed, bool discard) {
    // Every domain describes what its buffers hold first (an app being set
    // up may not have registered its channels yet): archived before, such
    // a stream's packets would have no stream class in the archive.
    r.closingChunk = true;
    askDomains(
        r, 0, true,
        r.lifetime.guard(
            [this, &r, started, completed, discard](std::optional<Error> e) {
                r.closingChunk = false;
                if (!e && r.failed)
                    e = Error(ErrorCode::Failed, r.failure);
                if (!e && r.ending)
                    e = Error(ErrorCode::Failed, "the session ended");
                if (e)
                    return started(Error(ErrorCode::Failed, std::string("the rotation did "
                                                                        "not begin: ") +
                                                                e->what()),
                                   "");
                sendRotate(r, started, completed, discard);
            },
            [started](std::optional<Error>) {
                started(Error(ErrorCode::Failed, "the rotation did not begin: the session ended"),
                        "");
            }));
}

void Recordings::sendRotate(Recording& r, PathDone started, PathDone completed, bool discard) {
    // Names stay unique and ordered even if the clock steps back: the stamps
    // never decrease and the index always grows.
    const std::time_t now = std::max(std::time(nullptr), r.lastStamp);
    cp::Rotate request;
    request.id = r.nextRotationId++;
    request.oldChunk = r.chunkDir;
    request.newChunk = chunkDir(now, r.chunkIndex + 1);
    request.archive = archiveDir(r.chunkBegin, now, r.chunkIndex);
    request.discard = discard;
    // A network session's consumer closes relay chunk `chunkIndex` at
    // `now`: the relay archives it under the same name (chunkStamp() is
    // lttng-tools 2.13 trace-chunk.c's generate_chunk_name format), below
    // the session's folder on the relay.
    request.chunkIndex = r.chunkIndex;
    request.boundaryTime = static_cast<uint64_t>(now);
    const std::string path = archiveRoot(r) + "/" + request.archive;
    r.rotating = Recording::Rotation{request.id, path, std::move(completed), false, discard};
    auto rotated = [this, &r, request, now, path, started](std::optional<Error> e) {
        const bool ours = r.rotating && r.rotating->id == request.id;
        if (e && ours && !ConsumerConnection::isRefusal(*e) && !r.failed) {
            // Not answered in time, or the connection broke: the consumer may
            // carry the rotation out all the same, and would refuse every
            // later one; what it writes from now on is not the session's
            // chunk any more. The session fails, saying why.
            failRecording(r, "the consumer " + r.spec.unitName + " failed a rotation (" +
                                 e->what() + "); it was stopped");
            return started(Error(ErrorCode::Failed, std::string("rotating: ") + e->what() +
                                                        "; the session is now in state error"),
                           path);
        }
        if (e || !ours) {
            if (ours) {
                r.rotating.reset();
                rotationOver(r);
            }
            return started(
                Error(ErrorCode::Failed,
                      std::string("rotating: ") + (e ? e->what() : "the session failed meanwhile")),
                path);
        }
        r.chunkDir = request.newChunk;
        r.chunkBegin = r.lastStamp = now;
        ++r.chunkIndex;
        r.chunkOpenedStopped = !r.active;
        log::info("session '" + r.snapshot.name + "': " +
                  (request.discard ? "clearing, into " : "rotating into ") + request.newChunk);
        // The consumer has taken its boundary: what the domains registered
        // until now goes behind it, then the old chunk's metadata is closed.
        afterBoundary(r);
        r.consumer->rotateMetadata(request.id,
                                   failOnError(r.snapshot.idHex, "to switch the metadata"));
        r.rotating->begun = true;
        started(std::nullopt, path);
    };
    r.consumer->rotate(request, r.lifetime.guard(std::move(rotated), [started, path] {
        started(Error(ErrorCode::Failed, "the session was destroyed meanwhile"), path);
    }));
}

void Recordings::onRotationCompleted(Recording& r, cp::RotationCompleted d) {
    if (!r.rotating || r.rotating->id != d.id) {
        log::warning("session '" + r.snapshot.name + "': the consumer completed rotation " +
                     std::to_string(d.id) + ", which is not under way");
        return;
    }
    auto rotation = std::move(*r.rotating);
    r.rotating.reset();
    // The channels closed before this rotation wrote into the chunk just
    // archived: the current chunk holds nothing of theirs (the live ones'
    // figures came just before, from the consumer).
    for (const uint64_t key : std::exchange(r.closedKeys, {}))
        if (const auto f = r.figures.find(key); f != r.figures.end())
            f->second.chunkBytes = 0;
    publishStatistics(r);
    if (d.ok) {
        log::info("session '" + r.snapshot.name + "': " +
                  (rotation.discard ? "cleared: the closed chunk was deleted"
                                    : "rotation archived in " + rotation.path));
        rotation.completed(std::nullopt, rotation.path);
    } else if (rotation.discard) {
        rotation.completed(Error(ErrorCode::Failed, "the clear is incomplete: " + d.message),
                           rotation.path);
    } else {
        rotation.completed(Error(ErrorCode::Failed, "the rotation to " + rotation.path +
                                                        " is incomplete: " + d.message),
                           rotation.path);
    }
    rotationOver(r);
}

void Recordings::abandonRotation(Recording& r, const std::string& why) {
    if (!r.rotating)
        return;
    auto rotation = std::move(*r.rotating);
    r.rotating.reset();
    // Not begun: its Rotate is in flight, and its callback tells `started`
    // (the rotation no longer being `ours`); a rotation that did not begin
    // is never completed.
    if (!rotation.begun)
        return;
    rotation.completed(
        Error(ErrorCode::Failed, "the rotation to " + rotation.path + " did not complete: " + why),
        rotation.path);
}

void Recordings::rotationOver(Recording& r) {
    if (r.rotationDue && r.active && !r.failed && !r.ending && !r.rotating && !r.closingChunk)
        rotateOnSchedule(r);
}

void Recordings::clear(std::string idHex, Done done) {
    done = posted(std::move(done));
    Recording* found = find(idHex);
    if (found == nullptr)
        return done(std::nullopt); // never started: nothing was recorded (as LTTng)
    Recording& r = *found;
    if (r.failed)
        return done(
            Error(ErrorCode::WrongState, "the session's consumer is gone; destroy the session"));
    if (!r.greeted)
        return done(Error(ErrorCode::WrongState, "the session is still starting"));
    if (r.snapshot.snapshotMode) {
        r.consumer->clearBuffers(
            [name = r.snapshot.name, done = std::move(done)](std::optional<Error> e) {
                if (e)
                    return done(Error(ErrorCode::Failed,
                                      std::string("clearing the buffers: ") + e->what()));
                log::info("session '" + name + "': buffers cleared");
                done(std::nullopt);
            });
        return;
    }
    if (r.rotating || r.closingChunk)
        return done(Error(ErrorCode::WrongState,
                          "a rotation is under way" +
                              (r.rotating ? " (to " + r.rotating->path + ")" : std::string()) +
                              "; clear once it is over"));
    // Exactly one answer: a rotation that did not begin is never completed,
    // one that began is completed once.
    auto once = std::make_shared<Done>(std::move(done));
    const auto answer = [once](std::optional<Error> e) {
        if (auto d = std::exchange(*once, nullptr))
            d(std::move(e));
    };
    beginRotation(
        r,
        [answer](std::optional<Error> e, const std::string&) {
            if (e)
                answer(Error(e->code(), std::string("clearing: ") + e->what()));
        },
        [answer](std::optional<Error> e, const std::string&) { answer(std::move(e)); }, true);
}

void Recordings::setRotationSchedule(std::string idHex, RotationSchedule schedule, PathDone started,
                                     PathDone completed, Done done) {
    started = posted(std::move(started));
    completed = posted(std::move(completed));
    done = posted(std::move(done));
    if (schedule.any())
        schedules_[idHex] = Scheduled{schedule, std::move(started), std::move(completed)};
    else
        schedules_.erase(idHex);
    if (Recording* r = find(idHex))
        armSchedule(*r);
    done(std::nullopt);
}

void Recordings::armSchedule(Recording& r) {
    const auto it = schedules_.find(r.snapshot.idHex);
    r.rotationDue = false;
    // The size is the consumer's to watch: it sends its figures once the
    // chunk holds that much (checkChunkSize()).
    watchChunkSize(r);
    if (it == schedules_.end() || r.failed || !watcher_ || it->second.schedule.timerUs == 0) {
        r.scheduleWatch.reset();
        r.scheduleTimer.reset();
        return;
    }
    const uint64_t tickUs = it->second.schedule.timerUs;
    // Due times are counted from here, one period after another, whenever
    // each tick happens to be handled (CLOCK_MONOTONIC: a wall-clock step
    // changes nothing).
    r.nextTimedRotation = std::chrono::steady_clock::now() + std::chrono::microseconds(tickUs);
    r.scheduleWatch.reset();
    r.scheduleTimer.reset(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
    if (!r.scheduleTimer) {
        log::warning("session '" + r.snapshot.name +
                     "': no rotation schedule: timerfd_create: " + std::strerror(errno));
        return;
    }
    itimerspec spec{};
    spec.it_interval.tv_sec = static_cast<time_t>(tickUs / 1'000'000);
    spec.it_interval.tv_nsec = static_cast<long>(tickUs % 1'000'000 * 1000);
    spec.it_value = spec.it_interval;
    timerfd_settime(r.scheduleTimer.get(), 0, &spec, nullptr);
    r.scheduleWatch =
        watcher_(r.scheduleTimer.get(), r.lifetime.guard([this, &r] { scheduleTick(r); }), EPOLLIN);
}

void Recordings::scheduleTick(Recording& r) {
    const auto sched = schedules_.find(r.snapshot.idHex);
    if (sched == schedules_.end())
        return;
    uint64_t expirations = 0;
    (void)!read(r.scheduleTimer.get(), &expirations, sizeof expirations);
    if (r.scheduleWatch)
        sd_event_source_set_enabled(r.scheduleWatch.get(), SD_EVENT_ONESHOT);
    // Only an active session rotates on its own.
    if (!r.active || r.failed || r.ending)
        return;
    const RotationSchedule& s = sched->second.schedule;
    const auto now = std::chrono::steady_clock::now();
    if (s.timerUs == 0 || now < r.nextTimedRotation)
        return;
    // The next one is due a period after this one was, not after now: a
    // tick handled late does not push every later rotation back. After a
    // long stall, one rotation catches up, then the cadence resumes.
    const auto period = std::chrono::microseconds(s.timerUs);
    r.nextTimedRotation += period;
    if (r.nextTimedRotation <= now)
        r.nextTimedRotation = now + period;
    if (r.rotating || r.closingChunk) {
        r.rotationDue = true; // starts as soon as the one under way completes
        return;
    }
    rotateOnSchedule(r);
}

void Recordings::rotateOnSchedule(Recording& r) {
    r.rotationDue = false;
    const auto sched = schedules_.find(r.snapshot.idHex);
    if (sched == schedules_.end())
        return;
    beginRotation(
        r,
        [started = sched->second.started, name = r.snapshot.name](std::optional<Error> e,
                                                                  const std::string& path) {
            if (e) {
                log::warning("session '" + name + "': scheduled rotation: " + e->what());
                return;
            }
            started(std::nullopt, path);
        },
        sched->second.completed);
}

} // namespace tracectl
