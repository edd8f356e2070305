// Apps waiting for their turn to register, served fairly across uids and
// in order within each: a burst of one user's apps waits in line instead of
// being turned away, and it cannot push another user's apps back. Each
// turn goes to the uid after the one served last (in uid order, wrapping
// around) that has an item waiting and may start one now; within a uid the
// oldest item goes first. The queue itself has no bound: what is put in it
// is bounded by the caller (each item holds file descriptors, counted in a
// PerUidQuota).
#pragma once

#include <cstdint>
#include <functional>
#include <iterator>
#include <list>
#include <map>
#include <optional>
#include <sys/types.h>
#include <utility>

namespace tracectl {

template <typename T>
class FairQueue {
public:
    using Id = std::uint64_t;

    FairQueue() = default;
    FairQueue(const FairQueue&) = delete;
    FairQueue& operator=(const FairQueue&) = delete;

    /// Puts `item` at the end of `uid`'s line; returns its id (never 0).
    Id push(uid_t uid, T item) {
        auto& line = byUid_[uid];
        const Id id = nextId_++;
        line.push_back(Entry{id, std::move(item)});
        index_.emplace(id, Where{uid, std::prev(line.end())});
        return id;
    }

    /// The waiting item of id `id`, or nullptr if it is not waiting (any
    /// more). Valid until it is popped or erased.
    T* find(Id id) noexcept {
        const auto it = index_.find(id);
        return it == index_.end() ? nullptr : &it->second.entry->item;
    }

    /// Removes the waiting item of id `id` (it is destroyed); false if it
    /// was not waiting.
    bool erase(Id id) {
        const auto it = index_.find(id);
        if (it == index_.end())
            return false;
        const auto line = byUid_.find(it->second.uid);
        line->second.erase(it->second.entry);
        if (line->second.empty())
            byUid_.erase(line);
        index_.erase(it);
        return true;
    }

    /// Takes the next item out: the oldest of the first uid, from the one
    /// after the uid served last and wrapping around, for which
    /// `mayStart(uid)` is true. std::nullopt if no uid with items waiting
    /// may start one. Takes O(uids waiting) calls of `mayStart` at most.
    std::optional<std::pair<uid_t, T>> pop(const std::function<bool(uid_t)>& mayStart) {
        if (byUid_.empty())
            return std::nullopt;
        auto first = lastServed_ ? byUid_.upper_bound(*lastServed_) : byUid_.begin();
        if (first == byUid_.end())
            first = byUid_.begin();
        auto it = first;
        do {
            if (mayStart(it->first)) {
                const uid_t uid = it->first;
                Entry entry = std::move(it->second.front());
                it->second.pop_front();
                if (it->second.empty())
                    byUid_.erase(it);
                index_.erase(entry.id);
                lastServed_ = uid;
                return std::pair<uid_t, T>(uid, std::move(entry.item));
            }
            if (++it == byUid_.end())
                it = byUid_.begin();
        } while (it != first);
        return std::nullopt;
    }

    /// Items waiting, of all uids.
    std::size_t size() const noexcept { return index_.size(); }
    /// Items of `uid` waiting.
    std::size_t size(uid_t uid) const noexcept {
        const auto it = byUid_.find(uid);
        return it == byUid_.end() ? 0 : it->second.size();
    }
    bool empty() const noexcept { return index_.empty(); }

    /// Destroys every waiting item.
    void clear() noexcept {
        index_.clear();
        byUid_.clear();
    }

private:
    struct Entry {
        Id id;
        T item;
    };
    using Line = std::list<Entry>;
    struct Where {
        uid_t uid;
        typename Line::iterator entry;
    };
    std::map<uid_t, Line> byUid_; // only uids with items waiting
    std::map<Id, Where> index_;
    std::optional<uid_t> lastServed_;
    Id nextId_ = 1;
};

} // namespace tracectl
