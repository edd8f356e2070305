// UstTracer: sessions (start, stop, destroy) and their failure.
#include "ust_tracer.hpp"

#include "apps/ust_error.hpp"
#include "common/error.hpp"
#include "common/join.hpp"
#include "common/log.hpp"
#include "metadata/clock_source.hpp"
#include "restart/consumer_fd_store.hpp"
#include "ust/output_folder.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <lttng/ust-ctl.h>
#include <set>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tracectl {

UstTracer::UstTracer(TracerConfig config, std::shared_ptr<AppCommands> commands)
    : config_(std::move(config)), commands_(std::move(commands)) {}

UstTracer::~UstTracer() {
    dropAll();
}

void UstTracer::dropAll() {
    // No notify handler may use a session once it is freed; set-up jobs
    // still running add no route any more.
    for (auto& [id, t] : sessions_) {
        for (auto& [pid, a] : t->apps)
            eraseRoutes(pid, a);
        cancelSetUps(*t);
    }
    HandleRoutes::synchronize();
    sessions_.clear();
}

void UstTracer::attach(EventLoop& loop, HangUpWatcher watcher, FailureHandler onFailure) {
    loop_ = &loop;
    poster_ = loop.poster();
    hangUpWatcher_ = std::move(watcher);
    onFailure_ = std::move(onFailure);
}

Join UstTracer::joinOfApps(Done done) {
    return Join([done = std::move(done)](std::optional<Error>) {
        if (done)
            done(std::nullopt);
    });
}

std::string mebibytes(uint64_t bytes) {
    const uint64_t mib = (bytes + (1u << 20) - 1) >> 20;
    return std::to_string(mib) + " MiB";
}

uint64_t UstTracer::bytesPerTrace(const Traced& t) {
    // lttng-ust makes one stream per possible CPU (ust-ctl.h
    // lttng_ust_ctl_get_nr_stream_per_channel); the metadata channel has
    // 2 sub-buffers of 4 KiB and one stream.
    const auto streams = static_cast<uint64_t>(lttng_ust_ctl_get_nr_stream_per_channel());
    uint64_t bytes = 2 * 4096;
    for (const auto& c : t.snapshot.channels)
        bytes += c.subbufSize * c.subbufCount * streams;
    return bytes;
}

std::size_t UstTracer::tracesAtStart(const Traced& t) const {
    std::set<TraceKey> keys;
    for (const auto& [pid, app] : apps_)
        if (mayTrace(t, *app))
            keys.insert({t.snapshot.perPid ? static_cast<uint32_t>(pid) : app->info.uid,
                         app->info.bitness});
    return std::max<std::size_t>(1, keys.size());
}

uint64_t UstTracer::bufferBytes(const Traced& t, std::size_t traces) const {
    if (traces == 0)
        traces = std::max<std::size_t>(1, t.traces.size() + t.creating.size() + t.exited.size());
    return bytesPerTrace(t) * traces;
}

std::string UstTracer::bufferFormula(const Traced& t, std::size_t traces) const {
    std::string channels;
    for (const auto& c : t.snapshot.channels)
        channels += (channels.empty() ? "" : " + ") + std::to_string(c.subbufCount) + " x " +
                    std::to_string(c.subbufSize) + " bytes";
    return std::to_string(traces) + (t.snapshot.perPid ? " pid(s)" : " uid(s)") + " x " +
           std::to_string(lttng_ust_ctl_get_nr_stream_per_channel()) + " CPUs x (" + channels + ")";
}

UstTracer::Traced* UstTracer::find(const SessionRef& ref) {
    const auto it = sessions_.find(ref.idHex);
    if (it == sessions_.end() || it->second->serial != ref.serial)
        return nullptr;
    return it->second.get();
}

bool UstTracer::mayTrace(const Traced& t, const UstApp& app) const {
    // A session traces its owner's apps; root's sessions, and those whose
    // owner held trace-all-users, trace every app.
    // Tracking a uid never widens that (lttng-track(1) only narrows).
    const bool ownerMay =
        t.snapshot.owner == 0 || t.snapshot.tracesAllUsers || app.info.uid == t.snapshot.owner;
    return ownerMay && t.snapshot.trackers.admitsUst(static_cast<uint32_t>(app.info.pid),
                                                     app.info.uid, app.info.gid);
}

