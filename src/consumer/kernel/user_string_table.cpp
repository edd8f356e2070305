#include "user_string_table.hpp"

#include <algorithm>
#include <cstring>

namespace tracectl::consumer::kernel {

namespace {

std::uint64_t distance(std::uint64_t a, std::uint64_t b) noexcept {
    return a > b ? a - b : b - a;
}

} // namespace

UserStringTable::UserStringTable(std::size_t maxEntries, std::size_t textBytes)
    : maxEntries_(std::max<std::size_t>(maxEntries, 1)),
      textBytes_(std::max<std::size_t>(textBytes, 2 * TRACECTL_SYSCALL_STRING_MAX)) {}

void UserStringTable::setLimits(std::size_t maxEntries, std::size_t textBytes) noexcept {
    if (!entries_.empty())
        return;
    maxEntries_ = std::max<std::size_t>(maxEntries, 1);
    textBytes_ = std::max<std::size_t>(textBytes, 2 * TRACECTL_SYSCALL_STRING_MAX);
}

void UserStringTable::allocate() {
    std::size_t capacity = 1;
    while (capacity < maxEntries_)
        capacity <<= 1;
    entries_.resize(capacity);
    mask_ = capacity - 1;
    text_.resize(textBytes_);
}

void UserStringTable::addSample(std::span<const std::byte> sample) noexcept {
    tracectl_syscall_string head;
    if (sample.size() < sizeof head) {
        ++counters_.malformed;
        return;
    }
    std::memcpy(&head, sample.data(), sizeof head);
    if (head.length > sample.size() - sizeof head || head.arg >= TRACECTL_SYSCALL_MAX_ARGS) {
        ++counters_.malformed;
        return;
    }
    add(head,
        std::string_view(reinterpret_cast<const char*>(sample.data() + sizeof head), head.length));
}

std::size_t UserStringTable::place(std::size_t n) const noexcept {
    if (size() == 0)
        return n <= text_.size() ? 0 : SIZE_MAX;
    const std::size_t tail = entries_[first_ % entries_.size()].textOffset;
    if (writePos_ >= tail) { // the text in use is [tail, writePos_)
        if (writePos_ + n <= text_.size())
            return writePos_;
        return n < tail ? 0 : SIZE_MAX; // wrapped: up to, not onto, the oldest
    }
    // wrapped: in use are [tail, end) and [0, writePos_)
    return writePos_ + n < tail ? writePos_ : SIZE_MAX;
}

void UserStringTable::add(const tracectl_syscall_string& head, std::string_view text) noexcept {
    if (entries_.empty()) {
        try {
            allocate();
        } catch (...) {
            ++counters_.orphaned; // no memory: the string is lost
            return;
        }
    }
    ++counters_.added;
    if ((head.flags & TRACECTL_SYSCALL_STRING_FAULT) != 0)
        ++counters_.faults;
    const std::size_t n = std::min<std::size_t>(text.size(), TRACECTL_SYSCALL_STRING_MAX - 1);
    if (size() == maxEntries_)
        evictOldest();
    std::size_t pos = place(n);
    while (pos == SIZE_MAX) {
        evictOldest();
        pos = place(n);
    }
    if (size() == 0)
        pos = 0;
    if (n != 0)
        std::memcpy(text_.data() + pos, text.data(), n);
    writePos_ = pos + n;

    const std::uint64_t seq = next_++;
    Entry& e = at(seq);
    e.timestamp = head.timestamp;
    e.pointer = head.pointer;
    e.textOffset = static_cast<std::uint32_t>(pos);
    e.textLength = static_cast<std::uint32_t>(n);
    e.tid = static_cast<std::int32_t>(head.tid);
    e.nr = head.nr;
    e.arg = head.arg;
    e.taken = false;
}

bool UserStringTable::matches(const Entry& e, const UserStringQuery& q) noexcept {
    return !e.taken && e.tid == q.tid && e.nr == q.nr && e.arg == q.arg && e.pointer == q.pointer;
}

std::string_view UserStringTable::take(const UserStringQuery& q) noexcept {
    if (size() == 0) {
        ++counters_.unmatched;
        return {};
    }
    // The strings are in arrival order, which is their time order but for
    // the few microseconds between two CPUs' copies: a binary search finds
    // where the record's time falls, and a scan outward from there the
    // nearest copy of its call.
    const std::uint64_t lo = seek(q.timestamp);
    std::uint64_t best = kNone, bestDistance = kMatchWindowNs + 1;
    std::size_t scanned = 0;
    for (std::uint64_t seq = lo; seq < next_ && scanned < kMostScanned; ++seq, ++scanned) {
        const Entry& e = at(seq);
        if (e.timestamp > q.timestamp && e.timestamp - q.timestamp > bestDistance + kDisorderNs)
            break;
        if (matches(e, q) && distance(e.timestamp, q.timestamp) < bestDistance) {
            best = seq;
            bestDistance = distance(e.timestamp, q.timestamp);
        }
    }
    for (std::uint64_t seq = lo; seq > first_ && scanned < 2 * kMostScanned; ++scanned) {
        const Entry& e = at(--seq);
        if (e.timestamp < q.timestamp && q.timestamp - e.timestamp > bestDistance + kDisorderNs)
            break;
        if (matches(e, q) && distance(e.timestamp, q.timestamp) < bestDistance) {
            best = seq;
            bestDistance = distance(e.timestamp, q.timestamp);
        }
    }
    if (best == kNone) {
        ++counters_.unmatched;
        return {};
    }
    Entry& e = at(best);
    e.taken = true;
    lastFound_ = best;
    ++counters_.matched;
    const std::string_view out(text_.data() + e.textOffset, e.textLength);
    freeTaken(); // its bytes stay as they are until the next add()
    return out;
}

std::uint64_t UserStringTable::seek(std::uint64_t timestamp) noexcept {
    const std::uint64_t h = std::clamp(lastFound_, first_, next_ - 1);
    std::uint64_t lo = first_, hi = next_;
    if (at(h).timestamp < timestamp) {
        lo = h + 1;
        for (std::uint64_t step = 1; h + step < next_; step <<= 1) {
            if (at(h + step).timestamp >= timestamp) {
                hi = h + step;
                break;
            }
            lo = h + step + 1;
        }
    } else {
        hi = h;
        for (std::uint64_t step = 1; h >= first_ + step; step <<= 1) {
            if (at(h - step).timestamp < timestamp) {
                lo = h - step + 1;
                break;
            }
            hi = h - step;
        }
    }
    while (lo < hi) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        if (at(mid).timestamp < timestamp)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void UserStringTable::freeTaken() noexcept {
    while (size() != 0 && at(first_).taken)
        ++first_;
    if (size() == 0)
        writePos_ = 0;
}

void UserStringTable::evictOldest() noexcept {
    if (size() == 0)
        return;
    if (!at(first_).taken)
        ++counters_.orphaned;
    ++first_;
    freeTaken();
}

void UserStringTable::dropOlderThan(std::uint64_t timestamp) noexcept {
    while (size() != 0 && at(first_).timestamp < timestamp)
        evictOldest();
}

} // namespace tracectl::consumer::kernel
