// The "interactive" option every method that may need polkit takes.
#pragma once

#include <map>
#include <sdbus-c++/sdbus-c++.h>
#include <string>

namespace tracectl::auth {

/// Method options, a{sv}.
using CallOptions = std::map<std::string, sdbus::Variant>;

/// Removes "interactive" from `options` and returns it (false if absent).
/// Throws tracectl::Error(InvalidArgument) if it is not a boolean (b).
bool takeInteractive(CallOptions& options);

/// For methods whose only option is "interactive": returns it. Throws
/// tracectl::Error(InvalidArgument) on any other key or a non-boolean.
bool readInteractiveOnly(const CallOptions& options);

} // namespace tracectl::auth
