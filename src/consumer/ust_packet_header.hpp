// lttng-ust 2.13's packet header and context, as its ring-buffer clients
// write them at the start of every sub-buffer (ringbuffer-clients/template.h,
// `struct packet_header`, packed). The buffers are this process's, so the
// fields have its own sizes (`unsigned long` for events_discarded) and its
// native byte order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tracectl::consumer {

/// Where each field of lttng-ust 2.13's packet header lies, in bytes from
/// the start of the packet.
struct UstPacketHeaderLayout {
    static constexpr std::size_t kTimestampBegin = 32;  ///< u64
    static constexpr std::size_t kTimestampEnd = 40;    ///< u64
    static constexpr std::size_t kContentSize = 48;     ///< u64, bits
    static constexpr std::size_t kPacketSize = 56;      ///< u64, bits
    static constexpr std::size_t kPacketSeqNum = 64;    ///< u64
    static constexpr std::size_t kEventsDiscarded = 72; ///< unsigned long, running count
    static constexpr std::size_t kCpuId = kEventsDiscarded + sizeof(unsigned long); ///< u32
    /// offsetof(struct packet_header, ctx.header_end): what an empty packet
    /// holds, and where its first event record starts.
    static constexpr std::size_t kSize = kCpuId + sizeof(std::uint32_t);
};

/// The `T` at byte `at` of a header copied out of its ring buffer.
template <typename T>
T readAt(const std::byte* header, std::size_t at) {
    T v;
    std::memcpy(&v, header + at, sizeof v);
    return v;
}

/// Writes `v` at byte `at` of a header copied out of its ring buffer.
template <typename T>
void writeAt(std::byte* header, std::size_t at, T v) {
    std::memcpy(header + at, &v, sizeof v);
}

} // namespace tracectl::consumer