void UstTracer::makeFolder(std::string path, uid_t uid, gid_t gid, bool claim,
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

void UstTracer::describeConsumer(Traced& t) const {
    t.spec.unitName = "tracectl-consumer-" + t.snapshot.idHex + ".service";
    t.spec.binary = config_.consumerBinary;
    if (t.snapshot.relay)
        t.spec.args = {"--network"};
    else
        t.spec.args = {"--output", t.snapshot.outputPath};
    if (t.snapshot.snapshotMode)
        t.spec.args.push_back("--snapshot");
    if (t.snapshot.countEvents)
        t.spec.args.push_back("--count-events");
    t.spec.uid = t.snapshot.owner;
    t.spec.gid = t.snapshot.ownerGid;
    t.spec.outputDir = t.snapshot.outputPath;
    t.spec.memoryMax = config_.consumerMemoryMax;
}

void UstTracer::startConsumer(Traced& t, Done done) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        throw Error(ErrorCode::Failed, std::string("socketpair: ") + std::strerror(errno));
    UniqueFd ours(sv[0]);
    UniqueFd theirs(sv[1]);
    describeConsumer(t);
    ConsumerLauncher* launcherOfAll = nullptr;
    try {
        launcherOfAll = &launcher();
    } catch (const Error& e) {
        throw Error(ErrorCode::Failed, std::string("starting the consumer: ") + e.what());
    }
    t.launched = true;
    auto oursShared = std::make_shared<UniqueFd>(std::move(ours));
    launcherOfAll->start(
        t.spec, std::move(theirs),
        t.lifetime.guard(
            [this, &t, oursShared, done](std::optional<Error> e) {
                if (e)
                    return done(std::move(e));
                connectConsumer(t, std::move(*oursShared), done);
            },
            [this, spec = t.spec, done](const std::optional<Error>& e) {
                // Started for nobody: stopped again.
                if (!e)
                    launcher().stop(spec, {});
                done(Error(ErrorCode::Failed, "the session was destroyed meanwhile"));
            }));
}

void UstTracer::connectConsumer(Traced& t, UniqueFd ours, Done done) {
    // Kept where a restarted daemon finds it (before the connection takes
    // the fd; systemd gets its own copy).
    if (config_.fdStore != nullptr)
        t.storedFd = config_.fdStore->keep(t.snapshot.idHex, ours.get());
    makeConnection(t, std::move(ours));
    t.chunkBegin = t.lastStamp = std::time(nullptr);
    log::info("session '" + t.snapshot.name + "': consumer " + t.spec.unitName + " started (" +
              launcher().kind() + ")");
    // Once the session is gone, `done` alone is told.
    const auto answer = [done](std::optional<Error> e) { done(std::move(e)); };
    t.consumer->hello(config_.daemonVersion,
                      t.lifetime.guard(
                          [this, &t, done, answer](std::optional<Error> e) {
                              if (e)
                                  return done(std::move(e));
                              // A network session's consumer streams from its
                              // first channel on: the relay's sockets go before
                              // any other domain is let in.
                              attachRelay(t, t.lifetime.guard(
                                                 [this, &t, done](std::optional<Error> attached) {
                                                     if (!attached) {
                                                         t.greeted = true;
                                                         watchChunkSize(t);
                                                         for (auto& w :
                                                              std::exchange(t.whenGreeted, {}))
                                                             w(std::nullopt);
                                                     }
                                                     done(std::move(attached));
                                                 },
                                                 answer));
                          },
                          answer));
}

