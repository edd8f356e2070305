// The verbs about what a session records: enable-event, enable-channel, disable-event and
// disable-channel, add-context, track and untrack, and the listings of what may be recorded
// (list-apps, list-tracepoints). Each adds its subcommand(s) to the app and its handler to the
// table (verbs/verb.hpp).
#pragma once

#include "cli/verbs/verb.hpp"

namespace tracectl::cli {

void add_enable_event_verb(CLI::App& app, VerbTable& verbs);
void add_enable_channel_verb(CLI::App& app, VerbTable& verbs);
/// disable-event and disable-channel (disable_options.hpp: they share their options).
void add_disable_verbs(CLI::App& app, VerbTable& verbs);
void add_add_context_verb(CLI::App& app, VerbTable& verbs);
/// track and untrack (track_options.hpp: they share their options).
void add_track_verbs(CLI::App& app, VerbTable& verbs);
void add_list_apps_verb(CLI::App& app, VerbTable& verbs);
void add_list_tracepoints_verb(CLI::App& app, VerbTable& verbs);

} // namespace tracectl::cli
