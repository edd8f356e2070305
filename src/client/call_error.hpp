// A failed method call as the clients report it: the D-Bus error's name and message.
#pragma once

#include <map>
#include <sdbus-c++/Error.h>
#include <sdbus-c++/Types.h>
#include <string>

namespace tracectl::client {

/// A method call that failed: the D-Bus error name (e.g.
/// "org.tracectl.Tracing1.Error.SessionExists") and the message, as the daemon (or the bus)
/// worded it.
struct CallError {
    std::string name;
    std::string message;
};

/// The error of a failed call, as the daemon (or the bus) worded it.
inline CallError callError(const sdbus::Error& error) {
    return CallError{error.getName(), error.getMessage()};
}

/// {"interactive": true}: polkit may ask the caller's authentication agent (tracectld takes
/// the option as it takes the ALLOW_INTERACTIVE_AUTHORIZATION flag, which sdbus-c++ 1.2
/// cannot set on a message).
inline std::map<std::string, sdbus::Variant> interactiveOptions() {
    return {{"interactive", sdbus::Variant{true}}};
}

} // namespace tracectl::client
