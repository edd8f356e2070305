// The verbs about LTTng session files: save and load. Each adds its subcommand to the app and
// its handler to the table (verbs/verb.hpp).
#pragma once

#include "cli/verbs/verb.hpp"

namespace tracectl::cli {

void add_save_verb(CLI::App& app, VerbTable& verbs);
void add_load_verb(CLI::App& app, VerbTable& verbs);

} // namespace tracectl::cli
