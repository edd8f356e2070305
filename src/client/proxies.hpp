// The proxies of tracectld's objects (generated from dbus/*.xml by sdbus-c++-xml2cpp), each
// with the standard interfaces its users read, and the signals it forwards to callbacks given
// at construction. A proxy borrows its connection: destroy it first. Signals arrive only while
// the connection is processed (blocking calls, processPendingRequest, or an event loop), on
// that thread.
#pragma once

#include "bus_names.hpp"

#include <application_proxy.h>
#include <functional>
#include <manager_proxy.h>
#include <map>
#include <sdbus-c++/StandardInterfaces.h>
#include <sdbus-c++/sdbus-c++.h>
#include <session_proxy.h>
#include <string>
#include <vector>

namespace tracectl::client {

/// /org/tracectl/Tracing1: the Manager interface.
class ManagerProxy final : public sdbus::ProxyInterfaces<org::tracectl::Tracing1::Manager_proxy> {
public:
    explicit ManagerProxy(sdbus::IConnection& connection)
        : ProxyInterfaces(connection, bus::kName, bus::kManagerPath) {
        registerProxy();
    }
    ~ManagerProxy() { unregisterProxy(); }
    ManagerProxy(const ManagerProxy&) = delete;
    ManagerProxy& operator=(const ManagerProxy&) = delete;
    ManagerProxy(ManagerProxy&&) = delete;
    ManagerProxy& operator=(ManagerProxy&&) = delete;

    using ProxyInterfaces::getProxy; // the asynchronous calls
};

/// What ObjectManager announces about the daemon's objects. Each callback may be empty.
struct ObjectSignals {
    /// InterfacesAdded(path, {interface: {property: value}}).
    std::function<void(const std::string& path,
                       const std::map<std::string, std::map<std::string, sdbus::Variant>>&)>
        interfacesAdded;
    /// InterfacesRemoved(path, interfaces).
    std::function<void(const std::string& path, const std::vector<std::string>& interfaces)>
        interfacesRemoved;
};

/// /org/tracectl/Tracing1: the Manager interface and the standard ObjectManager one, whose
/// signals go to the ObjectSignals given.
class ObservedManagerProxy final
    : public sdbus::ProxyInterfaces<org::tracectl::Tracing1::Manager_proxy,
                                    sdbus::ObjectManager_proxy> {
public:
    ObservedManagerProxy(sdbus::IConnection& connection, ObjectSignals signals)
        : ProxyInterfaces(connection, bus::kName, bus::kManagerPath), signals_(std::move(signals)) {
        registerProxy();
    }
    ~ObservedManagerProxy() { unregisterProxy(); }
    ObservedManagerProxy(const ObservedManagerProxy&) = delete;
    ObservedManagerProxy& operator=(const ObservedManagerProxy&) = delete;
    ObservedManagerProxy(ObservedManagerProxy&&) = delete;
    ObservedManagerProxy& operator=(ObservedManagerProxy&&) = delete;

    using ProxyInterfaces::getProxy;

private:
    void onInterfacesAdded(
        const sdbus::ObjectPath& path,
        const std::map<std::string, std::map<std::string, sdbus::Variant>>& interfaces) override {
        if (signals_.interfacesAdded)
            signals_.interfacesAdded(path, interfaces);
    }
    void onInterfacesRemoved(const sdbus::ObjectPath& path,
                             const std::vector<std::string>& interfaces) override {
        if (signals_.interfacesRemoved)
            signals_.interfacesRemoved(path, interfaces);
    }

    ObjectSignals signals_;
};

/// What a session object signals. Each callback may be empty.
struct SessionSignals {
    /// Properties.PropertiesChanged(interface, changed, invalidated).
    std::function<void(const std::string& interface,
                       const std::map<std::string, sdbus::Variant>& changed,
                       const std::vector<std::string>& invalidated)>
        propertiesChanged;
    /// RotationCompleted(path): the archive folder is complete.
    std::function<void(const std::string& path)> rotationCompleted;
    /// RotationFailed(path, reason).
    std::function<void(const std::string& path, const std::string& reason)> rotationFailed;
    /// SnapshotRecorded(path): the snapshot folder is complete.
    std::function<void(const std::string& path)> snapshotRecorded;
};

/// /org/tracectl/Tracing1/session/<id>: the Session interface and the standard Properties
/// one, whose signals go to the SessionSignals given.
class SessionProxy final : public sdbus::ProxyInterfaces<org::tracectl::Tracing1::Session_proxy,
                                                         sdbus::Properties_proxy> {
public:
    SessionProxy(sdbus::IConnection& connection, const std::string& path,
                 SessionSignals signals = {})
        : ProxyInterfaces(connection, bus::kName, path), signals_(std::move(signals)) {
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
        if (signals_.propertiesChanged)
            signals_.propertiesChanged(interface, changed, invalidated);
    }
    void onSnapshotRecorded(const std::string& path) override {
        if (signals_.snapshotRecorded)
            signals_.snapshotRecorded(path);
    }
    void onRotationCompleted(const std::string& path) override {
        if (signals_.rotationCompleted)
            signals_.rotationCompleted(path);
    }
    void onRotationFailed(const std::string& path, const std::string& reason) override {
        if (signals_.rotationFailed)
            signals_.rotationFailed(path, reason);
    }

    SessionSignals signals_;
};

/// /org/tracectl/Tracing1/application/<pid>: the Application interface and Properties (whose
/// PropertiesChanged is ignored: an application's properties do not change).
class ApplicationProxy final
    : public sdbus::ProxyInterfaces<org::tracectl::Tracing1::Application_proxy,
                                    sdbus::Properties_proxy> {
public:
    ApplicationProxy(sdbus::IConnection& connection, const std::string& path)
        : ProxyInterfaces(connection, bus::kName, path) {
        registerProxy();
    }
    ~ApplicationProxy() { unregisterProxy(); }
    ApplicationProxy(const ApplicationProxy&) = delete;
    ApplicationProxy& operator=(const ApplicationProxy&) = delete;
    ApplicationProxy(ApplicationProxy&&) = delete;
    ApplicationProxy& operator=(ApplicationProxy&&) = delete;

private:
    void onPropertiesChanged(const std::string&, const std::map<std::string, sdbus::Variant>&,
                             const std::vector<std::string>&) override {}
};

} // namespace tracectl::client
