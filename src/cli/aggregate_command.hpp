// tracectl aggregate: runs a D aggregation program (src/aggregate/) over CTF traces on
// disk and prints the aggregations as dtrace(1) does, or as JSON.
#pragma once

#include "exit_status.hpp"

#include <iosfwd>
#include <optional>
#include <string>

namespace tracectl::cli {

class BusClient;

struct AggregateArgs {
    std::string program;                ///< the D program text
    std::optional<std::string> trace;   ///< --trace PATH: a trace, or a folder holding traces
    std::optional<std::string> session; ///< --session NAME
    std::optional<double> duration;     ///< --duration SECONDS (neither --trace nor --session)
    bool json = false;                  ///< --json
};

/// Parses the program (a ProgramError: "tracectl: aggregate: LINE:COLUMN: MESSAGE" on
/// `err`, ExitStatus::usage), reads every trace under args.trace (unreadable:
/// "tracectl: aggregate: MESSAGE", ExitStatus::daemon_error), prints the aggregations on
/// `out`. A probe description that matched no event record gets a warning on `err`, and
/// so do records whose clause stopped at a division by zero.
ExitStatus run_aggregate_trace(const AggregateArgs& args, std::ostream& out, std::ostream& err);

/// `--session NAME`: the same over everything session NAME (one of the caller's, or any
/// session's D-Bus object path) has recorded so far, every trace
/// under its output folder. An active session is rotated first (Session.Rotate, waiting for
/// RotationCompleted, progress on `err`) and then only its archives are read (the chunk
/// the rotation began is still being written); a session in any other state is read whole.
/// The program is checked before the bus is used. Daemon errors (NoSuchSession,
/// AccessDenied for another user's session) propagate as sdbus::Error.
ExitStatus run_aggregate_session(BusClient& bus, const AggregateArgs& args, std::ostream& out,
                                 std::ostream& err);

/// Neither --trace nor --session: like `dtrace -n`. Creates a temporary session (a unique
/// name, output in a new folder under $TMPDIR or /tmp), enables exactly the probes the
/// program names (the kernel domain, in a channel of its own, for `ip:*` and for what
/// Manager.ListTracepoints("kernel") lists; the UST domain for the rest), starts it, traces
/// until SIGINT/SIGTERM (Ctrl-C) or args.duration seconds, stops it, prints the
/// aggregations, destroys the session and deletes its folder. SIGINT and SIGTERM are
/// blocked meanwhile: one during set-up ends the command as soon as the current step is
/// done, leaving nothing behind either (exit status 1). Progress goes to `err`.
ExitStatus run_aggregate_live(BusClient& bus, const AggregateArgs& args, std::ostream& out,
                              std::ostream& err);

} // namespace tracectl::cli
