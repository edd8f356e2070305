// Shares of a bounded resource per peer uid. The app socket is
// world-connectable, so every bound on state its peers can make the daemon
// hold (connections without a registration message, half-paired apps,
// tracer-version queries in flight) must be split by uid: one user can then
// exhaust only its own share, never the others'. A total bound stays as a
// backstop, set well above one share so that no single uid can reach it.
#pragma once

#include <cstddef>
#include <map>
#include <sys/types.h>

namespace tracectl {

class PerUidQuota {
public:
    /// At most `perUid` units held by one uid, and `total` by all uids at once.
    PerUidQuota(std::size_t perUid, std::size_t total) : perUid_(perUid), total_(total) {}
    PerUidQuota(const PerUidQuota&) = delete;
    PerUidQuota& operator=(const PerUidQuota&) = delete;

    /// One unit held for a uid; given back when destroyed (or moved over).
    /// Must not outlive its quota. Empty (false) when it was refused.
    class Slot {
    public:
        Slot() = default;
        Slot(Slot&& other) noexcept;
        Slot& operator=(Slot&& other) noexcept;
        Slot(const Slot&) = delete;
        Slot& operator=(const Slot&) = delete;
        ~Slot() { release(); }
        explicit operator bool() const noexcept { return quota_ != nullptr; }

    private:
        friend class PerUidQuota;
        Slot(PerUidQuota* quota, uid_t uid) : quota_(quota), uid_(uid) {}
        void release() noexcept;
        PerUidQuota* quota_ = nullptr;
        uid_t uid_ = 0;
    };

    /// A unit for `uid`, or an empty Slot if `uid` holds perUid() units
    /// already or all uids hold total(). Not thread-safe: one thread (the
    /// app thread) acquires and releases.
    [[nodiscard]] Slot tryAcquire(uid_t uid);

    /// Units `uid` holds now.
    std::size_t held(uid_t uid) const noexcept;
    /// Units all uids hold now.
    std::size_t held() const noexcept { return held_; }
    std::size_t perUid() const noexcept { return perUid_; }
    std::size_t total() const noexcept { return total_; }

private:
    const std::size_t perUid_;
    const std::size_t total_;
    std::size_t held_ = 0;
    std::map<uid_t, std::size_t> byUid_; // only uids holding at least one unit
};

} // namespace tracectl
