// UstTracer: apps joining sessions (their buffers, contexts and events sent
// to them, on the app strands), apps coming and going.
#include "apps/ust_app_registrar.hpp"
#include "apps/ust_error.hpp"
#include "common/error.hpp"
#include "common/join.hpp"
#include "common/log.hpp"
#include "session/context_type.hpp"
#include "ust_tracer.hpp"

#include <algorithm>
#include <lttng/ust-ctl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace tracectl {

void UstTracer::join(Traced& t, const std::shared_ptr<UstApp>& app, Done done) {
    const pid_t pid = app->info.pid;
    if (t.apps.count(pid) != 0)
        return done(std::nullopt);
    if (const auto s = t.settingUp.find(pid); s != t.settingUp.end())
        return s->second.waiters.push_back(std::move(done));
    withTrace(t, *app,
              t.lifetime.guard(
                  [this, &t, app, pid, done](Trace* trace, std::optional<Error> e) {
                      // The session's own trouble (its consumer could not make the
                      // buffers) is reported; the app's (it left, it refused) is logged.
                      // A consumer out of fds for this app's buffers (LimitExceeded)
                      // refuses this app alone: counted, and the session goes on.
                      const bool consumerSide = e.has_value() && trace == nullptr && !t.destroying;
                      const bool refused =
                          consumerSide && e->code() == ErrorCode::LimitExceeded && !t.failed;
                      std::optional<Error> ours = consumerSide && !refused ? e : std::nullopt;
                      if (refused) {
                          log::warning("session '" + t.snapshot.name + "': app " +
                                       std::to_string(pid) + " (" + app->info.name + ") refused: " +
                                       e->what() + "; the session's other apps record on");
                          recordings_.noteAppRefused(t.snapshot.idHex);
                          abandonSetUp(t, *app);
                          return done(std::nullopt);
                      }
                      const auto registered = apps_.find(pid);
                      if (!e && (registered == apps_.end() || registered->second != app))
                          e = Error(ErrorCode::Failed, "it exited meanwhile");
                      if (!e && (t.failed || t.destroying))
                          e = Error(ErrorCode::Failed, "the session ended meanwhile");
                      if (!e && t.apps.count(pid) != 0)
                          return done(std::nullopt); // joined meanwhile, by another path
                      if (!e) {
                          // Being set up, by another path: told with the others.
                          if (const auto s = t.settingUp.find(pid); s != t.settingUp.end())
                              return s->second.waiters.push_back(done);
                          try {
                              return beginSetUp(t, *trace, app, done);
                          } catch (const Error& failed) {
                              e = failed;
                          }
                      }
                      log::warning("session '" + t.snapshot.name + "': app " + std::to_string(pid) +
                                   " (" + app->info.name + ") not traced: " + e->what());
                      abandonSetUp(t, *app);
                      done(std::move(ours));
                  },
                  // Nothing to report to: the session is gone.
                  [done] { done(std::nullopt); }));
}

void UstTracer::beginSetUp(Traced& t, Trace& trace, const std::shared_ptr<UstApp>& app, Done done) {
    const pid_t pid = app->info.pid;
    // What the job needs, copied here: it touches nothing of ours.
    AppSetUpRequest request;
    request.app = AppPeer{app->command.get(), pid};
    request.session = &t;
    request.trace = &trace;
    const auto duplicate = [](lttng_ust_abi_object_data* from, const char* what) {
        if (from == nullptr)
            throw Error(ErrorCode::Failed, std::string(what) + " of the trace is closed");
        lttng_ust_abi_object_data* raw = nullptr;
        if (const int r = lttng_ust_ctl_duplicate_ust_object_data(&raw, from); r < 0)
            throw Error(ErrorCode::Failed,
                        std::string("duplicating ") + what + ": " + ustErrorString(r));
        return UstObject(raw);
    };
    for (auto& ch : trace.channels) {
        AppSetUpRequest::Channel c;
        c.name = ch.name;
        c.chanId = ch.chanId;
        c.channel = duplicate(ch.objects.channel.get(), "a channel");
        for (auto& stream : ch.objects.streams)
            c.streams.push_back(duplicate(stream.get(), "a stream"));
        for (const auto& type : ch.contexts)
            c.contexts.push_back(ustContextType(type).value_or(-1));
        for (std::size_t i = 0; i < t.snapshot.rules.size(); ++i) {
            const EventRule& rule = t.snapshot.rules[i];
            if (rule.channel == ch.name && rule.enabled) { // the others once enabled (syncApp())
                c.events.push_back(eventSpecOf(rule));
                c.ruleIndexes.push_back(i);
            }
        }
        request.channels.push_back(std::move(c));
    }
    auto routes = std::make_shared<PendingRoutes>(routes_, pid);
    SettingUp& s = t.settingUp[pid];
    s.app = app;
    s.routes = routes;
    s.waiters.push_back(std::move(done));
    auto shared = std::make_shared<AppSetUpRequest>(std::move(request));
    ++t.appJobsMaking; // until setUpDone(), and the start it may ask for
    appCalls_.submit(
        pid, [this, ref = refOf(t), key = trace.key, app, routes, shared, poster = poster_] {
            std::shared_ptr<AppSetUpResult> result;
            {
                const auto budget = budgetFor(*app);
                result = std::make_shared<AppSetUpResult>(
                    setUpInApp(*commands_, std::move(*shared), *routes));
                if (result->error)
                    result->error =
                        Error(result->error->code(), whyAppCallFailed(*result->error, budget));
            }
            poster->post([this, ref, key, app, routes, result] {
                setUpDone(ref, key, app, routes, std::move(*result));
                appJobAnswered(ref);
            });
        });
}

