// The names tracectld answers to on the bus, and the small conversions every DaemonClient
// file shares (daemon_client.cpp, daemon_calls.cpp, daemon_applications.cpp).
#pragma once

#include "daemon_client.hpp"

#include <map>
#include <sdbus-c++/Error.h>
#include <sdbus-c++/Types.h>
#include <string>

namespace tracectl::gui::bus {

inline constexpr const char* name = "org.tracectl.Tracing1";
inline constexpr const char* manager_path = "/org/tracectl/Tracing1";
inline constexpr const char* manager_interface = "org.tracectl.Tracing1.Manager";
inline constexpr const char* session_interface = "org.tracectl.Tracing1.Session";
inline constexpr const char* application_interface = "org.tracectl.Tracing1.Application";
inline constexpr const char* properties_interface = "org.freedesktop.DBus.Properties";

/// The error of a failed call, as the daemon (or the bus) worded it.
inline CallError call_error(const sdbus::Error& error) {
    return CallError{error.getName(), error.getMessage()};
}

/// {"interactive": true}: polkit may ask the desktop's authentication agent (tracectld takes
/// the option as it takes the ALLOW_INTERACTIVE_AUTHORIZATION flag, which sdbus-c++ 1.2
/// cannot set on a message).
inline std::map<std::string, sdbus::Variant> interactive_options() {
    return {{"interactive", sdbus::Variant{true}}};
}

} // namespace tracectl::gui::bus