void UstTracer::makeConnection(Traced& t, UniqueFd ours) {
    ConsumerConnection::Handlers handlers;
    handlers.rotationCompleted =
        t.lifetime.guard([this, &t](consumer_protocol::RotationCompleted d) {
            onRotationCompleted(t, std::move(d));
        });
    handlers.statistics = t.lifetime.guard(
        [this, &t](consumer_protocol::Statistics s) { onConsumerStatistics(t, std::move(s)); });
    handlers.lost = t.lifetime.guard([this, &t](const std::string& why) { consumerLost(t, why); });
    handlers.metadataFailed =
        t.lifetime.guard([this, &t](const Error& e) { failOnError(t, "to take metadata")(e); });
    handlers.outputFailed = t.lifetime.guard([this, &t](const std::string& why) {
        if (!t.failed && !t.destroying)
            failSession(t, "streaming to the relay at " +
                               (t.snapshot.relay ? t.snapshot.relay->url() : std::string("?")) +
                               " failed: " + why);
    });
    t.consumer = std::make_unique<ConsumerConnection>(*loop_, objectReaders_, std::move(ours),
                                                      std::move(handlers), config_.consumerTimeout);
}

void UstTracer::whenConsumerReady(const std::string& idHex,
                                  std::function<void(std::optional<Error>)> ready) {
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end())
        return ready(Error(ErrorCode::Failed, "the session's consumer is not being started"));
    Traced& t = *it->second;
    if (t.failed)
        return ready(Error(ErrorCode::WrongState, "the session's consumer is gone (" + t.failure +
                                                      "); destroy the session"));
    if (t.greeted && !t.adopting && t.consumer && t.consumer->usable())
        return ready(std::nullopt);
    t.whenGreeted.push_back(std::move(ready));
}

ConsumerConnection* UstTracer::consumerOf(const std::string& idHex) {
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end() || !it->second->greeted || it->second->adopting ||
        !it->second->consumer || !it->second->consumer->usable())
        return nullptr;
    return it->second->consumer.get();
}

std::string UstTracer::traceDirSuffixOf(const std::string& idHex) {
    const auto it = sessions_.find(idHex);
    return it == sessions_.end() ? std::string() : it->second->traceDirSuffix;
}

std::optional<int64_t> UstTracer::clockOffsetOf(const std::string& idHex) {
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end())
        return std::nullopt;
    return it->second->clockOffset;
}

void UstTracer::releaseConsumer(Traced& t, const std::string& why) {
    if (std::exchange(t.storedFd, false))
        config_.fdStore->forget(t.snapshot.idHex);
    for (auto& w : std::exchange(t.whenGreeted, {}))
        w(Error(ErrorCode::Failed, "the session's consumer is not there: " + why));
    if (onConsumerGone_)
        onConsumerGone_(t.snapshot.idHex);
}

void UstTracer::stopConsumerUnit(Traced& t) {
    if (!t.launched)
        return;
    // A unit a previous daemon started (adopt()) may be the first this one
    // stops: the launcher is made then.
    ConsumerLauncher* l = nullptr;
    try {
        l = &launcher();
    } catch (const Error& e) {
        log::warning("stopping " + t.spec.unitName + ": " + e.what());
        return;
    }
    // Whether it still runs or not: stop() also lets a failed unit go.
    l->stop(t.spec, [unit = t.spec.unitName](std::optional<Error> e) {
        if (e)
            log::warning("stopping " + unit + ": " + e->what());
    });
}

void UstTracer::checkOutputFolderKept(const Traced& t) const {
    // The consumer holds its files open and, in its unit, sees the folder
    // it was started with: a folder removed (or replaced) since would take
    // every later event with it, silently. A snapshot session's folder is
    // made again by each snapshot instead.
    if (t.snapshot.snapshotMode || t.snapshot.relay)
        return;
    struct stat now {};
    if (stat(t.snapshot.outputPath.c_str(), &now) == 0 && now.st_dev == t.outputFolder.first &&
        now.st_ino == t.outputFolder.second)
        return;
    throw Error(ErrorCode::WrongState,
                "the output folder " + t.snapshot.outputPath +
                    " was removed or replaced since the session first started, so what it "
                    "records would be lost; destroy the session and create a new one");
}