void UstTracer::setUpDone(const SessionRef& ref, TraceKey key, const std::shared_ptr<UstApp>& app,
                          const std::shared_ptr<PendingRoutes>& routes, AppSetUpResult result) {
    const pid_t pid = app->info.pid;
    // Cancelled (the app left, the session went): who waited was told;
    // what the job made is released with `result` (our copies only).
    Traced* live = find(ref);
    if (live == nullptr)
        return routes->cancel();
    const auto s = live->settingUp.find(pid);
    if (s == live->settingUp.end() || s->second.routes != routes)
        return routes->cancel();
    auto waiters = std::move(s->second.waiters);
    live->settingUp.erase(s);
    const auto tell = [&waiters] {
        for (auto& w : waiters)
            w(std::nullopt); // the app's failures are logged, not reported
    };
    std::optional<Error> e = std::move(result.error);
    const auto registered = apps_.find(pid);
    if (!e && (registered == apps_.end() || registered->second != app))
        e = Error(ErrorCode::Failed, "it exited meanwhile");
    if (!e && (live->failed || live->destroying))
        e = Error(ErrorCode::Failed, "the session ended meanwhile");
    if (e || !routes->keep()) {
        routes->cancel(); // a route must never outlive its session's use of it
        log::warning("session '" + live->snapshot.name + "': app " + std::to_string(pid) +
                     " not traced: " + (e ? e->what() : "its set-up was cancelled"));
        if (live->snapshot.perPid)
            HandleRoutes::synchronize(); // no notify handler uses its trace any more
        abandonSetUp(*live, *app);
        return tell();
    }
    AppInSession& a = live->apps[pid];
    a.app = app;
    a.sessionHandle = result.sessionHandle;
    a.channels = std::move(result.channels);
    a.objects = std::move(result.objects);
    for (auto& [index, event] : result.events)
        a.events[index].object = std::make_shared<UstObject>(std::move(event));
    // Rules enabled while the job ran (those it did not carry), and
    // rules and channels disabled or enabled meanwhile, reach the app now,
    // before its start (its strand keeps them behind the set-up).
    syncApp(*live, a, nullptr);
    if (live->active && mayTrace(*live, *app)) { // untracked meanwhile: stays stopped
        startInApp(*live, a);
        if (const auto trace = live->traces.find(key); trace != live->traces.end())
            pushMetadata(*live, *trace->second);
    }
    tell();
}

std::vector<UstTracer::Done> UstTracer::cancelSetUps(Traced& t, std::optional<pid_t> only) {
    std::vector<Done> waiters;
    for (auto it = t.settingUp.begin(); it != t.settingUp.end();) {
        if (only && it->first != *only) {
            ++it;
            continue;
        }
        it->second.routes->cancel();
        for (auto& w : it->second.waiters)
            waiters.push_back(std::move(w));
        it = t.settingUp.erase(it);
    }
    return waiters;
}

