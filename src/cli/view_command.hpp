// `tracectl view` with babeltrace2: its text output, with the kernel call
// stacks' addresses named (stack_symbolizer.hpp).
#pragma once

#include "cli/exit_status.hpp"

#include <ostream>
#include <string>

namespace tracectl::cli {

/// Runs `babeltrace2 DIR` with its standard output through a pipe, and
/// writes each line to `out` as StackSymbolizer::process() gives it; its
/// standard error stays ours. Returns success when babeltrace2 exited 0;
/// daemon_error (its message on stderr) when it could not be started or
/// failed.
ExitStatus runSymbolizedView(const std::string& dir, std::ostream& out);

} // namespace tracectl::cli
