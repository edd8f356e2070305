// How a test client makes itself known to tracectld before it listens for
// signals. tracectld sends its signals (InterfacesAdded/Removed,
// PropertiesChanged, RotationCompleted, ...) unicast, only to connections
// that have called it at least once and may see the object concerned; a
// connection that only subscribed (AddMatch) gets nothing.
#pragma once

#include <sdbus-c++/sdbus-c++.h>
#include <string>

namespace tracectl::test {

/// One method call from `bus` to org.tracectl.Tracing1 at
/// /org/tracectl/Tracing1, answered before it returns: org.freedesktop.DBus.Peer.Ping,
/// or, when that is refused (dbus/org.tracectl.Tracing1.conf lets nobody,
/// root included, send Peer to the daemon), ObjectManager.GetManagedObjects,
/// whose AccessDenied (an ordinary user on a daemon that cannot filter it)
/// still means the daemon got the call. Returns what was done, for logs:
/// "Ping" or "GetManagedObjects (Ping: <error name>)".
/// Throws sdbus::Error for any other failure (daemon not on the bus, ...).
std::string helloDaemon(sdbus::IConnection& bus);

} // namespace tracectl::test
