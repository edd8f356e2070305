#include "auth/read_call_tracker.hpp"

namespace tracectl::auth {

ReadCallTracker::ReadCallTracker(sdbus::IConnection& bus) {
    // Without a destination= key: calls reach only their destination
    // anyway (no eavesdropping), and sd-bus did not run the callback with one.
    properties_ = bus.addMatch("type='method_call',interface='org.freedesktop.DBus.Properties'",
                               [this](sdbus::Message& msg) { record(msg); });
    objectManager_ =
        bus.addMatch("type='method_call',interface='org.freedesktop.DBus.ObjectManager'",
                     [this](sdbus::Message& msg) { record(msg); });
}

void ReadCallTracker::record(sdbus::Message& msg) {
    reader_ = Caller{msg.getSender(), msg.getCredsEuid()};
}

} // namespace tracectl::auth
