// What each tracectl subcommand does: the D-Bus calls through BusClient and the output.
#pragma once

#include "bus_client.hpp"
#include "create_options.hpp"
#include "exit_status.hpp"
#include "session_selection.hpp"

#include <iosfwd>
#include <optional>
#include <string>

namespace tracectl::cli {

/// Arguments of `tracectl create`.
struct CreateArgs {
    std::string name;                   ///< "" = auto_session_name()
    std::optional<std::string> output;  ///< --output DIR as typed (may be relative)
    bool snapshot = false;              ///< --snapshot
    std::optional<std::string> buffers; ///< --buffers per-uid|per-pid
    bool countEvents = false;           ///< --count-events (CreateSession "count-events")
    NetworkOutput network;              ///< -U, -C, -D, --live (checked: check_create_output())
};

/// Arguments of `tracectl list` and `tracectl show`.
struct ListArgs {
    bool json = false; ///< --json
};
struct ShowArgs {
    std::string name;
    bool json = false; ///< --json
};

/// Creates the session (output folder made absolute against the current directory; without a
/// name, auto_session_name() in auto_session_output() unless an output is given or the session
/// streams), then reads its properties and prints format_created(), and makes it
/// the current session (a note on `err` saying to name it with -s when there is nowhere to keep
/// it: no $XDG_RUNTIME_DIR, $XDG_CONFIG_HOME or $HOME; a warning if it cannot be kept there:
/// the session exists all the same).
void runCreate(BusClient& bus, const CreateArgs& args, std::ostream& out, std::ostream& err);

/// Prints every session the caller may see (ListSessions), oldest first: a table, or a JSON array;
/// then, on `err`, one "tracectl: warning: ..." line (loss_warning()) per session that
/// discarded events or lost packets.
void runList(BusClient& bus, const ListArgs& args, std::ostream& out, std::ostream& err);

/// Prints every property of the session called `name`: key: value lines and the statistics
/// section, or a JSON object; then its loss warning on `err`, if any.
void runShow(BusClient& bus, const ShowArgs& args, std::ostream& out, std::ostream& err);

/// `tracectl start [NAME | --all | --glob PATTERN]`: starts each session `spec` selects,
/// printing a line per session started. With --all/--glob, a session already active is a
/// warning on `err`, one destroyed meanwhile is skipped, and one that fails is reported on
/// `err` while the others go on; the status is that of the last failure (success if none).
/// A single session's failure throws.
ExitStatus runStart(BusClient& bus, const SessionSpec& spec, std::ostream& out, std::ostream& err);

/// `tracectl stop [NAME | --all | --glob PATTERN]`, as run_start(); a session not active is
/// the warning.
ExitStatus runStop(BusClient& bus, const SessionSpec& spec, std::ostream& out, std::ostream& err);

/// `tracectl destroy [NAME | --all | --glob PATTERN]`, as run_start() (no warning case); a
/// destroyed session that was the current one stops being it. "No sessions to destroy."
/// when --all/--glob select none.
ExitStatus runDestroy(BusClient& bus, const SessionSpec& spec, std::ostream& out,
                      std::ostream& err);

/// `tracectl set-session NAME`: makes the caller's session NAME (it must exist) the current
/// session. Throws NoSuchSession, or std::runtime_error when it cannot be kept.
void runSetSession(BusClient& bus, const std::string& name, std::ostream& out);

/// `tracectl status`: the current session's details, as `tracectl show` prints them (as
/// lttng status does), after a "Current session: NAME" line; the current session is
/// resolve_session()'s. `json`: the object `show --json` prints.
void runStatus(BusClient& bus, bool json, std::ostream& out, std::ostream& err);

/// `tracectl rotate [NAME] [--wait]` (no NAME: resolve_session()): prints the archive's folder on
/// `out`; with `wait`, once it is complete, with progress lines on `progress`.
void runRotate(BusClient& bus, const std::optional<std::string>& name, bool wait, std::ostream& out,
               std::ostream& progress);

/// `tracectl snapshot [record] [NAME] [-m SIZE]` (no NAME: resolve_session()): prints the
/// snapshot's folder on `out`. A snapshot that lacks sub-buffers the tracer overwrote before
/// they could be copied (the growth of the session's "packets-lost" statistic across the
/// call, which only snapshots move in a snapshot session) gets a warning on `err` that says
/// how many; the exit status stays 0, as the folder was written.
void runSnapshot(BusClient& bus, const std::optional<std::string>& name, std::uint64_t maxSize,
                 std::ostream& out, std::ostream& err);

} // namespace tracectl::cli
