#include "auth/signal_sender.hpp"

#include "common/log.hpp"

#include <exception>

namespace tracectl::bus {

void SignalSender::send(const std::string& path, const char* interface, const char* member,
                        const Audience& audience, const Body& body) const {
    for (const auto& [name, uid] : peers_.peers()) {
        if (!audience(auth::Caller{name, uid}))
            continue;
        try {
            sd_bus_message* raw = nullptr;
            check(sd_bus_message_new_signal(bus_, &raw, path.c_str(), interface, member),
                  "sd_bus_message_new_signal");
            MessagePtr signal(raw);
            check(sd_bus_message_set_destination(signal.get(), name.c_str()), "set_destination");
            body(signal.get());
            check(sd_bus_send(bus_, signal.get(), nullptr), "sd_bus_send");
        } catch (const std::exception& e) {
            log::warning(std::string("cannot send ") + member + " to " + name + ": " + e.what());
        }
    }
}

} // namespace tracectl::bus
