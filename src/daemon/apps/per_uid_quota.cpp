#include "per_uid_quota.hpp"

#include <algorithm>
#include <utility>

namespace tracectl {

PerUidQuota::Slot::Slot(Slot&& other) noexcept
    : quota_(std::exchange(other.quota_, nullptr)), uid_(other.uid_), units_(other.units_) {}

PerUidQuota::Slot& PerUidQuota::Slot::operator=(Slot&& other) noexcept {
    if (this != &other) {
        release();
        quota_ = std::exchange(other.quota_, nullptr);
        uid_ = other.uid_;
        units_ = other.units_;
    }
    return *this;
}

void PerUidQuota::Slot::release() noexcept {
    if (quota_ == nullptr)
        return;
    const auto it = quota_->byUid_.find(uid_);
    if (it != quota_->byUid_.end()) {
        it->second -= std::min(it->second, units_);
        if (it->second == 0)
            quota_->byUid_.erase(it);
    }
    quota_->held_ -= std::min(quota_->held_, units_);
    quota_ = nullptr;
}

bool PerUidQuota::fits(uid_t uid, std::size_t units) const noexcept {
    return units <= total_ - std::min(total_, held_) &&
           units <= perUid_ - std::min(perUid_, held(uid));
}

PerUidQuota::Slot PerUidQuota::tryAcquire(uid_t uid, std::size_t units) {
    units = std::max<std::size_t>(units, 1);
    if (!fits(uid, units))
        return {};
    byUid_[uid] += units;
    held_ += units;
    return Slot(this, uid, units);
}

std::size_t PerUidQuota::held(uid_t uid) const noexcept {
    const auto it = byUid_.find(uid);
    return it == byUid_.end() ? 0 : it->second;
}

std::optional<uid_t> PerUidQuota::largestHolder() const noexcept {
    std::optional<uid_t> largest;
    std::size_t most = 0;
    for (const auto& [uid, units] : byUid_)
        if (units > most) {
            most = units;
            largest = uid;
        }
    return largest;
}

FdShares waitingFdShares(rlim_t openFilesLimit) noexcept {
    constexpr rlim_t kInfinite = rlim_t{1} << 20;
    const rlim_t limit =
        std::max<rlim_t>(openFilesLimit == RLIM_INFINITY ? kInfinite : openFilesLimit, 256);
    FdShares s;
    s.total = static_cast<std::size_t>(std::min(limit, kInfinite) / 2);
    s.perUid = s.total / 4;
    return s;
}

} // namespace tracectl
