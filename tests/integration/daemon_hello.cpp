#include "daemon_hello.hpp"

namespace tracectl::test {

std::string helloDaemon(sdbus::IConnection& bus) {
    auto daemon = sdbus::createProxy(bus, "org.tracectl.Tracing1", "/org/tracectl/Tracing1");
    return daemon->getProperty("Version").onInterface("org.tracectl.Tracing1.Manager");
}

} // namespace tracectl::test
