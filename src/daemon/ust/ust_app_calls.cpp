// UstTracer: the round trips to apps already set up in a session (start,
// stop, events), each a job on the app's strand whose outcome is posted
// back to the main loop; and the budget that bounds each of them.
#include "apps/ust_app_registrar.hpp"
#include "common/error.hpp"
#include "common/join.hpp"
#include "common/log.hpp"
#include "ust_tracer.hpp"

#include <system_error>

namespace tracectl {

std::optional<SocketDeadlines::Armed> UstTracer::budgetFor(const UstApp& app) {
    if (!bounded_)
        return std::nullopt;
    try {
        return deadlines_.arm(app.command.get(), kAppSocketTimeout);
    } catch (const std::system_error& e) {
        log::warning("app " + std::to_string(app.info.pid) + ": " + e.what());
        return std::nullopt;
    }
}

std::string UstTracer::whyAppCallFailed(const Error& e,
                                        const std::optional<SocketDeadlines::Armed>& budget) {
    // The watchdog shut the socket down: the call in progress then fails
    // with EPIPE or end-of-file, which says nothing of the app's silence.
    if (budget && budget->expired())
        return "it did not answer within " + std::to_string(kAppSocketTimeout.count()) + " s (" +
               e.what() + " once cut off)";
    return e.what();
}

void UstTracer::withApp(pid_t pid, std::function<void()> job) {
    appCalls_.submit(pid, std::move(job));
}

void UstTracer::startInApp(Traced& t, AppInSession& a, Done done) {
    if (a.started) {
        if (done)
            done(std::nullopt);
        return;
    }
    a.started = true; // asked: a stop goes behind it on the strand
    const pid_t pid = a.app->info.pid;
    ++t.appJobsMaking; // its channels are registered once start_session answered
    appCalls_.submit(pid, [this, ref = refOf(t), app = a.app, handle = a.sessionHandle,
                           name = t.snapshot.name, done = std::move(done), poster = poster_] {
        const auto budget = budgetFor(*app);
        try {
            commands_->startSession(AppPeer{app->command.get(), app->info.pid}, handle);
        } catch (const Error& e) {
            log::warning("session '" + name + "': app " + std::to_string(app->info.pid) +
                         " did not start: " + whyAppCallFailed(e, budget));
        }
        poster->post([this, ref, done] {
            if (done)
                done(std::nullopt);
            appJobAnswered(ref);
        });
    });
}

void UstTracer::stopApps(Traced& t, Done done) {
    Join stopped(std::move(done));
    for (auto& [pid, a] : t.apps) {
        if (!a.started)
            continue;
        a.started = false;
        appCalls_.submit(pid, [this, app = a.app, handle = a.sessionHandle, step = stopped.add(),
                               poster = poster_] {
            try {
                const auto budget = budgetFor(*app);
                commands_->stopSession(AppPeer{app->command.get(), app->info.pid}, handle);
            } catch (const Error& e) {
                log::debug(e.what()); // it is leaving: it writes nothing more either
            }
            poster->post([step] { step(std::nullopt); });
        });
    }
    stopped.seal();
}

void UstTracer::createEventInApp(Traced& t, AppInSession& a, std::size_t index, Done done) {
    const EventRule& rule = t.snapshot.rules.at(index);
    const auto chan = a.channels.find(rule.channel);
    if (chan == a.channels.end()) {
        if (done)
            done(std::nullopt);
        return;
    }
    AppInSession::Event& slot = a.events[index];
    slot.enabled = true; // create_event enables it
    appCalls_.submit(a.app->info.pid, [this, ref = refOf(t), app = a.app,
                                       handle = chan->second->handle, spec = eventSpecOf(rule),
                                       event = slot.object, done = std::move(done),
                                       poster = poster_] {
        std::string failure;
        try {
            const auto budget = budgetFor(*app);
            *event =
                commands_->createEvent(AppPeer{app->command.get(), app->info.pid}, handle, spec);
        } catch (const Error& e) {
            failure = e.what();
        }
        poster->post([this, ref, app, event, failure, pattern = spec.pattern, done] {
            if (Traced* live = find(ref); live != nullptr && !failure.empty())
                log::warning("session '" + live->snapshot.name + "': app " +
                             std::to_string(app->info.pid) + " did not take the rule '" + pattern +
                             "': " + failure);
            if (done)
                done(std::nullopt);
        });
    });
}

void UstTracer::enableEvents(const std::string& idHex, const EventRule& rule, Done done) {
    Join answered = joinOfApps(std::move(done));
    const auto it = sessions_.find(idHex);
    if (it != sessions_.end() && !it->second->failed) {
        Traced& t = *it->second;
        // Apps being set up get it once their set-up is done (setUpDone()).
        t.snapshot.rules.push_back(rule);
        for (auto& [pid, a] : t.apps)
            syncApp(t, a, &answered);
    }
    answered.seal();
}

} // namespace tracectl
