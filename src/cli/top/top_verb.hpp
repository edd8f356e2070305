// The `top` verb: adds its subcommand to the app and its handler to the table.
#pragma once

#include "cli/verbs/verb.hpp"

namespace tracectl::cli {

void addTopVerb(CLI::App& app, VerbTable& verbs);

} // namespace tracectl::cli
