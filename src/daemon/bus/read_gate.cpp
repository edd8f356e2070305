#include "bus/read_gate.hpp"

#include "common/log.hpp"

#include <cstring>

namespace tracectl::bus {

namespace {

bool isRead(sd_bus_message* m) {
    const char* iface = sd_bus_message_get_interface(m);
    return iface != nullptr && (std::strcmp(iface, "org.freedesktop.DBus.Properties") == 0 ||
                                std::strcmp(iface, "org.freedesktop.DBus.ObjectManager") == 0 ||
                                std::strcmp(iface, "org.freedesktop.DBus.Introspectable") == 0);
}

} // namespace

ReadGate::ReadGate(sd_bus* bus, std::string root, PeerDirectory& peers,
                   auth::PolkitAuthority& authority, GrantsNeeded needed)
    : bus_(bus), root_(std::move(root)), peers_(peers), authority_(authority),
      needed_(std::move(needed)) {
    sd_bus_slot* slot = nullptr;
    check(sd_bus_add_filter(bus_, &slot, &ReadGate::onMessage, this), "sd_bus_add_filter");
    filter_.reset(slot);
}

int ReadGate::onMessage(sd_bus_message* m, void* userdata, sd_bus_error*) {
    try {
        return static_cast<ReadGate*>(userdata)->gate(m);
    } catch (const std::exception& e) {
        log::warning(std::string("cannot check a read call in advance: ") + e.what());
        return 0; // the lookup then treats unknown grants as not granted
    }
}

int ReadGate::gate(sd_bus_message* m) {
    if (sd_bus_message_is_method_call(m, nullptr, nullptr) <= 0 || !isRead(m))
        return 0;
    if (released_.erase(m) != 0)
        return 0; // asked already: dispatched with what polkit answered
    const char* rawPath = sd_bus_message_get_path(m);
    const std::string path(rawPath != nullptr ? rawPath : "");
    if (path != root_ && path.rfind(root_ + "/", 0) != 0)
        return 0;
    const auto caller = peers_.callerOf(m);
    if (caller.uid == 0)
        return 0;
    std::vector<auth::Action> unknown;
    for (const auth::Action a : needed_(caller, path))
        if (!authority_.cachedForReading(caller.sender, a))
            unknown.push_back(a);
    if (unknown.empty())
        return 0;
    // Held until polkitd answered every check, then dispatched again.
    auto held = std::make_shared<MessagePtr>(retain(m));
    auto left = std::make_shared<std::size_t>(unknown.size());
    ++waiting_;
    std::weak_ptr<bool> alive = alive_;
    for (const auth::Action a : unknown)
        authority_.check(caller, a, false, [this, alive, held, left](std::optional<sdbus::Error>) {
            if (alive.expired() || --*left != 0)
                return;
            --waiting_;
            release(std::move(*held));
        });
    return 1;
}

void ReadGate::release(MessagePtr m) {
    sd_bus_message* raw = m.get();
    const int r = sd_bus_enqueue_for_read(bus_, raw);
    if (r < 0) {
        log::warning(std::string("cannot dispatch a held read call again: ") + std::strerror(-r));
        sd_bus_reply_method_errorf(raw, SD_BUS_ERROR_FAILED,
                                   "the daemon could not dispatch this call: %s",
                                   std::strerror(-r));
        return;
    }
    released_.emplace(raw, std::move(m));
}

} // namespace tracectl::bus
