// The fixture the integration suites share: one sandbox (scripts/sandbox:
// private system bus, polkitd, systemd manager, tracectld) per suite, and
// per test a fresh system-bus connection with a Manager client.
#pragma once

#include "sandbox.hpp"
#include "tracectl_clients.hpp"

#include <cstdlib>
#include <gtest/gtest.h>
#include <memory>
#include <sdbus-c++/sdbus-c++.h>
#include <string>

namespace tracectl::test {

/// The bundled LTTng-UST app: $TRACECTL_DEMO_APP (meson sets it), else from PATH.
inline std::string demoApp() {
    const char* p = std::getenv("TRACECTL_DEMO_APP");
    return p != nullptr ? p : "tracectl-demo-app";
}

class SandboxSuite : public ::testing::Test {
protected:
    static void SetUpTestSuite() { sandbox_ = std::make_unique<Sandbox>(); }
    static void TearDownTestSuite() { sandbox_.reset(); }

    void SetUp() override {
        bus_ = sdbus::createSystemBusConnection();
        manager_ = std::make_unique<ManagerClient>(*bus_);
    }

    /// A trace folder under the sandbox.
    static std::string output(const std::string& name) {
        return sandbox_->dir() + "/traces/" + name;
    }

    static inline std::unique_ptr<Sandbox> sandbox_;
    std::unique_ptr<sdbus::IConnection> bus_;
    std::unique_ptr<ManagerClient> manager_;
};

} // namespace tracectl::test
