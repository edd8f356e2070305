// tracectl dtrace (also spelt tracectl aggregate): runs a D program (src/aggregate/) over
// CTF traces on disk, or live, and prints what it prints and its aggregations as dtrace(1)
// does (aggregations also as JSON). See tracectl-dtrace(1).
#pragma once

#include "exit_status.hpp"

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace tracectl::cli {

class BusClient;

/// Where a piece of AggregateArgs::program came from: a -s FILE (label: the file) or a
/// -n PROGRAM (label empty); its first line in the whole text. Errors are reported as
/// "FILE:LINE:COLUMN" or "LINE:COLUMN" relative to the piece.
struct ProgramOrigin {
    int firstLine = 1;
    std::string label;
};

struct AggregateArgs {
    std::string command = "aggregate";  ///< how the command was named (in messages)
    std::string program;                ///< the D program text (every -s and -n, joined)
    std::vector<ProgramOrigin> origins; ///< where each piece of `program` begins
    std::vector<std::string> arguments; ///< macro arguments $1, $2...
    bool quiet = false;                 ///< -q
    std::optional<std::string> output;  ///< -o FILE
    std::vector<std::string> options;   ///< -x NAME[=VALUE]
    bool list = false;                  ///< -l
    std::optional<std::string> run;     ///< -c COMMAND (live only)
    std::optional<long> pid;            ///< -p PID
    std::optional<std::string> trace;   ///< --trace PATH: a trace, or a folder holding traces
    std::optional<std::string> session; ///< --session NAME
    std::optional<double> duration;     ///< --duration SECONDS (neither --trace nor --session)
    bool json = false;                  ///< --json
};

/// Parses the program (a ProgramError: "tracectl: aggregate: LINE:COLUMN: MESSAGE" on
/// `err`, ExitStatus::usage), reads every trace under args.trace (unreadable:
/// "tracectl: aggregate: MESSAGE", ExitStatus::daemon_error), runs the program (in time
/// order when it needs it: Program::needs_order) and prints what it prints, then the
/// aggregations, on `out` (or -o FILE). A probe description that matched no event record
/// gets a warning on `err`, and so do records whose clause stopped at a run-time error.
/// exit(N) makes N the exit status. With -l, lists the event classes of the trace the
/// program's probes match instead (dtrace -l's columns) and runs nothing; -l without
/// args.trace lists the program's probe descriptions.
ExitStatus runAggregateTrace(const AggregateArgs& args, std::ostream& out, std::ostream& err);

/// `--session NAME`: the same over everything session NAME (one of the caller's, or any
/// session's D-Bus object path) has recorded so far, every trace
/// under its output folder. An active session is rotated first (Session.Rotate, waiting for
/// RotationCompleted, progress on `err`) and then only its archives are read (the chunk
/// the rotation began is still being written); a session in any other state is read whole.
/// The program is checked before the bus is used. Daemon errors (NoSuchSession,
/// AccessDenied for another user's session) propagate as sdbus::Error.
ExitStatus runAggregateSession(BusClient& bus, const AggregateArgs& args, std::ostream& out,
                               std::ostream& err);

/// Neither --trace nor --session: like `dtrace -n`. Creates a temporary session (a unique
/// name, COMMAND-PID-MS after args.command, output in a new folder under $TMPDIR or /tmp), enables
/// exactly the probes the program names (the kernel domain, in a channel of its own, for `ip:*`,
/// for what Manager.ListTracepoints("kernel") lists and for the probes of a process: userspace
/// probes on its executable, dtrace_user_probes.hpp; the UST domain for the rest), starts it,
/// traces until SIGINT/SIGTERM (Ctrl-C), args.duration seconds, exit() or the end of -c's
/// command, stops it, prints the aggregations, destroys the session and deletes its folder.
/// The program runs while the session records: BEGIN before it starts, then every switch
/// period (-x switchrate, agg::switch_period_ns) the session is rotated and the closed
/// chunk, once RotationCompleted announced it (SessionChunks), runs through the same
/// agg::ChunkedRun and its output is flushed; after Stop the last chunk (complete then) is
/// run, then END. A program of only BEGIN, END, ERROR and timers makes no session but runs
/// the same way (its timers fire every switch period) until Ctrl-C, --duration, exit() or
/// the end of -c's command, as dtrace(1) runs it. With --json, -c's command writes its
/// standard output to `err`'s file (standard error), so that standard output stays one
/// JSON document. SIGINT and SIGTERM are
/// blocked meanwhile: one during set-up ends the command as soon as the current step is
/// done, leaving nothing behind either (exit status 1). Progress goes to `err`.
ExitStatus runAggregateLive(BusClient& bus, const AggregateArgs& args, std::ostream& out,
                            std::ostream& err);

/// Before tracing live (no session made yet, no bus used): why -c COMMAND cannot run
/// ("cannot run COMMAND: No such file or directory": its first word, searched in $PATH as
/// execvp(3) does, is no executable file) or why -p PID cannot be traced ("cannot grab pid
/// PID: No such process"); nothing if neither. tracectl exits with status 1 then, as dtrace(1).
std::optional<std::string> liveTargetProblem(const AggregateArgs& args);

} // namespace tracectl::cli
