// UstTracer: event rules and channels turned off and on while a session
// lives (Session.DisableEvents / DisableChannel, and the EnableEvents /
// AddChannel that turn them back on). Each app the session traces gets
// lttng_ust_ctl_disable / lttng_ust_ctl_enable of its own event or channel
// object (lttng-ust ust-ctl.h: valid for both), as lttng-sessiond does in
// ust-app.c (disable_ust_app_event, disable_ust_app_channel), on the app's
// strand; an event is created in an app the first time its rule is
// enabled there, and never twice.
#include "common/join.hpp"
#include "common/log.hpp"
#include "ust_tracer.hpp"

namespace tracectl {

void UstTracer::toggleInApp(Traced& t, AppInSession& a, std::shared_ptr<UstObject> object,
                            int handle, bool enabled, Done done) {
    appCalls_.submit(a.app->info.pid, [this, app = a.app, object = std::move(object), handle,
                                       enabled, name = t.snapshot.name, done = std::move(done),
                                       poster = poster_] {
        try {
            // The object was filled by the job that made it, earlier on
            // this strand; empty if the app refused it.
            const int h = object ? (*object ? (*object)->handle : -1) : handle;
            if (h >= 0) {
                const auto budget = budgetFor(*app);
                commands_->setEnabled(AppPeer{app->command.get(), app->info.pid}, h, enabled);
            }
        } catch (const Error& e) {
            log::warning("session '" + name + "': app " + std::to_string(app->info.pid) + ": " +
                         e.what());
        }
        poster->post([done] {
            if (done)
                done(std::nullopt);
        });
    });
}

void UstTracer::syncApp(Traced& t, AppInSession& a, Join* join) {
    const auto step = [&join]() -> Done { return join ? join->add() : Done(nullptr); };
    // Channels first when they go off, last when they come on: a channel
    // turned off records nothing from its events either.
    const auto channels = [&](bool turningOn) {
        for (const ChannelConfig& c : t.snapshot.channels) {
            const auto chan = a.channels.find(c.name);
            if (chan == a.channels.end() || c.enabled != turningOn)
                continue;
            const bool appDisabled = a.disabledChannels.count(c.name) != 0;
            if (appDisabled == !c.enabled)
                continue;
            if (c.enabled)
                a.disabledChannels.erase(c.name);
            else
                a.disabledChannels.insert(c.name);
            toggleInApp(t, a, nullptr, chan->second->handle, c.enabled, step());
        }
    };
    channels(false);
    for (std::size_t i = 0; i < t.snapshot.rules.size(); ++i) {
        const EventRule& rule = t.snapshot.rules[i];
        if (a.channels.count(rule.channel) == 0)
            continue;
        const auto ev = a.events.find(i);
        if (ev == a.events.end()) {
            if (rule.enabled)
                createEventInApp(t, a, i, step());
            continue;
        }
        if (ev->second.enabled == rule.enabled)
            continue;
        ev->second.enabled = rule.enabled;
        toggleInApp(t, a, ev->second.object, -1, rule.enabled, step());
    }
    channels(true);
}

void UstTracer::setRulesEnabled(const std::string& idHex, const std::vector<EventRule>& rules,
                                bool enabled, Done done) {
    Join answered = joinOfApps(std::move(done));
    const auto it = sessions_.find(idHex);
    if (it != sessions_.end() && !it->second->failed) {
        Traced& t = *it->second;
        for (EventRule& held : t.snapshot.rules)
            for (const EventRule& r : rules)
                if (sameEventRule(held, r))
                    held.enabled = enabled;
        // Apps being set up are brought to it once their set-up is done.
        for (auto& [pid, a] : t.apps)
            syncApp(t, a, &answered);
    }
    answered.seal();
}

void UstTracer::setChannelEnabled(const std::string& idHex, const std::string& name, bool enabled,
                                  Done done) {
    Join answered = joinOfApps(std::move(done));
    const auto it = sessions_.find(idHex);
    if (it != sessions_.end() && !it->second->failed) {
        Traced& t = *it->second;
        for (ChannelConfig& c : t.snapshot.channels)
            if (c.name == name)
                c.enabled = enabled;
        for (auto& [pid, a] : t.apps)
            syncApp(t, a, &answered);
    }
    answered.seal();
}

} // namespace tracectl
