// The org.tracectl.Tracing1.Manager object (/org/tracectl/Tracing1), which
// is also the ObjectManager of every session object.
#pragma once

#include "application_directory.hpp"
#include "common/event_loop.hpp"
#include "manager_adaptor.h"
#include "session_object.hpp"
#include "session_registry.hpp"
#include "tracing_backend.hpp"

#include <map>
#include <memory>
#include <sdbus-c++/sdbus-c++.h>
#include <string>
#include <vector>

namespace tracectl {

class ManagerObject final
    : public sdbus::AdaptorInterfaces<org::tracectl::Tracing1::Manager_adaptor,
                                      sdbus::ObjectManager_adaptor, sdbus::Properties_adaptor> {
public:
    /// Registers the manager on `bus`. `registry`, `apps` and `loop` must outlive it.
    ManagerObject(sdbus::IConnection& bus, SessionRegistry& registry, ApplicationDirectory& apps,
                  TracingBackend& backend, EventLoop& loop);
    ~ManagerObject();

    /// Removes every session object (InterfacesRemoved each), for a clean
    /// exit while the bus name is still owned.
    void retireAll();

    /// Puts the session `idHex` in state error (its consumer died).
    void sessionFailed(const std::string& idHex, const std::string& reason);
    ManagerObject(const ManagerObject&) = delete;
    ManagerObject& operator=(const ManagerObject&) = delete;

private:
    sdbus::ObjectPath CreateSession(const std::string& name,
                                    const std::map<std::string, sdbus::Variant>& options) override;
    sdbus::ObjectPath GetSession(const std::string& name) override;
    std::vector<sdbus::ObjectPath> ListSessions() override;
    std::vector<sdbus::ObjectPath> ListApplications() override;
    std::string Version() override;

    /// Unlinks a destroyed session now; frees it and its object on the next
    /// loop iteration (the call that destroyed it is still running).
    void destroySession(const SessionId& id);

    struct Entry {
        std::unique_ptr<Session> session; // set only once removed from the registry
        std::unique_ptr<SessionObject> object;
    };

    sdbus::IConnection& bus_;
    SessionRegistry& registry_;
    ApplicationDirectory& apps_;
    TracingBackend& backend_;
    EventLoop& loop_;
    std::map<std::string, Entry> objects_; // by SessionId::hex()
    std::vector<Entry> retired_;
};

} // namespace tracectl
