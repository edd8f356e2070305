#include "track_commands.hpp"

#include "trace_commands.hpp"

#include <CLI/CLI.hpp>
#include <ostream>

namespace tracectl::cli {

void addTrackCommands(CLI::App& app, TrackCommandLine& line) {
    line.trackCommand = addTrackCommand(app, true, line.track);
    line.untrackCommand = addTrackCommand(app, false, line.untrack);
}

bool trackCommandParsed(const TrackCommandLine& line) {
    return (line.trackCommand != nullptr && line.trackCommand->parsed()) ||
           (line.untrackCommand != nullptr && line.untrackCommand->parsed());
}

void resolveTrackCommands(TrackCommandLine& line) {
    if (line.trackCommand->parsed()) {
        line.call = resolveTrackCall(line.track, true, lookupUserId, lookupGroupId);
    } else if (line.untrackCommand->parsed()) {
        line.call = resolveTrackCall(line.untrack, false, lookupUserId, lookupGroupId);
    }
}

void runTrackCommand(BusClient& bus, const TrackCommandLine& line, std::ostream& out) {
    const TrackCall& call = line.call;
    const std::string path = resolveSession(bus, call.session);
    bus.changeTracker(call.track, call.domain, path, call.attribute, call.values, call.all);
    // What the tracker holds now, as show prints it.
    const std::string section = formatTrackingSection(bus.sessionProperties(path));
    const std::string prefix =
        "  " + std::string(domainName(call.domain)) + " " + call.attribute + ": ";
    std::string now;
    if (const auto at = section.find(prefix); at != std::string::npos) {
        now = section.substr(at + prefix.size(), section.find('\n', at) - at - prefix.size());
    }
    out << domainLabel(call.domain) << " " << call.attribute << " tracker of session "
        << bus.sessionName(path) << ": " << (now.empty() ? "changed" : now) << ".\n";
}

} // namespace tracectl::cli
