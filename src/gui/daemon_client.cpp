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

using client::callError;
using client::bus::kApplicationInterface;
using client::bus::kManagerInterface;
using client::bus::kPropertiesInterface;
using client::bus::kSessionInterface;
constexpr const char* kBusName = client::bus::kName;

using client::bus::kNameOwnerRule;

} // namespace

DaemonClient::DaemonClient(const BusChoice& bus, DaemonEvents events)
    : events_(std::move(events)), connection_(client::openBus(bus)) {
    source_ = std::make_unique<BusSource>(*connection_, [this](const std::string& reason) {
        if (events_.busLost) {
            events_.busLost(reason);
        }
    });
    // Signals are unicast to connections that called the daemon: subscribe first, then call.
    nameOwnerSlot_ = connection_->addMatch(
        kNameOwnerRule, [this](sdbus::Message& message) { onNameOwnerChanged(message); });
    client::ObjectSignals objects;
    objects.interfacesAdded = [this](const std::string& path, const auto& interfaces) {
        onInterfacesAdded(path, interfaces);
    };
    objects.interfacesRemoved = [this](const std::string& path, const auto& interfaces) {
        onInterfacesRemoved(path, interfaces);
    };
    manager_ = std::make_unique<ManagerProxy>(*connection_, std::move(objects));
    reload();
}

DaemonClient::~DaemonClient() {
    collectIdle_.disconnect();
    for (sigc::connection& retry : retries_) {
        retry.disconnect();
    }
    // Proxies before the connection they borrow (and their callbacks before `events_`).
    calls_.clear();
    finishedCalls_.clear();
    retiredSessions_.clear();
    sessions_.clear();
    retiredApplications_.clear();
    applications_.clear();
    manager_.reset();
    nameOwnerSlot_.reset();
    source_.reset();
}

sdbus::IProxy& DaemonClient::managerProxy() {
    return manager_->getProxy();
}

void DaemonClient::reload() {
    const std::uint64_t generation = ++generation_;
    manager_->getProxy()
        .callMethodAsync("ListSessions")
        .onInterface(kManagerInterface)
        .uponReplyInvoke([this, generation](const sdbus::Error* error,
                                            const std::vector<sdbus::ObjectPath>& paths) {
            if (generation != generation_) {
                return; // a newer reload, or the daemon left meanwhile
            }
            if (error != nullptr) {
                daemonGone(error->getMessage());
                return;
            }
            onSessionsListed(paths);
            listApplications(generation);
        });
}

