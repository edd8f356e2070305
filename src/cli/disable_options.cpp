#include "disable_options.hpp"

#include <CLI/CLI.hpp>

namespace tracectl::cli {

void add_disable_commands(CLI::App& app, DisableCommandLine& cl) {
    auto* de = app.add_subcommand(
        "disable-event", "Stop recording the events of event rules (-u or -k) of a channel");
    cl.disable_event = de;
    add_domain_flags(*de, cl.de_domain);
    de->add_option("PATTERN", cl.de_patterns,
                   "Patterns of the rules to disable, as given to enable-event, comma-separated");
    de->add_flag("-a,--all-events", cl.de_all, "Disable every event rule of the channel");
    de->add_option("-s,--session", cl.de_session,
                   "Session (default: the current session, else your only session)");
    cl.de_channel = de->add_option("-c,--channel", cl.event.channel, "Channel (default: channel0)");
    de->add_flag("--syscall", cl.event.syscall,
                 "With -k: the patterns name system calls (as lttng disable-event --syscall; "
                 "a rule is found by its pattern either way)");
    de->footer("Give exactly one of -u and -k, and PATTERN or -a. Every rule of the channel whose\n"
               "pattern is PATTERN is disabled, whatever its log level, filter or exclusions; at\n"
               "once if the session is active, and until the same enable-event turns it back on.\n"
               "A pattern no rule of the channel has fails with\n"
               "org.tracectl.Tracing1.Error.NoSuchEventRule (exit status 1).\n\n"
               "Example:\n  tracectl disable-event -u 'my_provider:*'\n"
               "  tracectl disable-event -k -c kchan sched:sched_switch,sched:sched_wakeup\n"
               "  tracectl disable-event -u -a");

    auto* dc = app.add_subcommand("disable-channel",
                                  "Stop recording anything in a UST (-u) or kernel (-k) channel");
    cl.disable_channel = dc;
    add_domain_flags(*dc, cl.dc_domain);
    dc->add_option("NAME", cl.dc_names, "Channels to disable, comma-separated")->required();
    dc->add_option("-s,--session", cl.dc_session,
                   "Session (default: the current session, else your only session)");
    dc->footer("Give exactly one of -u and -k. The channel records nothing, at once if the\n"
               "session is active, until enable-channel of the same name turns it back on.\n\n"
               "Example:\n  tracectl disable-channel -u channel0\n"
               "  tracectl disable-channel -k kchan,kchan2");
}

void finish_disable_commands(DisableCommandLine& cl) {
    if (cl.disable_event != nullptr && cl.disable_event->parsed()) {
        cl.event.domain = chosen_domain(cl.de_domain);
        if (cl.event.syscall && cl.event.domain != Domain::kernel)
            throw CLI::ValidationError("--syscall", "system calls are of the kernel domain (-k)");
        if (cl.de_channel->count() > 0 && cl.event.channel.empty())
            throw CLI::ValidationError("--channel", "needs a channel name");
        const std::vector<std::string> patterns = split_commas(cl.de_patterns);
        if (cl.de_all && !cl.de_patterns.empty())
            throw CLI::ValidationError("disable-event", "give PATTERN or -a, not both");
        if (!cl.de_all && patterns.empty())
            throw CLI::ValidationError("disable-event", "give a PATTERN or -a");
        cl.event.patterns = cl.de_all ? std::vector<std::string>{""} : patterns;
        if (!cl.de_session.empty())
            cl.event.session = cl.de_session;
    }
    if (cl.disable_channel != nullptr && cl.disable_channel->parsed()) {
        cl.channel.domain = chosen_domain(cl.dc_domain);
        cl.channel.names = split_commas(cl.dc_names);
        if (cl.channel.names.empty())
            throw CLI::ValidationError("disable-channel", "give a channel NAME");
        if (!cl.dc_session.empty())
            cl.channel.session = cl.dc_session;
    }
}

} // namespace tracectl::cli
