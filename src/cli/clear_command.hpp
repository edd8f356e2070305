// `tracectl clear`: Session.Clear on one session, or on every session the
// caller owns (as lttng-clear(1)).
#pragma once

#include "bus_client.hpp"

#include <optional>
#include <ostream>
#include <string>

namespace tracectl::cli {

struct ClearArgs {
    std::optional<std::string> name; ///< the session; unset: resolve_session() (or `all`)
    bool all = false;                ///< every session the caller owns (even as root)
};

/// Clears the session(s): prints "Session NAME cleared." per session on
/// `out`; while one clear takes longer than a second, a line a second on
/// `progress`. With `all` and no session of the caller's, says so.
/// Throws sdbus::Error (the daemon's error: WrongState during a rotation,
/// ...) for the first session that fails; the ones before stay cleared.
void runClear(BusClient& bus, const ClearArgs& args, std::ostream& out, std::ostream& progress);

} // namespace tracectl::cli
