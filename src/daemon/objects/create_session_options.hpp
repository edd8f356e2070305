// Manager.CreateSession's a{sv} options, read into a SessionRequest.
#pragma once

#include "session/session_registry.hpp"

#include <map>
#include <sdbus-c++/sdbus-c++.h>
#include <string>

namespace tracectl {

/// Fills a SessionRequest from CreateSession's arguments. Known keys:
/// "output-path" (s), "url" (s), "control-url" (s), "data-url" (s), "mode"
/// (s), "live-timer" (t, µs), "buffer-ownership" (s), "count-events" (b). Throws
/// tracectl::Error(InvalidArgument) for an unknown key or a value of the
/// wrong D-Bus type; values themselves are checked by SessionRegistry.
SessionRequest readCreateSessionOptions(const std::string& name,
                                        const std::map<std::string, sdbus::Variant>& options);

} // namespace tracectl
