// The GUI's only way to tracectld: one bus connection (run by a BusSource in the GTK main
// loop), the generated proxies of dbus/*.xml, and the signals that keep the window current:
// ObjectManager.InterfacesAdded/InterfacesRemoved on the Manager, PropertiesChanged on each
// session, NameOwnerChanged of org.tracectl.Tracing1. Every call is asynchronous; every
// callback runs on the GTK thread. The client holds no session state of its own beyond the
// proxies: it hands what the daemon says to its Events.
#pragma once

#include "bus_source.hpp"
#include "command_line.hpp"

#include <cli/property_map.hpp>
#include <client/call_error.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sdbus-c++/sdbus-c++.h>
#include <sigc++/connection.h>
#include <string>
#include <utility>
#include <vector>

namespace tracectl::client {
class ObservedManagerProxy;
class SessionProxy;
struct SessionSignals;
} // namespace tracectl::client

namespace tracectl::gui {

/// A method call that failed (client/call_error.hpp).
using CallError = client::CallError;

/// One tracepoint an application offers: "provider:event" and its log level as lttng-ust
/// numbers it (0 TRACE_EMERG ... 14 TRACE_DEBUG).
struct Tracepoint {
    std::string name;
    int loglevel = 0;
    bool operator==(const Tracepoint&) const = default;
};

/// A registered LTTng-UST application (org.tracectl.Tracing1.Application) and its tracepoints.
struct ApplicationInfo {
    std::string path; ///< /org/tracectl/Tracing1/application/<pid>
    std::uint32_t pid = 0;
    std::uint32_t uid = 0;
    std::string name;                    ///< the process name it registered with
    std::vector<Tracepoint> tracepoints; ///< as Application.ListTracepoints answered
    std::optional<CallError> error;      ///< ListTracepoints failed, as the daemon said
};

/// A kernel tracepoint, as Manager.ListTracepoints("kernel") lists it (tracefs names).
struct KernelTracepoint {
    std::string system;
    std::string event;
};

/// What a Session signal says about a trace chunk.
enum class ChunkEvent { RotationCompleted, RotationFailed, SnapshotRecorded };

/// What the daemon tells the window. Each callback may be empty.
struct DaemonEvents {
    /// The daemon answered (present = true) or is gone / not reachable (false, with the
    /// reason: the bus's error message, or "" when its bus name was released).
    std::function<void(bool present, const std::string& reason)> presence;
    /// A session appeared or changed: `properties` holds the Session-interface properties
    /// that are known now (all of them after GetAll or InterfacesAdded; only the changed ones
    /// after PropertiesChanged).
    std::function<void(const std::string& path, const cli::PropertyMap& properties)> session;
    /// The session at `path` is gone (destroyed, or no longer visible to us).
    std::function<void(const std::string& path)> sessionRemoved;
    /// Every session is gone (the daemon left, or a reload replaces them all).
    std::function<void()> sessionsCleared;
    /// An application registered, or its tracepoints changed (they are listed again in the
    /// app's first seconds).
    std::function<void(const ApplicationInfo& application)> application;
    /// The application at `path` is gone (it exited or unregistered).
    std::function<void(const std::string& path)> applicationRemoved;
    /// Every application is gone (the daemon left).
    std::function<void()> applicationsCleared;
    /// The session at `session` signalled RotationCompleted(path), RotationFailed(path,
    /// reason) or SnapshotRecorded(path).
    std::function<void(const std::string& session, ChunkEvent event, const std::string& path,
                       const std::string& reason)>
        chunk;
    /// The connection to the bus itself was lost (the bus daemon went away): nothing more
    /// will come. `reason` is sd-bus's message.
    std::function<void(const std::string& reason)> busLost;
};

/// Called with the new session's object path, or with the error.
using CreateReply = std::function<void(const std::string& path, const std::optional<CallError>&)>;
/// Called with nothing on success, or with the error.
using ActionReply = std::function<void(const std::optional<CallError>&)>;

/// Called with the path the daemon answered (Rotate's archive folder, RecordSnapshot's
/// snapshot folder), or with the error.
using PathReply = std::function<void(const std::string& path, const std::optional<CallError>&)>;
/// Called with Manager.ListTracepoints("kernel")'s answer, or with the error.
using KernelTracepointsReply =
    std::function<void(const std::vector<KernelTracepoint>&, const std::optional<CallError>&)>;

/// The options of an event rule (Session.EnableEvents), as typed; the daemon checks them.
struct RuleOptions {
    std::string loglevel; ///< "" = every level; else a name ("TRACE_WARNING") or 0-14
    std::string filter;   ///< "" = none; else an LTTng filter expression
};

/// The session actions without an answer but success.
enum class SessionAction { Start, Stop, Destroy };

/// The D-Bus method name of `action` ("Start", "Stop", "Destroy").
const char* methodName(SessionAction action) noexcept;

class DaemonClient {
public:
    /// Connects to `bus`, subscribes to the signals and lists the sessions (the answer comes
    /// through `events`). Throws sdbus::Error when the bus cannot be reached.
    DaemonClient(const BusChoice& bus, DaemonEvents events);
    ~DaemonClient();
    DaemonClient(const DaemonClient&) = delete;
    DaemonClient& operator=(const DaemonClient&) = delete;
    DaemonClient(DaemonClient&&) = delete;
    DaemonClient& operator=(DaemonClient&&) = delete;