void UstTracer::start(const SessionSnapshot& s, Done done) {
    auto& slot = sessions_[s.idHex];
    if (!slot) {
        // Checked before anything starts: a consumer over its limit would be
        // killed while making them. Without a limit, half of the machine's
        // memory is the bound (as for one channel, channel_config.cpp).
        const long pages = sysconf(_SC_PHYS_PAGES);
        const long page = sysconf(_SC_PAGESIZE);
        const uint64_t halfMemory =
            pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 2
                                  : 0;
        const uint64_t limit =
            config_.consumerMemoryMax != 0 ? config_.consumerMemoryMax : halfMemory;
        Traced probe;
        probe.snapshot = s;
        const uint64_t needed = bufferBytes(probe, tracesAtStart(probe));
        if (limit != 0 && needed > limit) {
            sessions_.erase(s.idHex);
            return done(
                Error(ErrorCode::InvalidArgument,
                      "the session's ring buffers would need " + mebibytes(needed) + " (" +
                          bufferFormula(probe, tracesAtStart(probe)) + "), more than " +
                          (config_.consumerMemoryMax != 0
                               ? "its consumer's memory limit of " + mebibytes(limit) +
                                     " (tracectld --consumer-memory-max)"
                               : "half of this machine's memory (" + mebibytes(limit) + ")")));
        }
        auto t = std::make_unique<Traced>();
        t->serial = nextSerial_++;
        t->snapshot = s;
        t->clockOffset = metadata::measureClockOffset();
        if (access(config_.consumerBinary.c_str(), X_OK) < 0) {
            sessions_.erase(s.idHex);
            return done(Error(ErrorCode::Failed, "the consumer " + config_.consumerBinary +
                                                     " cannot be run: " + std::strerror(errno)));
        }
        Traced& made = *t;
        slot = std::move(t);
        // A snapshot session with a network output connects to the relay
        // at each RecordSnapshot only (snapshot_record.cpp).
        if (s.relay && !s.snapshotMode)
            return openRelay(made, std::move(done));
        if (s.relay)
            return launch(made, std::move(done));
        const SessionRef ref = refOf(made);
        // The output folder first, as the owner (off the loop), then the
        // consumer on it.
        makeFolder(s.outputPath, s.owner, s.ownerGid, !s.snapshotMode,
                   [this, ref, done](MadeFolder folder) {
                       Traced* live = find(ref);
                       if (live == nullptr)
                           return done(
                               Error(ErrorCode::Failed, "the session was destroyed meanwhile"));
                       if (folder.error) {
                           sessions_.erase(ref.idHex); // nothing of it was made
                           return done(folder.error);
                       }
                       live->outputFolder = folder.id;
                       launch(*live, done);
                   });
        return;
    }
    Traced& t = *slot;
    if (t.failed)
        return done(
            Error(ErrorCode::WrongState, "the session's consumer is gone; destroy the session"));
    try {
        checkOutputFolderKept(t);
    } catch (const Error& e) {
        return done(e);
    }
    startApps(t, std::move(done));
}

RelaySessionParams UstTracer::relayParams(const Traced& t) const {
    RelaySessionParams params;
    params.address = *t.snapshot.relay;
    params.sessionName = t.snapshot.name;
    params.hostname = relayHostname();
    params.liveTimerUs = static_cast<uint32_t>(t.snapshot.liveTimerUs);
    params.daemonUuid = daemonRelayUuid();
    params.sessionId = t.serial;
    params.creationTime = static_cast<uint64_t>(t.snapshot.relayCreationTime);
    return params;
}

