#include "daemon_client.hpp"

#include <algorithm>
#include <cli/variant_json.hpp>
#include <client/bus_names.hpp>
#include <client/call_error.hpp>
#include <client/proxies.hpp>
#include <glibmm/main.h>
#include <sdbus-c++/StandardInterfaces.h>
#include <set>
#include <utility>

namespace tracectl::gui {
namespace {

using client::call_error;
using client::bus::application_interface;
using client::bus::manager_interface;
using client::bus::properties_interface;
using client::bus::session_interface;
constexpr const char* bus_name = client::bus::name;

using client::bus::name_owner_rule;

} // namespace

DaemonClient::DaemonClient(const BusChoice& bus, DaemonEvents events)
    : events_(std::move(events)), connection_(client::open_bus(bus)) {
    source_ = std::make_unique<BusSource>(*connection_, [this](const std::string& reason) {
        if (events_.bus_lost) {
            events_.bus_lost(reason);
        }
    });
    // Signals are unicast to connections that called the daemon: subscribe first, then call.
    name_owner_slot_ = connection_->addMatch(
        name_owner_rule, [this](sdbus::Message& message) { on_name_owner_changed(message); });
    client::ObjectSignals objects;
    objects.interfaces_added = [this](const std::string& path, const auto& interfaces) {
        on_interfaces_added(path, interfaces);
    };
    objects.interfaces_removed = [this](const std::string& path, const auto& interfaces) {
        on_interfaces_removed(path, interfaces);
    };
    manager_ = std::make_unique<ManagerProxy>(*connection_, std::move(objects));
    reload();
}

DaemonClient::~DaemonClient() {
    collect_idle_.disconnect();
    for (sigc::connection& retry : retries_) {
        retry.disconnect();
    }
    // Proxies before the connection they borrow (and their callbacks before `events_`).
    calls_.clear();
    finished_calls_.clear();
    retired_sessions_.clear();
    sessions_.clear();
    retired_applications_.clear();
    applications_.clear();
    manager_.reset();
    name_owner_slot_.reset();
    source_.reset();
}

sdbus::IProxy& DaemonClient::manager_proxy() {
    return manager_->getProxy();
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
            list_applications(generation);
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

client::SessionSignals DaemonClient::session_signals(const std::string& path) {
    client::SessionSignals signals;
    signals.properties_changed = [this, path](const std::string& interface, const auto& changed,
                                              const auto& invalidated) {
        on_properties_changed(path, interface, changed, invalidated);
    };
    signals.snapshot_recorded = [this, path](const std::string& folder) {
        on_chunk_signal(path, ChunkEvent::snapshot_recorded, folder, {});
    };
    signals.rotation_completed = [this, path](const std::string& folder) {
        on_chunk_signal(path, ChunkEvent::rotation_completed, folder, {});
    };
    signals.rotation_failed = [this, path](const std::string& folder, const std::string& reason) {
        on_chunk_signal(path, ChunkEvent::rotation_failed, folder, reason);
    };
    return signals;
}

DaemonClient::SessionProxy& DaemonClient::track(const std::string& path) {
    auto it = sessions_.find(path);
    if (it == sessions_.end()) {
        it = sessions_
                 .emplace(path,
                          std::make_unique<SessionProxy>(*connection_, path, session_signals(path)))
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
    if (const auto app = interfaces.find(application_interface); app != interfaces.end()) {
        add_application(path, app->second);
        return;
    }
    const auto it = interfaces.find(session_interface);
    if (it == interfaces.end()) {
        return;
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
    if (std::find(interfaces.begin(), interfaces.end(), application_interface) !=
        interfaces.end()) {
        forget_application(path);
        return;
    }
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
    for (sigc::connection& retry : retries_) {
        retry.disconnect();
    }
    retries_.clear();
    applications_.clear();
    if (events_.sessions_cleared) {
        events_.sessions_cleared();
    }
    if (events_.applications_cleared) {
        events_.applications_cleared();
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

void DaemonClient::on_chunk_signal(const std::string& session, ChunkEvent event,
                                   const std::string& path, const std::string& reason) {
    if (events_.chunk) {
        events_.chunk(session, event, path, reason);
    }
}

void DaemonClient::schedule_collect() {
    if (!collect_idle_.connected()) {
        collect_idle_ = Glib::signal_idle().connect([this] {
            finished_calls_.clear();
            retired_sessions_.clear();
            retired_applications_.clear();
            return false;
        });
    }
}

} // namespace tracectl::gui
