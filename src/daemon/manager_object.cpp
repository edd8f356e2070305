#include "manager_object.hpp"

#include "bus_call.hpp"
#include "common/log.hpp"
#include "config.h"
#include "create_session_options.hpp"
#include "session_name.hpp"
#include "tracing/output_folder.hpp"

namespace tracectl {

ManagerObject::ManagerObject(sdbus::IConnection& bus, SessionRegistry& registry,
                             ApplicationDirectory& apps, TracingBackend& backend, EventLoop& loop,
                             auth::PolkitAuthority& authority, const auth::ReadCallTracker& readers)
    : AdaptorInterfaces(bus, kManagerPath), bus_(bus), registry_(registry), apps_(apps),
      backend_(backend), loop_(loop), authority_(authority), readers_(readers) {
    registerAdaptor();
    apps_.publishThrough(&authority_, &readers_);
}

void ManagerObject::sessionFailed(const std::string& idHex, const std::string& reason) {
    const auto it = objects_.find(idHex);
    if (it != objects_.end())
        it->second.object->fail(reason);
}

void ManagerObject::retireAll() {
    if (!objects_.empty())
        log::notice("exiting with " + std::to_string(objects_.size()) +
                    " sessions; they are dropped (what they wrote stays on disk)");
    objects_.clear();
    retired_.clear();
}

ManagerObject::~ManagerObject() {
    // The apps check callers with the authority, which may go after us.
    apps_.clear();
    apps_.publishThrough(nullptr, nullptr);
    objects_.clear();
    retired_.clear();
    unregisterAdaptor();
}

void ManagerObject::holds(const auth::Caller& caller, auth::Action action,
                          std::function<void(bool)> then) {
    std::weak_ptr<bool> alive = alive_;
    authority_.check(caller, action, false,
                     [alive, then = std::move(then)](std::optional<sdbus::Error> denied) {
                         if (!alive.expired())
                             then(!denied);
                     });
}

void ManagerObject::CreateSession(sdbus::Result<sdbus::ObjectPath>&& result, std::string name,
                                  std::map<std::string, sdbus::Variant> options) {
    auto pending = std::make_shared<sdbus::Result<sdbus::ObjectPath>>(std::move(result));
    auth::Caller caller;
    bool interactive = false;
    SessionRequest request;
    try {
        handleCall("CreateSession", [&] {
            caller = currentCaller(getObject());
            interactive = auth::takeInteractive(options);
            request = readCreateSessionOptions(name, options);
        });
    } catch (const sdbus::Error& e) {
        pending->returnError(e);
        return;
    }
    std::weak_ptr<bool> alive = alive_;
    authority_.check(caller, auth::Action::TraceOwn, interactive,
                     [this, alive, pending, caller,
                      request = std::move(request)](std::optional<sdbus::Error> denied) {
                         if (alive.expired())
                             return;
                         if (denied) {
                             log::warning("uid " + std::to_string(caller.uid) +
                                          " denied CreateSession: " + denied->getMessage());
                             pending->returnError(*denied);
                             return;
                         }
                         try {
                             pending->returnResults(handleCall(
                                 "CreateSession", [&] { return create(request, caller.uid); }));
                         } catch (const sdbus::Error& e) {
                             pending->returnError(e);
                         }
                     });
}

sdbus::ObjectPath ManagerObject::create(const SessionRequest& request, uid_t owner) {
    Session& session = registry_.create(request, owner);
    const SessionId id = session.id();
    try {
        // A folder the caller could make and write itself, checked as the
        // caller; nothing is made before the first Start.
        checkOutputFolder(session.config().outputPath, owner, primaryGidOf(owner));
        auto object =
            std::make_unique<SessionObject>(bus_, session, backend_, authority_, readers_,
                                            [this](const SessionId& sid) { destroySession(sid); });
        objects_.emplace(id.hex(), Entry{nullptr, std::move(object)});
    } catch (...) {
        registry_.remove(id);
        throw;
    }
    log::info("session '" + session.config().name + "' created by uid " + std::to_string(owner) +
                  ", output " + session.config().outputPath,
              id.uuid());
    return sdbus::ObjectPath(sessionObjectPath(id));
}

void ManagerObject::GetSession(sdbus::Result<sdbus::ObjectPath>&& result, std::string name) {
    auto pending = std::make_shared<sdbus::Result<sdbus::ObjectPath>>(std::move(result));
    auth::Caller caller;
    std::optional<SessionId> others;
    try {
        handleCall("GetSession", [&] {
            if (auto problem = sessionNameProblem(name))
                throw Error(ErrorCode::InvalidName,
                            "invalid session name " + quoteForMessage(name) + ": " + *problem);
            caller = currentCaller(getObject());
            if (const Session* own = registry_.findByName(caller.uid, name); own != nullptr) {
                pending->returnResults(sdbus::ObjectPath(sessionObjectPath(own->id())));
                return;
            }
            for (const Session* s : registry_.visibleTo(caller.uid, true))
                if (s->config().name == name) {
                    others = s->id();
                    break;
                }
            if (!others)
                throw Error(ErrorCode::NoSuchSession, "no session named " + quoteForMessage(name));
        });
    } catch (const sdbus::Error& e) {
        pending->returnError(e);
        return;
    }
    if (!others)
        return; // answered: the caller's own session
    // Another user's session: only for holders of manage-all-sessions; the
    // others learn nothing, not even that it exists.
    holds(
        caller, auth::Action::ManageAllSessions, [this, pending, name, id = *others](bool seesAll) {
            if (seesAll && registry_.findById(id) != nullptr)
                pending->returnResults(sdbus::ObjectPath(sessionObjectPath(id)));
            else
                pending->returnError(toBusError(
                    Error(ErrorCode::NoSuchSession, "no session named " + quoteForMessage(name))));
        });
}

void ManagerObject::listVisible(sdbus::Result<std::vector<sdbus::ObjectPath>>&& result,
                                auth::Action seesAll,
                                std::function<std::vector<sdbus::ObjectPath>(uid_t, bool)> list) {
    auto pending =
        std::make_shared<sdbus::Result<std::vector<sdbus::ObjectPath>>>(std::move(result));
    auth::Caller caller;
    try {
        caller = currentCaller(getObject());
    } catch (const sdbus::Error& e) {
        pending->returnError(e);
        return;
    }
    holds(caller, seesAll, [pending, caller, list = std::move(list)](bool all) {
        pending->returnResults(list(caller.uid, all));
    });
}

void ManagerObject::ListSessions(sdbus::Result<std::vector<sdbus::ObjectPath>>&& result) {
    listVisible(std::move(result), auth::Action::ManageAllSessions, [this](uid_t uid, bool all) {
        std::vector<sdbus::ObjectPath> out;
        for (const Session* s : registry_.visibleTo(uid, all))
            out.emplace_back(sessionObjectPath(s->id()));
        return out;
    });
}

void ManagerObject::ListApplications(sdbus::Result<std::vector<sdbus::ObjectPath>>&& result) {
    listVisible(std::move(result), auth::Action::TraceAllUsers, [this](uid_t uid, bool all) {
        std::vector<sdbus::ObjectPath> out;
        for (auto& path : apps_.visibleTo(uid, all))
            out.emplace_back(std::move(path));
        return out;
    });
}

std::string ManagerObject::Version() {
    return TRACECTL_VERSION;
}

void ManagerObject::destroySession(const SessionId& id) {
    const auto it = objects_.find(id.hex());
    if (it == objects_.end())
        return;
    Entry entry = std::move(it->second);
    objects_.erase(it);
    entry.object->retire();
    entry.session = registry_.remove(id);
    retired_.push_back(std::move(entry));
    loop_.defer([this] { retired_.clear(); });
}

} // namespace tracectl
