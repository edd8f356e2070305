// The verbs about what a session records: enable-event, enable-channel, disable-event and
// disable-channel, add-context, track and untrack, and the listings of what may be recorded
// (list-apps, list-tracepoints). Each adds its subcommand(s) to the app and its handler to the
// table (verbs/verb.hpp).
#pragma once

#include "cli/verbs/verb.hpp"

namespace tracectl::cli {

void addEnableEventVerb(CLI::App& app, VerbTable& verbs);
void addEnableChannelVerb(CLI::App& app, VerbTable& verbs);
/// disable-event and disable-channel (disable_options.hpp: they share their options).
void addDisableVerbs(CLI::App& app, VerbTable& verbs);
void addAddContextVerb(CLI::App& app, VerbTable& verbs);
/// track and untrack (track_options.hpp: they share their options).
void addTrackVerbs(CLI::App& app, VerbTable& verbs);
void addListAppsVerb(CLI::App& app, VerbTable& verbs);
void addListTracepointsVerb(CLI::App& app, VerbTable& verbs);

} // namespace tracectl::cli
