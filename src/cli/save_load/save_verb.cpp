// tracectl save [NAME | -a] [-o DIR] [-f]
#include "cli/session_file_commands.hpp"
#include "cli/verbs/verb_options.hpp"
#include "save_load_verbs.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

namespace tracectl::cli {
namespace {

/// The save command line, as CLI11 fills it in.
struct SaveLine {
    SaveArgs args;
    std::string name;
    std::string output;
    CLI::Option* nameOption = nullptr;
    CLI::Option* outputOption = nullptr;
};

} // namespace

void addSaveVerb(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<SaveLine>();
    auto* save = app.add_subcommand("save", "Save sessions to LTTng session files (as lttng save)");
    cl->nameOption = save->add_option("NAME", cl->name, kCurrentSessionHelp);
    auto* all =
        save->add_flag("-a,--all", cl->args.all, "Save every session you own (even as root)");
    cl->nameOption->excludes(all);
    cl->outputOption = save->add_option("-o,--output-path", cl->output,
                                        "Folder to write NAME.lttng in (default: "
                                        "$LTTNG_HOME/.lttng/sessions, else "
                                        "$HOME/.lttng/sessions)")
                           ->type_name("DIR");
    save->add_flag("-f,--force", cl->args.force, "Overwrite an existing NAME.lttng");
    save->footer(
        "Writes LTTng 2.13's session XML, which lttng load and tracectl load read.\n"
        "What LTTng's files cannot hold is named in a warning on standard error.\n"
        "Without NAME or --all, the current session.\n\n"
        "Example:\n  tracectl save web-latency\n  tracectl save --all -o /etc/lttng/sessions/auto");

    verbs.add(
        *save,
        {.check =
             [cl] {
                 checkUtf8Names({&cl->name});
                 cl->args.name = optionalName(cl->nameOption, cl->name);
                 cl->args.outputPath = optionalName(cl->outputOption, cl->output);
             },
         .run = [cl](BusClient& bus) { return runSave(bus, cl->args, std::cout, std::cerr); }});
}

} // namespace tracectl::cli
