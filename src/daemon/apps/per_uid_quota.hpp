// Shares of a bounded resource per peer uid. The app socket is
// world-connectable, so every bound on state its peers can make the daemon
// hold (connections without a registration message, registered sockets
// waiting for their app's other one or for their turn, tracer-version
// queries in flight) must be split by uid: one user can then exhaust only
// its own share, never the others'. A total bound stays as a backstop, set
// well above one share so that no single uid can reach it.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <sys/resource.h>
#include <sys/types.h>

namespace tracectl {

class PerUidQuota {
public:
    /// At most `perUid` units held by one uid, and `total` by all uids at once.
    PerUidQuota(std::size_t perUid, std::size_t total) : perUid_(perUid), total_(total) {}
    PerUidQuota(const PerUidQuota&) = delete;
    PerUidQuota& operator=(const PerUidQuota&) = delete;

    /// Units held for a uid (one or more); given back when destroyed (or
    /// moved over). Must not outlive its quota. Empty (false) when it was
    /// refused.
    class Slot {
    public:
        Slot() = default;
        Slot(Slot&& other) noexcept;
        Slot& operator=(Slot&& other) noexcept;
        Slot(const Slot&) = delete;
        Slot& operator=(const Slot&) = delete;
        ~Slot() { release(); }
        explicit operator bool() const noexcept { return quota_ != nullptr; }
        /// Units it holds: 0 if empty.
        std::size_t units() const noexcept { return quota_ != nullptr ? units_ : 0; }

    private:
        friend class PerUidQuota;
        Slot(PerUidQuota* quota, uid_t uid, std::size_t units)
            : quota_(quota), uid_(uid), units_(units) {}
        void release() noexcept;
        PerUidQuota* quota_ = nullptr;
        uid_t uid_ = 0;
        std::size_t units_ = 0;
    };

    /// `units` (at least 1) for `uid`, or an empty Slot if they would take
    /// `uid` over perUid() or all uids over total(). Not thread-safe: one
    /// thread (the main loop) acquires and releases.
    [[nodiscard]] Slot tryAcquire(uid_t uid, std::size_t units = 1);
    /// Whether tryAcquire(uid, units) would succeed now.
    bool fits(uid_t uid, std::size_t units = 1) const noexcept;

    /// Units `uid` holds now.
    std::size_t held(uid_t uid) const noexcept;
    /// Units all uids hold now.
    std::size_t held() const noexcept { return held_; }
    /// The uid holding the most units now (the smallest such uid on a tie);
    /// std::nullopt if none holds any.
    std::optional<uid_t> largestHolder() const noexcept;
    std::size_t perUid() const noexcept { return perUid_; }
    std::size_t total() const noexcept { return total_; }

private:
    const std::size_t perUid_;
    const std::size_t total_;
    std::size_t held_ = 0;
    std::map<uid_t, std::size_t> byUid_; // only uids holding at least one unit
};

/// The bound on file descriptors the main loop holds for peers of the app
/// socket that are registering (sockets with their registration message
/// read, waiting for their app's other socket or for their app's turn): a
/// share per uid and a total, both in file descriptors.
struct FdShares {
    std::size_t perUid = 0;
    std::size_t total = 0;
};

/// The shares for a daemon whose open-files limit (RLIMIT_NOFILE, soft) is
/// `openFilesLimit`: half of it in all, so that the other half stays for
/// what the daemon holds for apps already registered (two sockets each),
/// for its consumers and sessions, and for connections without a
/// registration message (kMaxUnregisteredConnections); a quarter of that
/// half per uid, so that at least four uids would have to fill their
/// shares to reach the total. 65536 (tracectld.service's LimitNOFILE)
/// gives 8192 per uid and 32768 in all; 1024 (a default soft limit) gives
/// 128 and 512. RLIM_INFINITY counts as 1 << 20; any limit below 256 as
/// 256.
FdShares waitingFdShares(rlim_t openFilesLimit) noexcept;

} // namespace tracectl
