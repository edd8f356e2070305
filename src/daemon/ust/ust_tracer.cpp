// UstTracer: sessions (start, stop, destroy) and their failure.
#include "ust_tracer.hpp"

#include "apps/ust_error.hpp"
#include "common/error.hpp"
#include "common/join.hpp"
#include "common/log.hpp"
#include "metadata/clock_source.hpp"
#include "recording/output_folder.hpp"
#include "restart/consumer_fd_store.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <lttng/ust-ctl.h>
#include <set>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tracectl {

UstTracer::UstTracer(TracerConfig config, Recordings& recordings,
                     std::shared_ptr<AppCommands> commands)
    : config_(config), recordings_(recordings), commands_(std::move(commands)) {}

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

void UstTracer::attach(EventLoop& loop, HangUpWatcher watcher) {
    loop_ = &loop;
    poster_ = loop.poster();
    hangUpWatcher_ = std::move(watcher);
}

Join UstTracer::joinOfApps(Done done) {
    return Join([done = std::move(done)](std::optional<Error>) {
        if (done)
            done(std::nullopt);
    });
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

UstTracer::Traced& UstTracer::makeTraced(const SessionSnapshot& s) {
    ConsumerConnection* connection = recordings_.connectionOf(s.idHex);
    if (connection == nullptr)
        throw Error(ErrorCode::Failed, "the session's recording was not started");
    auto t = std::make_unique<Traced>();
    t->serial = nextSerial_++;
    t->snapshot = s;
    t->connection = connection;
    Traced& made = *t;
    sessions_[s.idHex] = std::move(t);
    return made;
}

std::optional<Error> UstTracer::refuseStart(const SessionSnapshot& s) const {
    if (sessions_.count(s.idHex) != 0)
        return std::nullopt; // its buffers exist
    // Checked before anything starts: a consumer over its limit would be
    // killed while making them. Without a limit, half of the machine's
    // memory is the bound (as for one channel, channel_config.cpp).
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page = sysconf(_SC_PAGESIZE);
    const uint64_t halfMemory =
        pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 2 : 0;
    const uint64_t limit = config_.consumerMemoryMax != 0 ? config_.consumerMemoryMax : halfMemory;
    Traced probe;
    probe.snapshot = s;
    const uint64_t needed = bufferBytes(probe, tracesAtStart(probe));
    if (limit == 0 || needed <= limit)
        return std::nullopt;
    return Error(ErrorCode::InvalidArgument,
                 "the session's ring buffers would need " + mebibytes(needed) + " (" +
                     bufferFormula(probe, tracesAtStart(probe)) + "), more than " +
                     (config_.consumerMemoryMax != 0
                          ? "its consumer's memory limit of " + mebibytes(limit) +
                                " (tracectld --consumer-memory-max)"
                          : "half of this machine's memory (" + mebibytes(limit) + ")"));
}

void UstTracer::start(const SessionSnapshot& s, Done done) {
    const auto it = sessions_.find(s.idHex);
    Traced* found = it == sessions_.end() ? nullptr : it->second.get();
    if (found == nullptr) {
        try {
            found = &makeTraced(s);
        } catch (const Error& e) {
            return done(e);
        }
    }
    Traced& t = *found;
    if (t.failed)
        return done(
            Error(ErrorCode::WrongState, "the session's consumer is gone; destroy the session"));
    startApps(t, std::move(done));
}

void UstTracer::resume(const SessionSnapshot& s, bool active, Done done) {
    if (sessions_.count(s.idHex) != 0)
        return done(Error(ErrorCode::Failed, "the session is known already"));
    Traced* made = nullptr;
    try {
        made = &makeTraced(s);
    } catch (const Error& e) {
        return done(e);
    }
    if (!active)
        return done(std::nullopt);
    startApps(*made, std::move(done));
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
            if (!consumer(t).usable()) {
                // It died meanwhile: its unit's fate (systemd's Result) is
                // being asked; Start answers with it.
                recordings_.whenFailed(t.snapshot.idHex, failStart);
                return;
            }
            if (refused) {
                // The consumer is there but would not make the buffers.
                failSession(t, refused->what());
                return failStart(refused->what());
            }
            // Active from now: apps whose set-up ends meanwhile start too.
            t.active = true;
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
            consumer(t).flushChannel(ch.objects.key, flushed.add());
        consumer(t).flushChannel(trace->metadata.key, flushed.add());
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
            failSession(t, std::string("the consumer ") + recordings_.unitOf(t.snapshot.idHex) +
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

UstTracer::Done UstTracer::failOnError(Traced& t, std::string what) {
    return t.lifetime.guard([this, &t, what = std::move(what)](std::optional<Error> e) {
        if (!e || t.failed || t.destroying)
            return;
        failSession(t, "the consumer " + recordings_.unitOf(t.snapshot.idHex) + " failed " + what +
                           " (" + e->what() + "); it was stopped");
    });
}

void UstTracer::failSession(Traced& t, const std::string& why) {
    // Recordings tells every domain (recordingFailed(): `t` too) and the
    // session.
    recordings_.fail(t.snapshot.idHex, why);
}

void UstTracer::recordingFailed(const std::string& idHex, const std::string& why) {
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end())
        return;
    Traced& t = *it->second;
    t.failed = true;
    t.failure = why;
    t.active = false;
}

void UstTracer::forget(Traced& t) {
    t.destroying = true;
    for (auto& [pid, a] : t.apps)
        eraseRoutes(pid, a);
    t.apps.clear();
    auto setUps = cancelSetUps(t); // their jobs add no route any more
    HandleRoutes::synchronize();   // no notify handler uses `t` any more
    auto creating = std::move(t.creating);
    auto chunkWaiters = std::move(t.chunkWaiters);
    const std::string id = t.snapshot.idHex;
    sessions_.erase(id); // frees t
    // Who waited for its buffers learns that they never come.
    const Error gone(ErrorCode::Failed, "the session ended before its buffers were made");
    for (auto& [key, waiters] : creating)
        for (auto& w : waiters)
            w(nullptr, gone);
    for (auto& w : setUps)
        w(std::nullopt);
    for (auto& w : chunkWaiters)
        w(Error(ErrorCode::Failed, "the session ended"));
}

void UstTracer::destroy(const std::string& idHex, Done done) {
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end())
        return done(std::nullopt);
    Traced& t = *it->second;
    if (t.destroying)
        return done(std::nullopt);
    if (t.failed || !consumer(t).usable()) {
        forget(t);
        return done(std::nullopt);
    }
    t.destroying = true;
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
                                     "': closing its user-space channels: " + e->what());
                        // A relay that failed while the buffers were drained did
                        // not get the end of the trace: Destroy says so.
                        if (t.snapshot.relay)
                            lost = Error(ErrorCode::RelayUnavailable,
                                         "the relay at " + t.snapshot.relay->url() +
                                             " did not receive all of it (" + e->what() + ")");
                    }
                    forget(t); // frees t
                    done(std::move(lost));
                },
                [done](std::optional<Error>) { done(std::nullopt); }));
            // The consumer drains and closes them; its Shutdown (the
            // recording's end, after) closes the rest (exited apps'
            // snapshot buffers).
            for (auto& [key, trace] : t.traces)
                closeInConsumer(t, *trace, closed.add());
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
