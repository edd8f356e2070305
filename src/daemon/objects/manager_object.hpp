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

#include "common/event_loop.hpp"
#include "common/executor.hpp"
#include "common/lifetime.hpp"
#include "ip/ip_aggregations.hpp"
#include "objects/application_directory.hpp"
#include "objects/bus_services.hpp"
#include "objects/object_subtree.hpp"
#include "objects/session_object.hpp"
#include "relay/relay_session_opener.hpp"
#include "restart/session_store.hpp"
#include "save_load/load_plan.hpp"
#include "session/session_registry.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tracectl {

class ConsumerFdStore;

class Join;

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

    /// Keeps every session's state in `store` from now on (written at each
    /// change, removed at Destroy), and brings back the sessions it holds
    /// (restoreSessions()), taking over the consumers a previous daemon
    /// kept in `fdStore` (nullptr: none). Both outlive this object.
    /// `takenOver` (if given) once every takeover begun here has answered
    /// (at once if none did): what no session claimed may go then.
    void keepStateIn(const SessionStore& store, ConsumerFdStore* fdStore = nullptr,
                     std::function<void()> takenOver = nullptr);

    /// Auto-load at start: every session file of `directory`
    /// (save_load/auto_load.hpp) made into sessions of `owner`, each file all
    /// or nothing, without asking polkit (the file's owner is root or
    /// `owner`). What is refused, skipped, warned of and loaded is logged.
    /// Returns at once; the sessions appear as they are made.
    void autoLoad(const std::string& directory, uid_t owner);

    static const bus::Property<ManagerObject> kProperties[2];

private:
    using Pending = std::shared_ptr<bus::MethodReply>;
    static int onCreateSession(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onGetSession(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onListSessions(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onListApplications(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onListTracepoints(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onListTracepointsWithOptions(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onDefaultOutputPath(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onLoadSessions(sd_bus_message* m, void* userdata, sd_bus_error* error);
    // The ip provider's in-kernel aggregations (manager_ip_aggregation.cpp).
    static int onCreateIpAggregation(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onReadIpAggregation(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onCloseIpAggregation(sd_bus_message* m, void* userdata, sd_bus_error* error);
    /// CreateIpAggregation(a{sv} options) -> t: trace-kernel (polkit may ask
    /// an agent if `interactive`), then ip::IpAggregations::create() for the
    /// caller's connection.
    void createIpAggregation(const Pending& pending, auth::CallOptions options);
    /// ListTracepoints("kernel"): trace-kernel (polkit may ask an agent if
    /// `interactive`), then the kernel's list.
    void listTracepoints(const Pending& pending, const std::string& domain, bool interactive);

    void createSession(const Pending& pending, const std::string& name, auth::CallOptions options);
    void getSession(const Pending& pending, const std::string& name);

    // LoadSessions and auto-load (manager_load.cpp).
    /// A document's sessions, planned, and the warnings for what is left out.
    struct Loaded {
        std::vector<LoadPlan> plans;
        std::vector<std::string> warnings;
    };
    /// Reads `document` (every session, or only `only`). Throws
    /// tracectl::Error: InvalidArgument (not a session file, two sessions of
    /// one name, a session load_plan refuses), NoSuchSession (none, or
    /// none named `only`).
    /// lttng-load(1)'s --override-name (with `only`) and --override-url.
    struct LoadOverrides {
        std::optional<std::string> name;
        std::optional<std::string> url;
    };
    static Loaded readLoad(const std::string& document, const std::optional<std::string>& only,
                           const LoadOverrides& overrides = {});
    /// Manager.LoadSessions(s document, a{sv} options) -> (ao, as): authorized
    /// as CreateSession (trace-own; trace-kernel too for kernel channels),
    /// then loadPlans() as the caller.
    void loadSessions(const Pending& pending, const std::string& document,
                      auth::CallOptions options);
    using LoadDone = std::function<void(std::optional<Error>, std::vector<std::string> paths)>;
    struct LoadRun;
    /// Makes every session of `plans`, owned by `owner`, or none: checked
    /// as CreateSession checks (registry, output folders as the owner,
    /// relays), configured (channels, contexts, rules, trackers, schedule),
    /// then started where the file says so. On an error before the starts,
    /// the sessions made are destroyed again. `done` gets their paths.
    void loadPlans(std::vector<LoadPlan> plans, uid_t owner, bool allUsers, LoadDone done);
    /// loadPlans()' steps, back on the loop.
    void createLoaded(const std::shared_ptr<LoadRun>& run);
    void configureLoaded(Session& s, const LoadPlan& p, bool allUsers, const Join& gather);
    void startLoaded(const std::shared_ptr<LoadRun>& run);
    void rollBack(const LoadRun& run);

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
    /// Saves session `id`'s state (store_), if it still exists.
    void persist(const SessionId& id);
    /// Brings back every session store_ holds (state_restore.cpp): each
    /// with its id (so its D-Bus path), name, owner, configuration and
    /// rules. One that was created comes back created. One that had started
    /// comes back active or stopped, as it was, and its consumer (fdStore_)
    /// is taken over (Session::resume()); if that fails, it is in state
    /// error, with the reason. A document refused (store_, or an output folder its owner
    /// may not write: the check CreateSession makes) is logged and set aside.
    /// `takenOver` once every takeover begun answered.
    void restoreSessions(std::function<void()> takenOver);
    /// Session::resume() of restored `session`, which was `was` ("active",
    /// "stopped"); on failure the session fails, saying why. `answered`
    /// once it answered, either way.
    void resume(Session& session, const std::string& was, std::function<void()> answered);
    /// True for a session restoreSessions() brought back in error because
    /// it had started (its consumer not taken over).
    static bool leftInErrorByRestart(const Session& session);
    /// add()'s second half: the bus object of `session`, registered.
    std::string publish(Session& session);

    struct Entry {
        std::unique_ptr<Session> session; // set only once removed from the registry
        std::unique_ptr<SessionObject> object;
    };

    bus::BusServices& services_;
    SessionRegistry& registry_;
    ApplicationDirectory& apps_;
    EventLoop& loop_;
    std::map<std::string, Entry> objects_; // by SessionId::hex()
    std::vector<Entry> retired_;
    const SessionStore* store_ = nullptr;
    ConsumerFdStore* fdStore_ = nullptr;
    /// Runs the output folder checks, each in a child process as the
    /// session's owner (bounded, recording/output_folder.hpp), off the loop;
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
    /// The ip provider's in-kernel aggregations, each its caller connection's.
    ip::IpAggregations ipAggregations_{loop_};
    /// Last (gone first): polkit's answers and the checks' outcomes that
    /// come back once the manager is gone do nothing.
    Lifetime lifetime_;
};

} // namespace tracectl
