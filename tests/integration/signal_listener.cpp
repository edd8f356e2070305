// signal-listener: a D-Bus client for the visibility tests, run as the
// user under test. It connects to the system bus ($DBUS_SYSTEM_BUS_ADDRESS),
// adds a match for every signal whose sender is org.tracectl.Tracing1, then
// calls the daemon once (helloDaemon: reads Manager.Version) so
// that tracectld counts it among the connections it sends signals to,
// prints "ready", and then one line per signal received until killed or
// TIMEOUT_S seconds passed:
//     signal <path> <interface> <member> <first s/o argument, or "-">
// (InterfacesAdded/Removed: the object's path; PropertiesChanged: the
// interface; RotationCompleted: the archive). Every line is flushed.
//
// Usage: signal-listener [--no-hello] [TIMEOUT_S]   (default 60 s)
//   --no-hello: subscribe only, never call the daemon.
// Exit status: 0 after the timeout, 2 on bad arguments, 1 if the bus or the
// daemon cannot be reached (the error on stderr).
#include "daemon_hello.hpp"

#include <chrono>
#include <cstdio>
#include <sdbus-c++/sdbus-c++.h>
#include <string>
#include <thread>

namespace {

/// The first argument of `msg` if it is a string or an object path, else "-".
std::string firstTextArgument(sdbus::Message& msg) {
    std::string type;
    std::string contents;
    msg.peekType(type, contents);
    if (type == "s") {
        std::string s;
        msg >> s;
        return s;
    }
    if (type == "o") {
        sdbus::ObjectPath o;
        msg >> o;
        return o;
    }
    return "-";
}

void print(const std::string& line) {
    std::fputs((line + "\n").c_str(), stdout);
    std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv) {
    bool hello = true;
    long timeoutS = 60;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--no-hello") {
            hello = false;
            continue;
        }
        try {
            std::size_t used = 0;
            timeoutS = std::stol(arg, &used);
            if (used != arg.size() || timeoutS <= 0)
                throw std::invalid_argument(arg);
        } catch (const std::exception&) {
            std::fprintf(stderr, "usage: %s [--no-hello] [TIMEOUT_S]\n", argv[0]);
            return 2;
        }
    }
    try {
        auto bus = sdbus::createSystemBusConnection();
        auto match =
            bus->addMatch("type='signal',sender='org.tracectl.Tracing1'", [](sdbus::Message& msg) {
                const std::string head = "signal " + msg.getPath() + " " + msg.getInterfaceName() +
                                         " " + msg.getMemberName() + " ";
                print(head + firstTextArgument(msg));
            });
        // sd_bus_add_match waits for the bus to acknowledge the match, so
        // nothing the daemon sends after the call below can be missed.
        if (hello)
            std::fprintf(stderr, "signal-listener: called the daemon (version %s)\n",
                         tracectl::test::helloDaemon(*bus).c_str());
        print("ready");
        bus->enterEventLoopAsync();
        std::this_thread::sleep_for(std::chrono::seconds(timeoutS));
        bus->leaveEventLoop();
    } catch (const sdbus::Error& e) {
        std::fprintf(stderr, "signal-listener: %s: %s\n", e.getName().c_str(),
                     e.getMessage().c_str());
        return 1;
    }
    return 0;
}
