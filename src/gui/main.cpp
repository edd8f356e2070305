// tracectl-gui: a GTK 4 window over tracectld's D-Bus API (org.tracectl.Tracing1).
// See tracectl-gui(1).
#include "command_line.hpp"
#include "main_window.hpp"

#include <config.h>
#include <cstdio>
#include <gtkmm/application.h>
#include <iostream>
#include <memory>
#include <string>
#include <variant>
#include <vector>

int main(int argc, char** argv) {
    using namespace tracectl::gui;
    const std::vector<std::string> arguments(argv + (argc > 0 ? 1 : 0), argv + argc);
    const CommandLine command = parseCommandLine(arguments);
    if (const auto* error = std::get_if<UsageError>(&command)) {
        std::cerr << "tracectl-gui: " << error->message << '\n';
        return 2;
    }
    if (std::holds_alternative<ShowHelp>(command)) {
        std::cout << usageText();
        return 0;
    }
    if (std::holds_alternative<ShowVersion>(command)) {
        std::cout << "tracectl-gui " << TRACECTL_VERSION << '\n';
        return 0;
    }
    const BusChoice bus = std::get<RunGui>(command).bus;

    // Not unique: two windows on two buses (or two daemons) are two programs.
    auto app = Gtk::Application::create("org.tracectl.Gui", Gio::Application::Flags::NON_UNIQUE);
    std::unique_ptr<MainWindow> window;
    app->signal_activate().connect([&] {
        if (!window) {
            window = std::make_unique<MainWindow>(bus);
            app->add_window(*window);
        }
        window->present();
    });
    // Our options are parsed above: GApplication sees the program name only.
    const int status = app->run(argc > 0 ? 1 : 0, argv);
    window.reset();
    return status;
}
