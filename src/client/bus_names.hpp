// The names tracectld answers to on the bus (dbus/org.tracectl.Tracing1.*.xml).
#pragma once

namespace tracectl::client::bus {

inline constexpr const char* kName = "org.tracectl.Tracing1";
inline constexpr const char* kManagerPath = "/org/tracectl/Tracing1";
inline constexpr const char* kManagerInterface = "org.tracectl.Tracing1.Manager";
inline constexpr const char* kSessionInterface = "org.tracectl.Tracing1.Session";
inline constexpr const char* kApplicationInterface = "org.tracectl.Tracing1.Application";
inline constexpr const char* kPropertiesInterface = "org.freedesktop.DBus.Properties";

/// The match rule of the bus's NameOwnerChanged about `name`: the daemon came or went.
inline constexpr const char* kNameOwnerRule =
    "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
    "member='NameOwnerChanged',arg0='org.tracectl.Tracing1'";

} // namespace tracectl::client::bus