    /// Lists the sessions again (Manager.ListSessions, then Properties.GetAll of each): the
    /// sessions no longer listed are removed, the others updated. On a bus where tracectld is
    /// D-Bus activatable, this starts it.
    void reload();

    /// Manager.CreateSession(name, options). "interactive" = true is added to `options`, so
    /// that polkit may ask the desktop's authentication agent.
    void createSession(const std::string& name, std::map<std::string, sdbus::Variant> options,
                       CreateReply reply);

    /// Session.Start/Stop/Destroy({"interactive": true}) on the session at `path`. The reply
    /// comes even when the session's object is gone by then (Destroy).
    void act(SessionAction action, const std::string& path, ActionReply reply);

    /// Session.Rotate({"interactive": true}): `reply` gets the archive folder the closed chunk
    /// goes to; RotationCompleted or RotationFailed (DaemonEvents::chunk) follows.
    void rotate(const std::string& path, PathReply reply);

    /// Session.RecordSnapshot({"interactive": true}): `reply` gets the snapshot's folder.
    void recordSnapshot(const std::string& path, PathReply reply);

    /// Session.EnableEvents(domain ("ust" or "kernel"), channel ("" = channel0, made by the
    /// daemon if the domain has no channel yet), pattern, {"loglevel" when given, "filter"
    /// when given, "interactive": true}).
    void enableEvents(const std::string& path, const std::string& domain,
                      const std::string& channel, const std::string& pattern,
                      const RuleOptions& options, ActionReply reply);

    /// Session.DisableEvents(domain, channel, pattern, {"interactive": true}).
    void disableEvents(const std::string& path, const std::string& domain,
                       const std::string& channel, const std::string& pattern, ActionReply reply);

    /// Manager.ListTracepointsWithOptions("kernel", {"interactive": true}): polkit may ask the
    /// desktop's authentication agent for trace-kernel.
    void listKernelTracepoints(KernelTracepointsReply reply);

