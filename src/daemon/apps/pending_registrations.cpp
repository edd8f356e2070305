#include "pending_registrations.hpp"

namespace tracectl {

std::optional<UstApp> PendingRegistrations::add(Half half, Clock::time_point now) {
    auto [it, inserted] = pending_.try_emplace(half.info.pid);
    Entry& e = it->second;
    if (inserted)
        e.since = now;
    if (half.isNotify) {
        e.notify = std::move(half.fd);
        e.notifySlot = std::move(half.slot);
    } else {
        // The command socket's message is the one the app's identity is kept from.
        e.command = std::move(half.fd);
        e.commandSlot = std::move(half.slot);
        e.info = half.info;
    }
    if (!e.command || !e.notify) {
        if (!e.command)
            e.info = half.info;
        return std::nullopt;
    }
    UstApp app{std::move(e.info), std::move(e.command), std::move(e.notify)};
    pending_.erase(it);
    return app;
}

std::vector<pid_t> PendingRegistrations::expire(Clock::time_point now, Clock::duration maxAge) {
    std::vector<pid_t> dropped;
    for (auto it = pending_.begin(); it != pending_.end();) {
        if (now - it->second.since > maxAge) {
            dropped.push_back(it->first);
            it = pending_.erase(it);
        } else {
            ++it;
        }
    }
    return dropped;
}

} // namespace tracectl
