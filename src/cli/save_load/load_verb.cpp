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
    std::string override_name;
    std::string override_url;
    CLI::Option* name_option = nullptr;
    CLI::Option* input_option = nullptr;
    CLI::Option* override_name_option = nullptr;
    CLI::Option* override_url_option = nullptr;
};

void check_load_line(LoadLine& cl) {
    check_utf8_names({&cl.name, &cl.override_name});
    cl.args.name = optional_name(cl.name_option, cl.name);
    cl.args.input_path = optional_name(cl.input_option, cl.input);
    cl.args.override_name = optional_name(cl.override_name_option, cl.override_name);
    cl.args.override_url = optional_name(cl.override_url_option, cl.override_url);
}

} // namespace

void add_load_verb(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<LoadLine>();
    auto* load =
        app.add_subcommand("load", "Make sessions from LTTng session files (as lttng load)");
    cl->name_option = load->add_option("NAME", cl->name,
                                       "Load only the session of this name (default: every one)");
    auto* all = load->add_flag("-a,--all", cl->args.all, "Load every session (the default)");
    cl->name_option->excludes(all);
    cl->input_option = load->add_option("-i,--input-path", cl->input,
                                        "A session file, or a folder of *.lttng files (default: "
                                        "$LTTNG_HOME/.lttng/sessions, else $HOME/.lttng/sessions, "
                                        "then /etc/lttng/sessions)")
                           ->type_name("PATH");
    cl->override_name_option = load->add_option("--override-name", cl->override_name,
                                                "Load session NAME under this name instead")
                                   ->type_name("NEWNAME")
                                   ->needs(cl->name_option);
    cl->override_url_option =
        load->add_option("--override-url", cl->override_url,
                         "Write (file:///PATH) or stream (net://HOST) the loaded sessions there "
                         "instead of the files' outputs, as create --set-url")
            ->type_name("URL");
    load->footer("Reads LTTng 2.13's session XML (lttng save writes it); the sessions are\n"
                 "yours, and each file loads whole or not at all. A session saved while\n"
                 "active starts. What tracectl lacks is left out and named in a warning.\n\n"
                 "Example:\n  tracectl load web-latency\n  tracectl load -i ~/saved/web.lttng");

    verbs.add(
        *load,
        {.check = [cl] { check_load_line(*cl); },
         .run = [cl](BusClient& bus) { return run_load(bus, cl->args, std::cout, std::cerr); }});
}

} // namespace tracectl::cli
