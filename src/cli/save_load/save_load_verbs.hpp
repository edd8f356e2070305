// The verbs about LTTng session files: save and load. Each adds its subcommand to the app and
// its handler to the table (verbs/verb.hpp).
#pragma once

#include "cli/verbs/verb.hpp"

namespace tracectl::cli {

void addSaveVerb(CLI::App& app, VerbTable& verbs);
void addLoadVerb(CLI::App& app, VerbTable& verbs);

} // namespace tracectl::cli
