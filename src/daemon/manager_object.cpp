#include "manager_object.hpp"

#include "bus_call.hpp"
#include "common/log.hpp"
#include "config.h"
#include "create_session_options.hpp"
#include "session_name.hpp"

namespace tracectl {

ManagerObject::ManagerObject(sdbus::IConnection& bus, SessionRegistry& registry,
                             ApplicationDirectory& apps, TracingBackend& backend, EventLoop& loop)
    : AdaptorInterfaces(bus, kManagerPath), bus_(bus), registry_(registry), apps_(apps),
      backend_(backend), loop_(loop) {
    registerAdaptor();
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
    objects_.clear();
    retired_.clear();
    unregisterAdaptor();
}

sdbus::ObjectPath
ManagerObject::CreateSession(const std::string& name,
                             const std::map<std::string, sdbus::Variant>& options) {
    return handleCall("CreateSession", [&] {
        const uid_t caller = callerUid(getObject());
        const SessionRequest request = readCreateSessionOptions(name, options);
        Session& session = registry_.create(request, caller);
        const SessionId id = session.id();
        try {
            auto object = std::make_unique<SessionObject>(
                bus_, session, backend_, [this](const SessionId& sid) { destroySession(sid); });
            objects_.emplace(id.hex(), Entry{nullptr, std::move(object)});
        } catch (...) {
            registry_.remove(id);
            throw;
        }
        log::info("session '" + session.config().name + "' created by uid " +
                      std::to_string(caller) + ", output " + session.config().outputPath,
                  id.uuid());
        return sdbus::ObjectPath(sessionObjectPath(id));
    });
}

sdbus::ObjectPath ManagerObject::GetSession(const std::string& name) {
    return handleCall("GetSession", [&] {
        if (auto problem = sessionNameProblem(name))
            throw Error(ErrorCode::InvalidName,
                        "invalid session name " + quoteForMessage(name) + ": " + *problem);
        const Session* s = registry_.findByName(callerUid(getObject()), name);
        if (s == nullptr)
            throw Error(ErrorCode::NoSuchSession, "no session named " + quoteForMessage(name));
        return sdbus::ObjectPath(sessionObjectPath(s->id()));
    });
}

std::vector<sdbus::ObjectPath> ManagerObject::ListSessions() {
    return handleCall("ListSessions", [&] {
        const uid_t caller = callerUid(getObject());
        std::vector<sdbus::ObjectPath> out;
        for (const Session* s : registry_.visibleTo(caller, caller == 0))
            out.emplace_back(sessionObjectPath(s->id()));
        return out;
    });
}

std::vector<sdbus::ObjectPath> ManagerObject::ListApplications() {
    return handleCall("ListApplications", [&] {
        const uid_t caller = callerUid(getObject());
        std::vector<sdbus::ObjectPath> out;
        for (auto& path : apps_.visibleTo(caller, caller == 0))
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
