// Clients of tracectld for the integration tests, built on the proxies
// generated from dbus/*.xml (so the tests also exercise the generated code).
#pragma once

#include "application_proxy.h"
#include "manager_proxy.h"
#include "session_proxy.h"

#include <functional>
#include <sdbus-c++/sdbus-c++.h>
#include <string>

namespace tracectl::test {

inline constexpr const char* kService = "org.tracectl.Tracing1";
inline constexpr const char* kManagerPath = "/org/tracectl/Tracing1";

class ManagerClient : public sdbus::ProxyInterfaces<org::tracectl::Tracing1::Manager_proxy> {
public:
    explicit ManagerClient(sdbus::IConnection& bus) : ProxyInterfaces(bus, kService, kManagerPath) {
        registerProxy();
    }
    ~ManagerClient() { unregisterProxy(); }
};

class SessionClient final : public sdbus::ProxyInterfaces<org::tracectl::Tracing1::Session_proxy> {
public:
    SessionClient(sdbus::IConnection& bus, const std::string& path)
        : ProxyInterfaces(bus, kService, path) {
        registerProxy();
    }
    ~SessionClient() { unregisterProxy(); }

private:
    // The signals are followed with SignalRecorder, which sees every client's.
    void onRotationCompleted(const std::string&) override {}
    void onRotationFailed(const std::string&, const std::string&) override {}
    void onSnapshotRecorded(const std::string&) override {}
};

class ApplicationClient
    : public sdbus::ProxyInterfaces<org::tracectl::Tracing1::Application_proxy> {
public:
    ApplicationClient(sdbus::IConnection& bus, const std::string& path)
        : ProxyInterfaces(bus, kService, path) {
        registerProxy();
    }
    ~ApplicationClient() { unregisterProxy(); }
};

/// The D-Bus error name `call` fails with, or "no error"; its message in
/// `message` if given.
inline std::string errorNameOf(const std::function<void()>& call, std::string* message = nullptr) {
    try {
        call();
    } catch (const sdbus::Error& e) {
        if (message != nullptr)
            *message = e.getMessage();
        return e.getName();
    }
    return "no error";
}

} // namespace tracectl::test
