// `tracectl dtrace` and `tracectl aggregate` (the same command) on the command line:
// dtrace(1)'s options as it spells them (-s FILE, -n PROGRAM, -q, -o FILE, -x OPTION,
// -l, -c COMMAND, -p PID), tracectl's --trace, --session, --duration and --json, and how
// they make the program text (AggregateArgs). No bus, no trace.
#pragma once

#include "aggregate_command.hpp"
#include "cli11_fwd.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace tracectl::cli {

/// What CLI11 fills in for one of the two names.
struct DtraceCommandLine {
    AggregateArgs args;
    std::vector<std::string> scripts;    ///< -s FILE, in order
    std::vector<std::string> programs;   ///< -n PROGRAM, in order
    std::vector<std::string> positional; ///< PROGRAM (without -s/-n), then $1, $2...
    std::vector<std::string> options;    ///< -x NAME[=VALUE]
    CLI::App* command = nullptr;
};

/// The largest -s FILE read (1 MiB): a D script is a small regular file.
inline constexpr std::size_t kLargestScript = std::size_t{1} << 20;

/// Adds the subcommand `name` ("dtrace" or "aggregate") with its options to `app`.
CLI::App* addDtraceCommand(CLI::App& app, const std::string& name, DtraceCommandLine& cl);

/// Once parsed: the program text in cl.args (every -s file's text, then every -n, in the
/// order given; without either, the first positional argument is the program and the rest
/// are $1, $2...). A script's first line "#!..." (an interpreter line) is blanked so that
/// lines keep their numbers. Throws CLI::ValidationError: no program, an unreadable
/// -s FILE (or one that is not a regular file, or is larger than largest_script), a bad
/// -p PID.
void finishDtraceCommandLine(DtraceCommandLine& cl);

} // namespace tracectl::cli
