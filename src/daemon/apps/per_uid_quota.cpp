#include "per_uid_quota.hpp"

#include <utility>

namespace tracectl {

PerUidQuota::Slot::Slot(Slot&& other) noexcept
    : quota_(std::exchange(other.quota_, nullptr)), uid_(other.uid_) {}

PerUidQuota::Slot& PerUidQuota::Slot::operator=(Slot&& other) noexcept {
    if (this != &other) {
        release();
        quota_ = std::exchange(other.quota_, nullptr);
        uid_ = other.uid_;
    }
    return *this;
}

void PerUidQuota::Slot::release() noexcept {
    if (quota_ == nullptr)
        return;
    const auto it = quota_->byUid_.find(uid_);
    if (it != quota_->byUid_.end() && --it->second == 0)
        quota_->byUid_.erase(it);
    --quota_->held_;
    quota_ = nullptr;
}

PerUidQuota::Slot PerUidQuota::tryAcquire(uid_t uid) {
    if (held_ >= total_ || held(uid) >= perUid_)
        return {};
    ++byUid_[uid];
    ++held_;
    return Slot(this, uid);
}

std::size_t PerUidQuota::held(uid_t uid) const noexcept {
    const auto it = byUid_.find(uid);
    return it == byUid_.end() ? 0 : it->second;
}

} // namespace tracectl
