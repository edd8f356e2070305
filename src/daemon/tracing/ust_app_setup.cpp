// UstTracer: apps joining sessions (their buffers, contexts and events sent
// to them), apps coming and going, event rules.
#include "apps/ust_app_thread.hpp"
#include "apps/ust_error.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "join.hpp"
#include "session/context_type.hpp"
#include "ust_tracer.hpp"

#include <algorithm>
#include <cstring>
#include <lttng/ust-ctl.h>
#include <lttng/ust-error.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <system_error>
#include <unistd.h>

namespace tracectl {

namespace {

void checkUst(int r, const std::string& what) {
    if (r < 0)
        throw Error(ErrorCode::Failed, what + ": " + ustErrorString(r));
}

} // namespace

std::optional<SocketDeadlines::Armed> UstTracer::budgetFor(const UstApp& app) {
    if (deadlines_ == nullptr)
        return std::nullopt;
    try {
        return deadlines_->arm(app.command.get(), kAppSocketTimeout);
    } catch (const std::system_error& e) {
        log::warning("app " + std::to_string(app.info.pid) + ": " + e.what());
        return std::nullopt;
    }
}

void UstTracer::join(Traced& t, const std::shared_ptr<UstApp>& app, Done done) {
    if (t.apps.count(app->info.pid) != 0)
        return done(std::nullopt);
    withTrace(t, *app, [this, ref = refOf(t), app, done](Trace* trace, std::optional<Error> e) {
        Traced* live = find(ref);
        if (live == nullptr)
            return done(std::nullopt); // nothing to report to: the session is gone
        // The session's own trouble (its consumer could not make the
        // buffers) is reported; the app's (it left, it refused) is logged.
        const bool consumerSide = e.has_value() && trace == nullptr && !live->destroying;
        std::optional<Error> ours = consumerSide ? e : std::nullopt;
        const pid_t pid = app->info.pid;
        const auto registered = apps_.find(pid);
        if (!e && (registered == apps_.end() || registered->second != app))
            e = Error(ErrorCode::Failed, "it exited meanwhile");
        if (!e && (live->failed || live->destroying))
            e = Error(ErrorCode::Failed, "the session ended meanwhile");
        if (!e && live->apps.count(pid) != 0)
            return done(std::nullopt); // joined meanwhile, by another path
        if (!e) {
            try {
                const auto budget = budgetFor(*app);
                setUpApp(*live, *trace, app);
            } catch (const Error& failed) {
                e = failed;
            }
        }
        if (e) {
            log::warning("session '" + live->snapshot.name + "': app " + std::to_string(pid) +
                         " not traced: " + e->what());
            abandonSetUp(*live, *app);
            return done(std::move(ours));
        }
        if (live->active) {
            startInApp(*live, live->apps[pid]);
            pushMetadata(*live, *trace);
        }
        done(std::nullopt);
    });
}

void UstTracer::setUpApp(Traced& t, Trace& trace, const std::shared_ptr<UstApp>& app) {
    const int cmd = app->command.get();
    const pid_t pid = app->info.pid;
    AppInSession a;
    a.app = app;
    a.sessionHandle = lttng_ust_ctl_create_session(cmd);
    checkUst(a.sessionHandle, "create_session in app " + std::to_string(pid));
    // Routes made so far go again if the set-up fails half-way: a route
    // must never outlive its session (handle_routes.hpp).
    struct UndoRoutes {
        HandleRoutes& routes;
        pid_t pid;
        std::vector<int> handles;
        bool keep = false;
        ~UndoRoutes() {
            if (!keep)
                for (const int h : handles)
                    routes.erase(pid, h);
        }
    } undo{routes_, pid, {}};
    routes_.set(pid, a.sessionHandle, Route{&t, &trace, false, 0});
    undo.handles.push_back(a.sessionHandle);
    for (auto& ch : trace.channels) {
        lttng_ust_abi_object_data* raw = nullptr;
        checkUst(lttng_ust_ctl_duplicate_ust_object_data(&raw, ch.objects.channel.get()),
                 "duplicating a channel");
        UstObject chan(raw);
        checkUst(lttng_ust_ctl_send_channel_to_ust(cmd, a.sessionHandle, chan.get()),
                 "sending channel '" + ch.name + "' to app " + std::to_string(pid));
        routes_.set(pid, chan->handle, Route{&t, &trace, true, ch.chanId});
        undo.handles.push_back(chan->handle);
        for (auto& stream : ch.objects.streams) {
            raw = nullptr;
            checkUst(lttng_ust_ctl_duplicate_ust_object_data(&raw, stream.get()),
                     "duplicating a stream");
            UstObject s(raw); // our copy goes once the app has its own
            checkUst(lttng_ust_ctl_send_stream_to_ust(cmd, chan.get(), s.get()),
                     "sending a stream to app " + std::to_string(pid));
        }
        // Contexts before events, as lttng-sessiond does: the app registers
        // the channel (with its context fields) on its first event.
        for (const auto& type : ch.contexts) {
            lttng_ust_context_attr attr{};
            attr.ctx = static_cast<lttng_ust_abi_context_type>(ustContextType(type).value_or(-1));
            lttng_ust_abi_object_data* ctxRaw = nullptr;
            checkUst(lttng_ust_ctl_add_context(cmd, &attr, chan.get(), &ctxRaw),
                     "adding context '" + type + "' in app " + std::to_string(pid));
            a.objects.emplace_back(ctxRaw);
        }
        for (const auto& rule : t.snapshot.rules)
            if (rule.channel == ch.name)
                createEvent(a, chan.get(), rule);
        // lttng-ust creates channels enabled (its ABI answers an enable of
        // an enabled channel with an error): nothing more to do.
        a.channels[ch.name] = std::move(chan);
    }
    t.apps[pid] = std::move(a);
    undo.keep = true;
}

void UstTracer::startInApp(Traced& t, AppInSession& a) {
    if (a.started)
        return;
    const int cmd = a.app->command.get();
    const auto budget = budgetFor(*a.app);
    const int r = lttng_ust_ctl_start_session(cmd, a.sessionHandle);
    if (r < 0) {
        log::warning("session '" + t.snapshot.name + "': app " + std::to_string(a.app->info.pid) +
                     " did not start: " + ustErrorString(r));
        return;
    }
    lttng_ust_ctl_wait_quiescent(cmd);
    a.started = true;
}

void UstTracer::createEvent(AppInSession& a, lttng_ust_abi_object_data* chan,
                            const EventRule& rule) {
    const int cmd = a.app->command.get();
    const std::string pid = std::to_string(a.app->info.pid);
    lttng_ust_abi_event ev{};
    ev.instrumentation = LTTNG_UST_ABI_TRACEPOINT;
    std::strncpy(ev.name, rule.pattern.c_str(), LTTNG_UST_ABI_SYM_NAME_LEN - 1);
    ev.loglevel_type = rule.loglevelMatch == LoglevelMatch::All ? LTTNG_UST_ABI_LOGLEVEL_ALL
                       : rule.loglevelMatch == LoglevelMatch::AtLeastAsSevere
                           ? LTTNG_UST_ABI_LOGLEVEL_RANGE
                           : LTTNG_UST_ABI_LOGLEVEL_SINGLE;
    ev.loglevel = rule.loglevelMatch == LoglevelMatch::All ? -1 : rule.loglevel;
    lttng_ust_abi_object_data* evRaw = nullptr;
    checkUst(lttng_ust_ctl_create_event(cmd, &ev, chan, &evRaw),
             "creating event '" + rule.pattern + "' in app " + pid);
    UstObject event(evRaw);
    if (!rule.exclusions.empty()) {
        const std::size_t size = sizeof(lttng_ust_abi_event_exclusion) +
                                 rule.exclusions.size() * LTTNG_UST_ABI_SYM_NAME_LEN;
        std::vector<char> buf(size, '\0');
        auto* excl = reinterpret_cast<lttng_ust_abi_event_exclusion*>(buf.data());
        excl->count = static_cast<uint32_t>(rule.exclusions.size());
        char* names = buf.data() + sizeof(lttng_ust_abi_event_exclusion);
        for (std::size_t i = 0; i < rule.exclusions.size(); ++i)
            std::strncpy(names + i * LTTNG_UST_ABI_SYM_NAME_LEN, rule.exclusions[i].c_str(),
                         LTTNG_UST_ABI_SYM_NAME_LEN - 1);
        checkUst(lttng_ust_ctl_set_exclusion(cmd, excl, event.get()), "setting exclusions");
    }
    checkUst(lttng_ust_ctl_enable(cmd, event.get()), "enabling an event");
    a.objects.push_back(std::move(event));
}

void UstTracer::enableEvents(const std::string& idHex, const EventRule& rule) {
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end() || it->second->failed)
        return;
    Traced& t = *it->second;
    t.snapshot.rules.push_back(rule);
    for (auto& [pid, a] : t.apps) {
        const auto chan = a.channels.find(rule.channel);
        if (chan == a.channels.end())
            continue;
        const auto budget = budgetFor(*a.app);
        try {
            createEvent(a, chan->second.get(), rule);
        } catch (const Error& e) {
            log::warning("session '" + t.snapshot.name + "': app " + std::to_string(pid) +
                         " did not take the rule '" + rule.pattern + "': " + e.what());
        }
    }
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
    reg->ready = std::move(ready);
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
        join(*t, app, [this, reg, ref](std::optional<Error> failed) {
            // A consumer that refused buffers fails its session; one that
            // died does so through consumerLost(), with its unit's Result.
            if (Traced* live = find(ref); failed && live != nullptr && live->active &&
                                          !live->failed && live->consumer->usable())
                failSession(*live, failed->what());
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
            if (Traced* t = find(r); t != nullptr && t->consumer)
                t->consumer->readNow();
        if (!reg->ready)
            return;
        const bool late = std::chrono::steady_clock::now() - reg->begun >= kJoinBeforeRegisterDone;
        const bool onlyUnresponsive =
            std::all_of(reg->waitingFor.begin(), reg->waitingFor.end(), [&](const SessionRef& r) {
                Traced* t = find(r);
                return t == nullptr || t->failed || !t->consumer ||
                       t->consumer->silentFor() >= kUnresponsiveConsumer;
            });
        if (late || onlyUnresponsive) {
            if (!reg->waitingFor.empty())
                log::info("app " + std::to_string(pid) + ": " +
                          std::to_string(reg->waitingFor.size()) +
                          " session(s) whose consumer is slow will join it later; "
                          "register_done goes now");
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
    apps_.erase(gone);
    std::vector<SessionRef> perPid; // sessions holding a trace of this app's own
    for (auto& [id, t] : sessions_) {
        const auto it = t->apps.find(pid);
        if (it == t->apps.end())
            continue;
        eraseRoutes(pid, it->second);
        t->apps.erase(it); // our copies of its channel objects go with it
        if (t->snapshot.perPid && !t->failed)
            perPid.push_back(refOf(*t));
    }
    retireWhenExited(pid, bitness, std::move(perPid));
}

void UstTracer::retireWhenExited(pid_t pid, uint32_t bitness, std::vector<SessionRef> refs) {
    UniqueFd pidfd;
    if (const auto it = pidfds_.find(pid); it != pidfds_.end()) {
        pidfd = std::move(it->second);
        pidfds_.erase(it);
    }
    if (refs.empty())
        return;
    auto retire = [this, pid, bitness, refs] {
        HandleRoutes::synchronize(); // no notify handler uses the app's traces any more
        for (const auto& ref : refs)
            if (Traced* live = find(ref); live != nullptr && !live->failed)
                retirePerPidTrace(*live, {static_cast<uint32_t>(pid), bitness});
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
