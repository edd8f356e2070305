#include "command_line.hpp"

#include <optional>
#include <string_view>

namespace tracectl::gui {

CommandLine parseCommandLine(const std::vector<std::string>& arguments) {
    std::optional<BusChoice> bus;
    const auto choose = [&bus](BusChoice choice,
                               const std::string& option) -> std::optional<UsageError> {
        if (bus) {
            return UsageError{option + " cannot be combined with another bus option"};
        }
        bus = std::move(choice);
        return std::nullopt;
    };
    for (std::size_t i = 0; i < arguments.size(); ++i) {
        const std::string& argument = arguments[i];
        std::optional<UsageError> error;
        if (argument == "-h" || argument == "--help") {
            return ShowHelp{};
        } else if (argument == "--version") {
            return ShowVersion{};
        } else if (argument == "--system") {
            error = choose(BusChoice{BusChoice::Kind::System, {}}, argument);
        } else if (argument == "--user") {
            error = choose(BusChoice{BusChoice::Kind::User, {}}, argument);
        } else if (argument == "--bus-address" || argument.starts_with("--bus-address=")) {
            std::string address;
            if (argument == "--bus-address") {
                if (i + 1 == arguments.size()) {
                    return UsageError{"--bus-address needs a D-Bus address"};
                }
                address = arguments[++i];
            } else {
                address = argument.substr(std::string_view("--bus-address=").size());
            }
            if (address.empty()) {
                return UsageError{"--bus-address needs a D-Bus address"};
            }
            error = choose(BusChoice{BusChoice::Kind::Address, address}, "--bus-address");
        } else {
            return UsageError{"unknown argument '" + argument + "' (see --help)"};
        }
        if (error) {
            return *error;
        }
    }
    return RunGui{bus.value_or(BusChoice{})};
}

std::string usageText() {
    return "Usage: tracectl-gui [--system | --user | --bus-address ADDRESS]\n"
           "\n"
           "A desktop window over tracectld's D-Bus API: the tracing sessions you may see,\n"
           "their live statistics, and creating, starting, stopping and destroying them.\n"
           "\n"
           "Options:\n"
           "  --system               Talk to the system instance on the system bus (default;\n"
           "                         DBUS_SYSTEM_BUS_ADDRESS is honoured)\n"
           "  --user                 Talk to your own instance (tracectld --user) on your\n"
           "                         session bus\n"
           "  --bus-address ADDRESS  Talk to the tracectld on the bus at ADDRESS\n"
           "  -h, --help             Print this help and exit\n"
           "  --version              Print the version and exit\n";
}

} // namespace tracectl::gui
