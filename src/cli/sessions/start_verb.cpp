// tracectl start [NAME | -a | -g PATTERN]
#include "cli/commands.hpp"
#include "session_spec_verb.hpp"
#include "session_verbs.hpp"

#include <CLI/CLI.hpp>

namespace tracectl::cli {

void addStartVerb(CLI::App& app, VerbTable& verbs) {
    addSessionSpecVerb(app, verbs, "start", "Start tracing in a session, or several", "Start",
                       runStart)
        .footer("Starts recording; allowed when the session is \"created\" or \"stopped\".\n"
                "With --all or --glob (as lttng start in LTTng 2.14), a session already active\n"
                "is a warning and each failure is reported while the others go on.\n\n"
                "Example:\n  tracectl start web-latency\n  tracectl start --glob 'web-*'");
}

} // namespace tracectl::cli
