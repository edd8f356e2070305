#include "disable_options.hpp"

#include <CLI/CLI.hpp>

namespace tracectl::cli {

void addDisableCommands(CLI::App& app, DisableCommandLine& cl) {
    auto* de = app.add_subcommand(
        "disable-event", "Stop recording the events of event rules (-u or -k) of a channel");
    cl.disableEvent = de;
    addDomainFlags(*de, cl.deDomain);
    de->add_option("PATTERN", cl.dePatterns,
                   "Patterns of the rules to disable, as given to enable-event, comma-separated");
    de->add_flag("-a,--all-events", cl.deAll, "Disable every event rule of the channel");
    de->add_option("-s,--session", cl.deSession,
                   "Session (default: the current session, else your only session)");
    cl.deChannel = de->add_option("-c,--channel", cl.event.channel, "Channel (default: channel0)");
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
    cl.disableChannel = dc;
    addDomainFlags(*dc, cl.dcDomain);
    dc->add_option("NAME", cl.dcNames, "Channels to disable, comma-separated")->required();
    dc->add_option("-s,--session", cl.dcSession,
                   "Session (default: the current session, else your only session)");
    dc->footer("Give exactly one of -u and -k. The channel records nothing, at once if the\n"
               "session is active, until enable-channel of the same name turns it back on.\n\n"
               "Example:\n  tracectl disable-channel -u channel0\n"
               "  tracectl disable-channel -k kchan,kchan2");
}

void finishDisableCommands(DisableCommandLine& cl) {
    if (cl.disableEvent != nullptr && cl.disableEvent->parsed()) {
        cl.event.domain = chosenDomain(cl.deDomain);
        if (cl.event.syscall && cl.event.domain != Domain::Kernel)
            throw CLI::ValidationError("--syscall", "system calls are of the kernel domain (-k)");
        if (cl.deChannel->count() > 0 && cl.event.channel.empty())
            throw CLI::ValidationError("--channel", "needs a channel name");
        const std::vector<std::string> patterns = splitCommas(cl.dePatterns);
        if (cl.deAll && !cl.dePatterns.empty())
            throw CLI::ValidationError("disable-event", "give PATTERN or -a, not both");
        if (!cl.deAll && patterns.empty())
            throw CLI::ValidationError("disable-event", "give a PATTERN or -a");
        cl.event.patterns = cl.deAll ? std::vector<std::string>{""} : patterns;
        if (!cl.deSession.empty())
            cl.event.session = cl.deSession;
    }
    if (cl.disableChannel != nullptr && cl.disableChannel->parsed()) {
        cl.channel.domain = chosenDomain(cl.dcDomain);
        cl.channel.names = splitCommas(cl.dcNames);
        if (cl.channel.names.empty())
            throw CLI::ValidationError("disable-channel", "give a channel NAME");
        if (!cl.dcSession.empty())
            cl.channel.session = cl.dcSession;
    }
}

} // namespace tracectl::cli
