// A verb of tracectl (a subcommand: create, list, enable-event, ...) as the verb table holds
// it: the subcommand CLI11 parsed and what to do then. Each verb's file has one function,
// add_<verb>_verb(CLI::App&, VerbTable&), that adds the subcommand and its options to the
// app and registers its handler; main.cpp lists those functions in --help's order.
#pragma once

#include "cli/cli11_fwd.hpp"
#include "cli/exit_status.hpp"

#include <functional>
#include <optional>
#include <utility>
#include <vector>

namespace tracectl::cli {

class BusClient; // bus_client.hpp

/// What a verb does once its command line is parsed, step by step. Each step may be empty
/// (written with designated initializers: `{.check = ..., .run = ...}`).
struct VerbHandler {
    /// Completes what CLI11 parsed (reads a program file, ...), before the global options are
    /// checked. Throws CLI::ValidationError: a usage error (exit status 2).
    std::function<void()> finish = {};
    /// Checks and completes the verb's options, after the global options. Throws
    /// CLI::ValidationError: a usage error (exit status 2).
    std::function<void()> check = {};
    /// Runs before the bus is reached: a status returned ends the run with it, as is.
    std::function<std::optional<ExitStatus>()> beforeBus = {};
    /// Runs the verb over the bus. A status other than success ends the run as is (standard
    /// output flushed); on success, an unwritable standard output makes it daemon_error.
    /// D-Bus errors are thrown (main reports them).
    std::function<ExitStatus(BusClient& bus)> run = {};
};

/// The verbs added to the app and their handlers.
class VerbTable {
public:
    /// Registers `handler` for `command`, a subcommand of the app.
    void add(const CLI::App& command, VerbHandler handler);

    /// The handler of the subcommand CLI11 parsed, or nullptr if none was.
    const VerbHandler* parsed() const;

private:
    std::vector<std::pair<const CLI::App*, VerbHandler>> verbs_;
};

/// Adds one verb (or a pair sharing their options, as track/untrack) to `app`, and its
/// handler to `verbs`.
using AddVerb = void (*)(CLI::App& app, VerbTable& verbs);

} // namespace tracectl::cli
