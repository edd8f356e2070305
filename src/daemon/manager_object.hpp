// The org.tracectl.Tracing1.Manager object (/org/tracectl/Tracing1), which
// is also the ObjectManager of every session object.
#pragma once

#include "application_directory.hpp"
#include "auth/polkit_authority.hpp"
#include "auth/read_call_tracker.hpp"
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
    /// Registers the manager on `bus`. `registry`, `apps`, `loop` and
    /// `authority` must outlive it.
    ManagerObject(sdbus::IConnection& bus, SessionRegistry& registry, ApplicationDirectory& apps,
                  TracingBackend& backend, EventLoop& loop, auth::PolkitAuthority& authority,
                  const auth::ReadCallTracker& readers);
    ~ManagerObject();

    /// Removes every session object (InterfacesRemoved each), for a clean
    /// exit while the bus name is still owned.
    void retireAll();

    /// Puts the session `idHex` in state error (its consumer died).
    void sessionFailed(const std::string& idHex, const std::string& reason);
    ManagerObject(const ManagerObject&) = delete;
    ManagerObject& operator=(const ManagerObject&) = delete;

private:
    void CreateSession(sdbus::Result<sdbus::ObjectPath>&& result, std::string name,
                       std::map<std::string, sdbus::Variant> options) override;
    void GetSession(sdbus::Result<sdbus::ObjectPath>&& result, std::string name) override;
    void ListSessions(sdbus::Result<std::vector<sdbus::ObjectPath>>&& result) override;
    void ListApplications(sdbus::Result<std::vector<sdbus::ObjectPath>>&& result) override;

    /// Makes the session (the caller was authorized) and its object.
    sdbus::ObjectPath create(const SessionRequest& request, uid_t owner);
    /// Asks (without interaction) whether `caller` holds `action`; runs
    /// `then(granted)` on the loop. Denials, challenges and polkit failures
    /// are "not granted".
    void holds(const auth::Caller& caller, auth::Action action, std::function<void(bool)> then);
    /// Answers `result` with list(caller uid, whether the caller holds
    /// `seesAll`, asked without interaction).
    void listVisible(sdbus::Result<std::vector<sdbus::ObjectPath>>&& result, auth::Action seesAll,
                     std::function<std::vector<sdbus::ObjectPath>(uid_t, bool)> list);
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
    auth::PolkitAuthority& authority_;
    const auth::ReadCallTracker& readers_;
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
    std::map<std::string, Entry> objects_; // by SessionId::hex()
    std::vector<Entry> retired_;
};

} // namespace tracectl
