// tracectl enable-event -u|-k [PATTERN[,PATTERN...] | -a] [--syscall] [-s S] [-c C]
// [--loglevel L | --loglevel-only L] [-x NAMES] [-f FILTER] [--userspace-probe LOCATION]
#include "cli/kernel_domain.hpp"
#include "cli/trace_commands.hpp"
#include "cli/verbs/verb_options.hpp"
#include "event_verbs.hpp"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <system_error>

namespace tracectl::cli {
namespace {

/// The enable-event command line, as CLI11 fills it in.
struct EnableEventLine {
    EnableEventArgs args;
    EventSelectionFlags selection;
    std::string session;
    std::string loglevel;
    std::string loglevelOnly;
    std::string exclude;
    std::string userspaceProbe;
    CLI::Option* sessionOption = nullptr;
    CLI::Option* loglevelOption = nullptr;
    CLI::Option* loglevelOnlyOption = nullptr;
    CLI::Option* excludeOption = nullptr;
    CLI::Option* userspaceProbeOption = nullptr;
};

void checkEnableEventLine(EnableEventLine& cl) {
    EventSelection selection = resolveEventSelection(
        cl.selection, {cl.loglevelOption, cl.loglevelOnlyOption, cl.excludeOption});
    cl.args.domain = selection.domain;
    cl.args.pattern = std::move(selection.ustPattern);
    cl.args.kernelCalls = std::move(selection.kernelCalls);
    if (cl.userspaceProbeOption->count() > 0) {
        if (selection.domain != Domain::Kernel) {
            throw CLI::ValidationError("--userspace-probe",
                                       "is for kernel events (-k) only, as in LTTng");
        }
        if (cl.selection.all || cl.selection.syscall || cl.args.kernelCalls.size() != 1) {
            throw CLI::ValidationError("--userspace-probe",
                                       "takes one event name (the probe's), without "
                                       "-a or --syscall");
        }
        const char* search = std::getenv("PATH");
        std::error_code ec;
        const std::string cwd = std::filesystem::current_path(ec).string();
        cl.args.userspaceProbe =
            resolveUserspaceProbe(cl.userspaceProbe, search != nullptr ? search : "", cwd);
    }
    if (cl.sessionOption->count() > 0) {
        cl.args.session = cl.session;
    }
    if (cl.loglevelOption->count() > 0) {
        cl.args.loglevel = cl.loglevel;
    } else if (cl.loglevelOnlyOption->count() > 0) {
        cl.args.loglevel = cl.loglevelOnly;
        cl.args.loglevelOnly = true;
    }
    if (cl.excludeOption->count() > 0) {
        cl.args.exclusions = splitCommas(cl.exclude);
    }
    if (selection.domain == Domain::Ust && splitCommas(cl.args.pattern).empty()) {
        throw CLI::ValidationError("PATTERN", "names no event: " + cl.args.pattern);
    }
}

} // namespace

void addEnableEventVerb(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<EnableEventLine>();
    auto* enableEvent = app.add_subcommand(
        "enable-event", "Record events of LTTng-UST apps (-u) or of the kernel (-k)");
    addEventSelection(*enableEvent, cl->selection);
    cl->sessionOption = enableEvent->add_option("-s,--session", cl->session, kCurrentSessionHelp);
    enableEvent->add_option("-c,--channel", cl->args.channel,
                            "Channel (default: channel0, made on first use)");
    cl->loglevelOption = enableEvent->add_option("--loglevel", cl->loglevel,
                                                 "Record this log level or a more severe one "
                                                 "(TRACE_WARNING, info, ...); -u only");
    cl->loglevelOnlyOption = enableEvent->add_option("--loglevel-only", cl->loglevelOnly,
                                                     "Record exactly this log level; -u only");
    cl->loglevelOption->excludes(cl->loglevelOnlyOption);
    cl->excludeOption = enableEvent->add_option("-x,--exclude", cl->exclude,
                                                "Comma-separated event names to leave out; -u "
                                                "only");
    enableEvent->add_option("-f,--filter", cl->args.filter,
                            "Record only the events for which this LTTng filter expression is "
                            "true, e.g. 'intfield > 3 && $ctx.procname == \"foo*\"' (-k: the "
                            "daemon translates it into a tracefs filter, e.g. 'prev_tid == 0')");
    cl->userspaceProbeOption = enableEvent->add_option(
        "--userspace-probe", cl->userspaceProbe,
        "-k only: a userspace probe named PATTERN (one name) at [elf:]PATH:SYMBOL (a "
        "function's entry), [elf:]PATH:SYMBOL%args (the same with its first six integer "
        "arguments, arg0..arg5), [elf:]PATH:SYMBOL%return (its return, with the return value) or "
        "sdt:PATH:PROVIDER:PROBE (a USDT probe, with its arguments)");
    enableEvent->footer(
        "Give exactly one of -u and -k. A rule the session has already (same channel,\n"
        "pattern, log level, exclusions and filter) is refused with\n"
        "org.tracectl.Tracing1.Error.EventRuleExists (exit status 1). A filter expression\n"
        "LTTng 2.13 refuses is refused with a message naming the column.\n"
        "Each comma-separated name is its own rule (one EnableEvents call each, -u and -k);\n"
        "those refused are reported and the others enabled. A -k name without a system\n"
        "is ftrace's (softirq_entry) or lttng-modules' (irq_softirq_entry,\n"
        "kmem_mm_page_alloc), globs included; an event named both ways is recorded once.\n"
        "lttng_statedump_* names ask for the statedump in the channel (the first kernel\n"
        "channel has it when no rule names them; see tracectl(1) for the events written).\n"
        "The kernel domain needs the org.tracectl.Tracing1.trace-kernel right\n"
        "('tracectl list-tracepoints -k' lists the tracepoints).\n\n"
        "Example:\n  tracectl enable-event -u 'my_provider:*' --loglevel TRACE_INFO\n"
        "  tracectl enable-event -k 'sched:*,net:net_dev_xmit'\n"
        "  tracectl enable-event -k sched_switch,irq_softirq_entry,lttng_statedump_process_state\n"
        "  tracectl enable-event -k sched:sched_switch --filter 'prev_tid != 0'\n"
        "  tracectl enable-event -k --syscall openat,close\n"
        "  tracectl enable-event -k --syscall -a");

    verbs.add(*enableEvent, {.check = [cl] { checkEnableEventLine(*cl); },
                             .run =
                                 [cl](BusClient& bus) {
                                     return runEnableEvent(bus, cl->args, std::cout, std::cerr);
                                 }});
}

} // namespace tracectl::cli
