// The verbs about sessions themselves: create, list, version, show, start, stop, destroy,
// set-session, status and view. Each adds its subcommand to the app and its handler to the
// table (verbs/verb.hpp).
#pragma once

#include "cli/verbs/verb.hpp"

namespace tracectl::cli {

void addCreateVerb(CLI::App& app, VerbTable& verbs);
void addListVerb(CLI::App& app, VerbTable& verbs);
void addVersionVerb(CLI::App& app, VerbTable& verbs);
void addShowVerb(CLI::App& app, VerbTable& verbs);
void addStartVerb(CLI::App& app, VerbTable& verbs);
void addStopVerb(CLI::App& app, VerbTable& verbs);
void addDestroyVerb(CLI::App& app, VerbTable& verbs);
void addSetSessionVerb(CLI::App& app, VerbTable& verbs);
void addStatusVerb(CLI::App& app, VerbTable& verbs);
void addViewVerb(CLI::App& app, VerbTable& verbs);

} // namespace tracectl::cli
