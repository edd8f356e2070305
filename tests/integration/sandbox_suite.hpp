// The fixture the integration suites share: one sandbox (scripts/sandbox:
// private system bus, polkitd, systemd manager, tracectld) per suite, and
// per test a fresh system-bus connection with a Manager client.
#pragma once

#include "eventually.hpp"
#include "sandbox.hpp"
#include "tracectl_clients.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <gtest/gtest.h>
#include <map>
#include <memory>
#include <sdbus-c++/sdbus-c++.h>
#include <string>
#include <sys/types.h>

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
        // Each test starts with no current session (tracectl create makes its session
        // current, kept under XDG_CONFIG_HOME when XDG_RUNTIME_DIR is unset; TearDown
        // destroys the sessions without tracectl).
        if (sandbox_ != nullptr) {
            std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
            std::replace(test.begin(), test.end(), '/', '-');
            ::setenv("XDG_CONFIG_HOME", (sandbox_->dir() + "/cli-config/" + test).c_str(), 1);
        }
    }

    /// Destroys every session a test left (also a failed one's), so the
    /// next test starts on an empty daemon and nothing of it records on
    /// beside the suites running in the other lane. A daemon that is gone
    /// (a test that stopped it) or a session destroyed meanwhile is no
    /// error here: the test itself said what it expected.
    void TearDown() override {
        if (manager_ != nullptr && sandbox_ != nullptr) {
            try {
                for (const auto& path : manager_->ListSessions()) {
                    try {
                        SessionClient(*bus_, path).Destroy({});
                    } catch (const sdbus::Error&) {
                    }
                }
            } catch (const sdbus::Error&) {
            }
        }
        manager_.reset();
        bus_.reset();
        if (sandbox_ != nullptr)
            ::setenv("XDG_CONFIG_HOME", (sandbox_->dir() + "/cli-config").c_str(), 1);
    }

    /// A trace folder under the sandbox.
    static std::string output(const std::string& name) {
        return sandbox_->dir() + "/traces/" + name;
    }

    /// A started session `name` writing to output(name) and recording
    /// tracectl_demo:tick, made with CreateSession options `options` (the
    /// output path is added), per-PID buffers if `perPid`, and channel0 made
    /// with `channel` if that is not empty (else the default channel).
    std::unique_ptr<SessionClient>
    startTickSession(const std::string& name, std::map<std::string, sdbus::Variant> options,
                     bool perPid, const std::map<std::string, sdbus::Variant>& channel) {
        options["output-path"] = sdbus::Variant(output(name));
        if (perPid)
            options["buffer-ownership"] = sdbus::Variant(std::string("per-pid"));
        auto s = std::make_unique<SessionClient>(*bus_, manager_->CreateSession(name, options));
        if (!channel.empty())
            s->AddChannel("ust", "channel0", channel);
        s->EnableEvents("ust", "", "tracectl_demo:tick", {});
        s->Start({});
        return s;
    }

    /// Whether the Manager lists the app of `pid`: it does once the app was
    /// set up for every active session and sent register_done.
    bool listsApp(pid_t pid) const {
        const auto apps = manager_->ListApplications();
        return std::find(apps.begin(), apps.end(),
                         "/org/tracectl/Tracing1/application/" + std::to_string(pid)) != apps.end();
    }

    /// Waits (up to `deadline`) until the demo app of `pid`, writing its
    /// stdout to `log`, is listed and has printed its "ready <pid>" line:
    /// from then on it emits, into every active session.
    bool waitTracing(pid_t pid, const std::string& log,
                     std::chrono::milliseconds deadline = std::chrono::seconds(10)) const {
        return eventually([&] { return listsApp(pid) && printedReady(log, pid); }, deadline);
    }

    static inline std::unique_ptr<Sandbox> sandbox_;
    std::unique_ptr<sdbus::IConnection> bus_;
    std::unique_ptr<ManagerClient> manager_;
};

} // namespace tracectl::test
