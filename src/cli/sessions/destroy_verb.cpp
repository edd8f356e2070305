// tracectl destroy [NAME | -a | -g PATTERN]
#include "cli/commands.hpp"
#include "session_spec_verb.hpp"
#include "session_verbs.hpp"

#include <CLI/CLI.hpp>

namespace tracectl::cli {

void addDestroyVerb(CLI::App& app, VerbTable& verbs) {
    addSessionSpecVerb(app, verbs, "destroy", "Destroy a session, or several", "Destroy",
                       runDestroy)
        .footer("Stops tracing if needed and removes the session; without NAME, --all or\n"
                "--glob, the current session. The trace files stay on disk. Destroying the\n"
                "current session leaves no current session.\n\n"
                "Example:\n  tracectl destroy web-latency\n  tracectl destroy --all");
}

} // namespace tracectl::cli
