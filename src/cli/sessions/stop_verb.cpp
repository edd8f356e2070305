// tracectl stop [NAME | -a | -g PATTERN]
#include "cli/commands.hpp"
#include "session_spec_verb.hpp"
#include "session_verbs.hpp"

#include <CLI/CLI.hpp>

namespace tracectl::cli {

void addStopVerb(CLI::App& app, VerbTable& verbs) {
    addSessionSpecVerb(app, verbs, "stop", "Stop tracing in a session, or several", "Stop", runStop)
        .footer("Stops recording; allowed when the session is \"active\". What was recorded\n"
                "stays in the output folder. With --all or --glob, a session not active is a\n"
                "warning and each failure is reported while the others go on.\n\n"
                "Example:\n  tracectl stop web-latency\n  tracectl stop --all");
}

} // namespace tracectl::cli
