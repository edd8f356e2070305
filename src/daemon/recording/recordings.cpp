// Recordings: start (output folder, relay session, consumer unit, Hello),
// keys, failure and end.
#include "recording/recordings.hpp"

#include "common/error.hpp"
#include "common/log.hpp"
#include "metadata/clock_source.hpp"
#include "recording/output_folder.hpp"
#include "restart/consumer_fd_store.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace tracectl {

namespace {

Error destroyedMeanwhile() {
    return Error(ErrorCode::Failed, "the session was destroyed meanwhile");
}

} // namespace

std::string mebibytes(uint64_t bytes) {
    const uint64_t mib = (bytes + (1u << 20) - 1) >> 20;
    return std::to_string(mib) + " MiB";
}

Recordings::Recordings(RecordingConfig config) : config_(std::move(config)) {}

Recordings::~Recordings() {
    dropAll();
}

void Recordings::dropAll() {
    recordings_.clear();
}

void Recordings::attach(EventLoop& loop, FdWatcher watcher, FailureHandler onFailure) {
    loop_ = &loop;
    poster_ = loop.poster();
    watcher_ = std::move(watcher);
    onFailure_ = std::move(onFailure);
}

Recordings::Done Recordings::posted(Done f) {
    return [poster = poster_, f = std::move(f)](std::optional<Error> e) {
        poster->post([f, e] { f(e); });
    };
}

Recordings::PathDone Recordings::posted(PathDone f) {
    return [poster = poster_, f = std::move(f)](std::optional<Error> e, std::string path) {
        poster->post([f, e, path = std::move(path)] { f(e, path); });
    };
}

Recording* Recordings::find(const RecordingRef& ref) {
    Recording* r = find(ref.idHex);
    return r != nullptr && r->serial == ref.serial ? r : nullptr;
}

Recording* Recordings::find(const std::string& idHex) {
    return const_cast<Recording*>(std::as_const(*this).find(idHex));
}

const Recording* Recordings::find(const std::string& idHex) const {
    const auto it = recordings_.find(idHex);
    return it == recordings_.end() ? nullptr : it->second.get();
}

ConsumerLauncher& Recordings::launcher() {
    if (!launcher_)
        launcher_ = config_.useSystemd ? makeSystemdLauncher(*loop_, config_.systemdAddress)
                                       : makeDirectLauncher(*loop_);
    return *launcher_;
}

