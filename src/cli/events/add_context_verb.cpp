// tracectl add-context -u|-k -t TYPE[,TYPE...] [-t TYPE...] [-s S] [-c C]
#include "cli/kernel_domain.hpp"
#include "cli/trace_commands.hpp"
#include "cli/verbs/verb_options.hpp"
#include "event_verbs.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>

namespace tracectl::cli {
namespace {

/// The add-context command line, as CLI11 fills it in.
struct AddContextLine {
    AddContextArgs args;
    DomainFlags domain;
    std::string session;
    CLI::Option* sessionOption = nullptr;
};

} // namespace

void addAddContextVerb(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<AddContextLine>();
    auto* addContext =
        app.add_subcommand("add-context", "Record context fields with every event of a channel");
    addDomainFlags(*addContext, cl->domain);
    addContext
        ->add_option(
            "-t,--type", cl->args.types,
            "Context type, repeatable or comma-separated. -u: " + std::string{kUstContextTypes} +
                ". -k: " + std::string{kKernelContextTypes})
        ->required()
        ->delimiter(',');
    cl->sessionOption = addContext->add_option("-s,--session", cl->session, kCurrentSessionHelp);
    addContext->add_option("-c,--channel", cl->args.channel,
                           "Channel (default: every channel; channel0 if there is none)");
    addContext->footer("Give exactly one of -u and -k. Only before the session first starts.\n\n"
                       "User-space (-u) types:\n" +
                       wrappedList(kUstContextTypes) + "\nKernel (-k) types:\n" +
                       wrappedList(kKernelContextTypes) +
                       "\n\nExample:\n"
                       "  tracectl add-context -u -t vpid -t procname\n"
                       "  tracectl add-context -k -t tid,pid,procname,prio,cpu_id");

    verbs.add(*addContext, {.check =
                                [cl] {
                                    cl->args.domain = chosenDomain(cl->domain);
                                    if (cl->sessionOption->count() > 0) {
                                        cl->args.session = cl->session;
                                    }
                                },
                            .run =
                                [cl](BusClient& bus) {
                                    runAddContext(bus, cl->args, std::cout);
                                    return ExitStatus::Success;
                                }});
}

} // namespace tracectl::cli
