// The session files a daemon loads at start, from the folders LTTng uses:
// /etc/lttng/sessions/auto for the system instance, and
// $LTTNG_HOME/.lttng/sessions/auto (else $HOME/...) for a per-user one
// (lttng-tools 2.13 src/common/defaults.h DEFAULT_SESSION_SYSTEM_CONFIGPATH
// and DEFAULT_SESSION_HOME_CONFIGPATH, "auto" subfolder; lttng-sessiond(8)).
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace tracectl {

/// One file to auto-load: its path and text.
struct AutoLoadFile {
    std::string path;
    std::string text;
};

/// Reads every regular file named "*.lttng" in `directory`, sorted by name.
/// A file is refused (appended to `refusals` with the reason, not read)
/// unless it is owned by root or by `user`, and writable by its owner only;
/// symbolic links are refused, and so is a file over the session file size
/// bound. A missing folder gives nothing; an unreadable one is a refusal.
/// Never throws.
std::vector<AutoLoadFile> readAutoLoadFiles(const std::string& directory, uid_t user,
                                            std::vector<std::string>& refusals);

} // namespace tracectl