void Recordings::makeFolder(std::string path, uid_t uid, gid_t gid, bool claim,
                            std::function<void(MadeFolder)> then) {
    folderMakers_.submit(
        [poster = poster_, path = std::move(path), uid, gid, claim, then = std::move(then)] {
            auto made = std::make_shared<MadeFolder>();
            try {
                makeOutputFolder(path, uid, gid, claim);
                made->fd.reset(open(path.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                struct stat st {};
                if (!made->fd || fstat(made->fd.get(), &st) < 0)
                    throw Error(ErrorCode::InvalidArgument,
                                "cannot open the folder " + path + ": " + std::strerror(errno));
                made->id = {st.st_dev, st.st_ino};
            } catch (const Error& e) {
                made->error = e;
                made->fd.reset();
            }
            poster->post([made, then] { then(std::move(*made)); });
        });
}

void Recordings::checkOutputFolderKept(const Recording& r) const {
    // The consumer holds its files open and, in its unit, sees the folder
    // it was started with: a folder removed (or replaced) since would take
    // every later event with it, silently. A snapshot session's folder is
    // made again by each snapshot instead.
    if (r.snapshot.snapshotMode || r.snapshot.relay)
        return;
    struct stat now {};
    if (stat(r.snapshot.outputPath.c_str(), &now) == 0 && now.st_dev == r.outputFolder.first &&
        now.st_ino == r.outputFolder.second)
        return;
    throw Error(ErrorCode::WrongState,
                "the output folder " + r.snapshot.outputPath +
                    " was removed or replaced since the session first started, so what it "
                    "records would be lost; destroy the session and create a new one");
}

void Recordings::startRecording(SessionSnapshot s, Done done) {
    done = posted(std::move(done));
    s.ownerGid = primaryGidOf(s.owner);
    if (Recording* r = find(s.idHex)) {
        if (r->failed)
            return done(Error(ErrorCode::WrongState,
                              "the session's consumer is gone; destroy the session"));
        try {
            checkOutputFolderKept(*r);
        } catch (const Error& e) {
            return done(e);
        }
        r->snapshot = std::move(s); // its rules and trackers as they are now
        return done(std::nullopt);
    }
    if (access(config_.consumerBinary.c_str(), X_OK) < 0)
        return done(Error(ErrorCode::Failed, "the consumer " + config_.consumerBinary +
                                                 " cannot be run: " + std::strerror(errno)));
    auto made = std::make_unique<Recording>();
    made->serial = nextSerial_++;
    made->snapshot = s;
    made->clockOffset = metadata::measureClockOffset();
    Recording& r = *made;
    recordings_[s.idHex] = std::move(made);
    // A snapshot session with a network output connects to the relay at
    // each RecordSnapshot only (recording_snapshot.cpp).
    if (s.relay && !s.snapshotMode)
        return openRelay(r, std::move(done));
    if (s.relay)
        return launch(r, std::move(done));
    // The output folder first, as the owner (off the loop), then the
    // consumer on it.
    makeFolder(s.outputPath, s.owner, s.ownerGid, !s.snapshotMode,
               [this, ref = refOf(r), done](MadeFolder folder) {
                   Recording* live = find(ref);
                   if (live == nullptr)
                       return done(destroyedMeanwhile());
                   if (folder.error) {
                       recordings_.erase(ref.idHex); // nothing of it was made
                       return done(folder.error);
                   }
                   live->outputFolder = folder.id;
                   launch(*live, done);
               });
}

RelaySessionParams Recordings::relayParams(const Recording& r) const {
    RelaySessionParams params;
    params.address = *r.snapshot.relay;
    params.sessionName = r.snapshot.name;
    params.hostname = relayHostname();
    params.liveTimerUs = static_cast<uint32_t>(r.snapshot.liveTimerUs);
    params.daemonUuid = daemonRelayUuid();
    params.sessionId = r.serial;
    params.creationTime = static_cast<uint64_t>(r.snapshot.relayCreationTime);
    return params;
}

void Recordings::openRelayOffLoop(const RelaySessionParams& params, RelayOpened then) {
    // Blocking connects and exchanges: off the loop, on an executor that
    // owns nothing; the outcome comes back as a task.
    relayConnects_.submit([poster = poster_, params, then = std::move(then)]() mutable {
        auto outcome = std::make_shared<RelayOutcome>();
        try {
            outcome->opened = openRelaySession(params);
        } catch (const Error& e) {
            outcome->error = e;
        }
        poster->post([outcome, then = std::move(then)]() mutable { then(std::move(*outcome)); });
    });
}

void Recordings::openRelay(Recording& r, Done done) {
    openRelayOffLoop(relayParams(r), [this, ref = refOf(r), done](RelayOutcome outcome) {
        Recording* live = find(ref);
        if (live == nullptr)
            return done(destroyedMeanwhile());
        if (outcome.error) {
            recordings_.erase(ref.idHex); // nothing of it was made
            return done(*outcome.error);
        }
        log::info("session '" + live->snapshot.name + "': relay session " +
                  std::to_string(outcome.opened->relaySessionId) + " at " +
                  live->snapshot.relay->url() + ", written there to " + outcome.opened->outputPath);
        live->relay = std::move(outcome.opened);
        launch(*live, done);
    });
}

void Recordings::describeConsumer(Recording& r) const {
    r.spec.unitName = "tracectl-consumer-" + r.snapshot.idHex + ".service";
    r.spec.binary = config_.consumerBinary;
    if (r.snapshot.relay)
        r.spec.args = {"--network"};
    else
        r.spec.args = {"--output", r.snapshot.outputPath};
    if (r.snapshot.snapshotMode)
        r.spec.args.push_back("--snapshot");
    if (r.snapshot.countEvents)
        r.spec.args.push_back("--count-events");
    r.spec.uid = r.snapshot.owner;
    r.spec.gid = r.snapshot.ownerGid;
    r.spec.outputDir = r.snapshot.outputPath;
    r.spec.memoryMax = config_.consumerMemoryMax;
}

void Recordings::launch(Recording& r, Done done) {
    const std::string idHex = r.snapshot.idHex;
    try {
        startConsumer(r, r.lifetime.guard(
                             [this, &r, done](std::optional<Error> e) {
                                 if (!e)
                                     return done(std::nullopt);
                                 // Never started: nothing of it is kept.
                                 stopConsumerUnit(r);
                                 forget(r);
                                 if (e->code() == ErrorCode::RelayUnavailable)
                                     return done(std::move(e)); // it names the relay and why
                                 done(Error(ErrorCode::Failed,
                                            std::string("starting the consumer: ") + e->what()));
                             },
                             [done](std::optional<Error>) { done(destroyedMeanwhile()); }));
    } catch (const Error& e) {
        recordings_.erase(idHex);
        done(e);
    }
}

void Recordings::startConsumer(Recording& r, Done done) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        throw Error(ErrorCode::Failed, std::string("socketpair: ") + std::strerror(errno));
    UniqueFd ours(sv[0]);
    UniqueFd theirs(sv[1]);
    describeConsumer(r);
    ConsumerLauncher* launcherOfAll = nullptr;
    try {
        launcherOfAll = &launcher();
    } catch (const Error& e) {
        throw Error(ErrorCode::Failed, std::string("starting the consumer: ") + e.what());
    }
    r.launched = true;
    auto oursShared = std::make_shared<UniqueFd>(std::move(ours));
    launcherOfAll->start(r.spec, std::move(theirs),
                         r.lifetime.guard(
                             [this, &r, oursShared, done](std::optional<Error> e) {
                                 if (e)
                                     return done(std::move(e));
                                 connectConsumer(r, std::move(*oursShared), done);
                             },
                             [this, spec = r.spec, done](const std::optional<Error>& e) {
                                 // Started for nobody: stopped again.
                                 if (!e)
                                     launcher().stop(spec, {});
                                 done(destroyedMeanwhile());
                             }));
}

void Recordings::connectConsumer(Recording& r, UniqueFd ours, Done done) {
    // Kept where a restarted daemon finds it (before the connection takes
    // the fd; systemd gets its own copy).
    if (config_.fdStore != nullptr)
        r.storedFd = config_.fdStore->keep(r.snapshot.idHex, ours.get());
    makeConnection(r, std::move(ours));
    r.chunkBegin = r.lastStamp = std::time(nullptr);
    log::info("session '" + r.snapshot.name + "': consumer " + r.spec.unitName + " started (" +
              launcher().kind() + ")");
    // Once the recording is gone, `done` alone is told.
    const auto answer = [done](std::optional<Error> e) { done(std::move(e)); };
    r.consumer->hello(config_.daemonVersion,
                      r.lifetime.guard(
                          [this, &r, done, answer](std::optional<Error> e) {
                              if (e)
                                  return done(std::move(e));
                              // A network session's consumer streams from its first
                              // channel on: the relay's sockets go before any domain's.
                              attachRelay(r, r.lifetime.guard(
                                                 [this, &r, done](std::optional<Error> attached) {
                                                     if (!attached) {
                                                         r.greeted = true;
                                                         watchChunkSize(r);
                                                     }
                                                     done(std::move(attached));
                                                 },
                                                 answer));
                          },
                          answer));
}

void Recordings::makeConnection(Recording& r, UniqueFd ours) {
    ConsumerConnection::Handlers handlers;
    handlers.rotationCompleted =
        r.lifetime.guard([this, &r](consumer_protocol::RotationCompleted d) {
            onRotationCompleted(r, std::move(d));
        });
    handlers.statistics = r.lifetime.guard(
        [this, &r](consumer_protocol::Statistics s) { onConsumerStatistics(r, std::move(s)); });
    handlers.lost = r.lifetime.guard([this, &r](const std::string& why) { consumerLost(r, why); });
    handlers.metadataFailed = r.lifetime.guard(
        [this, &r](const Error& e) { failOnError(r.snapshot.idHex, "to take metadata")(e); });
    handlers.outputFailed = r.lifetime.guard([this, &r](const std::string& why) {
        if (!r.failed && !r.ending && !r.closing)
            failRecording(r, "streaming to the relay at " +
                                 (r.snapshot.relay ? r.snapshot.relay->url() : std::string("?")) +
                                 " failed: " + why);
    });
    r.consumer = std::make_unique<ConsumerConnection>(*loop_, objectReaders_, std::move(ours),
                                                      std::move(handlers), config_.consumerTimeout);
}

void Recordings::attachRelay(Recording& r, Done done) {
    if (!r.relay)
        return done(std::nullopt);
    OpenedRelaySession relay = std::move(*r.relay);
    r.relay.reset();
    consumer_protocol::AttachRelayd request;
    request.relaySessionId = relay.relaySessionId;
    request.relayMinor = relay.minor;
    request.liveTimerUsec = r.snapshot.liveTimerUs;
    // The relay names archives from the chunk's id and creation time: ours.
    r.relayOutputPath = relay.outputPath;
    request.chunkId = r.chunkIndex;
    request.chunkCreationTime = static_cast<uint64_t>(r.chunkBegin);
    request.outputPath = relay.outputPath;
    r.consumer->attachRelayd(request, std::move(relay.control), std::move(relay.data),
                             [done, url = r.snapshot.relay->url()](std::optional<Error> e) {
                                 if (e)
                                     return done(Error(ErrorCode::RelayUnavailable,
                                                       "cannot stream to the relay at " + url +
                                                           ": the consumer could not attach "
                                                           "to it (" +
                                                           e->what() + ")"));
                                 done(std::nullopt);
                             });
}

void Recordings::setRecordingActive(std::string idHex, bool active) {
    Recording* r = find(idHex);
    if (r == nullptr || r->active == active)
        return;
    r->active = active;
    if (active) {
        r->chunkOpenedStopped = false;
        armSchedule(*r); // its cadence counts from each start
    }
}

void Recordings::recordingEnding(std::string idHex) {
    if (Recording* r = find(idHex))
        r->closing = true;
}

ConsumerConnection* Recordings::consumerOf(const std::string& idHex) {
    Recording* r = find(idHex);
    if (r == nullptr || !r->greeted || r->adopting || r->failed || !r->consumer ||
        !r->consumer->usable())
        return nullptr;
    return r->consumer.get();
}

ConsumerConnection* Recordings::connectionOf(const std::string& idHex) {
    Recording* r = find(idHex);
    return r == nullptr ? nullptr : r->consumer.get();
}

std::optional<int64_t> Recordings::clockOffsetOf(const std::string& idHex) const {
    const Recording* r = find(idHex);
    if (r == nullptr)
        return std::nullopt;
    return r->clockOffset;
}

std::string Recordings::traceDirSuffixOf(const std::string& idHex) const {
    const Recording* r = find(idHex);
    return r == nullptr ? std::string() : r->traceDirSuffix;
}

std::string Recordings::unitOf(const std::string& idHex) const {
    const Recording* r = find(idHex);
    return r == nullptr ? std::string() : r->spec.unitName;
}

std::optional<std::string> Recordings::failureOf(const std::string& idHex) const {
    const Recording* r = find(idHex);
    if (r == nullptr || !r->failed)
        return std::nullopt;
    return r->failure;
}

void Recordings::whenFailed(const std::string& idHex,
                            std::function<void(const std::string&)> told) {
    Recording* r = find(idHex);
    if (r == nullptr)
        return;
    if (r->failed)
        return told(r->failure);
    r->whenFailed.push_back(std::move(told));
}

uint64_t Recordings::newChannelKey(const std::string& idHex, ChannelUse use) {
    Recording* r = find(idHex);
    if (r == nullptr)
        throw Error(ErrorCode::Failed, "the session has no consumer");
    const uint64_t key = r->nextKey++;
    r->channels[key] = Recording::Channel{std::move(use), false};
    return key;
}

void Recordings::channelClosed(const std::string& idHex, uint64_t key) {
    Recording* r = find(idHex);
    if (r == nullptr)
        return;
    if (const auto it = r->channels.find(key); it != r->channels.end() && !it->second.closed) {
        it->second.closed = true;
        r->closedKeys.push_back(key);
    }
}

uint64_t Recordings::bufferBytes(const Recording& r) {
    uint64_t bytes = 0;
    for (const auto& [key, c] : r.channels)
        if (!c.closed)
            bytes += c.use.subbufSize * c.use.subbufCount * c.use.streams;
    return bytes;
}

void Recordings::stopConsumerUnit(Recording& r) {
    if (!r.launched)
        return;
    // A unit a previous daemon started (a takeover) may be the first this
    // one stops: the launcher is made then.
    ConsumerLauncher* l = nullptr;
    try {
        l = &launcher();
    } catch (const Error& e) {
        log::warning("stopping " + r.spec.unitName + ": " + e.what());
        return;
    }
    // Whether it still runs or not: stop() also lets a failed unit go.
    l->stop(r.spec, [unit = r.spec.unitName](std::optional<Error> e) {
        if (e)
            log::warning("stopping " + unit + ": " + e->what());
    });
}

void Recordings::consumerLost(Recording& r, const std::string& why) {
    if (r.failed || r.ending || r.closing || !r.launched || !launcher_)
        return;
    // How the unit ended (systemd's view), once it is down: a process that
    // closed its socket is "active" until its manager saw it exit.
    launcher_->whenEnded(
        r.spec, std::chrono::milliseconds(1000),
        r.lifetime.guard([this, &r, why,
                          unit = r.spec.unitName](std::optional<std::string> reason) {
            if (r.failed || r.ending || r.closing)
                return;
            if (reason && reason->find("Result oom-kill") != std::string::npos) {
                failRecording(r, "the consumer " + unit +
                                     " was killed for lack of memory: the session's ring "
                                     "buffers need " +
                                     mebibytes(bufferBytes(r)) + ", its limit is " +
                                     (config_.consumerMemoryMax != 0
                                          ? mebibytes(config_.consumerMemoryMax)
                                          : std::string("the machine's")) +
                                     " (" + *reason + ")");
                return;
            }
            failRecording(r, "the consumer " + unit +
                                 (reason ? " is no longer running (" + *reason + ")"
                                         : " broke its connection (" + why + "); it was stopped"));
        }));
}

Recordings::Done Recordings::failOnError(const std::string& idHex, std::string what) {
    Recording* r = find(idHex);
    if (r == nullptr)
        return [](std::optional<Error>) {};
    return r->lifetime.guard([this, r, what = std::move(what)](std::optional<Error> e) {
        if (!e || r->failed || r->ending || r->closing)
            return;
        failRecording(*r, "the consumer " + r->spec.unitName + " failed " + what + " (" +
                              e->what() + "); it was stopped");
    });
}

void Recordings::fail(const std::string& idHex, const std::string& why) {
    if (Recording* r = find(idHex); r != nullptr && !r->failed && !r->ending && !r->closing)
        failRecording(*r, why);
}

void Recordings::failRecording(Recording& r, const std::string& why, bool tellOwner) {
    r.failed = true;
    r.failure = why;
    r.active = false;
    abandonRotation(r, why);
    r.scheduleWatch.reset();
    if (std::exchange(r.storedFd, false))
        config_.fdStore->forget(r.snapshot.idHex);
    // The apps' registrations it has not sent yet go first: the consumer
    // writes what reached its socket before it drains (SIGTERM), so the
    // traces keep every event class.
    if (r.consumer)
        r.consumer->sendQueuedMetadata();
    stopConsumerUnit(r);
    // What is told below may end the session: `r` is looked up again.
    const RecordingRef ref = refOf(r);
    for (RecordingDomain* d : domains_)
        d->recordingFailed(ref.idHex, why);
    if (onFailure_ && tellOwner)
        onFailure_(ref.idHex, why);
    if (Recording* live = find(ref))
        for (auto& f : std::exchange(live->whenFailed, {}))
            f(why);
}

void Recordings::forget(Recording& r) {
    // Whoever still waits for the consumer (a snapshot overtaken by the
    // end) is answered, while `r` still exists.
    if (r.consumer && r.consumer->usable()) {
        r.ending = true;
        r.consumer->abandon("the session was destroyed");
    }
    if (std::exchange(r.storedFd, false))
        config_.fdStore->forget(r.snapshot.idHex);
    recordings_.erase(r.snapshot.idHex); // frees r
}

void Recordings::endRecording(std::string idHex, Done done) {
    done = posted(std::move(done));
    schedules_.erase(idHex);
    Recording* found = find(idHex);
    if (found == nullptr)
        return done(std::nullopt);
    Recording& r = *found;
    r.scheduleWatch.reset();
    if (r.failed || r.ending || !r.consumer) {
        if (!r.ending) {
            abandonRotation(r, "the session's consumer is gone");
            stopConsumerUnit(r);
            forget(r);
        }
        return done(std::nullopt);
    }
    r.ending = true;
    // The domains closed their channels: Shutdown drains and closes the
    // rest (an exited app's snapshot buffers). A rotation under way
    // completes as the consumer closes every stream (its RotationCompleted
    // comes before Shutdown's Ok), or is abandoned.
    auto closed = r.lifetime.guard(
        [this, &r, done](std::optional<Error> e) {
            std::optional<Error> lost;
            if (e) {
                log::warning("session '" + r.snapshot.name +
                             "': closing the consumer: " + e->what());
                stopConsumerUnit(r);
                // A relay that failed while the buffers were drained did
                // not get the end of the trace: the end says so.
                if (r.snapshot.relay)
                    lost = Error(ErrorCode::RelayUnavailable,
                                 "the relay at " + r.snapshot.relay->url() +
                                     " did not receive all of it (" + e->what() + ")");
            }
            abandonRotation(r, "the session was destroyed");
            forget(r); // frees r
            done(std::move(lost));
        },
        [done](std::optional<Error>) { done(std::nullopt); });
    // A chunk opened while stopped holds nothing: deleted, not left empty.
    r.consumer->shutdown(r.chunkOpenedStopped, std::move(closed));
}

} // namespace tracectl