void UstTracer::openRelayOffLoop(const RelaySessionParams& params, RelayOpened then) {
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

void UstTracer::openRelay(Traced& t, Done done) {
    openRelayOffLoop(relayParams(t), [this, ref = refOf(t), done](RelayOutcome outcome) {
        Traced* live = find(ref);
        if (live == nullptr)
            return done(Error(ErrorCode::Failed, "the session was destroyed meanwhile"));
        if (outcome.error) {
            sessions_.erase(ref.idHex); // nothing of it was made
            return done(*outcome.error);
        }
        log::info("session '" + live->snapshot.name + "': relay session " +
                  std::to_string(outcome.opened->relaySessionId) + " at " +
                  live->snapshot.relay->url() + ", written there to " + outcome.opened->outputPath);
        live->relay = std::move(outcome.opened);
        launch(*live, done);
    });
}

void UstTracer::attachRelay(Traced& t, Done done) {
    if (!t.relay)
        return done(std::nullopt);
    OpenedRelaySession relay = std::move(*t.relay);
    t.relay.reset();
    consumer_protocol::AttachRelayd request;
    request.relaySessionId = relay.relaySessionId;
    request.relayMinor = relay.minor;
    request.liveTimerUsec = t.snapshot.liveTimerUs;
    // The relay names archives from the chunk's id and creation time: ours.
    t.relayOutputPath = relay.outputPath;
    request.chunkId = t.chunkIndex;
    request.chunkCreationTime = static_cast<uint64_t>(t.chunkBegin);
    request.outputPath = relay.outputPath;
    t.consumer->attachRelayd(request, std::move(relay.control), std::move(relay.data),
                             [done, url = t.snapshot.relay->url()](std::optional<Error> e) {
                                 if (e)
                                     return done(Error(ErrorCode::RelayUnavailable,
                                                       "cannot stream to the relay at " + url +
                                                           ": the consumer could not attach "
                                                           "to it (" +
                                                           e->what() + ")"));
                                 done(std::nullopt);
                             });
}

void UstTracer::launch(Traced& t, Done done) {
    const std::string idHex = t.snapshot.idHex;
    try {
        startConsumer(
            t,
            t.lifetime.guard(
                [this, &t, done](std::optional<Error> e) {
                    if (e) {
                        // Never started: nothing of it is kept.
                        stopConsumerUnit(t);
                        forget(t);
                        if (e->code() == ErrorCode::RelayUnavailable)
                            return done(std::move(e)); // it names the relay and why
                        return done(Error(ErrorCode::Failed,
                                          std::string("starting the consumer: ") + e->what()));
                    }
                    startApps(t, done);
                },
                [done] { done(Error(ErrorCode::Failed, "the session was destroyed meanwhile")); }));
    } catch (const Error& e) {
        sessions_.erase(idHex);
        done(e);
    }
}

void UstTracer::startApps(Traced& t, Done done) {
    // Apps registering from now on join too (onAppRegistered()).
    t.starting = true;
    // Every app joins (its buffers made first, if they do not exist yet);
    // once all have, they all start, so none begins long before another.
    Join joined(t.lifetime.guard(
        [this, &t, done](std::optional<Error> refused) {
            t.starting = false;
            const auto failStart = [done](const std::string& why) {
                done(Error(ErrorCode::Failed, why + "; the session is now in state error"));
            };
            if (t.failed)
                return failStart(t.failure);
            if (!t.consumer->usable()) {
                // It died meanwhile: its unit's fate (systemd's Result) is
                // being asked; Start answers with it.
                t.whenFailed.push_back(failStart);
                return;
            }
            if (refused) {
                // The consumer is there but would not make the buffers.
                failSession(t, refused->what());
                return failStart(refused->what());
            }
            // Active from now: apps whose set-up ends meanwhile start too.
            t.active = true;
            armSchedule(t);
            Join started(t.lifetime.guard(
                [this, &t, done](std::optional<Error>) {
                    if (t.active && !t.failed)
                        for (auto& [key, trace] : t.traces)
                            pushMetadata(t, *trace);
                    done(std::nullopt);
                },
                [done] { done(std::nullopt); }));
            for (auto& [pid, a] : t.apps)
                if (mayTrace(t, *a.app)) // untracked apps stay stopped
                    startInApp(t, a, started.add());
            started.seal();
        },
        [done] { done(Error(ErrorCode::Failed, "the session was destroyed meanwhile")); }));
    for (const auto& [pid, app] : apps_) {
        if (!mayTrace(t, *app))
            continue;
        // An app's own failure is logged by join(), and the session starts;
        // its consumer's (no buffers) fails the Start.
        join(t, app, joined.add());
    }
    joined.seal();
}

void UstTracer::flushAll(Traced& t, Done done) {
    declareOrphanChannels(t);
    Join flushed(std::move(done));
    for (auto& [key, trace] : t.traces) {
        pushMetadata(t, *trace, flushed.add());
        for (auto& ch : trace->channels)
            t.consumer->flushChannel(ch.objects.key, flushed.add());
        t.consumer->flushChannel(trace->metadata.key, flushed.add());
    }
    flushed.seal();
}

void UstTracer::stop(const std::string& idHex, Done done) {
    const auto it = sessions_.find(idHex);
    if (it != sessions_.end() && it->second->failed)
        return done(
            Error(ErrorCode::WrongState, "the session's consumer is gone; destroy the session"));
    if (it == sessions_.end() || !it->second->active)
        return done(std::nullopt);
    Traced& t = *it->second;
    t.active = false; // the apps no longer write, whatever comes next
    // Set-ups in flight end stopped (setUpDone() starts none now).
    stopApps(t,
             t.lifetime.guard(
                 [this, &t, done](std::optional<Error>) {
                     if (t.failed)
                         return done(Error(ErrorCode::WrongState,
                                           "the session's consumer is gone; destroy the session"));
                     flushStopped(t, done);
                 },
                 [done] { done(std::nullopt); }));
}

void UstTracer::flushStopped(Traced& t, Done done) {
    // A consumer that cannot flush is no use any more: say so in the
    // session's state rather than leave it "active" with stopped apps.
    auto fail = t.lifetime.guard([this, &t](const Error& e) {
        if (!t.failed && !t.destroying)
            failSession(t, std::string("the consumer ") + t.spec.unitName +
                               " failed while flushing (" + e.what() + "); it was stopped");
    });
    flushAllOnceMade(t, [fail, done](std::optional<Error> e) {
        if (!e)
            return done(std::nullopt);
        fail(*e);
        done(Error(ErrorCode::Failed,
                   std::string(e->what()) + "; the session is now in state error"));
    });
}

void UstTracer::flushAllOnceMade(Traced& t, Done done) {
    if (!making(t))
        return flushAll(t, std::move(done));
    // Traces whose buffers the consumer is making: flushed once made (their
    // apps join stopped), so that Stop returns with everything on disk.
    t.afterCreations.push_back(t.lifetime.guard([this, &t, done] { flushAllOnceMade(t, done); },
                                                [done] { done(std::nullopt); }));
}

void UstTracer::consumerLost(Traced& t, const std::string& why) {
    if (t.failed || t.destroying || !t.launched || !launcher_)
        return;
    // How the unit ended (systemd's view), once it is down: a process that
    // closed its socket is "active" until its manager saw it exit.
    launcher_->whenEnded(
        t.spec, std::chrono::milliseconds(1000),
        t.lifetime.guard([this, &t, why,
                          unit = t.spec.unitName](std::optional<std::string> reason) {
            if (t.failed || t.destroying)
                return;
            if (reason && reason->find("Result oom-kill") != std::string::npos) {
                failSession(t, "the consumer " + unit +
                                   " was killed for lack of memory: the session's ring buffers "
                                   "need " +
                                   mebibytes(bufferBytes(t, 0)) + ", its limit is " +
                                   (config_.consumerMemoryMax != 0
                                        ? mebibytes(config_.consumerMemoryMax)
                                        : std::string("the machine's")) +
                                   " (" + *reason + ")");
                return;
            }
            failSession(t, "the consumer " + unit +
                               (reason ? " is no longer running (" + *reason + ")"
                                       : " broke its connection (" + why + "); it was stopped"));
        }));
}

ConsumerLauncher& UstTracer::launcher() {
    if (!launcher_)
        launcher_ = config_.useSystemd ? makeSystemdLauncher(*loop_, config_.systemdAddress)
                                       : makeDirectLauncher(*loop_);
    return *launcher_;
}

UstTracer::Done UstTracer::failOnError(Traced& t, std::string what) {
    return t.lifetime.guard([this, &t, what = std::move(what)](std::optional<Error> e) {
        if (!e || t.failed || t.destroying)
            return;
        failSession(t, "the consumer " + t.spec.unitName + " failed " + what + " (" + e->what() +
                           "); it was stopped");
    });
}

void UstTracer::failSession(Traced& t, const std::string& why, bool tellOwner) {
    t.failed = true;
    t.failure = why;
    t.active = false;
    abandonRotation(t, why);
    dropWaitingRotations(t, why);
    t.scheduleWatch.reset();
    releaseConsumer(t, why);
    stopConsumerUnit(t);
    if (onFailure_ && tellOwner)
        onFailure_(t.snapshot.idHex, why);
    for (auto& f : std::exchange(t.whenFailed, {}))
        f(why);
}

void UstTracer::forget(Traced& t) {
    // Whoever still waits for the consumer (a snapshot overtaken by Destroy)
    // is answered, while `t` still exists.
    if (t.consumer && t.consumer->usable()) {
        t.destroying = true;
        t.consumer->abandon("the session was destroyed");
    }
    for (auto& [pid, a] : t.apps)
        eraseRoutes(pid, a);
    t.apps.clear();
    auto setUps = cancelSetUps(t); // their jobs add no route any more
    HandleRoutes::synchronize();   // no notify handler uses `t` any more
    auto creating = std::move(t.creating);
    dropWaitingRotations(t, "the session ended");
    releaseConsumer(t, "the session ended");
    const std::string id = t.snapshot.idHex;
    sessions_.erase(id); // frees t
    // Who waited for its buffers learns that they never come.
    const Error gone(ErrorCode::Failed, "the session ended before its buffers were made");
    for (auto& [key, waiters] : creating)
        for (auto& w : waiters)
            w(nullptr, gone);
    for (auto& w : setUps)
        w(std::nullopt);
}

void UstTracer::destroy(const std::string& idHex, Done done) {
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end()) {
        schedules_.erase(idHex);
        return done(std::nullopt);
    }
    Traced& t = *it->second;
    schedules_.erase(idHex);
    t.scheduleWatch.reset();
    if (t.failed || t.destroying || !t.consumer) {
        if (!t.destroying) {
            abandonRotation(t, "the session's consumer is gone");
            stopConsumerUnit(t);
            forget(t);
        }
        return done(std::nullopt);
    }
    t.destroying = true;
    // A rotation under way completes as the consumer closes every stream
    // (its RotationCompleted comes before Shutdown's Ok), or is abandoned.
    auto close = t.lifetime.guard(
        [this, &t, done] {
            for (auto& [pid, a] : t.apps)
                eraseRoutes(pid, a);
            t.apps.clear(); // our copies of the app-side objects
            Join closed(t.lifetime.guard(
                [this, &t, done](std::optional<Error> e) {
                    std::optional<Error> lost;
                    if (e) {
                        log::warning("session '" + t.snapshot.name +
                                     "': closing the consumer: " + e->what());
                        stopConsumerUnit(t);
                        // A relay that failed while the buffers were drained did
                        // not get the end of the trace: Destroy says so.
                        if (t.snapshot.relay)
                            lost = Error(ErrorCode::RelayUnavailable,
                                         "the relay at " + t.snapshot.relay->url() +
                                             " did not receive all of it (" + e->what() + ")");
                    }
                    abandonRotation(t, "the session was destroyed");
                    forget(t); // frees t
                    done(std::move(lost));
                },
                [done] { done(std::nullopt); }));
            for (auto& [key, trace] : t.traces)
                closeInConsumer(t, *trace, closed.add());
            // Shutdown drains and closes the rest (exited apps' snapshot buffers).
            t.consumer->shutdown(closed.add());
            closed.seal();
        },
        [done] { done(std::nullopt); });
    // The others stop writing first; if the waiters told below ended the
    // session, close() answers at once.
    auto stopThenClose = t.lifetime.guard(
        [this, &t, close] {
            if (!t.active)
                return close();
            t.active = false;
            stopApps(t, [close](std::optional<Error>) { close(); });
        },
        close);
    // Apps being set up are let go (their jobs' results find nothing).
    for (auto& w : cancelSetUps(t))
        w(std::nullopt);
    stopThenClose();
}

} // namespace tracectl
