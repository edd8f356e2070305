// Which bus tracectld is reached on, and opening a connection to it: the one place the CLI
// (cli/bus_client.hpp) and the GUI (gui/daemon_client.hpp) choose and open their bus.
#pragma once

#include <memory>
#include <sdbus-c++/IConnection.h>
#include <string>

namespace tracectl::client {

/// Which bus tracectld is reached on.
struct BusChoice {
    enum class Kind {
        System,  ///< the system bus (honours DBUS_SYSTEM_BUS_ADDRESS); the default
        User,    ///< the session bus (a `tracectld --user`)
        Address, ///< the bus at `address`, a D-Bus address such as "unix:path=/run/x/bus"
    };
    Kind kind = Kind::System;
    std::string address; ///< only for Kind::address

    bool operator==(const BusChoice&) const = default;
};

/// A new connection to `bus` (its own sd_bus, not yet processing: the caller runs it, blocking
/// calls or an event loop). Throws sdbus::Error ("Failed to open bus", with the errno's name)
/// when the bus cannot be reached, without leaking the sd_bus sdbus-c++ 1.2 would leak then.
std::unique_ptr<sdbus::IConnection> openBus(const BusChoice& bus);

} // namespace tracectl::client
