// tracectl load [NAME | -a] [-i PATH] [--override-name NEWNAME] [--override-url URL]
#include "cli/session_file_commands.hpp"
#include "cli/verbs/verb_options.hpp"
#include "save_load_verbs.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

namespace tracectl::cli {
namespace {

/// The load command line, as CLI11 fills it in.
struct LoadLine {
    LoadArgs args;
    std::string name;
    std::string input;
    std::string overrideName;
    std::string overrideUrl;
    CLI::Option* nameOption = nullptr;
    CLI::Option* inputOption = nullptr;
    CLI::Option* overrideNameOption = nullptr;
    CLI::Option* overrideUrlOption = nullptr;
};

void checkLoadLine(LoadLine& cl) {
    checkUtf8Names({&cl.name, &cl.overrideName});
    cl.args.name = optionalName(cl.nameOption, cl.name);
    cl.args.inputPath = optionalName(cl.inputOption, cl.input);
    cl.args.overrideName = optionalName(cl.overrideNameOption, cl.overrideName);
    cl.args.overrideUrl = optionalName(cl.overrideUrlOption, cl.overrideUrl);
}

} // namespace

void addLoadVerb(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<LoadLine>();
    auto* load =
        app.add_subcommand("load", "Make sessions from LTTng session files (as lttng load)");
    cl->nameOption = load->add_option("NAME", cl->name,
                                      "Load only the session of this name (default: every one)");
    auto* all = load->add_flag("-a,--all", cl->args.all, "Load every session (the default)");
    cl->nameOption->excludes(all);
    cl->inputOption = load->add_option("-i,--input-path", cl->input,
                                       "A session file, or a folder of *.lttng files (default: "
                                       "$LTTNG_HOME/.lttng/sessions, else $HOME/.lttng/sessions, "
                                       "then /etc/lttng/sessions)")
                          ->type_name("PATH");
    cl->overrideNameOption = load->add_option("--override-name", cl->overrideName,
                                              "Load session NAME under this name instead")
                                 ->type_name("NEWNAME")
                                 ->needs(cl->nameOption);
    cl->overrideUrlOption =
        load->add_option("--override-url", cl->overrideUrl,
                         "Write (file:///PATH) or stream (net://HOST) the loaded sessions there "
                         "instead of the files' outputs, as create --set-url")
            ->type_name("URL");
    load->footer("Reads LTTng 2.13's session XML (lttng save writes it); the sessions are\n"
                 "yours, and each file loads whole or not at all. A session saved while\n"
                 "active starts. What tracectl lacks is left out and named in a warning.\n\n"
                 "Example:\n  tracectl load web-latency\n  tracectl load -i ~/saved/web.lttng");

    verbs.add(
        *load,
        {.check = [cl] { checkLoadLine(*cl); },
         .run = [cl](BusClient& bus) { return runLoad(bus, cl->args, std::cout, std::cerr); }});
}

} // namespace tracectl::cli
