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
    CLI::Option* name_option = nullptr;
};

ExitStatus run_list_line(BusClient& bus, ListLine& cl) {
    if (cl.name_option->count() > 0) {
        cl.show.json = cl.list.json;
        run_show(bus, cl.show, std::cout, std::cerr);
    } else if (cl.ust) {
        run_list_apps(bus, true, cl.list.json, std::cout);
    } else if (cl.kernel) {
        run_list_kernel_tracepoints(bus, false, cl.list.json, std::cout);
    } else {
        run_list(bus, cl.list, std::cout, std::cerr);
    }
    return ExitStatus::success;
}

} // namespace

void add_list_verb(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<ListLine>();
    auto* list = app.add_subcommand("list", "List your tracing sessions");
    cl->name_option =
        list->add_option("NAME", cl->show.name,
                         "Show this session instead, as 'tracectl show NAME' (lttng list NAME)");
    auto* list_ust = list->add_flag("-u,--userspace", cl->ust,
                                    "List the registered apps and their tracepoints instead, as "
                                    "'tracectl list-apps --tracepoints' (lttng list -u)");
    auto* list_kernel = list->add_flag("-k,--kernel", cl->kernel,
                                       "List the kernel's tracepoints instead, as 'tracectl "
                                       "list-tracepoints -k' (lttng list -k)");
    cl->name_option->excludes(list_ust)->excludes(list_kernel);
    list_ust->excludes(list_kernel);
    list->add_flag("--json", cl->list.json, "Print a JSON array with every property");
    list->footer("Lists the sessions you may see, oldest first: name, state, mode, owner,\n"
                 "events discarded, packets lost and output folder; a session that discarded\n"
                 "events or lost packets gets a warning line on standard error.\n"
                 "NAME, -u and -k do what lttng list does with them.\n\n"
                 "Example:\n  tracectl list\n  tracectl list --json\n  tracectl list -u");

    verbs.add(*list, {.check = [cl] { check_utf8_names({&cl->show.name}); },
                      .run = [cl](BusClient& bus) { return run_list_line(bus, *cl); }});
}

} // namespace tracectl::cli
