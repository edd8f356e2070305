// The options tracectl sends with Manager.CreateSession, built from the command line.
#pragma once

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

/// The CreateSession options, every value a D-Bus string: "output-path" when an output folder
/// is given (passed as is: make it absolute first), "mode" = "snapshot" when `snapshot`,
/// "buffer-ownership" = `buffers` ("per-uid" or "per-pid", the daemon checks) when given.
/// Keys left out take the daemon's defaults.
std::map<std::string, std::string>
create_session_options(const std::optional<std::string>& output_path, bool snapshot,
                       const std::optional<std::string>& buffers = std::nullopt);

} // namespace tracectl::cli
