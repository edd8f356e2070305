// How tracectld and tracectl-consumerd read their command line and turn its
// outcome into an exit status: one contract for both daemons' main().
#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace tracectl {

/// The exit statuses that parseAndRun itself gives. A daemon adds its own
/// from 3 on (see its Exit enum and its man page's EXIT STATUS).
inline constexpr int kCommandLineOk = 0;      ///< --help or --version was printed (to stdout)
inline constexpr int kCommandLineFailure = 1; ///< `run` threw (logged as "fatal: ...")
inline constexpr int kCommandLineUsage = 2;   ///< bad command line (CLI11's message on stderr)

/// Parses `argc`/`argv` with `app` (whose options are all added), then calls
/// `run` and returns its status. The exit-status contract:
///   - --help, --version: CLI11 prints the text to stdout; returns 0 and
///     `run` is not called;
///   - any other CLI::ParseError (unknown option, missing or invalid value):
///     CLI11 prints the message and "Run with --help ..." to stderr; returns 2
///     and `run` is not called;
///   - otherwise whatever `run` returns; a std::exception that leaves `run`
///     is logged (log::error "fatal: <what>") and gives 1.
/// log::init is the caller's (typically the first thing `run` does): a parse
/// error is reported by CLI11 alone.
int parseAndRun(CLI::App& app, int argc, char** argv, const std::function<int()>& run);

} // namespace tracectl
