// tracectl set-session NAME
#include "cli/commands.hpp"
#include "cli/verbs/verb_options.hpp"
#include "session_verbs.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>

namespace tracectl::cli {

void addSetSessionVerb(CLI::App& app, VerbTable& verbs) {
    auto name = std::make_shared<std::string>();
    auto* setSession =
        app.add_subcommand("set-session", "Make a session the current one (as lttng set-session)");
    setSession->add_option("NAME", *name, "Name of one of your sessions")->required();
    setSession->footer(
        "Commands given no session act on the current session: 'tracectl create' sets it,\n"
        "and so does this command. It is kept per user and per bus in\n"
        "$XDG_RUNTIME_DIR/tracectl/current-session.BUS (gone at logout), or without\n"
        "XDG_RUNTIME_DIR in $HOME/.config/tracectl/ ($XDG_CONFIG_HOME/tracectl/). Without a\n"
        "current session, commands fall back to your only session, if you have exactly one.\n\n"
        "Example:\n  tracectl set-session web-latency");

    verbs.add(*setSession, {.check = [name] { checkUtf8Names({name.get()}); },
                            .run =
                                [name](BusClient& bus) {
                                    runSetSession(bus, *name, std::cout);
                                    return ExitStatus::Success;
                                }});
}

} // namespace tracectl::cli