void DaemonClient::onSessionsListed(const std::vector<sdbus::ObjectPath>& paths) {
    const std::set<std::string> listed(paths.begin(), paths.end());
    for (auto it = sessions_.begin(); it != sessions_.end();) {
        if (listed.contains(it->first)) {
            ++it;
            continue;
        }
        const std::string path = it->first;
        it = sessions_.erase(it);
        if (events_.sessionRemoved) {
            events_.sessionRemoved(path);
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

client::SessionSignals DaemonClient::sessionSignals(const std::string& path) {
    client::SessionSignals signals;
    signals.propertiesChanged = [this, path](const std::string& interface, const auto& changed,
                                             const auto& invalidated) {
        onPropertiesChanged(path, interface, changed, invalidated);
    };
    signals.snapshotRecorded = [this, path](const std::string& folder) {
        onChunkSignal(path, ChunkEvent::SnapshotRecorded, folder, {});
    };
    signals.rotationCompleted = [this, path](const std::string& folder) {
        onChunkSignal(path, ChunkEvent::RotationCompleted, folder, {});
    };
    signals.rotationFailed = [this, path](const std::string& folder, const std::string& reason) {
        onChunkSignal(path, ChunkEvent::RotationFailed, folder, reason);
    };
    return signals;
}

DaemonClient::SessionProxy& DaemonClient::track(const std::string& path) {
    auto it = sessions_.find(path);
    if (it == sessions_.end()) {
        it = sessions_
                 .emplace(path,
                          std::make_unique<SessionProxy>(*connection_, path, sessionSignals(path)))
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
        .onInterface(kPropertiesInterface)
        .withArguments(std::string(kSessionInterface))
        .uponReplyInvoke([this, path](const sdbus::Error* error,
                                      const std::map<std::string, sdbus::Variant>& properties) {
            if (error != nullptr) {
                // Destroyed meanwhile (UnknownObject), or not ours to see (AccessDenied).
                // Its proxy goes later: sdbus-c++ still uses it after this callback.
                if (auto it = sessions_.find(path); it != sessions_.end()) {
                    retiredSessions_.push_back(std::move(it->second));
                    sessions_.erase(it);
                    scheduleCollect();
                }
                if (events_.sessionRemoved) {
                    events_.sessionRemoved(path);
                }
                return;
            }
            try {
                if (events_.session) {
                    events_.session(path, cli::toPropertyMap(properties));
                }
            } catch (const sdbus::Error&) {
                // A value that does not convert: the next PropertiesChanged brings it again.
            }
        });
}

void DaemonClient::onInterfacesAdded(
    const std::string& path,
    const std::map<std::string, std::map<std::string, sdbus::Variant>>& interfaces) {
    if (const auto app = interfaces.find(kApplicationInterface); app != interfaces.end()) {
        addApplication(path, app->second);
        return;
    }
    const auto it = interfaces.find(kSessionInterface);
    if (it == interfaces.end()) {
        return;
    }
    track(path);
    try {
        if (events_.session) {
            events_.session(path, cli::toPropertyMap(it->second));
        }
    } catch (const sdbus::Error&) {
        fetch(path);
    }
}

void DaemonClient::onInterfacesRemoved(const std::string& path,
                                       const std::vector<std::string>& interfaces) {
    if (std::find(interfaces.begin(), interfaces.end(), kApplicationInterface) !=
        interfaces.end()) {
        forgetApplication(path);
        return;
    }
    if (std::find(interfaces.begin(), interfaces.end(), kSessionInterface) == interfaces.end()) {
        return;
    }
    sessions_.erase(path); // a different proxy's callback runs: this one may go now
    if (events_.sessionRemoved) {
        events_.sessionRemoved(path);
    }
}

void DaemonClient::onPropertiesChanged(const std::string& path, const std::string& interface,
                                       const std::map<std::string, sdbus::Variant>& changed,
                                       const std::vector<std::string>& invalidated) {
    if (interface != kSessionInterface) {
        return;
    }
    try {
        if (events_.session && !changed.empty()) {
            events_.session(path, cli::toPropertyMap(changed));
        }
    } catch (const sdbus::Error&) {
        fetch(path);
        return;
    }
    if (!invalidated.empty()) {
        fetch(path); // values announced without their content
    }
}

void DaemonClient::onNameOwnerChanged(sdbus::Message& message) {
    std::string name;
    std::string oldOwner;
    std::string newOwner;
    try {
        message >> name >> oldOwner >> newOwner;
    } catch (const sdbus::Error&) {
        return;
    }
    if (name != kBusName) {
        return;
    }
    if (newOwner.empty()) {
        daemonGone({});
    } else {
        reload(); // a new daemon: list again (which also subscribes us to its signals)
    }
}

void DaemonClient::daemonGone(const std::string& reason) {
    ++generation_;
    sessions_.clear();
    for (sigc::connection& retry : retries_) {
        retry.disconnect();
    }
    retries_.clear();
    applications_.clear();
    if (events_.sessionsCleared) {
        events_.sessionsCleared();
    }
    if (events_.applicationsCleared) {
        events_.applicationsCleared();
    }
    if (events_.presence) {
        events_.presence(false, reason);
    }
}

void DaemonClient::createSession(const std::string& name,
                                 std::map<std::string, sdbus::Variant> options, CreateReply reply) {
    options.insert_or_assign("interactive", sdbus::Variant{true});
    manager_->getProxy()
        .callMethodAsync("CreateSession")
        .onInterface(kManagerInterface)
        .withArguments(name, options)
        .uponReplyInvoke(
            [reply = std::move(reply)](const sdbus::Error* error, const sdbus::ObjectPath& path) {
                if (error != nullptr) {
                    reply({}, callError(*error));
                } else {
                    reply(path, std::nullopt);
                }
            });
}

void DaemonClient::onChunkSignal(const std::string& session, ChunkEvent event,
                                 const std::string& path, const std::string& reason) {
    if (events_.chunk) {
        events_.chunk(session, event, path, reason);
    }
}

void DaemonClient::scheduleCollect() {
    if (!collectIdle_.connected()) {
        collectIdle_ = Glib::signal_idle().connect([this] {
            finishedCalls_.clear();
            retiredSessions_.clear();
            retiredApplications_.clear();
            return false;
        });
    }
}

} // namespace tracectl::gui
