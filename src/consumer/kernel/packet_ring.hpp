// A snapshot channel's history of one CPU's stream: its newest CTF packets,
// kept in the consumer's memory up to the size of that CPU's ring buffer.
//
// ftrace has no reader that leaves what it reads in place: trace_pipe_raw
// (the only binary per-CPU reader) consumes it. So each snapshot of a
// kernel channel reads the buffers (as before: between snapshots, and
// across a daemon's restart, the events stay in ftrace's overwrite buffer)
// and keeps the packets here; it writes a copy of what is held, and the
// next snapshot holds the same history plus what came since, as
// lttng-modules' overwrite buffers do (lttng-consumerd copies them by
// position without consuming). What no longer fits is dropped oldest first:
// the packets left keep their packet_seq_num, so a reader sees where the
// history begins.
#pragma once

#include "index_writer.hpp"
#include "output/stream_sink.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

namespace tracectl::consumer::kernel {

class PacketRing {
public:
    /// Holds at most `budgetBytes` of packets (the newest one always, even
    /// if it alone is bigger).
    explicit PacketRing(std::uint64_t budgetBytes) noexcept : budget_(budgetBytes) {}

    /// Appends a copy of `packet` (a whole CTF packet) and its index entry
    /// (offset ignored), then drops the oldest packets while more than the
    /// budget is held. Throws std::bad_alloc.
    void append(std::span<const std::byte> packet, const IndexEntry& entry);
    /// Writes the newest `most` packets held (0: all), oldest first, to
    /// `sink`; keeps them. Throws as StreamSink::write().
    void writeTo(StreamSink& sink, std::uint64_t most) const;
    /// Drops every packet held.
    void clear() noexcept;

    std::uint64_t bytes() const noexcept { return bytes_; }          ///< held now
    std::size_t packets() const noexcept { return packets_.size(); } ///< held now
    std::uint64_t dropped() const noexcept { return dropped_; }      ///< packets dropped to fit

private:
    struct Packet {
        std::vector<std::byte> bytes;
        IndexEntry entry;
    };
    std::uint64_t budget_;
    std::uint64_t bytes_ = 0;
    std::uint64_t dropped_ = 0;
    std::deque<Packet> packets_;
    /// A dropped packet's buffer, reused by the next append (no allocation
    /// per packet once the ring is full).
    std::vector<std::byte> spare_;
};

} // namespace tracectl::consumer::kernel
