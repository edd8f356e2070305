#include "log_options.hpp"

#include <CLI/CLI.hpp>
#include <map>

namespace tracectl::log {

namespace {

const std::map<std::string, Target>& targets() {
    static const std::map<std::string, Target> t{
        {"auto", Target::Auto}, {"journal", Target::Journal}, {"stderr", Target::Stderr}};
    return t;
}

const std::map<std::string, Level>& levels() {
    static const std::map<std::string, Level> l{{"error", Level::Error},
                                                {"warning", Level::Warning},
                                                {"notice", Level::Notice},
                                                {"info", Level::Info},
                                                {"debug", Level::Debug}};
    return l;
}

} // namespace

void addOptions(CLI::App& app, Options& o) {
    app.add_option("--log-target", o.target,
                   "Where log lines go: auto (journal under systemd, else stderr), journal, stderr")
        ->check(CLI::IsMember(targets()));
    app.add_option("--log-level", o.level,
                   "Most verbose level logged: error, warning, notice, info, debug")
        ->check(CLI::IsMember(levels()));
}

Target targetOf(const Options& o) {
    return targets().at(o.target);
}

Level levelOf(const Options& o) {
    return levels().at(o.level);
}

} // namespace tracectl::log
