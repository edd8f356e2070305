// How a test client makes itself known to tracectld before it listens for
// signals. tracectld sends its signals (InterfacesAdded/Removed,
// PropertiesChanged, RotationCompleted, ...) unicast, only to connections
// that have called it at least once and may see the object concerned; a
// connection that only subscribed (AddMatch) gets nothing.
#pragma once

#include <sdbus-c++/sdbus-c++.h>
#include <string>

namespace tracectl::test {

/// One call from `bus` to org.tracectl.Tracing1, answered before it
/// returns: a read of the Manager's Version property, which every caller
/// may make (the bus policy, dbus/org.tracectl.Tracing1.conf, refuses
/// org.freedesktop.DBus.Peer, so Ping cannot serve). Returns the version.
/// Throws sdbus::Error if the daemon does not answer.
std::string helloDaemon(sdbus::IConnection& bus);

} // namespace tracectl::test
