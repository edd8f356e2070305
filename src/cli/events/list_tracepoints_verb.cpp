// tracectl list-tracepoints -k [--fields] [--json]
#include "cli/kernel_domain.hpp"
#include "cli/trace_commands.hpp"
#include "event_verbs.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

namespace tracectl::cli {
namespace {

/// The list-tracepoints command line, as CLI11 fills it in.
struct ListTracepointsLine {
    DomainFlags domain;
    bool fields = false;
    bool json = false;
};

} // namespace

void addListTracepointsVerb(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<ListTracepointsLine>();
    auto* listTracepoints =
        app.add_subcommand("list-tracepoints", "List the kernel's tracepoints (-k)");
    addDomainFlags(*listTracepoints, cl->domain);
    cl->domain.userspaceOption->description(
        "Refused: UST tracepoints belong to each app (tracectl list-apps --tracepoints)");
    cl->domain.kernelOption->description("The kernel domain; required");
    listTracepoints->add_flag("--fields", cl->fields,
                              "Also list each tracepoint's fields, as 'TYPE NAME'");
    listTracepoints->add_flag(
        "--json", cl->json,
        "Print a JSON array of {system, event, lttng_name, fields: [{name, type}]}");
    listTracepoints->footer(
        "Lists every tracefs tracepoint as system:event, sorted (Manager.ListTracepoints),\n"
        "then lttng-modules' name of it where that is another: irq:softirq_entry\n"
        "(irq_softirq_entry), the event's name in the trace, which enable-event -k takes\n"
        "too. Also lists the ip provider's probes and lttng-modules' statedump events.\n"
        "Needs the org.tracectl.Tracing1.trace-kernel right and a usable tracefs\n"
        "(org.tracectl.Tracing1.Error.KernelUnavailable otherwise, exit status 1).\n"
        "UST tracepoints belong to each app: tracectl list-apps --tracepoints.\n\n"
        "Example:\n  tracectl list-tracepoints -k\n"
        "  tracectl list-tracepoints -k --fields\n  tracectl list-tracepoints -k --json");

    verbs.add(*listTracepoints,
              {.check =
                   [cl] {
                       if (chosenDomain(cl->domain) == Domain::Ust) {
                           throw CLI::ValidationError("-u", "UST tracepoints belong to each app: "
                                                            "tracectl list-apps --tracepoints");
                       }
                   },
               .run =
                   [cl](BusClient& bus) {
                       runListKernelTracepoints(bus, cl->fields, cl->json, std::cout);
                       return ExitStatus::Success;
                   }});
}

} // namespace tracectl::cli
