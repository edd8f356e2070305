// `tracectl disable-event` and `tracectl disable-channel` over D-Bus
// (Session.DisableEvents, Session.DisableChannel); their command lines are
// disable_options.hpp's.
#pragma once

#include "bus_client.hpp"
#include "disable_options.hpp"

#include <iosfwd>

namespace tracectl::cli {

/// Runs the one of the two commands given (true), or returns false if
/// neither was. Each call says what it did on `out`; the first D-Bus error
/// is thrown (the calls before it stay done).
bool runDisableCommands(BusClient& bus, const DisableCommandLine& cl, std::ostream& out);

} // namespace tracectl::cli
