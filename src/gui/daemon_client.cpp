#include "daemon_client.hpp"

#include <algorithm>
#include <cli/variant_json.hpp>
#include <glibmm/main.h>
#include <manager_proxy.h>
#include <sdbus-c++/StandardInterfaces.h>
#include <session_proxy.h>
#include <set>
#include <utility>

namespace tracectl::gui {
namespace {

constexpr const char* bus_name = "org.tracectl.Tracing1";
constexpr const char* manager_path = "/org/tracectl/Tracing1";
constexpr const char* session_interface = org::tracectl::Tracing1::Session_proxy::INTERFACE_NAME;
constexpr const char* manager_interface = org::tracectl::Tracing1::Manager_proxy::INTERFACE_NAME;
constexpr const char* properties_interface = "org.freedesktop.DBus.Properties";

const std::string name_owner_rule =
    "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
    "member='NameOwnerChanged',arg0='org.tracectl.Tracing1'";

CallError call_error(const sdbus::Error& error) {
    return CallError{error.getName(), error.getMessage()};
}

std::unique_ptr<sdbus::IConnection> open_bus(const BusChoice& bus) {
    switch (bus.kind) {
    case BusChoice::Kind::user:
        return sdbus::createSessionBusConnection();
    case BusChoice::Kind::address:
        return sdbus::createSessionBusConnectionWithAddress(bus.address);
    case BusChoice::Kind::system:
        break;
    }
    return sdbus::createSystemBusConnection();
}

std::map<std::string, sdbus::Variant> interactive_options() {
    return {{"interactive", sdbus::Variant{true}}};
}

} // namespace

const char* method_name(SessionAction action) noexcept {
    switch (action) {
    case SessionAction::start:
        return "Start";
    case SessionAction::stop:
        return "Stop";
    case SessionAction::destroy:
        break;
    }
    return "Destroy";
}

/// /org/tracectl/Tracing1: the generated Manager proxy and the standard ObjectManager one.
class DaemonClient::ManagerProxy final
    : public sdbus::ProxyInterfaces<org::tracectl::Tracing1::Manager_proxy,
                                    sdbus::ObjectManager_proxy> {
public:
    ManagerProxy(sdbus::IConnection& connection, DaemonClient& client)
        : ProxyInterfaces(connection, bus_name, manager_path), client_(client) {
        registerProxy();
    }
    ~ManagerProxy() { unregisterProxy(); }
    ManagerProxy(const ManagerProxy&) = delete;
    ManagerProxy& operator=(const ManagerProxy&) = delete;
    ManagerProxy(ManagerProxy&&) = delete;
    ManagerProxy& operator=(ManagerProxy&&) = delete;

    using ProxyInterfaces::getProxy; // the asynchronous calls

private:
    void onInterfacesAdded(
        const sdbus::ObjectPath& path,
        const std::map<std::string, std::map<std::string, sdbus::Variant>>& interfaces) override {
        client_.on_interfaces_added(path, interfaces);
    }
    void onInterfacesRemoved(const sdbus::ObjectPath& path,
                             const std::vector<std::string>& interfaces) override {
        client_.on_interfaces_removed(path, interfaces);
    }

    DaemonClient& client_;
};

/// /org/tracectl/Tracing1/session/<id>: the generated Session proxy and the standard
/// Properties one, for the session's signals and its GetAll.
class DaemonClient::SessionProxy final
    : public sdbus::ProxyInterfaces<org::tracectl::Tracing1::Session_proxy,
                                    sdbus::Properties_proxy> {
public:
    SessionProxy(sdbus::IConnection& connection, const std::string& path, DaemonClient& client)
        : ProxyInterfaces(connection, bus_name, path), client_(client) {
        registerProxy();
    }
    ~SessionProxy() { unregisterProxy(); }
    SessionProxy(const SessionProxy&) = delete;
    SessionProxy& operator=(const SessionProxy&) = delete;
    SessionProxy(SessionProxy&&) = delete;
    SessionProxy& operator=(SessionProxy&&) = delete;

    using ProxyInterfaces::getProxy;

private:
    void onPropertiesChanged(const std::string& interface,
                             const std::map<std::string, sdbus::Variant>& changed,
                             const std::vector<std::string>& invalidated) override {
        client_.on_properties_changed(getObjectPath(), interface, changed, invalidated);
    }
    // Rotation and snapshot progress come with those actions (a later increment).
    void onSnapshotRecorded(const std::string&) override {}
    void onRotationCompleted(const std::string&) override {}
    void onRotationFailed(const std::string&, const std::string&) override {}

    DaemonClient& client_;
};

/// One Start/Stop/Destroy in flight: a proxy of its own, so that the reply comes even when
/// the session's object (and its SessionProxy) is gone first, as Destroy does.
struct DaemonClient::PendingCall {
    std::unique_ptr<sdbus::IProxy> proxy;
};

DaemonClient::DaemonClient(const BusChoice& bus, DaemonEvents events)
    : events_(std::move(events)), connection_(open_bus(bus)) {
    source_ = std::make_unique<BusSource>(*connection_, [this](const std::string& reason) {
        if (events_.bus_lost) {
            events_.bus_lost(reason);
        }
    });
    // Signals are unicast to connections that called the daemon: subscribe first, then call.
    name_owner_slot_ = connection_->addMatch(
        name_owner_rule, [this](sdbus::Message& message) { on_name_owner_changed(message); });
    manager_ = std::make_unique<ManagerProxy>(*connection_, *this);
    reload();
}

DaemonClient::~DaemonClient() {
    collect_idle_.disconnect();
    // Proxies before the connection they borrow (and their callbacks before `events_`).
    calls_.clear();
    finished_calls_.clear();
    retired_sessions_.clear();
    sessions_.clear();
    manager_.reset();
    name_owner_slot_.reset();
    source_.reset();
}

void DaemonClient::reload() {
    const std::uint64_t generation = ++generation_;
    manager_->getProxy()
        .callMethodAsync("ListSessions")
        .onInterface(manager_interface)
        .uponReplyInvoke([this, generation](const sdbus::Error* error,
                                            const std::vector<sdbus::ObjectPath>& paths) {
            if (generation != generation_) {
                return; // a newer reload, or the daemon left meanwhile
            }
            if (error != nullptr) {
                daemon_gone(error->getMessage());
                return;
            }
            on_sessions_listed(paths);
        });
}

void DaemonClient::on_sessions_listed(const std::vector<sdbus::ObjectPath>& paths) {
    const std::set<std::string> listed(paths.begin(), paths.end());
    for (auto it = sessions_.begin(); it != sessions_.end();) {
        if (listed.contains(it->first)) {
            ++it;
            continue;
        }
        const std::string path = it->first;
        it = sessions_.erase(it);
        if (events_.session_removed) {
            events_.session_removed(path);
        }
    }
    if (events_.presence) {
        events_.presence(true, {});
    }
    for (const sdbus::ObjectPath& path : paths) {
        track(path);
        fetch(path);
    }
}

DaemonClient::SessionProxy& DaemonClient::track(const std::string& path) {
    auto it = sessions_.find(path);
    if (it == sessions_.end()) {
        it = sessions_.emplace(path, std::make_unique<SessionProxy>(*connection_, path, *this))
                 .first;
    }
    return *it->second;
}

void DaemonClient::fetch(const std::string& path) {
    // Through the session's own proxy: if the session goes away first, its proxy goes with
    // it and the call is cancelled (the session is already reported removed).
    track(path)
        .getProxy()
        .callMethodAsync("GetAll")
        .onInterface(properties_interface)
        .withArguments(std::string(session_interface))
        .uponReplyInvoke([this, path](const sdbus::Error* error,
                                      const std::map<std::string, sdbus::Variant>& properties) {
            if (error != nullptr) {
                // Destroyed meanwhile (UnknownObject), or not ours to see (AccessDenied).
                // Its proxy goes later: sdbus-c++ still uses it after this callback.
                if (auto it = sessions_.find(path); it != sessions_.end()) {
                    retired_sessions_.push_back(std::move(it->second));
                    sessions_.erase(it);
                    schedule_collect();
                }
                if (events_.session_removed) {
                    events_.session_removed(path);
                }
                return;
            }
            try {
                if (events_.session) {
                    events_.session(path, cli::to_property_map(properties));
                }
            } catch (const sdbus::Error&) {
                // A value that does not convert: the next PropertiesChanged brings it again.
            }
        });
}

void DaemonClient::on_interfaces_added(
    const std::string& path,
    const std::map<std::string, std::map<std::string, sdbus::Variant>>& interfaces) {
    const auto it = interfaces.find(session_interface);
    if (it == interfaces.end()) {
        return; // an application object: not shown by this increment
    }
    track(path);
    try {
        if (events_.session) {
            events_.session(path, cli::to_property_map(it->second));
        }
    } catch (const sdbus::Error&) {
        fetch(path);
    }
}

void DaemonClient::on_interfaces_removed(const std::string& path,
                                         const std::vector<std::string>& interfaces) {
    if (std::find(interfaces.begin(), interfaces.end(), session_interface) == interfaces.end()) {
        return;
    }
    sessions_.erase(path); // a different proxy's callback runs: this one may go now
    if (events_.session_removed) {
        events_.session_removed(path);
    }
}

void DaemonClient::on_properties_changed(const std::string& path, const std::string& interface,
                                         const std::map<std::string, sdbus::Variant>& changed,
                                         const std::vector<std::string>& invalidated) {
    if (interface != session_interface) {
        return;
    }
    try {
        if (events_.session && !changed.empty()) {
            events_.session(path, cli::to_property_map(changed));
        }
    } catch (const sdbus::Error&) {
        fetch(path);
        return;
    }
    if (!invalidated.empty()) {
        fetch(path); // values announced without their content
    }
}

void DaemonClient::on_name_owner_changed(sdbus::Message& message) {
    std::string name;
    std::string old_owner;
    std::string new_owner;
    try {
        message >> name >> old_owner >> new_owner;
    } catch (const sdbus::Error&) {
        return;
    }
    if (name != bus_name) {
        return;
    }
    if (new_owner.empty()) {
        daemon_gone({});
    } else {
        reload(); // a new daemon: list again (which also subscribes us to its signals)
    }
}

void DaemonClient::daemon_gone(const std::string& reason) {
    ++generation_;
    sessions_.clear();
    if (events_.sessions_cleared) {
        events_.sessions_cleared();
    }
    if (events_.presence) {
        events_.presence(false, reason);
    }
}

void DaemonClient::create_session(const std::string& name,
                                  std::map<std::string, sdbus::Variant> options,
                                  CreateReply reply) {
    options.insert_or_assign("interactive", sdbus::Variant{true});
    manager_->getProxy()
        .callMethodAsync("CreateSession")
        .onInterface(manager_interface)
        .withArguments(name, options)
        .uponReplyInvoke(
            [reply = std::move(reply)](const sdbus::Error* error, const sdbus::ObjectPath& path) {
                if (error != nullptr) {
                    reply({}, call_error(*error));
                } else {
                    reply(path, std::nullopt);
                }
            });
}

void DaemonClient::act(SessionAction action, const std::string& path, ActionReply reply) {
    const std::uint64_t id = next_call_++;
    auto call = std::make_unique<PendingCall>();
    call->proxy = sdbus::createProxy(*connection_, bus_name, path);
    call->proxy->callMethodAsync(method_name(action))
        .onInterface(session_interface)
        .withArguments(interactive_options())
        .uponReplyInvoke([this, id, reply = std::move(reply)](const sdbus::Error* error) {
            if (error != nullptr) {
                reply(call_error(*error));
            } else {
                reply(std::nullopt);
            }
            // Its proxy is still in use by sdbus-c++ until this returns: drop it later.
            if (auto it = calls_.find(id); it != calls_.end()) {
                finished_calls_.push_back(std::move(it->second));
                calls_.erase(it);
                schedule_collect();
            }
        });
    calls_.emplace(id, std::move(call));
}

void DaemonClient::schedule_collect() {
    if (!collect_idle_.connected()) {
        collect_idle_ = Glib::signal_idle().connect([this] {
            finished_calls_.clear();
            retired_sessions_.clear();
            return false;
        });
    }
}

} // namespace tracectl::gui
