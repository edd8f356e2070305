// Which sessions a command acts on: one named, the current one, or, as
// LTTng 2.14's start, stop and destroy take them, --all or --glob PATTERN
// (lttng-start(1): "With the --glob option: the recording sessions of which
// the globbing pattern PATTERN matches the name").
#pragma once

#include "bus_client.hpp"

#include <optional>
#include <string>
#include <vector>

namespace tracectl::cli {

/// At most one of `name`, `all` and `glob` (checked by the command line);
/// none: the current session (resolve_session()).
struct SessionSpec {
    std::optional<std::string> name;
    bool all = false;                ///< --all: every session the caller owns
    std::optional<std::string> glob; ///< --glob: those whose name matches (fnmatch(3))

    /// True for --all and --glob: zero or more sessions, and a session
    /// already in the state asked for is a warning, not an error.
    bool several() const noexcept { return all || glob.has_value(); }
};

struct SelectedSession {
    std::string path;
    std::string name;
    std::string state; ///< the State property when selected
};

/// The sessions `spec` names: one for a name or the current session (throws
/// as resolve_session()), else every session the caller owns (even root only
/// its own: ListSessions lists every user's for root) whose name matches,
/// oldest first; sessions destroyed while being listed are left out.
std::vector<SelectedSession> selectSessions(BusClient& bus, const SessionSpec& spec);

} // namespace tracectl::cli
