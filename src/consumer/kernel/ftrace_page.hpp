// One ftrace ring-buffer sub-buffer ("page"), as read from
// `per_cpu/cpuN/trace_pipe_raw` (KERNEL-NOTES.md). Facts, from the kernel's
// kernel/trace/ring_buffer.c and the two reference readers, libtraceevent's
// kbuffer.c (translate_data, update_pointers) and perfetto's
// src/traced/probes/ftrace/cpu_reader.cc (ParsePagePayload):
//
//   page header  u64 timestamp (the base of the page's deltas), commit
//                (bits 0-26: bytes of data; bit 31 RB_MISSED_EVENTS; bit 30
//                RB_MISSED_STORED: the count is a u64 right after the data)
//   event header u32: type_len = bits 0-4, time_delta = bits 5-31. The
//                running timestamp (starting at the page's) gets time_delta
//                added for every type but 31; then by type_len:
//     1-28       a record of 4 * type_len payload bytes;
//     0          the next u32 is the record's length *counting that u32*
//                (kernel rb_update_event stores data + 4; kbuffer reads it
//                minus 4 and rounds up to 4; perfetto: "Size includes the
//                size field itself"); the payload follows that u32;
//     29         padding: time_delta 0 means the rest of the page is empty;
//                otherwise the next u32 is the padding's length counted from
//                the end of the event header (kbuffer: next = after the
//                header + length; perfetto: length includes itself);
//     30         time extend: timestamp += next u32 << 27 (plus time_delta);
//     31         absolute timestamp: time_delta | (next u32 << 27), its top 5
//                bits (TS_MSB) taken from the running timestamp (kbuffer).
// Every read is bounds-checked: a page that lies stops the walk and is
// reported malformed; nothing outside [page, page + size) is ever read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>

namespace tracectl::consumer::kernel {

/// Where the page header's fields are, from `events/header_page` (sent by
/// the daemon). Offsets and sizes in bytes; pageSize is the sub-buffer size.
struct PageFormat {
    std::uint32_t pageSize = 4096;
    std::uint32_t timestampOffset = 0, timestampSize = 8, commitOffset = 8, commitSize = 8,
                  dataOffset = 16;
    bool operator==(const PageFormat&) const = default;
};

/// True if `f` can describe a page: timestamp 8 bytes, commit 4 or 8, both
/// inside the header (before dataOffset), dataOffset < pageSize.
bool validPageFormat(const PageFormat& f) noexcept;

inline constexpr std::uint64_t kCommitLengthMask = (1ull << 27) - 1;
inline constexpr std::uint64_t kMissedEvents = 1ull << 31;
inline constexpr std::uint64_t kMissedStored = 1ull << 30;
inline constexpr std::uint64_t kTsMsb = 0xF8ull << 56; ///< top 5 bits (kernel TS_MSB)

/// The page header, decoded.
struct PageHeader {
    std::uint64_t timestamp = 0;   ///< ns (the trace clock's unit)
    std::uint32_t dataLength = 0;  ///< bytes of records from dataOffset
    bool missedEvents = false;     ///< bit 31: events were lost before this page
    bool missedStored = false;     ///< bit 30 and the count fits in the page
    std::uint64_t missedCount = 0; ///< the stored count (0 unless missedStored)
};

/// Reads the header of `page` (`size` bytes; only min(size,
/// format.pageSize) are considered). Empty when the format is invalid, the
/// page is shorter than the header, or the data length reaches past the
/// page (a torn or hostile page: nothing of it can be trusted).
std::optional<PageHeader> readPageHeader(const std::byte* page, std::size_t size,
                                         const PageFormat& format) noexcept;

/// One event record of a page: its payload starts with the common fields.
struct FtraceRecord {
    std::uint64_t timestamp;  ///< ns
    const std::byte* payload; ///< inside the page
    std::uint32_t length;     ///< payload bytes (type_len 0: the length word minus 4)
};

/// What one walk found.
struct PageWalk {
    PageHeader header;
    std::uint32_t records = 0;      ///< records handed to the callback
    std::uint32_t paddings = 0;     ///< padding events skipped (discarded events)
    bool malformed = false;         ///< the header or an event lied: the walk stopped there
    std::uint64_t endTimestamp = 0; ///< running timestamp at the end of the walk
};

namespace detail {
inline std::uint32_t loadU32(const std::byte* p) noexcept {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}
} // namespace detail

/// Walks every record of one page in order, calling `onRecord(const
/// FtraceRecord&)` for each (no allocation). Padding and time records are
/// consumed, never handed out. On a malformed page the records before the
/// fault have been delivered and `malformed` is set.
template <typename OnRecord>
PageWalk walkPage(const std::byte* page, std::size_t size, const PageFormat& format,
                  OnRecord&& onRecord) {
    PageWalk walk;
    const std::optional<PageHeader> header = readPageHeader(page, size, format);
    if (!header) {
        walk.malformed = true;
        return walk;
    }
    walk.header = *header;
    std::uint64_t ts = header->timestamp;
    const std::byte* p = page + format.dataOffset;
    const std::byte* const end = p + header->dataLength;
    while (end - p >= 4) {
        const std::uint32_t word = detail::loadU32(p);
        p += 4;
        const std::uint32_t typeLen = word & 0x1f;
        const std::uint32_t delta = word >> 5;
        if (typeLen >= 1 && typeLen <= 28) {
            const std::uint32_t length = 4 * typeLen;
            if (static_cast<std::size_t>(end - p) < length) {
                walk.malformed = true;
                break;
            }
            ts += delta;
            onRecord(FtraceRecord{ts, p, length});
            ++walk.records;
            p += length;
            continue;
        }
        if (end - p < 4) { // every other type has a u32 after the header
            walk.malformed = !(typeLen == 29 && delta == 0);
            break;
        }
        const std::uint32_t next = detail::loadU32(p);
        switch (typeLen) {
        case 0: {
            // The length counts its own u32; kbuffer rounds it up to 4.
            if (next < 4) {
                walk.malformed = true;
                break;
            }
            const std::uint64_t advance = (static_cast<std::uint64_t>(next) + 3) & ~3ull;
            if (static_cast<std::uint64_t>(end - p) < advance) {
                walk.malformed = true;
                break;
            }
            ts += delta;
            onRecord(FtraceRecord{ts, p + 4, next - 4});
            ++walk.records;
            p += advance;
            continue;
        }
        case 29:
            if (delta == 0) {
                p = end; // the rest of the page is empty
                continue;
            }
            // A padding of length 0 would make its length word the next
            // event header: refused, as one reaching past the data.
            if (next == 0 || static_cast<std::uint64_t>(end - p) < next) {
                walk.malformed = true;
                break;
            }
            ts += delta;
            ++walk.paddings;
            p += next;
            continue;
        case 30:
            ts += (static_cast<std::uint64_t>(next) << 27) + delta;
            p += 4;
            continue;
        default: // 31
            ts = ((static_cast<std::uint64_t>(next) << 27) | delta) | (ts & kTsMsb);
            p += 4;
            continue;
        }
        break; // a malformed case above
    }
    if (!walk.malformed && p != end && end - p < 4 && end - p > 0)
        walk.malformed = true; // 1-3 stray bytes: the length lied
    walk.endTimestamp = ts;
    return walk;
}

} // namespace tracectl::consumer::kernel
