// tracectl list-apps [-t] [--json]
#include "cli/trace_commands.hpp"
#include "event_verbs.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

namespace tracectl::cli {
namespace {

/// The list-apps command line, as CLI11 fills it in.
struct ListAppsLine {
    bool tracepoints = false;
    bool json = false;
};

} // namespace

void addListAppsVerb(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<ListAppsLine>();
    auto* listApps = app.add_subcommand("list-apps", "List the registered LTTng-UST apps");
    listApps->add_flag("-t,--tracepoints", cl->tracepoints, "Also list each app's tracepoints");
    listApps->add_flag("--json", cl->json, "Print a JSON array");
    listApps->footer("Lists the apps you may see (yours; root sees all).\n\nExample:\n"
                     "  tracectl list-apps --tracepoints");

    verbs.add(*listApps, {.run = [cl](BusClient& bus) {
        runListApps(bus, cl->tracepoints, cl->json, std::cout);
        return ExitStatus::Success;
    }});
}

} // namespace tracectl::cli