void UstTracer::onAppRegistered(const std::shared_ptr<UstApp>& app, std::function<void()> ready) {
    apps_[app->info.pid] = app;
    // Its sockets are connected, so the pid is still this app's.
    if (const long fd = syscall(SYS_pidfd_open, app->info.pid, 0); fd >= 0)
        pidfds_[app->info.pid] = UniqueFd(static_cast<int>(fd));
    else
        pidfds_.erase(app->info.pid);
    // register_done once the app has joined every session that can take it
    // now: those whose buffers exist at once, those being made as soon as
    // they are, unless their consumer stopped answering (checked every
    // 20 ms), and at kJoinBeforeRegisterDone whatever happens.
    struct Registration {
        std::function<void()> ready;
        std::vector<SessionRef> waitingFor;
        std::chrono::steady_clock::time_point begun = std::chrono::steady_clock::now();
        EventSourcePtr check;
        void fire() {
            check.reset();
            if (auto r = std::exchange(ready, nullptr))
                r();
        }
    };
    auto reg = std::make_shared<Registration>();
    // register_done (a round trip) goes on the app's strand, behind the
    // jobs its joins queued (start_session): off the loop, and no job of
    // the app uses the socket meanwhile.
    reg->ready = [this, pid = app->info.pid, ready = std::move(ready)] { withApp(pid, ready); };
    for (auto& [id, t] : sessions_) {
        if (!(t->active || t->starting) || t->failed || t->destroying || !mayTrace(*t, *app))
            continue;
        reg->waitingFor.push_back(refOf(*t));
    }
    const auto sessions = reg->waitingFor;
    for (const auto& ref : sessions) {
        Traced* t = find(ref);
        if (t == nullptr)
            continue;
        // A consumer that refused buffers fails its session; one that
        // died does so through consumerLost(), with its unit's Result.
        auto failIfRefused = t->lifetime.guard([this, &joined = *t](const Error& failed) {
            if (joined.active && !joined.failed && consumer(joined).usable())
                failSession(joined, failed.what());
        });
        join(*t, app, [reg, ref, failIfRefused](std::optional<Error> failed) {
            if (failed)
                failIfRefused(*failed);
            auto& w = reg->waitingFor;
            w.erase(std::remove_if(w.begin(), w.end(),
                                   [&](const SessionRef& r) {
                                       return r.idHex == ref.idHex && r.serial == ref.serial;
                                   }),
                    w.end());
            if (w.empty())
                reg->fire();
        });
    }
    if (reg->waitingFor.empty()) {
        reg->fire();
        return;
    }
    // Polled: the consumers' state changes without telling us.
    auto poll = std::make_shared<std::function<void()>>();
    *poll = [this, reg, pid = app->info.pid, weak = std::weak_ptr<std::function<void()>>(poll)] {
        if (!reg->ready)
            return;
        // Replies that came while this thread was busy count: read them
        // first (they may complete the joins, and fire `ready`).
        const std::vector<SessionRef> waiting = reg->waitingFor; // the reads may change it
        for (const SessionRef& r : waiting)
            if (Traced* t = find(r); t != nullptr)
                consumer(*t).readNow();
        if (!reg->ready)
            return;
        const bool late = std::chrono::steady_clock::now() - reg->begun >= kJoinBeforeRegisterDone;
        const bool onlyUnresponsive =
            std::all_of(reg->waitingFor.begin(), reg->waitingFor.end(), [&](const SessionRef& r) {
                Traced* t = find(r);
                if (t == nullptr || t->failed)
                    return true;
                const ConsumerConnection& c = consumer(*t);
                const auto silent = c.silentFor();
                return silent >= kSilentConsumer || (silent >= kStoppedConsumer && c.peerStopped());
            });
        if (late || onlyUnresponsive) {
            if (!reg->waitingFor.empty())
                log::info("app " + std::to_string(pid) + ": " +
                          std::to_string(reg->waitingFor.size()) +
                          " session(s) not ready for it yet (their consumer, or the calls "
                          "to apps ahead of it) will join it later; register_done goes now");
            reg->fire();
            return;
        }
        if (auto again = weak.lock())
            reg->check = loop_->addTimer(std::chrono::milliseconds(20), [again] { (*again)(); });
    };
    reg->check = loop_->addTimer(std::chrono::milliseconds(20), [poll] { (*poll)(); });
}

void UstTracer::traceAllUsers(const std::string& idHex) {
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end())
        return; // not started yet: its snapshot carries the flag
    Traced& t = *it->second;
    if (t.snapshot.tracesAllUsers)
        return;
    t.snapshot.tracesAllUsers = true;
    if (!t.active || t.failed)
        return; // the next Start sets up every app
    for (const auto& [pid, app] : apps_)
        if (t.apps.count(pid) == 0 && mayTrace(t, *app))
            join(t, app, [](std::optional<Error>) {});
}

