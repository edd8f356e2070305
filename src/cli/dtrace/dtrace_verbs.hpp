// The D program verbs: dtrace and aggregate, the same command under two names. Each adds its
// subcommand to the app and its handler to the table (verbs/verb.hpp).
#pragma once

#include "cli/verbs/verb.hpp"

namespace tracectl::cli {

void addDtraceVerb(CLI::App& app, VerbTable& verbs);
void addAggregateVerb(CLI::App& app, VerbTable& verbs);

} // namespace tracectl::cli
