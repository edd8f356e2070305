#include "disable_commands.hpp"

#include "trace_commands.hpp"

#include <CLI/CLI.hpp>
#include <ostream>

namespace tracectl::cli {

bool run_disable_commands(BusClient& bus, const DisableCommandLine& cl, std::ostream& out) {
    if (cl.disable_event != nullptr && cl.disable_event->parsed()) {
        const std::string path = resolve_session(bus, cl.event.session);
        const std::string channel = cl.event.channel.empty() ? "channel0" : cl.event.channel;
        for (const std::string& pattern : cl.event.patterns) {
            bus.disable_events(cl.event.domain, path, cl.event.channel, pattern);
            out << domain_label(cl.event.domain) << (cl.event.syscall ? " syscall" : " event")
                << (pattern.empty() ? "s of every rule" : " " + pattern) << " disabled in channel "
                << channel << ".\n";
        }
        return true;
    }
    if (cl.disable_channel != nullptr && cl.disable_channel->parsed()) {
        const std::string path = resolve_session(bus, cl.channel.session);
        for (const std::string& name : cl.channel.names) {
            bus.disable_channel(cl.channel.domain, path, name);
            out << domain_label(cl.channel.domain) << " channel " << name << " disabled.\n";
        }
        return true;
    }
    return false;
}

} // namespace tracectl::cli
