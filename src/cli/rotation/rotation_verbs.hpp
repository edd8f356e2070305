// The verbs about trace chunks: rotate, enable-rotation, disable-rotation, snapshot and
// clear. Each adds its subcommand to the app and its handler to the table (verbs/verb.hpp).
#pragma once

#include "cli/verbs/verb.hpp"

namespace tracectl::cli {

void addRotateVerb(CLI::App& app, VerbTable& verbs);
void addClearVerb(CLI::App& app, VerbTable& verbs);
void addSnapshotVerb(CLI::App& app, VerbTable& verbs);
void addEnableRotationVerb(CLI::App& app, VerbTable& verbs);
void addDisableRotationVerb(CLI::App& app, VerbTable& verbs);

} // namespace tracectl::cli
