// tracectl list [NAME | -u | -k] [--json]
#include "cli/commands.hpp"
#include "cli/trace_commands.hpp"
#include "cli/verbs/verb_options.hpp"
#include "session_verbs.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

namespace tracectl::cli {
namespace {

/// The list command line, as CLI11 fills it in.
struct ListLine {
    ListArgs list;
    ShowArgs show; ///< list NAME: show NAME
    bool ust = false;
    bool kernel = false;
    CLI::Option* nameOption = nullptr;
};

ExitStatus runListLine(BusClient& bus, ListLine& cl) {
    if (cl.nameOption->count() > 0) {
        cl.show.json = cl.list.json;
        runShow(bus, cl.show, std::cout, std::cerr);
    } else if (cl.ust) {
        runListApps(bus, true, cl.list.json, std::cout);
    } else if (cl.kernel) {
        runListKernelTracepoints(bus, false, cl.list.json, std::cout);
    } else {
        runList(bus, cl.list, std::cout, std::cerr);
    }
    return ExitStatus::Success;
}

} // namespace

void addListVerb(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<ListLine>();
    auto* list = app.add_subcommand("list", "List your tracing sessions");
    cl->nameOption =
        list->add_option("NAME", cl->show.name,
                         "Show this session instead, as 'tracectl show NAME' (lttng list NAME)");
    auto* listUst = list->add_flag("-u,--userspace", cl->ust,
                                   "List the registered apps and their tracepoints instead, as "
                                   "'tracectl list-apps --tracepoints' (lttng list -u)");
    auto* listKernel = list->add_flag("-k,--kernel", cl->kernel,
                                      "List the kernel's tracepoints instead, as 'tracectl "
                                      "list-tracepoints -k' (lttng list -k)");
    cl->nameOption->excludes(listUst)->excludes(listKernel);
    listUst->excludes(listKernel);
    list->add_flag("--json", cl->list.json, "Print a JSON array with every property");
    list->footer("Lists the sessions you may see, oldest first: name, state, mode, owner,\n"
                 "events discarded, packets lost and output folder; a session that discarded\n"
                 "events or lost packets gets a warning line on standard error.\n"
                 "NAME, -u and -k do what lttng list does with them.\n\n"
                 "Example:\n  tracectl list\n  tracectl list --json\n  tracectl list -u");

    verbs.add(*list, {.check = [cl] { checkUtf8Names({&cl->show.name}); },
                      .run = [cl](BusClient& bus) { return runListLine(bus, *cl); }});
}

} // namespace tracectl::cli
