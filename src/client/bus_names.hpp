// The names tracectld answers to on the bus (dbus/org.tracectl.Tracing1.*.xml).
#pragma once

namespace tracectl::client::bus {

inline constexpr const char* name = "org.tracectl.Tracing1";
inline constexpr const char* manager_path = "/org/tracectl/Tracing1";
inline constexpr const char* manager_interface = "org.tracectl.Tracing1.Manager";
inline constexpr const char* session_interface = "org.tracectl.Tracing1.Session";
inline constexpr const char* application_interface = "org.tracectl.Tracing1.Application";
inline constexpr const char* properties_interface = "org.freedesktop.DBus.Properties";

/// The match rule of the bus's NameOwnerChanged about `name`: the daemon came or went.
inline constexpr const char* name_owner_rule =
    "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
    "member='NameOwnerChanged',arg0='org.tracectl.Tracing1'";

} // namespace tracectl::client::bus
