#include "cli_parse.hpp"

#include "log.hpp"

#include <CLI/CLI.hpp>
#include <exception>
#include <string>

namespace tracectl {

int parseAndRun(CLI::App& app, int argc, char** argv, const std::function<int()>& run) {
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // CLI11 prints: help and version to stdout (status 0), errors to stderr.
        return app.exit(e) == 0 ? kCommandLineOk : kCommandLineUsage;
    }
    try {
        return run();
    } catch (const std::exception& e) {
        log::error(std::string("fatal: ") + e.what());
        return kCommandLineFailure;
    }
}

} // namespace tracectl
