// DaemonClient: the registered applications and their tracepoints, for the event tree.
// Manager.ListApplications when the daemon is (re)listed, ObjectManager.InterfacesAdded and
// InterfacesRemoved of org.tracectl.Tracing1.Application as apps come and go, and each app's
// Application.ListTracepoints.
#include "daemon_client.hpp"

#include <client/bus_names.hpp>
#include <client/call_error.hpp>
#include <glibmm/main.h>
#include <sdbus-c++/sdbus-c++.h>

namespace tracectl::gui {

namespace bus = client::bus;
namespace {

/// How often, and how far apart, an app's tracepoints are listed again after it registered:
/// an app may register before its probe providers' constructors ran (they come in its first
/// moments), and the daemon has no signal for tracepoints an app gains.
constexpr int kTracepointRelists = 3;
constexpr unsigned kTracepointRelistMs = 1000;

template <typename T>
T valueOr(const std::map<std::string, sdbus::Variant>& properties, const std::string& key,
          T fallback) {
    const auto it = properties.find(key);
    if (it == properties.end()) {
        return fallback;
    }
    try {
        return it->second.get<T>();
    } catch (const sdbus::Error&) {
        return fallback;
    }
}

} // namespace

void DaemonClient::listApplications(std::uint64_t generation) {
    managerProxy()
        .callMethodAsync("ListApplications")
        .onInterface(bus::kManagerInterface)
        .uponReplyInvoke([this, generation](const sdbus::Error* error,
                                            const std::vector<sdbus::ObjectPath>& paths) {
            if (generation != generation_ || error != nullptr) {
                return; // the daemon left or was listed again meanwhile
            }
            for (const sdbus::ObjectPath& path : paths) {
                if (!applications_.contains(path)) {
                    fetchApplication(path);
                }
            }
        });
}

void DaemonClient::fetchApplication(const std::string& path) {
    auto& proxy =
        *applications_.insert_or_assign(path, sdbus::createProxy(*connection_, bus::kName, path))
             .first->second;
    proxy.callMethodAsync("GetAll")
        .onInterface(bus::kPropertiesInterface)
        .withArguments(std::string(bus::kApplicationInterface))
        .uponReplyInvoke([this, path](const sdbus::Error* error,
                                      const std::map<std::string, sdbus::Variant>& properties) {
            if (error != nullptr) {
                forgetApplication(path); // gone meanwhile, or not ours to see
                return;
            }
            addApplication(path, properties);
        });
}

void DaemonClient::addApplication(const std::string& path,
                                  const std::map<std::string, sdbus::Variant>& properties) {
    if (!applications_.contains(path)) {
        applications_.emplace(path, sdbus::createProxy(*connection_, bus::kName, path));
    }
    ApplicationInfo application;
    application.path = path;
    application.pid = valueOr<std::uint32_t>(properties, "Pid", 0);
    application.uid = valueOr<std::uint32_t>(properties, "Uid", 0);
    application.name = valueOr<std::string>(properties, "Name", "");
    listTracepoints(std::move(application), kTracepointRelists);
}

void DaemonClient::listTracepoints(ApplicationInfo application, int retriesLeft) {
    const auto it = applications_.find(application.path);
    if (it == applications_.end()) {
        return; // gone
    }
    const std::string path = application.path;
    it->second->callMethodAsync("ListTracepoints")
        .onInterface(bus::kApplicationInterface)
        .uponReplyInvoke(
            [this, asked = std::move(application),
             retriesLeft](const sdbus::Error* error,
                          const std::vector<sdbus::Struct<std::string, std::string, int>>& listed) {
                if (!applications_.contains(asked.path)) {
                    return;
                }
                ApplicationInfo app = asked;
                app.tracepoints.clear();
                app.error.reset();
                if (error != nullptr) {
                    app.error = client::callError(*error);
                } else {
                    for (const auto& entry : listed) {
                        app.tracepoints.push_back(Tracepoint{
                            std::get<0>(entry) + ":" + std::get<1>(entry), std::get<2>(entry)});
                    }
                }
                const bool changed = retriesLeft == kTracepointRelists ||
                                     app.tracepoints != asked.tracepoints ||
                                     app.error.has_value() != asked.error.has_value();
                if (changed && events_.application) {
                    events_.application(app);
                }
                if (error == nullptr && retriesLeft > 0) {
                    std::erase_if(retries_, [](const sigc::connection& retry) {
                        return !retry.connected(); // fired already
                    });
                    retries_.push_back(Glib::signal_timeout().connect(
                        [this, app, retriesLeft] {
                            listTracepoints(app, retriesLeft - 1);
                            return false;
                        },
                        kTracepointRelistMs));
                }
            });
}

void DaemonClient::forgetApplication(const std::string& path) {
    const auto it = applications_.find(path);
    if (it == applications_.end()) {
        return;
    }
    // Maybe called from its own proxy's callback: sdbus-c++ still uses it afterwards.
    retiredApplications_.push_back(std::move(it->second));
    applications_.erase(it);
    scheduleCollect();
    if (events_.applicationRemoved) {
        events_.applicationRemoved(path);
    }
}

} // namespace tracectl::gui
