#include "track_commands.hpp"

#include "trace_commands.hpp"

#include <CLI/CLI.hpp>
#include <ostream>

namespace tracectl::cli {

void add_track_commands(CLI::App& app, TrackCommandLine& line) {
    line.track_command = add_track_command(app, true, line.track);
    line.untrack_command = add_track_command(app, false, line.untrack);
}

bool track_command_parsed(const TrackCommandLine& line) {
    return (line.track_command != nullptr && line.track_command->parsed()) ||
           (line.untrack_command != nullptr && line.untrack_command->parsed());
}

void resolve_track_commands(TrackCommandLine& line) {
    if (line.track_command->parsed()) {
        line.call = resolve_track_call(line.track, true, lookup_user_id, lookup_group_id);
    } else if (line.untrack_command->parsed()) {
        line.call = resolve_track_call(line.untrack, false, lookup_user_id, lookup_group_id);
    }
}

void run_track_command(BusClient& bus, const TrackCommandLine& line, std::ostream& out) {
    const TrackCall& call = line.call;
    const std::string path = resolve_session(bus, call.session);
    bus.change_tracker(call.track, call.domain, path, call.attribute, call.values, call.all);
    // What the tracker holds now, as show prints it.
    const std::string section = format_tracking_section(bus.session_properties(path));
    const std::string prefix =
        "  " + std::string(domain_name(call.domain)) + " " + call.attribute + ": ";
    std::string now;
    if (const auto at = section.find(prefix); at != std::string::npos) {
        now = section.substr(at + prefix.size(), section.find('\n', at) - at - prefix.size());
    }
    out << domain_label(call.domain) << " " << call.attribute << " tracker of session "
        << bus.session_name(path) << ": " << (now.empty() ? "changed" : now) << ".\n";
}

} // namespace tracectl::cli
