#include "disable_commands.hpp"

#include "trace_commands.hpp"

#include <CLI/CLI.hpp>
#include <ostream>

namespace tracectl::cli {

bool runDisableCommands(BusClient& bus, const DisableCommandLine& cl, std::ostream& out) {
    if (cl.disableEvent != nullptr && cl.disableEvent->parsed()) {
        const std::string path = resolveSession(bus, cl.event.session);
        const std::string channel = cl.event.channel.empty() ? "channel0" : cl.event.channel;
        for (const std::string& pattern : cl.event.patterns) {
            bus.disableEvents(cl.event.domain, path, cl.event.channel, pattern);
            out << domainLabel(cl.event.domain) << (cl.event.syscall ? " syscall" : " event")
                << (pattern.empty() ? "s of every rule" : " " + pattern) << " disabled in channel "
                << channel << ".\n";
        }
        return true;
    }
    if (cl.disableChannel != nullptr && cl.disableChannel->parsed()) {
        const std::string path = resolveSession(bus, cl.channel.session);
        for (const std::string& name : cl.channel.names) {
            bus.disableChannel(cl.channel.domain, path, name);
            out << domainLabel(cl.channel.domain) << " channel " << name << " disabled.\n";
        }
        return true;
    }
    return false;
}

} // namespace tracectl::cli
