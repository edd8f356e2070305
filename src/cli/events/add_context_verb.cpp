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
    CLI::Option* session_option = nullptr;
};

} // namespace

void add_add_context_verb(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<AddContextLine>();
    auto* add_context =
        app.add_subcommand("add-context", "Record context fields with every event of a channel");
    add_domain_flags(*add_context, cl->domain);
    add_context
        ->add_option(
            "-t,--type", cl->args.types,
            "Context type, repeatable or comma-separated. -u: " + std::string{ust_context_types} +
                ". -k: " + std::string{kernel_context_types})
        ->required()
        ->delimiter(',');
    cl->session_option = add_context->add_option("-s,--session", cl->session, current_session_help);
    add_context->add_option("-c,--channel", cl->args.channel,
                            "Channel (default: every channel; channel0 if there is none)");
    add_context->footer("Give exactly one of -u and -k. Only before the session first starts.\n\n"
                        "User-space (-u) types:\n" +
                        wrapped_list(ust_context_types) + "\nKernel (-k) types:\n" +
                        wrapped_list(kernel_context_types) +
                        "\n\nExample:\n"
                        "  tracectl add-context -u -t vpid -t procname\n"
                        "  tracectl add-context -k -t tid,pid,procname,prio,cpu_id");

    verbs.add(*add_context, {.check =
                                 [cl] {
                                     cl->args.domain = chosen_domain(cl->domain);
                                     if (cl->session_option->count() > 0) {
                                         cl->args.session = cl->session;
                                     }
                                 },
                             .run =
                                 [cl](BusClient& bus) {
                                     run_add_context(bus, cl->args, std::cout);
                                     return ExitStatus::success;
                                 }});
}

} // namespace tracectl::cli
