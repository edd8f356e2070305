// The org.tracectl.Tracing1.Manager object (/org/tracectl/Tracing1), which
// is also the ObjectManager of every session and app object, and the owner
// of the session objects: it serves them to each caller as far as that
// caller may see them (a fallback vtable with a find callback and a node
// enumerator, sd_bus_add_fallback_vtable(3), sd_bus_add_node_enumerator(3)).
//
// Threads: the main loop owns it and every session object. The one job it
// hands off, CreateSession's output folder check, runs on folderChecks_
// with copies of what it needs and posts its outcome back to the loop.
#pragma once

#include "bus/bus_services.hpp"
#include "bus/object_subtree.hpp"
#include "common/event_loop.hpp"
#include "common/executor.hpp"
#include "objects/application_directory.hpp"
#include "objects/session_object.hpp"
#include "relay/relay_session_opener.hpp"
#include "session/session_registry.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tracectl {

class ManagerObject final {
public:
    /// Registers the manager, the object manager and the session vtable on
    /// services.bus. Every reference must outlive this object.
    ManagerObject(bus::BusServices& services, SessionRegistry& registry, ApplicationDirectory& apps,
                  EventLoop& loop);
    ~ManagerObject();
    ManagerObject(const ManagerObject&) = delete;
    ManagerObject& operator=(const ManagerObject&) = delete;

    /// Removes every session object (InterfacesRemoved each), for a clean
    /// exit while the bus name is still owned.
    void retireAll();

    /// Puts the session `idHex` in state error (its consumer died, stopped
    /// answering or refused a request: the tracer says which in `reason`).
    void sessionFailed(const std::string& idHex, const std::string& reason);
    /// The tracer counted `bytes` of ring buffers for session `idHex`.
    void sessionBufferSize(const std::string& idHex, uint64_t bytes);
    /// Domain `domain` of session `idHex` reports new figures.
    void sessionStatistics(const std::string& idHex, const std::string& domain,
                           const DomainStatistics& statistics);

    static const bus::Property<ManagerObject> kProperties[2];

private:
    using Pending = std::shared_ptr<bus::MethodReply>;
    static int onCreateSession(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onGetSession(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onListSessions(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onListApplications(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onListTracepoints(sd_bus_message* m, void* userdata, sd_bus_error* error);
    /// ListTracepoints("kernel"): trace-kernel, then the kernel's list.
    void ListTracepoints(const Pending& pending, const std::string& domain);

    void CreateSession(const Pending& pending, const std::string& name, auth::CallOptions options);
    void GetSession(const Pending& pending, const std::string& name);

    /// Makes the session (the caller was authorized) and its object, once
    /// its output folder was checked as `owner` (on folderChecks_): answers
    /// `pending` with its path, or the error.
    void create(const Pending& pending, const SessionRequest& request, uid_t owner);
    /// create()'s second half, back on the loop.
    std::string add(SessionRegistry::Plan plan);
    /// Whether `caller` holds `action`: the answer cached for its connection
    /// (PolkitAuthority::cachedForReading()), else polkitd asked without
    /// interaction; runs `then(granted)` on the loop. Denials, challenges
    /// and polkit failures are "not granted".
    void holds(const auth::Caller& caller, auth::Action action, std::function<void(bool)> then);
    /// Answers `pending` with list(caller uid, whether the caller holds
    /// `seesAll`, asked without interaction).
    void listVisible(const Pending& pending, auth::Action seesAll,
                     std::function<std::vector<std::string>(uid_t, bool)> list);
    /// The session object at `path`, if any.
    SessionObject* objectAt(const std::string& path) const;

    /// Unlinks a destroyed session now; frees it and its object on the next
    /// loop iteration (the call that destroyed it is still running).
    void destroySession(const SessionId& id);

    struct Entry {
        std::unique_ptr<Session> session; // set only once removed from the registry
        std::unique_ptr<SessionObject> object;
    };

    bus::BusServices& services_;
    SessionRegistry& registry_;
    ApplicationDirectory& apps_;
    EventLoop& loop_;
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
    std::map<std::string, Entry> objects_; // by SessionId::hex()
    std::vector<Entry> retired_;
    /// Runs the output folder checks, each in a child process as the
    /// session's owner (bounded, tracing/output_folder.hpp), off the loop;
    /// owns nothing but the copies its jobs hold.
    Executor folderChecks_{1, "tc-foldercheck"};
    /// CreateSession's relay probes (network sessions), each bounded by
    /// kRelayTimeout per step; several at once, so that one relay that
    /// stalls does not hold up the others' creations.
    Executor relayProbes_{kRelayThreads, "tc-relayprobe"};
    std::vector<sd_bus_vtable> managerVtable_;
    bus::SlotPtr managerSlot_;
    bus::SlotPtr objectManagerSlot_;
    /// Serves every session object; after objects_, so it goes first.
    bus::ObjectSubtree<SessionObject> sessions_;
};

} // namespace tracectl
