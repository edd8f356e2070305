// Pairs the two sockets each LTTng-UST app opens (command and notify, in
// either order) by pid, with a deadline for the second one to arrive.
#pragma once

#include "per_uid_quota.hpp"
#include "ust_app.hpp"

#include <chrono>
#include <map>
#include <optional>
#include <vector>

namespace tracectl {

class PendingRegistrations {
public:
    using Clock = std::chrono::steady_clock;

    /// One half of a registration: the app's info, the socket it came on,
    /// and its share of the bound on halves waiting (held while it waits;
    /// may be empty).
    struct Half {
        UstAppInfo info;
        bool isNotify = false;
        UniqueFd fd;
        PerUidQuota::Slot slot;
    };

    /// Adds a half. Returns the complete app once both halves of a pid are
    /// here. A second half of the same kind for a pending pid replaces the
    /// first (the old socket is closed): a restarted registration wins.
    std::optional<UstApp> add(Half half, Clock::time_point now);

    /// Drops halves older than `maxAge`; returns the pids dropped.
    std::vector<pid_t> expire(Clock::time_point now, Clock::duration maxAge);

    std::size_t size() const noexcept { return pending_.size(); }

private:
    struct Entry {
        UstAppInfo info;
        UniqueFd command;
        UniqueFd notify;
        PerUidQuota::Slot commandSlot; // given back with its half
        PerUidQuota::Slot notifySlot;
        Clock::time_point since;
    };
    std::map<pid_t, Entry> pending_;
};

} // namespace tracectl
