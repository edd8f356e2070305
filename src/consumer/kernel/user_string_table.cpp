#include "user_string_table.hpp"

#include <algorithm>
#include <cstring>

namespace tracectl::consumer::kernel {

namespace {

std::size_t hashTid(std::int32_t tid) noexcept {
    // Fibonacci hashing: consecutive tids spread over the table.
    return static_cast<std::size_t>(static_cast<std::uint32_t>(tid) * 2654435769u);
}

std::uint64_t distance(std::uint64_t a, std::uint64_t b) noexcept {
    return a > b ? a - b : b - a;
}

} // namespace

UserStringTable::UserStringTable(std::size_t maxEntries, std::size_t textBytes)
    : maxEntries_(std::max<std::size_t>(maxEntries, 1)),
      textBytes_(std::max<std::size_t>(textBytes, 2 * TRACECTL_SYSCALL_STRING_MAX)) {}

void UserStringTable::allocate() {
    entries_.resize(maxEntries_);
    text_.resize(textBytes_);
    std::size_t buckets = 16;
    while (buckets < 2 * maxEntries_)
        buckets <<= 1;
    fifos_.resize(buckets);
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
    if (size() == entries_.size())
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
    e.next = kNone;
    e.textOffset = static_cast<std::uint32_t>(pos);
    e.textLength = static_cast<std::uint32_t>(n);
    e.tid = static_cast<std::int32_t>(head.tid);
    e.nr = head.nr;
    e.arg = head.arg;
    e.taken = false;
    Fifo& fifo = insert(e.tid);
    if (fifo.tail == kNone)
        fifo.head = seq;
    else
        at(fifo.tail).next = seq;
    fifo.tail = seq;
}

std::string_view UserStringTable::take(const UserStringQuery& q) noexcept {
    Fifo* fifo = entries_.empty() ? nullptr : find(q.tid);
    if (fifo == nullptr) {
        ++counters_.unmatched;
        return {};
    }
    std::uint64_t best = kNone, bestPrev = kNone, bestDistance = UINT64_MAX;
    for (std::uint64_t seq = fifo->head, prev = kNone; seq != kNone;
         prev = seq, seq = at(seq).next) {
        const Entry& e = at(seq);
        if (e.timestamp > q.timestamp && e.timestamp - q.timestamp > kMatchWindowNs)
            break; // later strings are later still
        if (e.nr != q.nr || e.arg != q.arg || e.pointer != q.pointer)
            continue;
        const std::uint64_t d = distance(e.timestamp, q.timestamp);
        if (d < bestDistance) {
            best = seq;
            bestPrev = prev;
            bestDistance = d;
        }
        if (e.timestamp > q.timestamp)
            break; // the next ones are farther
    }
    if (best == kNone || bestDistance > kMatchWindowNs) {
        ++counters_.unmatched;
        return {};
    }
    Entry& e = at(best);
    if (bestPrev == kNone)
        fifo->head = e.next;
    else
        at(bestPrev).next = e.next;
    if (fifo->tail == best)
        fifo->tail = bestPrev;
    e.taken = true;
    if (fifo->head == kNone)
        erase(*fifo);
    ++counters_.matched;
    const std::string_view out(text_.data() + e.textOffset, e.textLength);
    freeTaken(); // its bytes stay as they are until the next add()
    return out;
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
    Entry& e = at(first_);
    if (!e.taken) {
        // The oldest string of all is the oldest of its thread's FIFO.
        ++counters_.orphaned;
        if (Fifo* fifo = find(e.tid); fifo != nullptr && fifo->head == first_) {
            fifo->head = e.next;
            if (fifo->head == kNone)
                erase(*fifo);
        }
    }
    ++first_;
    freeTaken();
}

void UserStringTable::dropOlderThan(std::uint64_t timestamp) noexcept {
    while (size() != 0 && at(first_).timestamp < timestamp)
        evictOldest();
}

UserStringTable::Fifo* UserStringTable::find(std::int32_t tid) noexcept {
    const std::size_t mask = fifos_.size() - 1;
    for (std::size_t i = hashTid(tid) & mask;; i = (i + 1) & mask) {
        Fifo& f = fifos_[i];
        if (!f.used)
            return nullptr;
        if (f.tid == tid)
            return &f;
    }
}

UserStringTable::Fifo& UserStringTable::insert(std::int32_t tid) noexcept {
    // Never full: at most maxEntries_ FIFOs in at least 2 x maxEntries_ buckets.
    const std::size_t mask = fifos_.size() - 1;
    for (std::size_t i = hashTid(tid) & mask;; i = (i + 1) & mask) {
        Fifo& f = fifos_[i];
        if (f.used && f.tid == tid)
            return f;
        if (!f.used) {
            f = Fifo{tid, true, kNone, kNone};
            return f;
        }
    }
}

void UserStringTable::erase(Fifo& fifo) noexcept {
    // Backward-shift deletion keeps every probe chain unbroken.
    const std::size_t mask = fifos_.size() - 1;
    std::size_t hole = static_cast<std::size_t>(&fifo - fifos_.data());
    fifos_[hole].used = false;
    for (std::size_t i = (hole + 1) & mask; fifos_[i].used; i = (i + 1) & mask) {
        const std::size_t home = hashTid(fifos_[i].tid) & mask;
        // Move it into the hole unless its home lies cyclically in (hole, i].
        const bool stays = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
        if (stays)
            continue;
        fifos_[hole] = fifos_[i];
        fifos_[i].used = false;
        hole = i;
    }
}

} // namespace tracectl::consumer::kernel
