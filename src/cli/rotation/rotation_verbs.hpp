// The verbs about trace chunks: rotate, enable-rotation, disable-rotation, snapshot and
// clear. Each adds its subcommand to the app and its handler to the table (verbs/verb.hpp).
#pragma once

#include "cli/verbs/verb.hpp"

namespace tracectl::cli {

void add_rotate_verb(CLI::App& app, VerbTable& verbs);
void add_clear_verb(CLI::App& app, VerbTable& verbs);
void add_snapshot_verb(CLI::App& app, VerbTable& verbs);
void add_enable_rotation_verb(CLI::App& app, VerbTable& verbs);
void add_disable_rotation_verb(CLI::App& app, VerbTable& verbs);

} // namespace tracectl::cli
