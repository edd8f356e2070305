// tracectl save / tracectl load: sessions to and from LTTng's session files
// (lttng-save(1), lttng-load(1)). The daemon writes and reads the XML
// (Session.SaveConfiguration, Manager.LoadSessions); these commands move
// it between the bus and the caller's files, as the caller.
#pragma once

#include "bus_client.hpp"
#include "exit_status.hpp"

#include <optional>
#include <ostream>
#include <string>

namespace tracectl::cli {

/// LTTng's folder for saved sessions, as lttng-save(1):
/// $LTTNG_HOME/.lttng/sessions, else $HOME/.lttng/sessions. Throws
/// std::runtime_error when neither variable is set.
std::string defaultSessionsFolder();

/// LTTng's system-wide folder for saved sessions (lttng-load(1)).
inline constexpr const char* kSystemSessionsFolder = "/etc/lttng/sessions";

struct SaveArgs {
    std::optional<std::string> name;       ///< none: the current session (unless `all`)
    bool all = false;                      ///< every session of the caller
    std::optional<std::string> outputPath; ///< folder; default_sessions_folder()
    bool force = false;                    ///< overwrite NAME.lttng
};

/// Writes each session to FOLDER/NAME.lttng (made if missing, mode 0700;
/// files 0644, written to a temporary file and renamed). An existing file
/// is kept unless `force` (an error names it). Warnings go to `err`.
/// Returns daemon_error if a file could not be written.
ExitStatus runSave(BusClient& bus, const SaveArgs& args, std::ostream& out, std::ostream& err);

struct LoadArgs {
    std::optional<std::string> name; ///< only this session; none: all
    bool all = false;
    /// A file, or a folder whose *.lttng files are read; default: the
    /// caller's folder (default_sessions_folder()), then the system one.
    std::optional<std::string> inputPath;
    std::optional<std::string> overrideName; ///< with `name`: load it under this name
    std::optional<std::string> overrideUrl;  ///< the output instead of the file's
};

/// Sends each file to Manager.LoadSessions and reports the sessions made.
/// With a name, the files that lack it are passed over; none having it is
/// an error. Goes on past a file that fails, and returns daemon_error if
/// any did. Warnings go to `err`.
ExitStatus runLoad(BusClient& bus, const LoadArgs& args, std::ostream& out, std::ostream& err);

} // namespace tracectl::cli
