// What each tracectl subcommand does: the D-Bus calls through BusClient and the output.
#pragma once

#include "bus_client.hpp"

#include <iosfwd>
#include <optional>
#include <string>

namespace tracectl::cli {

/// Arguments of `tracectl create`.
struct CreateArgs {
    std::string name;
    std::optional<std::string> output;  ///< --output DIR as typed (may be relative)
    bool snapshot = false;              ///< --snapshot
    std::optional<std::string> buffers; ///< --buffers per-uid|per-pid
    bool count_events = false;          ///< --count-events (CreateSession "count-events")
};

/// Arguments of `tracectl list` and `tracectl show`.
struct ListArgs {
    bool json = false; ///< --json
};
struct ShowArgs {
    std::string name;
    bool json = false; ///< --json
};

/// Arguments of `tracectl destroy`: exactly one of `name` and `all` (checked by the caller).
struct DestroyArgs {
    std::optional<std::string> name;
    bool all = false; ///< --all
};

/// Creates the session (output folder made absolute against the current directory), then
/// reads its properties and prints "Session NAME created (id ID, output DIR)".
void run_create(BusClient& bus, const CreateArgs& args, std::ostream& out);

/// Prints every session the caller may see (ListSessions), oldest first: a table, or a JSON array;
/// then, on `err`, one "tracectl: warning: ..." line (loss_warning()) per session that
/// discarded events or lost packets.
void run_list(BusClient& bus, const ListArgs& args, std::ostream& out, std::ostream& err);

/// Prints every property of the session called `name`: key: value lines and the statistics
/// section, or a JSON object; then its loss warning on `err`, if any.
void run_show(BusClient& bus, const ShowArgs& args, std::ostream& out, std::ostream& err);

/// Starts tracing in the session called `name`.
void run_start(BusClient& bus, const std::string& name, std::ostream& out);

/// Stops tracing in the session called `name`.
void run_stop(BusClient& bus, const std::string& name, std::ostream& out);

/// Destroys the session called `args.name`, or with `args.all` every session ListSessions
/// returns (sessions that vanish meanwhile are skipped); prints one line per session destroyed.
void run_destroy(BusClient& bus, const DestroyArgs& args, std::ostream& out);

/// `tracectl rotate NAME [--wait]`: prints the archive's folder on `out`;
/// with `wait`, once it is complete, with progress lines on `progress`.
void run_rotate(BusClient& bus, const std::string& name, bool wait, std::ostream& out,
                std::ostream& progress);

} // namespace tracectl::cli
