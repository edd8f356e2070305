// The options tracectl sends with Manager.CreateSession, built from the command line.
#pragma once

#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace tracectl::cli {

/// `dir` as an absolute, lexically normalized path ("." and ".." resolved without touching
/// the file system, no trailing "/"); a relative `dir` is taken relative to `cwd` (which must
/// be absolute). An empty `dir` stays empty, for the daemon to reject.
std::string absolute_output_path(std::string_view dir, const std::filesystem::path& cwd);

/// The name lttng create gives a session created without one: "auto-YYYYmmdd-HHMMSS" in local
/// time (lttng-create(1); lttng-tools DEFAULT_SESSION_NAME "auto").
std::string auto_session_name(std::time_t now);

/// Where lttng create writes such a session by default: `home`/lttng-traces/`name`, with no
/// second date (lttng-create(1): "$LTTNG_HOME/lttng-traces/auto-YYYYmmdd-HHMMSS").
std::string auto_session_output(const std::filesystem::path& home, std::string_view name);

/// The CreateSession options, every value a D-Bus string: "output-path" when an output folder
/// is given (passed as is: make it absolute first), "mode" = "snapshot" when `snapshot`,
/// "buffer-ownership" = `buffers` ("per-uid" or "per-pid", the daemon checks) when given.
/// Keys left out take the daemon's defaults.
std::map<std::string, std::string>
create_session_options(const std::optional<std::string>& output_path, bool snapshot,
                       const std::optional<std::string>& buffers = std::nullopt);

} // namespace tracectl::cli
