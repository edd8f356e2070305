// The --log-target and --log-level options every tracectl program takes,
// and what they mean for log::init().
#pragma once

#include "log.hpp"

#include <string>

namespace CLI {
class App;
}

namespace tracectl::log {

/// The two options as given on the command line.
struct Options {
    std::string target = "auto"; ///< auto | journal | stderr
    std::string level = "info";  ///< error | warning | notice | info | debug
};

/// Adds --log-target and --log-level to `app`, storing into `o`; CLI11
/// refuses any other value (usage error).
void addOptions(CLI::App& app, Options& o);

/// The Target / Level the (validated) option values name.
Target targetOf(const Options& o);
Level levelOf(const Options& o);

} // namespace tracectl::log
