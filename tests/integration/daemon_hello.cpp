#include "daemon_hello.hpp"

namespace tracectl::test {

std::string helloDaemon(sdbus::IConnection& bus) {
    auto daemon = sdbus::createProxy(bus, "org.tracectl.Tracing1", "/org/tracectl/Tracing1");
    std::string pingError;
    try {
        daemon->callMethod("Ping").onInterface("org.freedesktop.DBus.Peer");
        return "Ping";
    } catch (const sdbus::Error& e) {
        if (e.getName() != "org.freedesktop.DBus.Error.AccessDenied")
            throw;
        pingError = e.getName();
    }
    try {
        daemon->callMethod("GetManagedObjects").onInterface("org.freedesktop.DBus.ObjectManager");
    } catch (const sdbus::Error& e) {
        if (e.getName() != "org.freedesktop.DBus.Error.AccessDenied")
            throw;
    }
    return "GetManagedObjects (Ping: " + pingError + ")";
}

} // namespace tracectl::test
