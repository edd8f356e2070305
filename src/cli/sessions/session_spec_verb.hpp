// What start, stop and destroy share: a verb over [NAME | -a/--all | -g/--glob PATTERN].
#pragma once

#include "cli/session_selection.hpp"
#include "cli/verbs/verb.hpp"

#include <iosfwd>
#include <string>

namespace tracectl::cli {

/// The command of such a verb (commands.hpp's run_start, run_stop, run_destroy).
using SessionSpecCommand = ExitStatus (*)(BusClient& bus, const SessionSpec& spec,
                                          std::ostream& out, std::ostream& err);

/// Adds the subcommand `name` (`description`, `footer`) with NAME/-a/-g described by `verb`
/// ("Start"), running `command` on the sessions they select.
CLI::App& addSessionSpecVerb(CLI::App& app, VerbTable& verbs, const std::string& name,
                             const std::string& description, const std::string& verb,
                             SessionSpecCommand command);

} // namespace tracectl::cli
