// A D-Bus client, on its own connection and thread, that records every
// signal tracectld emits under /org/tracectl/Tracing1, in arrival order, as
// short text lines the tests compare:
//   "InterfacesAdded <path> <iface>"  "InterfacesRemoved <path> <iface>"
//   (one line per interface, the standard org.freedesktop.DBus.* ones left out)
//   "PropertiesChanged <path> <Prop>=<value>"  (string/uint/bool values)
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <sdbus-c++/sdbus-c++.h>
#include <string>
#include <vector>

namespace tracectl::test {

class SignalRecorder {
public:
    /// Connects to the system bus ($DBUS_SYSTEM_BUS_ADDRESS), subscribes,
    /// and calls tracectld once (helloDaemon), which sends its signals only
    /// to connections that called it. Throws sdbus::Error if the bus or the
    /// daemon cannot be reached.
    SignalRecorder();
    ~SignalRecorder();
    SignalRecorder(const SignalRecorder&) = delete;
    SignalRecorder& operator=(const SignalRecorder&) = delete;

    /// Waits until at least `count` lines were recorded or `timeout` passed;
    /// returns a copy of all lines recorded so far.
    std::vector<std::string> waitFor(std::size_t count, std::chrono::milliseconds timeout);

    /// Waits until `holds` is true of the lines recorded so far (checked
    /// again as each signal arrives) or `timeout` passed; returns whether it
    /// held.
    bool waitUntil(const std::function<bool(const std::vector<std::string>&)>& holds,
                   std::chrono::milliseconds timeout);

private:
    void onSignal(sdbus::Message& msg);

    std::unique_ptr<sdbus::IConnection> bus_;
    sdbus::Slot match_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<std::string> lines_;
};

} // namespace tracectl::test
