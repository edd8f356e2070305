// tracectl destroy [NAME | -a | -g PATTERN]
#include "cli/commands.hpp"
#include "session_spec_verb.hpp"
#include "session_verbs.hpp"

#include <CLI/CLI.hpp>

namespace tracectl::cli {

void add_destroy_verb(CLI::App& app, VerbTable& verbs) {
    add_session_spec_verb(app, verbs, "destroy", "Destroy a session, or several", "Destroy",
                          run_destroy)
        .footer("Stops tracing if needed and removes the session; without NAME, --all or\n"
                "--glob, the current session. The trace files stay on disk. Destroying the\n"
                "current session leaves no current session.\n\n"
                "Example:\n  tracectl destroy web-latency\n  tracectl destroy --all");
}

} // namespace tracectl::cli