    /// Manager.DefaultOutputPath(name): the folder a session of ours named `name` created now
    /// without an output folder would be written to.
    void defaultOutputPath(const std::string& name, PathReply reply);

private:
    using ManagerProxy = client::ObservedManagerProxy;
    using SessionProxy = client::SessionProxy;
    /// One call in flight on a session: a proxy of its own, so that the reply comes even when
    /// the session's object (and its SessionProxy) is gone first, as Destroy does.
    struct PendingCall {
        std::unique_ptr<sdbus::IProxy> proxy;
    };
    /// Starts a call on the object at `path` through a proxy of its own; returns its id and
    /// the proxy to call on. The reply's callback must call end_call(id).
    std::pair<std::uint64_t, sdbus::IProxy&> beginCall(const std::string& path);
    /// Session.METHOD({"interactive": true}) answering a folder (Rotate, RecordSnapshot).
    void callForPath(const std::string& path, const char* method, PathReply reply);
    /// Drops the proxy of call `id` (at the next idle turn: sdbus-c++ still uses it).
    void endCall(std::uint64_t id);

    /// The Manager object's proxy, for calls made outside daemon_client.cpp.
    sdbus::IProxy& managerProxy();
    void onNameOwnerChanged(sdbus::Message& message);
    void onInterfacesAdded(
        const std::string& path,
        const std::map<std::string, std::map<std::string, sdbus::Variant>>& interfaces);
    void onInterfacesRemoved(const std::string& path, const std::vector<std::string>& interfaces);
    void onPropertiesChanged(const std::string& path, const std::string& interface,
                             const std::map<std::string, sdbus::Variant>& changed,
                             const std::vector<std::string>& invalidated);
    void onSessionsListed(const std::vector<sdbus::ObjectPath>& paths);
    void onChunkSignal(const std::string& session, ChunkEvent event, const std::string& path,
                       const std::string& reason);
    /// Manager.ListApplications, then each one's properties and tracepoints.
    void listApplications(std::uint64_t generation);
    /// The application at `path` is known with `properties`: lists its tracepoints.
    void addApplication(const std::string& path,
                        const std::map<std::string, sdbus::Variant>& properties);
    /// Properties.GetAll of the application at `path`, then add_application.
    void fetchApplication(const std::string& path);
    /// Application.ListTracepoints of `application`, asked again `retries_left` times a second
    /// apart (an app may register before its probes' constructors ran); reported when it
    /// changed.
    void listTracepoints(ApplicationInfo application, int retriesLeft);
    void forgetApplication(const std::string& path);
    void daemonGone(const std::string& reason);
    /// The signals of the session at `path`, forwarded to on_properties_changed and
    /// on_chunk_signal.
    client::SessionSignals sessionSignals(const std::string& path);
    /// Makes (or keeps) the proxy of the session at `path`; returns it.
    SessionProxy& track(const std::string& path);
    /// Properties.GetAll of the session at `path`, reported through events_.session.
    void fetch(const std::string& path);
    /// Drops, at the next idle turn of the loop, the proxies put aside in finished_calls_ and
    /// retired_sessions_ (never from inside their own callback: sdbus-c++ still uses a proxy
    /// after calling it).
    void scheduleCollect();

    DaemonEvents events_;
    std::unique_ptr<sdbus::IConnection> connection_;
    std::unique_ptr<BusSource> source_;
    std::unique_ptr<ManagerProxy> manager_;
    sdbus::Slot nameOwnerSlot_;
    std::map<std::string, std::unique_ptr<SessionProxy>> sessions_;
    std::map<std::string, std::unique_ptr<sdbus::IProxy>> applications_;
    std::vector<std::unique_ptr<sdbus::IProxy>> retiredApplications_;
    std::map<std::uint64_t, std::unique_ptr<PendingCall>> calls_;
    std::vector<std::unique_ptr<PendingCall>> finishedCalls_;
    std::vector<std::unique_ptr<SessionProxy>> retiredSessions_;
    std::vector<sigc::connection> retries_; ///< pending ListTracepoints retries
    std::uint64_t nextCall_ = 0;
    /// Bumped by reload() and when the daemon leaves: older ListSessions replies are ignored.
    std::uint64_t generation_ = 0;
    sigc::connection collectIdle_; ///< the pending collect_finished_calls(), if any
};

} // namespace tracectl::gui
