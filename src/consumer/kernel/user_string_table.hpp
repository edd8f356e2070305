// The system call string arguments the system-call string program copied
// (src/common/syscall_string_abi.h records, drained from its BPF ring
// buffer by the kernel channel), held until ftrace's record of the same
// call is converted, which takes its string (UserStringSource).
//
// Matching: a string belongs to the record of the same thread, system call
// number, argument index and pointer value whose timestamp is the nearest
// (both are CLOCK_MONOTONIC: ftrace's `mono` clock and bpf_ktime_get_ns()),
// within a window (1 s): a thread's calls are sequential, so the copy of
// its call is nearer than that of any other call with the same pointer.
// The strings are kept in arrival order, which is time order but for a few
// microseconds between CPUs: a query binary-searches its record's time and
// scans outward from there (at most kMostScanned strings each way), so
// neither the records of other CPUs not converted yet nor the strings of
// lost records lengthen it. A record without a string gets "" and counts
// as unmatched; a string no record takes (its record was filtered out or
// lost) is dropped once older than dropOlderThan()'s limit, or when the
// table needs its room, and counts as orphaned.
//
// Memory is fixed: at most `maxEntries` strings and `textBytes` bytes of
// text, allocated at the first add(); nothing is allocated per string.
// Not thread-safe.
#pragma once

#include "syscall_string_abi.h"
#include "user_string_source.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace tracectl::consumer::kernel {

class UserStringTable final : public UserStringSource {
public:
    /// How far apart (ns) a string's copy and its record may be.
    static constexpr std::uint64_t kMatchWindowNs = 1'000'000'000;
    /// How far (ns) arrival order may stray from time order (two CPUs'
    /// copies: between reading the clock and reserving ring space, an
    /// interrupt at most).
    static constexpr std::uint64_t kDisorderNs = 2'000;
    /// Strings a query looks at, each way from its time, at most.
    static constexpr std::size_t kMostScanned = 1024;

    struct Counters {
        std::uint64_t added = 0;     ///< strings added
        std::uint64_t matched = 0;   ///< queries that got their string
        std::uint64_t unmatched = 0; ///< queries that got "" (no copy found)
        std::uint64_t orphaned = 0;  ///< strings dropped without a query taking them
        std::uint64_t malformed = 0; ///< ring samples that are no record
        std::uint64_t faults = 0;    ///< strings the program could not read (flag FAULT)
    };

    /// `maxEntries` >= 1 strings, `textBytes` >= 2 x
    /// TRACECTL_SYSCALL_STRING_MAX bytes of text (smaller values are
    /// raised to these).
    explicit UserStringTable(std::size_t maxEntries = 16384,
                             std::size_t textBytes = std::size_t{4} << 20);

    /// Sets the limits (as the constructor does) while nothing was added
    /// yet; ignored after the first add().
    void setLimits(std::size_t maxEntries, std::size_t textBytes) noexcept;
    std::size_t maxEntries() const noexcept { return maxEntries_; }
    std::size_t textBytes() const noexcept { return textBytes_; }

    /// Adds one ring-buffer sample: a tracectl_syscall_string header, then
    /// its `length` bytes of text. A sample shorter than the header, or
    /// than the header plus its length, is counted malformed and dropped.
    void addSample(std::span<const std::byte> sample) noexcept;
    /// Adds one string (`text`: at most TRACECTL_SYSCALL_STRING_MAX - 1
    /// bytes are kept). Drops the oldest strings when full (orphaned).
    void add(const tracectl_syscall_string& head, std::string_view text) noexcept;

    std::string_view take(const UserStringQuery& query) noexcept override;

    /// Drops the strings copied before `timestamp` (ns) that nothing took
    /// (counted orphaned), oldest first.
    void dropOlderThan(std::uint64_t timestamp) noexcept;

    /// Strings held (not taken yet, or taken but not yet freed).
    std::size_t size() const noexcept { return static_cast<std::size_t>(next_ - first_); }
    const Counters& counters() const noexcept { return counters_; }

private:
    static constexpr std::uint64_t kNone = UINT64_MAX;
    struct Entry {
        std::uint64_t timestamp = 0;
        std::uint64_t pointer = 0;
        std::uint32_t textOffset = 0;
        std::uint32_t textLength = 0;
        std::int32_t tid = 0;
        std::int32_t nr = 0;
        std::uint8_t arg = 0;
        bool taken = false; ///< by a query (or never to be: freed in turn)
    };

    Entry& at(std::uint64_t seq) noexcept { return entries_[seq & mask_]; }
    /// The first string, in arrival order, copied at or after `timestamp`
    /// (next_ if none): a galloping search from the last one found, as a
    /// CPU's records come in time order.
    std::uint64_t seek(std::uint64_t timestamp) noexcept;
    static bool matches(const Entry& e, const UserStringQuery& q) noexcept;
    void allocate();
    /// Where `n` bytes of text go, or SIZE_MAX when they do not fit now.
    std::size_t place(std::size_t n) const noexcept;
    void evictOldest() noexcept;
    /// Frees the oldest strings while they were taken.
    void freeTaken() noexcept;

    std::size_t maxEntries_;
    std::size_t textBytes_;
    std::vector<Entry> entries_; ///< a ring, by sequence number (a power of two)
    std::uint64_t mask_ = 0;
    std::uint64_t lastFound_ = 0; ///< where the last query's string was
    std::vector<char> text_;
    std::uint64_t first_ = 0; ///< sequence number of the oldest string held
    std::uint64_t next_ = 0;  ///< sequence number of the next string added
    std::size_t writePos_ = 0;
    Counters counters_;
};

} // namespace tracectl::consumer::kernel
