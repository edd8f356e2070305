// tracectl create [NAME] [-o DIR | -U URL | -C URL -D URL] [--live[=US]] [--snapshot] ...
#include "cli/commands.hpp"
#include "cli/create_options.hpp"
#include "cli/utf8.hpp"
#include "cli/verbs/verb_options.hpp"
#include "session_verbs.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

namespace tracectl::cli {
namespace {

/// The create command line, as CLI11 fills it in.
struct CreateLine {
    CreateArgs args;
    std::string output;
    std::string url;      ///< -U/--set-url
    std::string ctrl_url; ///< -C/--ctrl-url
    std::string data_url; ///< -D/--data-url
    std::string live;     ///< --live[=US] as typed ("" when given no value)
    CLI::Option* output_option = nullptr;
    CLI::Option* url_option = nullptr;
    CLI::Option* ctrl_url_option = nullptr;
    CLI::Option* data_url_option = nullptr;
    CLI::Option* live_option = nullptr;
};

void check_create_line(CreateLine& cl) {
    if (cl.output_option->count() > 0 && cl.output.empty()) {
        throw CLI::ValidationError("--output", "needs a folder");
    }
    const CreateOutputFlags given{cl.output_option->count() > 0,   cl.url_option->count() > 0,
                                  cl.ctrl_url_option->count() > 0, cl.data_url_option->count() > 0,
                                  cl.live_option->count() > 0,     cl.args.snapshot};
    if (const auto problem = check_create_output(given)) {
        throw CLI::ValidationError(problem->option, problem->message);
    }
    cl.args.network.url = optional_name(cl.url_option, cl.url);
    cl.args.network.ctrl_url = optional_name(cl.ctrl_url_option, cl.ctrl_url);
    cl.args.network.data_url = optional_name(cl.data_url_option, cl.data_url);
    if (cl.live_option->count() > 0) {
        cl.args.network.live_timer_us = parse_live_timer(cl.live);
        if (!cl.args.network.live_timer_us) {
            throw CLI::ValidationError(
                "--live", "'" + cl.live +
                              "' is not a live timer in microseconds (1000 to 4294967295); "
                              "give NAME before --live, or write --live=US");
        }
    }
    for (const std::string* url : {&cl.url, &cl.ctrl_url, &cl.data_url}) {
        if (!is_valid_utf8(*url)) {
            throw CLI::ValidationError("URL", "a URL must be valid UTF-8");
        }
    }
    check_utf8_names({&cl.args.name});
    if (!is_valid_utf8(cl.output)) {
        throw CLI::ValidationError("--output", "the folder's path must be valid UTF-8 "
                                               "(D-Bus carries paths as UTF-8 strings)");
    }
    if (cl.output_option->count() > 0) {
        cl.args.output = cl.output;
    }
}

} // namespace

void add_create_verb(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<CreateLine>();
    auto* create = app.add_subcommand("create", "Create a tracing session");
    create->add_option("NAME", cl->args.name,
                       "Name of the session (unique among yours; default, as lttng create: "
                       "auto-YYYYmmdd-HHMMSS, written to ~/lttng-traces/auto-YYYYmmdd-HHMMSS)");
    cl->output_option =
        create
            ->add_option("-o,--output", cl->output,
                         "Folder the trace is written to (default: ~/lttng-traces/NAME-DATE); "
                         "a relative DIR is taken relative to the current folder")
            ->type_name("DIR");
    create->add_flag("--snapshot", cl->args.snapshot,
                     "Snapshot mode (flight recorder): channels overwrite, nothing is written "
                     "until 'tracectl snapshot NAME'");
    create
        ->add_option("--buffers", cl->args.buffers,
                     "Buffer ownership: per-uid (one buffer set per user, the default) or "
                     "per-pid (one per application, written under ust/pid/)")
        ->check(CLI::IsMember({"per-uid", "per-pid"}))
        ->type_name("per-uid|per-pid");
    create->add_flag("--count-events", cl->args.count_events,
                     "Count the event records the consumer writes (events recorded, in show, "
                     "list and top); costs the consumer CPU at millions of events per second. "
                     "Not with --snapshot");
    cl->url_option =
        create
            ->add_option("-U,--set-url", cl->url,
                         "Stream the trace to the lttng-relayd at URL, "
                         "net://HOST[:CTRL_PORT[:DATA_PORT]] (net6:// for IPv6; HOST may be "
                         "[IPv6]; ports 5342 and 5343 by default); file:///DIR is --output DIR")
            ->type_name("URL");
    cl->ctrl_url_option =
        create
            ->add_option("-C,--ctrl-url", cl->ctrl_url,
                         "The relay's control address, tcp://HOST:PORT (tcp6:// for IPv6); "
                         "needs --data-url")
            ->type_name("URL");
    cl->data_url_option =
        create
            ->add_option("-D,--data-url", cl->data_url,
                         "The relay's data address, tcp://HOST:PORT; needs --ctrl-url")
            ->type_name("URL");
    cl->live_option =
        create
            ->add_option(
                "--live", cl->live,
                "Live session: streams to the relay (default net://127.0.0.1) and flushes "
                "every US microseconds (at least 1000; default 1000000) for lttng-live viewers "
                "(babeltrace2 --input-format=lttng-live). Not with --snapshot or --output")
            ->expected(0, 1)
            ->type_name("[=US]");
    create->footer(
        "Creates a session owned by you, in state \"created\"; tracing begins with\n"
        "'tracectl start NAME'. With --set-url, or --ctrl-url and --data-url, the trace\n"
        "goes to an lttng-relayd (2.11 or later) instead of a folder, as lttng create\n"
        "sends it; the relay must answer at create time (else RelayUnavailable).\n\n"
        "Example:\n  tracectl create web-latency --output ./traces/web-latency\n"
        "  tracectl create web --set-url net://relay.example.com\n"
        "  tracectl create web --live=500000 --set-url net://[::1]\n"
        "  babeltrace2 --input-format=lttng-live net://localhost/host/$(hostname)/web");

    verbs.add(*create, {.check = [cl] { check_create_line(*cl); },
                        .run =
                            [cl](BusClient& bus) {
                                run_create(bus, cl->args, std::cout, std::cerr);
                                return ExitStatus::success;
                            }});
}

} // namespace tracectl::cli
