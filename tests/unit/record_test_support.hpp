// Helpers for the record layout tests: CTF packets written bit by bit with
// CTF's rules (align, then little-endian fields from the least significant
// bit of a byte, big-endian from the most significant), laid out as our
// TSDL says (trace_environment.cpp): packet header, packet context,
// event_header_large records.
#pragma once

#include "record_layout.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace rltest {

class BitWriter {
public:
    explicit BitWriter(bool bigEndian) : bigEndian_(bigEndian) {}

    void align(std::uint32_t bits) {
        while (pos_ % bits != 0)
            bit(0, bigEndian_);
    }
    /// `bits` of `v` at the next multiple of `alignment` bits.
    void put(std::uint64_t v, unsigned bits, std::uint32_t alignment, bool reverse = false) {
        align(alignment);
        const bool big = bigEndian_ != reverse;
        for (unsigned i = 0; i < bits; ++i) {
            const unsigned shift = big ? bits - 1 - i : i;
            bit((v >> shift) & 1u, big);
        }
    }
    /// An integer aligned on its size (8, 16, 32, 64).
    void uint(std::uint64_t v, unsigned bits) { put(v, bits, bits); }
    void cstring(std::string_view s) {
        align(8);
        for (const char c : s)
            put(static_cast<unsigned char>(c), 8, 8);
        put(0, 8, 8);
    }
    void patch(std::uint64_t atBit, std::uint64_t v, unsigned bits) {
        const std::uint64_t saved = pos_;
        pos_ = atBit;
        put(v, bits, 1);
        pos_ = saved;
    }
    std::uint64_t pos() const noexcept { return pos_; }
    void padToBytes(std::size_t n) {
        while (pos_ < n * 8)
            bit(0, bigEndian_);
    }
    std::span<const std::byte> bytes() const noexcept { return data_; }
    const std::vector<std::byte>& data() const noexcept { return data_; }

private:
    // Bits of a byte count from its most significant one in a big-endian
    // field, from its least significant one in a little-endian field.
    void bit(std::uint64_t b, bool big) {
        const std::uint64_t byte = pos_ / 8;
        if (byte >= data_.size())
            data_.resize(byte + 1, std::byte{0});
        const unsigned shift = big ? 7 - pos_ % 8 : pos_ % 8;
        const auto mask = std::byte{static_cast<unsigned char>(1u << shift)};
        if (b != 0)
            data_[byte] |= mask;
        else
            data_[byte] &= ~mask;
        ++pos_;
    }

    bool bigEndian_;
    std::vector<std::byte> data_;
    std::uint64_t pos_ = 0;
};

/// Writes trace.packet.header and struct packet_context (content_size and
/// packet_size 0, to be patched by finishPacket).
inline void writePacketStart(BitWriter& w, const tracectl::record_layout::Abi& abi,
                             std::uint32_t streamId, const std::uint8_t (&uuid)[16]) {
    w.put(0xC1FC1FC1, 32, abi.uint32Alignment);
    for (const std::uint8_t b : uuid)
        w.put(b, 8, abi.uint8Alignment);
    w.put(streamId, 32, abi.uint32Alignment);
    w.put(0, 64, abi.uint64Alignment);    // stream_instance_id
    w.put(1000, 64, abi.uint64Alignment); // timestamp_begin
    w.put(2000, 64, abi.uint64Alignment); // timestamp_end
    w.put(0, 64, abi.uint64Alignment);    // content_size
    w.put(0, 64, abi.uint64Alignment);    // packet_size
    w.put(0, 64, abi.uint64Alignment);    // packet_seq_num
    w.put(0, abi.bitsPerLong, abi.longAlignment);
    w.put(0, 32, abi.uint32Alignment); // cpu_id
}

inline void writePacketStart(BitWriter& w, const tracectl::record_layout::Abi& abi) {
    static const std::uint8_t uuid[16] = {};
    writePacketStart(w, abi, 0, uuid);
}

/// Patches content_size (the bits written so far) and packet_size
/// (`packetBytes`), then pads to packetBytes. Returns content_size.
inline std::uint64_t finishPacket(BitWriter& w, const tracectl::record_layout::PacketFormat& f,
                                  std::size_t packetBytes = 4096) {
    const std::uint64_t content = w.pos();
    w.patch(f.contentSizeBit, content, 64);
    w.patch(f.packetSizeBit, packetBytes * 8, 64);
    w.padToBytes(packetBytes);
    return content;
}

/// event_header_large: compact (id < 65535, 32-bit timestamp) or extended.
inline void largeHeader(BitWriter& w, const tracectl::record_layout::Abi& abi, std::uint32_t id,
                        std::uint64_t ts, bool extended = false) {
    w.align(abi.uint16Alignment); // the struct's align()
    if (!extended && id < 65535) {
        w.put(id, 16, abi.uint16Alignment);
        w.put(ts, 32, abi.uint32Alignment);
        return;
    }
    w.put(65535, 16, abi.uint16Alignment);
    w.align(std::max(abi.uint32Alignment, abi.uint64Alignment)); // the `extended` struct
    w.put(id, 32, abi.uint32Alignment);
    w.put(ts, 64, abi.uint64Alignment);
}

/// The i386 ABI: 32-bit longs, 64-bit integers aligned on 32 bits.
inline tracectl::record_layout::Abi abi32() {
    tracectl::record_layout::Abi a;
    a.bitsPerLong = 32;
    a.uint64Alignment = 32;
    a.longAlignment = 32;
    return a;
}

} // namespace rltest
