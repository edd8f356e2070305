#include "ftrace_page.hpp"

namespace tracectl::consumer::kernel {

namespace {

std::uint64_t loadLe(const std::byte* p, std::uint32_t bytes) noexcept {
    std::uint64_t v = 0;
    std::memcpy(&v, p, bytes); // x86-64: the kernel's native order is little-endian
    return v;
}

} // namespace

bool validPageFormat(const PageFormat& f) noexcept {
    const auto within = [&](std::uint32_t offset, std::uint32_t bytes) {
        return static_cast<std::uint64_t>(offset) + bytes <= f.dataOffset;
    };
    return f.timestampSize == 8 && (f.commitSize == 4 || f.commitSize == 8) &&
           within(f.timestampOffset, f.timestampSize) && within(f.commitOffset, f.commitSize) &&
           f.dataOffset < f.pageSize;
}

std::optional<PageHeader> readPageHeader(const std::byte* page, std::size_t size,
                                         const PageFormat& format) noexcept {
    if (!validPageFormat(format))
        return std::nullopt;
    const std::size_t pageBytes = size < format.pageSize ? size : format.pageSize;
    if (pageBytes < format.dataOffset)
        return std::nullopt;
    PageHeader h;
    h.timestamp = loadLe(page + format.timestampOffset, format.timestampSize);
    const std::uint64_t commit = loadLe(page + format.commitOffset, format.commitSize);
    const std::uint64_t length = commit & kCommitLengthMask;
    const std::size_t room = pageBytes - format.dataOffset;
    if (length > room)
        return std::nullopt;
    h.dataLength = static_cast<std::uint32_t>(length);
    h.missedEvents = (commit & kMissedEvents) != 0;
    // The kernel stores the count only when it fits (ring_buffer_read_page);
    // a flag claiming a count the page cannot hold is taken as not stored.
    if (h.missedEvents && (commit & kMissedStored) != 0 && room - length >= 8) {
        h.missedStored = true;
        h.missedCount = loadLe(page + format.dataOffset + length, 8);
    }
    return h;
}

} // namespace tracectl::consumer::kernel
