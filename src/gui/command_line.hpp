// The command line of tracectl-gui: which bus to use, --help, --version. No GTK, no bus:
// tested in tests/unit/gui_command_line_test.cpp.
#pragma once

#include <client/bus_choice.hpp>
#include <string>
#include <variant>
#include <vector>

namespace tracectl::gui {

/// Which bus tracectld is reached on (client/bus_choice.hpp).
using BusChoice = client::BusChoice;

/// Run the window on this bus.
struct RunGui {
    BusChoice bus;
    bool operator==(const RunGui&) const = default;
};

/// Print the usage (to stdout) and exit 0.
struct ShowHelp {
    bool operator==(const ShowHelp&) const = default;
};

/// Print the version (to stdout) and exit 0.
struct ShowVersion {
    bool operator==(const ShowVersion&) const = default;
};

/// A usage error: print `message` to stderr and exit 2.
struct UsageError {
    std::string message;
    bool operator==(const UsageError&) const = default;
};

using CommandLine = std::variant<RunGui, ShowHelp, ShowVersion, UsageError>;

/// Parses the arguments after the program name: "--system" (default), "--user",
/// "--bus-address ADDR" or "--bus-address=ADDR" (at most one of the three), "-h"/"--help",
/// "--version". Anything else (including positional arguments) is a UsageError naming it.
/// Never throws except std::bad_alloc.
CommandLine parseCommandLine(const std::vector<std::string>& arguments);

/// The text --help prints, ending with a newline.
std::string usageText();

} // namespace tracectl::gui
