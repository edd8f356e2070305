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
    std::string url;     ///< -U/--set-url
    std::string ctrlUrl; ///< -C/--ctrl-url
    std::string dataUrl; ///< -D/--data-url
    std::string live;    ///< --live[=US] as typed ("" when given no value)
    CLI::Option* nameOption = nullptr;
    CLI::Option* outputOption = nullptr;
    CLI::Option* urlOption = nullptr;
    CLI::Option* ctrlUrlOption = nullptr;
    CLI::Option* dataUrlOption = nullptr;
    CLI::Option* liveOption = nullptr;
};

void checkCreateLine(CreateLine& cl) {
    if (cl.nameOption->count() > 0 && cl.args.name.empty()) {
        // '' is not "no name": a typo or an empty variable would create an
        // auto-named session nobody asked for.
        throw CLI::ValidationError("NAME", "a session name cannot be empty (leave NAME out for "
                                           "an auto-YYYYmmdd-HHMMSS name)");
    }
    if (cl.outputOption->count() > 0 && cl.output.empty()) {
        throw CLI::ValidationError("--output", "needs a folder");
    }
    const CreateOutputFlags given{cl.outputOption->count() > 0,  cl.urlOption->count() > 0,
                                  cl.ctrlUrlOption->count() > 0, cl.dataUrlOption->count() > 0,
                                  cl.liveOption->count() > 0,    cl.args.snapshot};
    if (const auto problem = checkCreateOutput(given)) {
        throw CLI::ValidationError(problem->option, problem->message);
    }
    cl.args.network.url = optionalName(cl.urlOption, cl.url);
    cl.args.network.ctrlUrl = optionalName(cl.ctrlUrlOption, cl.ctrlUrl);
    cl.args.network.dataUrl = optionalName(cl.dataUrlOption, cl.dataUrl);
    if (cl.liveOption->count() > 0) {
        cl.args.network.liveTimerUs = parseLiveTimer(cl.live);
        if (!cl.args.network.liveTimerUs) {
            throw CLI::ValidationError(
                "--live", "'" + cl.live +
                              "' is not a live timer in microseconds (1000 to 4294967295); "
                              "give NAME before --live, or write --live=US");
        }
    }
    for (const std::string* url : {&cl.url, &cl.ctrlUrl, &cl.dataUrl}) {
        if (!isValidUtf8(*url)) {
            throw CLI::ValidationError("URL", "a URL must be valid UTF-8");
        }
    }
    checkUtf8Names({&cl.args.name});
    if (!isValidUtf8(cl.output)) {
        throw CLI::ValidationError("--output", "the folder's path must be valid UTF-8 "
                                               "(D-Bus carries paths as UTF-8 strings)");
    }
    if (cl.outputOption->count() > 0) {
        cl.args.output = cl.output;
    }
}

} // namespace

void addCreateVerb(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<CreateLine>();
    auto* create = app.add_subcommand("create", "Create a tracing session");
    cl->nameOption =
        create->add_option("NAME", cl->args.name,
                           "Name of the session (unique among yours; default, as lttng create: "
                           "auto-YYYYmmdd-HHMMSS, written to ~/lttng-traces/auto-YYYYmmdd-HHMMSS)");
    cl->outputOption =
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
    create->add_flag("--count-events", cl->args.countEvents,
                     "Count the event records the consumer writes (events recorded, in show, "
                     "list and top); costs the consumer CPU at millions of events per second. "
                     "Not with --snapshot");
    cl->urlOption =
        create
            ->add_option("-U,--set-url", cl->url,
                         "Stream the trace to the lttng-relayd at URL, "
                         "net://HOST[:CTRL_PORT[:DATA_PORT]] (net6:// for IPv6; HOST may be "
                         "[IPv6]; ports 5342 and 5343 by default); file:///DIR is --output DIR")
            ->type_name("URL");
    cl->ctrlUrlOption =
        create
            ->add_option("-C,--ctrl-url", cl->ctrlUrl,
                         "The relay's control address, tcp://HOST:PORT (tcp6:// for IPv6); "
                         "needs --data-url")
            ->type_name("URL");
    cl->dataUrlOption =
        create
            ->add_option("-D,--data-url", cl->dataUrl,
                         "The relay's data address, tcp://HOST:PORT; needs --ctrl-url")
            ->type_name("URL");
    cl->liveOption =
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

    verbs.add(*create, {.check = [cl] { checkCreateLine(*cl); },
                        .run =
                            [cl](BusClient& bus) {
                                runCreate(bus, cl->args, std::cout, std::cerr);
                                return ExitStatus::Success;
                            }});
}

} // namespace tracectl::cli
