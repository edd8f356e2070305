#include "session_spec_verb.hpp"

#include "cli/verbs/verb_options.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

namespace tracectl::cli {

CLI::App& addSessionSpecVerb(CLI::App& app, VerbTable& verbs, const std::string& name,
                             const std::string& description, const std::string& verb,
                             SessionSpecCommand command) {
    auto options = std::make_shared<SessionSpecOptions>();
    auto* subcommand = app.add_subcommand(name, description);
    addSessionSpec(*subcommand, *options, verb);
    verbs.add(*subcommand, {.check =
                                [options] {
                                    if (options->globOption->count() > 0 && options->glob.empty()) {
                                        throw CLI::ValidationError("--glob", "needs a PATTERN");
                                    }
                                    checkUtf8Names({&options->name, &options->glob});
                                },
                            .run =
                                [options, command](BusClient& bus) {
                                    return command(bus, options->spec(), std::cout, std::cerr);
                                }});
    return *subcommand;
}

} // namespace tracectl::cli
