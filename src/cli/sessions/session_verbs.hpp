// The verbs about sessions themselves: create, list, version, show, start, stop, destroy,
// set-session, status and view. Each adds its subcommand to the app and its handler to the
// table (verbs/verb.hpp).
#pragma once

#include "cli/verbs/verb.hpp"

namespace tracectl::cli {

void add_create_verb(CLI::App& app, VerbTable& verbs);
void add_list_verb(CLI::App& app, VerbTable& verbs);
void add_version_verb(CLI::App& app, VerbTable& verbs);
void add_show_verb(CLI::App& app, VerbTable& verbs);
void add_start_verb(CLI::App& app, VerbTable& verbs);
void add_stop_verb(CLI::App& app, VerbTable& verbs);
void add_destroy_verb(CLI::App& app, VerbTable& verbs);
void add_set_session_verb(CLI::App& app, VerbTable& verbs);
void add_status_verb(CLI::App& app, VerbTable& verbs);
void add_view_verb(CLI::App& app, VerbTable& verbs);

} // namespace tracectl::cli
