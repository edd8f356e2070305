// tracectl view [NAME] [-e VIEWER]: runs babeltrace2 (its kernel call stacks named:
// view_command.hpp) or VIEWER on the session's folder.
#include "cli/error_report.hpp"
#include "cli/trace_commands.hpp"
#include "cli/verbs/verb_options.hpp"
#include "cli/view_command.hpp"
#include "session_verbs.hpp"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>
#include <unistd.h>

namespace tracectl::cli {
namespace {

/// The view command line, as CLI11 fills it in.
struct ViewLine {
    std::string session;
    std::string viewer;
    CLI::Option* sessionOption = nullptr;
    CLI::Option* viewerOption = nullptr;
};

/// babeltrace2 through the call stack symbolizer, or: replaces tracectl with
/// the viewer, and returns only if it cannot run.
ExitStatus runView(BusClient& bus, const ViewLine& cl) {
    const std::string dir = sessionOutput(bus, optionalName(cl.sessionOption, cl.session));
    if (cl.viewerOption->count() == 0)
        return runSymbolizedView(dir, std::cout);
    std::vector<std::string> words = splitWords(cl.viewer);
    if (words.empty()) {
        printErrorLine(std::cerr, "--viewer: give a command");
        return ExitStatus::Usage;
    }
    words.push_back(dir);
    std::vector<char*> argvView;
    for (std::string& word : words) {
        argvView.push_back(word.data());
    }
    argvView.push_back(nullptr);
    std::cout.flush();
    execvp(argvView.front(), argvView.data());
    printErrorLine(std::cerr,
                   "cannot run " + words.front() + ": " + std::string(std::strerror(errno)));
    return ExitStatus::DaemonError;
}

} // namespace

void addViewVerb(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<ViewLine>();
    auto* view = app.add_subcommand("view", "Print a session's trace with babeltrace2");
    cl->sessionOption = view->add_option("NAME", cl->session, kCurrentSessionHelp);
    cl->viewerOption =
        view->add_option("-e,--viewer", cl->viewer,
                         "Run VIEWER instead of babeltrace2 (split at spaces, the trace folder "
                         "appended), as lttng view --viewer")
            ->type_name("VIEWER");
    view->footer("Runs babeltrace2 on the session's output folder; stop the session first\n"
                 "for a complete trace. Kernel call stack addresses (callstack-kernel) are\n"
                 "named as <symbol+offset> from the trace's tracectl_kernel_symbol "
                 "events.\n\nExample:\n  tracectl view web-latency\n"
                 "  tracectl view web-latency -e babeltrace");

    verbs.add(*view, {.run = [cl](BusClient& bus) { return runView(bus, *cl); }});
}

} // namespace tracectl::cli
