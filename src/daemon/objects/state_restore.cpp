// Sessions a restarted tracectld brings back from its state folder
// (restart/session_store.hpp).
#include "common/join.hpp"
#include "common/log.hpp"
#include "objects/manager_object.hpp"
#include "recording/output_folder.hpp"
#include "restart/consumer_fd_store.hpp"
#include "ust/ust_tracer.hpp"

#include <algorithm>

namespace tracectl {

namespace {

/// How the reason of a session restoreSessions() left in error begins.
constexpr std::string_view kRestartedReason = "tracectld restarted while the session was ";

/// The end of the reason of a session a restart left in error: what is
/// left of what it recorded, and what to do.
std::string whatIsLeft(const SessionConfig& c) {
    if (c.relay)
        return "; Start streams again";
    if (c.mode == SessionMode::Snapshot)
        return "; the content of its buffers was lost (snapshots recorded before are in " +
               c.outputPath + "); destroy it";
    return "; what it recorded until then is in " + c.outputPath + "; destroy it";
}

} // namespace

bool ManagerObject::leftInErrorByRestart(const Session& session) {
    return session.state() == SessionState::Error &&
           session.errorReason().rfind(kRestartedReason, 0) == 0;
}

void ManagerObject::keepStateIn(const SessionStore& store, ConsumerFdStore* fdStore,
                                std::function<void()> takenOver) {
    store_ = &store;
    fdStore_ = fdStore;
    restoreSessions(std::move(takenOver));
}

void ManagerObject::restoreSessions(std::function<void()> takenOver) {
    Join allAnswered([takenOver = std::move(takenOver)](std::optional<Error>) {
        if (takenOver)
            takenOver();
    });
    std::vector<std::string> refused;
    std::vector<SessionStore::Loaded> loaded = store_->loadAll(refused);
    for (const std::string& r : refused)
        log::warning("restart: session state refused: " + r);
    // Oldest first: of two documents naming one session (owner and name),
    // the older one is the genuine one; the other is refused.
    std::stable_sort(loaded.begin(), loaded.end(), [](const auto& a, const auto& b) {
        return a.record.created < b.record.created;
    });
    for (SessionStore::Loaded& l : loaded) {
        SessionRecord& record = l.record;
        const SessionConfig& c = record.config;
        try {
            const std::string idHex = record.id.hex();
            // Its consumer was started: a Start was under way, or done.
            const bool kept = fdStore_ != nullptr && fdStore_->has(idHex);
            // The check CreateSession makes, as the owner, in a child: a
            // document naming a folder its owner may not write is refused.
            // At start, before serving: bounded by the check's own limit.
            // A session that started (or was starting) has its trace there:
            // its owner must still be able to write the folder.
            if (!c.relay && (record.restored.everStarted || kept))
                makeOutputFolder(c.outputPath, c.owner, primaryGidOf(c.owner), false);
            else if (!c.relay)
                checkOutputFolder(c.outputPath, c.owner, primaryGidOf(c.owner));
            RestoredSession restored = std::move(record.restored);
            const bool ran =
                restored.state == SessionState::Active || restored.state == SessionState::Stopped;
            const std::string was(ran ? toString(restored.state)
                                      : std::string_view(kept ? "starting" : ""));
            // What polkit granted is asked again, not restored: a user's
            // session records only its owner's apps until an EnableEvents
            // asks trace-all-users again (root's records every user's).
            restored.allUsers = false;
            Session& session = registry_.restore(record.id, c, record.created);
            session.restore(std::move(restored));
            const bool resumable = ran && kept;
            const std::string whyNot =
                !ran ? "its Start had not completed"
                : fdStore_ == nullptr || !fdStore_->enabled()
                    ? "tracectld runs without a service manager's fd store to keep its "
                      "connection in"
                    : "no connection to it was kept: it ended while no daemon was there, or "
                      "systemd stopped tracectld (not a restart) and let the connections go";
            if ((ran || kept) && !resumable)
                session.fail(std::string(kRestartedReason) + was + "; its consumer (" +
                             consumerUnitOf(record.id) + ") was not taken over: " + whyNot +
                             (was == "active" ? std::string("; it stopped recording then")
                                              : std::string("; it cannot start again")) +
                             whatIsLeft(c));
            else if (session.rotationSchedule().any())
                // The schedule goes to the domains, as SetRotationSchedule's
                // does; armed once the session runs.
                session.setRotationSchedule(
                    session.rotationSchedule(), [name = c.name](std::optional<Error> e) {
                        if (e)
                            log::warning("restart: session '" + name +
                                         "': rotation schedule: " + e->what());
                    });
            publish(session);
            log::notice("restart: session '" + c.name + "' of uid " + std::to_string(c.owner) +
                            " restored, state " + session.stateName() +
                            (session.state() == SessionState::Error
                                 ? " (" + session.errorReason() + ")"
                                 : std::string(resumable ? "; taking its consumer over" : "")),
                        record.id.uuid());
            if (resumable)
                resume(session, was, [step = allAnswered.add()] { step(std::nullopt); });
        } catch (const Error& e) {
            log::warning("restart: session state refused: " + l.path + ": " + e.what());
            store_->setAside(record.id);
        }
    }
    allAnswered.seal();
}

void ManagerObject::resume(Session& session, const std::string& was,
                           std::function<void()> answered) {
    const std::string idHex = session.id().hex();
    session.resume([this, idHex, was, answered](std::optional<Error> e) {
        answered();
        const auto it = objects_.find(idHex);
        if (it == objects_.end())
            return;
        Session& s = it->second.object->session();
        if (!e) {
            log::notice("restart: session '" + s.config().name + "' taken over, " + was +
                            " as before the restart",
                        s.id().uuid());
            return;
        }
        s.fail(std::string(kRestartedReason) + was + "; " + e->what() + whatIsLeft(s.config()));
    });
}

} // namespace tracectl
