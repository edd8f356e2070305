// UstTracer: the process attribute trackers of a running session (which
// apps record), after lttng-tools 2.13 `ust-app.c` ust_app_global_update
// (an app the trackers do not admit is not in the session; untracking it
// while the session runs takes it out). Here an untracked app keeps its
// set-up (buffers, events) and is only stopped, so tracking it again
// starts it again without a new set-up.
#include "common/join.hpp"
#include "common/log.hpp"
#include "ust_tracer.hpp"

namespace tracectl {

void UstTracer::setProcessTrackers(const std::string& idHex, const ProcessTrackers& trackers,
                                   bool tracesAllUsers, Done done) {
    Join answered = joinOfApps(std::move(done));
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end() || it->second->failed) {
        // Not started yet: its snapshot carries them. Failed: nothing runs.
        answered.seal();
        return;
    }
    Traced& t = *it->second;
    t.snapshot.trackers = trackers;
    t.snapshot.tracesAllUsers = t.snapshot.tracesAllUsers || tracesAllUsers;
    // Session refuses this while a Start is in flight (t.starting); a
    // stopped session applies them at its next start (startApps()).
    if (!t.active || t.destroying) {
        answered.seal();
        return;
    }
    for (auto& [pid, a] : t.apps) {
        const bool admitted = mayTrace(t, *a.app);
        if (!admitted && a.started) {
            log::info("session '" + t.snapshot.name + "': app " + std::to_string(pid) +
                      " is no longer tracked; it stops recording");
            stopInApp(t, a, answered.add());
        } else if (admitted && !a.started) {
            log::info("session '" + t.snapshot.name + "': app " + std::to_string(pid) +
                      " is tracked again; it records");
            startInApp(t, a, answered.add());
        }
    }
    // Apps never set up in this session that it now admits join it (their
    // set-up starts them); one whose set-up is in flight is started at its
    // end if still admitted (setUpDone()).
    for (const auto& [pid, app] : apps_)
        if (t.apps.count(pid) == 0 && t.settingUp.count(pid) == 0 && mayTrace(t, *app))
            join(t, app, [this, pid = pid, add = answered.add()](std::optional<Error> e) {
                if (e)
                    log::warning("app " + std::to_string(pid) +
                                 ": newly tracked, it did not join: " + e->what());
                // Its start went on its strand before this answer:
                // answered once the strand has run it.
                withApp(pid,
                        [poster = poster_, add] { poster->post([add] { add(std::nullopt); }); });
            });
    answered.seal();
}

void UstTracer::stopInApp(Traced& t, AppInSession& a, Done done) {
    a.started = false; // a later start goes behind this stop on the strand
    const pid_t pid = a.app->info.pid;
    appCalls_.submit(pid, [this, app = a.app, handle = a.sessionHandle, name = t.snapshot.name,
                           done = std::move(done), poster = poster_] {
        try {
            const auto budget = budgetFor(*app);
            commands_->stopSession(AppPeer{app->command.get(), app->info.pid}, handle);
        } catch (const Error& e) {
            log::warning("session '" + name + "': app " + std::to_string(app->info.pid) +
                         " did not stop: " + e.what());
        }
        poster->post([done] { done(std::nullopt); });
    });
}

} // namespace tracectl
