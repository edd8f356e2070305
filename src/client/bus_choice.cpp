#include "bus_choice.hpp"

#include <sdbus-c++/Error.h>
#include <systemd/sd-bus.h>

namespace tracectl::client {
namespace {

/// Throws sdbus::Error as sdbus-c++ would ("Failed to open bus (...)") if
/// `bus` cannot be opened, its sd_bus freed: sdbus-c++ 1.2 leaks the sd_bus
/// it made when the connection fails (its Connection constructor throws
/// before anything owns it), which LeakSanitizer reports.
void checkBusOpens(const BusChoice& bus) {
    sd_bus* probe = nullptr;
    int r = 0;
    switch (bus.kind) {
    case BusChoice::Kind::User:
        r = sd_bus_open_user(&probe);
        break;
    case BusChoice::Kind::System:
        r = sd_bus_open_system(&probe);
        break;
    case BusChoice::Kind::Address:
        r = sd_bus_new(&probe);
        if (r >= 0)
            r = sd_bus_set_address(probe, bus.address.c_str());
        if (r >= 0)
            r = sd_bus_set_bus_client(probe, 1);
        if (r >= 0)
            r = sd_bus_start(probe);
        break;
    }
    sd_bus_flush_close_unref(probe);
    if (r < 0)
        throw sdbus::createError(-r, "Failed to open bus");
}

} // namespace

std::unique_ptr<sdbus::IConnection> openBus(const BusChoice& bus) {
    checkBusOpens(bus);
    switch (bus.kind) {
    case BusChoice::Kind::User:
        return sdbus::createSessionBusConnection();
    case BusChoice::Kind::Address:
        return sdbus::createSessionBusConnectionWithAddress(bus.address);
    case BusChoice::Kind::System:
        break;
    }
    return sdbus::createSystemBusConnection();
}

} // namespace tracectl::client
