#include "auth/visibility_gate.hpp"

#include "common/join.hpp"
#include "common/log.hpp"

#include <cstring>
#include <vector>

namespace tracectl::bus {

VisibilityGate::VisibilityGate(sd_bus* bus, PeerDirectory& peers, auth::PolkitAuthority& authority)
    : bus_(bus), peers_(peers), authority_(authority) {
    sd_bus_slot* slot = nullptr;
    check(sd_bus_add_filter(bus_, &slot, &VisibilityGate::onMessage, this), "sd_bus_add_filter");
    filter_.reset(slot);
}

int VisibilityGate::onMessage(sd_bus_message* m, void* userdata, sd_bus_error*) {
    try {
        return static_cast<VisibilityGate*>(userdata)->gate(m);
    } catch (const std::exception& e) {
        // The call goes on; unknown grants count as not granted. Mostly the
        // caller left already (any user can make many): debug only.
        log::debug(std::string("cannot ask polkit ahead of a call: ") + e.what());
        return 0;
    }
}

int VisibilityGate::gate(sd_bus_message* m) {
    if (sd_bus_message_is_method_call(m, nullptr, nullptr) <= 0 || !authority_.asksPolkit())
        return 0;
    if (released_.erase(m) != 0)
        return 0; // asked already: dispatched with what polkit answered
    const auth::Caller caller = peers_.callerOf(m);
    if (caller.uid == 0)
        return 0;
    std::vector<auth::Action> unknown;
    for (const auth::Action a : kGrants)
        if (!authority_.cachedForReading(caller.sender, a))
            unknown.push_back(a);
    if (unknown.empty())
        return 0;
    // Held until polkitd answered every check, then dispatched again.
    auto held = std::make_shared<MessagePtr>(retain(m));
    ++waiting_;
    Join answered(unknown.size(), lifetime_.guard([this, held](std::optional<Error>) {
        --waiting_;
        release(std::move(*held));
    }));
    for (const auth::Action a : unknown)
        authority_.check(caller, a, false, [step = answered.add()](std::optional<sdbus::Error>) {
            step(std::nullopt);
        });
    return 1;
}

void VisibilityGate::release(MessagePtr m) {
    sd_bus_message* raw = m.get();
    const int r = sd_bus_enqueue_for_read(bus_, raw);
    if (r < 0) {
        log::warning(std::string("cannot dispatch a held call again: ") + std::strerror(-r));
        sd_bus_reply_method_errorf(raw, SD_BUS_ERROR_FAILED,
                                   "the daemon could not dispatch this call: %s",
                                   std::strerror(-r));
        return;
    }
    released_.emplace(raw, std::move(m));
}

} // namespace tracectl::bus
