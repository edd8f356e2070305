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
    CLI::Option* session_option = nullptr;
    CLI::Option* viewer_option = nullptr;
};

/// babeltrace2 through the call stack symbolizer, or: replaces tracectl with
/// the viewer, and returns only if it cannot run.
ExitStatus run_view(BusClient& bus, const ViewLine& cl) {
    const std::string dir = session_output(bus, optional_name(cl.session_option, cl.session));
    if (cl.viewer_option->count() == 0)
        return run_symbolized_view(dir, std::cout);
    std::vector<std::string> words = split_words(cl.viewer);
    if (words.empty()) {
        print_error_line(std::cerr, "--viewer: give a command");
        return ExitStatus::usage;
    }
    words.push_back(dir);
    std::vector<char*> argv_view;
    for (std::string& word : words) {
        argv_view.push_back(word.data());
    }
    argv_view.push_back(nullptr);
    std::cout.flush();
    execvp(argv_view.front(), argv_view.data());
    print_error_line(std::cerr,
                     "cannot run " + words.front() + ": " + std::string(std::strerror(errno)));
    return ExitStatus::daemon_error;
}

} // namespace

void add_view_verb(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<ViewLine>();
    auto* view = app.add_subcommand("view", "Print a session's trace with babeltrace2");
    cl->session_option = view->add_option("NAME", cl->session, current_session_help);
    cl->viewer_option =
        view->add_option("-e,--viewer", cl->viewer,
                         "Run VIEWER instead of babeltrace2 (split at spaces, the trace folder "
                         "appended), as lttng view --viewer")
            ->type_name("VIEWER");
    view->footer("Runs babeltrace2 on the session's output folder; stop the session first\n"
                 "for a complete trace. Kernel call stack addresses (callstack-kernel) are\n"
                 "named as <symbol+offset> from the trace's tracectl_kernel_symbol "
                 "events.\n\nExample:\n  tracectl view web-latency\n"
                 "  tracectl view web-latency -e babeltrace");

    verbs.add(*view, {.run = [cl](BusClient& bus) { return run_view(bus, *cl); }});
}

} // namespace tracectl::cli