void UstTracer::eraseRoutes(pid_t pid, const AppInSession& a) {
    routes_.erase(pid, a.sessionHandle);
    for (const auto& [name, chan] : a.channels)
        routes_.erase(pid, chan->handle);
}

void UstTracer::onAppGone(pid_t pid) {
    const auto gone = apps_.find(pid);
    if (gone == apps_.end())
        return;
    const uint32_t bitness = gone->second->info.bitness;
    const uint32_t uid = gone->second->info.uid;
    apps_.erase(gone);
    std::vector<SessionRef> perPid; // sessions holding a trace of this app's own
    std::vector<SessionRef> perUid; // sessions whose per-UID buffers it wrote into
    std::vector<Done> waiters;      // of its set-ups in flight, cancelled
    for (auto& [id, t] : sessions_) {
        auto cancelled = cancelSetUps(*t, pid);
        const auto it = t->apps.find(pid);
        if (it == t->apps.end() && cancelled.empty())
            continue;
        for (auto& w : cancelled)
            waiters.push_back(std::move(w));
        if (it != t->apps.end()) {
            eraseRoutes(pid, it->second);
            t->apps.erase(it); // our copies of its channel objects go with it
            // A flight recorder's buffers are never read as they fill.
            if (!t->snapshot.perPid && !t->snapshot.snapshotMode && !t->failed)
                perUid.push_back(refOf(*t));
        }
        if (t->snapshot.perPid && !t->failed)
            perPid.push_back(refOf(*t));
    }
    retireWhenExited(pid, uid, bitness, std::move(perPid), std::move(perUid));
    for (auto& w : waiters)
        w(std::nullopt);
}

void UstTracer::tellProducerGone(Traced& t, pid_t pid, uint32_t uid, uint32_t bitness) {
    // Per-UID buffers outlive their apps, and other apps go on writing in
    // them: one that died inside a reservation would leave its sub-buffer
    // undelivered for ever, and every packet after it unread. The consumer
    // closes the packets under way and fixes such sub-buffers up.
    const auto trace = t.traces.find(TraceKey{uid, bitness});
    if (trace == t.traces.end() || trace->second->channels.empty())
        return;
    const std::string what = "session '" + t.snapshot.name + "': app " + std::to_string(pid) +
                             " exited: the packets under way in its per-UID buffers ";
    Join closed([what](std::optional<Error> e) {
        if (e)
            log::warning(what + "were not closed: " + e->what());
        else
            log::info(what + "are closed; the consumer fixes up a sub-buffer it left stalled");
    });
    for (const auto& ch : trace->second->channels)
        consumer(t).producerGone(ch.objects.key, static_cast<uint32_t>(pid), closed.add());
    closed.seal();
}

void UstTracer::retireWhenExited(pid_t pid, uint32_t uid, uint32_t bitness,
                                 std::vector<SessionRef> refs, std::vector<SessionRef> shared) {
    UniqueFd pidfd;
    if (const auto it = pidfds_.find(pid); it != pidfds_.end()) {
        pidfd = std::move(it->second);
        pidfds_.erase(it);
    }
    if (refs.empty() && shared.empty())
        return;
    auto retire = [this, pid, uid, bitness, refs, shared] {
        HandleRoutes::synchronize(); // no notify handler uses the app's traces any more
        for (const auto& ref : refs)
            if (Traced* live = find(ref); live != nullptr && !live->failed)
                retirePerPidTrace(*live, {static_cast<uint32_t>(pid), bitness});
        // Only now is the writer surely gone (an app whose sockets closed
        // may still write into its mappings).
        for (const auto& ref : shared)
            if (Traced* live = find(ref); live != nullptr && !live->failed)
                tellProducerGone(*live, pid, uid, bitness);
    };
    pollfd p{pidfd.get(), POLLIN, 0};
    if (!pidfd.valid() || !hangUpWatcher_ || poll(&p, 1, 0) != 0) {
        retire(); // exited already (or cannot be watched: its sockets are closed)
        return;
    }
    const int fd = pidfd.get();
    EventSourcePtr watch = hangUpWatcher_(
        fd,
        [this, pid, retire] {
            retire();
            exitWatches_.erase(pid); // frees this very source: the last thing done
        },
        EPOLLIN);
    exitWatches_[pid] = {std::move(pidfd), std::move(watch)};
}

} // namespace tracectl
