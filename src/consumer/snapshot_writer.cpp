#include "snapshot_writer.hpp"

#include "discarded_count_floor.hpp"
#include "index_writer.hpp"
#include "ring_buffer_guard.hpp"
#include "stream_reader.hpp"
#include "ust_channel.hpp"
#include "ust_packet_header.hpp"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <lttng/ust-ctl.h>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

namespace tracectl::consumer {

namespace {

void check(int r, const char* call) {
    if (r < 0)
        throw UstError(call, r);
}

/// Gives a sub-buffer taken with get_subbuf (positional) or get_next_subbuf
/// back on scope exit, whatever happens in between.
class SubbufHold {
public:
    SubbufHold(lttng_ust_ctl_consumer_stream* s, bool positional)
        : s_(s), positional_(positional) {}
    ~SubbufHold() {
        if (s_ != nullptr)
            (void)release();
    }
    SubbufHold(const SubbufHold&) = delete;
    SubbufHold& operator=(const SubbufHold&) = delete;
    int release() {
        lttng_ust_ctl_consumer_stream* s = std::exchange(s_, nullptr);
        return positional_ ? guarded(lttng_ust_ctl_put_subbuf, s)
                           : guarded(lttng_ust_ctl_put_next_subbuf, s);
    }

private:
    lttng_ust_ctl_consumer_stream* s_;
    bool positional_;
};

/// Appends the sub-buffer held now to `sink`: its padded size, of which
/// its content size is the packet (a relay is sent only that and pads it
/// itself); `index` (data streams) gets its offset there.
void appendHeld(lttng_ust_ctl_consumer_stream* s, StreamSink& sink, IndexEntry* index) {
    unsigned long padded = 0, content = 0;
    check(guarded(lttng_ust_ctl_get_padded_subbuf_size, s, &padded),
          "lttng_ust_ctl_get_padded_subbuf_size");
    check(guarded(lttng_ust_ctl_get_subbuf_size, s, &content), "lttng_ust_ctl_get_subbuf_size");
    const void* base = guarded(lttng_ust_ctl_get_mmap_base, s);
    if (base == nullptr)
        throw UstError("lttng_ust_ctl_get_mmap_base", 0);
    unsigned long offset = 0;
    check(guarded(lttng_ust_ctl_get_mmap_read_offset, s, &offset),
          "lttng_ust_ctl_get_mmap_read_offset");
    sink.write(static_cast<const char*>(base) + offset, padded, std::min(content, padded), index);
}

/// The header of a packet copied out of its ring buffer (`packet`, its
/// `entry` the fields the getters gave for it), if it lies where lttng-ust
/// 2.13 puts it (each field as the getters said); empty otherwise.
std::vector<std::byte> stagedHeader(const std::byte* packet, std::size_t padded,
                                    const IndexEntry& entry) {
    using L = UstPacketHeaderLayout;
    if (entry.contentSizeBits < L::kSize * 8 || padded < L::kSize)
        return {};
    std::vector<std::byte> header(packet, packet + L::kSize);
    const std::byte* h = header.data();
    if (readAt<std::uint64_t>(h, L::kTimestampBegin) != entry.timestampBegin ||
        readAt<std::uint64_t>(h, L::kTimestampEnd) != entry.timestampEnd ||
        readAt<std::uint64_t>(h, L::kContentSize) != entry.contentSizeBits ||
        readAt<std::uint64_t>(h, L::kPacketSize) != entry.packetSizeBits ||
        readAt<unsigned long>(h, L::kEventsDiscarded) != entry.eventsDiscarded ||
        (entry.packetSeqNum != ~std::uint64_t{0} &&
         readAt<std::uint64_t>(h, L::kPacketSeqNum) != entry.packetSeqNum))
        return {};
    return header;
}

/// How many times in all a stream's sub-buffers are copied, from a new
/// snapshot of its positions each time, while the producer overwrites some
/// of them before they are copied.
constexpr int kCopyAttempts = 8;

/// The most bytes of one stream's sub-buffers held in memory at once: a
/// range that fits is copied whole before any of it is written (and copied
/// again if the producer overwrote part of it first); a bigger one is
/// copied and written in parts of this size.
constexpr unsigned long kMaxStagedBytes = 16ul << 20;

/// Sub-buffers copied out of a ring buffer, oldest first.
struct StagedRange {
    struct Packet {
        std::size_t at = 0;      ///< where its bytes begin in `bytes`
        std::size_t padded = 0;  ///< its padded size, bytes
        std::size_t content = 0; ///< its content size, bytes (<= padded)
        IndexEntry entry;        ///< its fields, as the getters gave them
    };
    std::vector<std::byte> bytes;
    std::vector<Packet> packets;
    std::uint64_t lost = 0;  ///< sub-buffers the producer overwrote before they were copied
    bool newestHeld = false; ///< the range's newest sub-buffer is the last of `packets`
};

/// Copies the sub-buffers of `stream` at positions [from, to) (one every
/// `subbuf` bytes, within the stream's last snapshot) into `out`, emptied
/// first (its capacity kept). Each is got (lttng_ust_ctl_get_subbuf),
/// copied under the SIGBUS guard and put back at once, nothing else in
/// between: in overwrite mode the producer takes the oldest sub-buffer as
/// soon as it fills the current one, and writing each to the output
/// between get and put (a system call or two each) let a producer at full
/// speed overwrite them all first. One it overwrote all the same (-EAGAIN)
/// is counted in `out.lost`. Throws UstError.
void copyRange(lttng_ust_ctl_consumer_stream* stream, unsigned long from, unsigned long to,
               unsigned long subbuf, StagedRange& out) {
    out.bytes.clear();
    out.packets.clear();
    out.lost = 0;
    out.newestHeld = false;
    for (unsigned long pos = from; static_cast<long>(pos - to) < 0; pos += subbuf) {
        unsigned long at = pos;
        const int got = guarded(lttng_ust_ctl_get_subbuf, stream, &at);
        if (got == -EAGAIN) {
            ++out.lost;
            continue;
        }
        check(got, "lttng_ust_ctl_get_subbuf");
        SubbufHold hold(stream, true);
        unsigned long padded = 0, content = 0, offset = 0;
        check(guarded(lttng_ust_ctl_get_padded_subbuf_size, stream, &padded),
              "lttng_ust_ctl_get_padded_subbuf_size");
        check(guarded(lttng_ust_ctl_get_subbuf_size, stream, &content),
              "lttng_ust_ctl_get_subbuf_size");
        check(guarded(lttng_ust_ctl_get_mmap_read_offset, stream, &offset),
              "lttng_ust_ctl_get_mmap_read_offset");
        const void* base = guarded(lttng_ust_ctl_get_mmap_base, stream);
        if (base == nullptr)
            throw UstError("lttng_ust_ctl_get_mmap_base", 0);
        if (padded > subbuf)
            throw UstError("lttng_ust_ctl_get_padded_subbuf_size (more than a sub-buffer)", 0);
        StagedRange::Packet p;
        p.entry = packetInfo(stream);
        p.at = out.bytes.size();
        p.padded = padded;
        p.content = std::min(content, padded);
        out.bytes.resize(p.at + padded);
        if (!copyFromMapping(out.bytes.data() + p.at, static_cast<const char*>(base) + offset,
                             padded))
            throw UstError("copying a sub-buffer (its mapping faulted)", kSpoiledBuffer);
        checkPacketHeader(out.bytes.data() + p.at, p.entry);
        check(hold.release(), "lttng_ust_ctl_put_subbuf");
        out.packets.push_back(p);
        out.newestHeld = static_cast<long>(pos + subbuf - to) >= 0;
    }
}

/// Writes the packets of `copy` to `sink` and counts them (and what it
/// lost) in `out`. Their events_discarded never go below `floor`'s, which
/// follows them (discarded_count_floor.hpp): in the copy and its entries.
void writeStaged(StagedRange& copy, StreamSink& sink, StreamSnapshot& out,
                 DiscardedCountFloor& floor) {
    using L = UstPacketHeaderLayout;
    for (StagedRange::Packet& p : copy.packets) {
        const std::uint64_t count = floor.next(p.entry.eventsDiscarded);
        if (count != p.entry.eventsDiscarded && p.padded >= L::kSize) {
            writeAt<unsigned long>(copy.bytes.data() + p.at, L::kEventsDiscarded, count);
            p.entry.eventsDiscarded = count;
        }
        sink.write(copy.bytes.data() + p.at, p.padded, p.content, &p.entry);
        ++out.packets;
    }
    out.lost += copy.lost;
}

} // namespace

StreamSnapshot snapshotDataStream(lttng_ust_ctl_consumer_stream* stream, const ChunkOutput& chunk,
                                  std::string_view traceDir, const std::string& name,
                                  std::uint64_t maxPackets, bool active) {
    StreamSnapshot out;
    // producer_active 1: the current sub-buffer is closed only if it holds
    // something. lttng-consumerd 2.13 flushes with 0 here
    // (lttng_ustconsumer_snapshot_channel, ust-consumer.c), which switches
    // an empty sub-buffer too, so that an idle stream still ends at the
    // snapshot; but in overwrite mode that empty packet evicts the oldest
    // full one, and snapshots taken one after another push an idle
    // stream's history out. The idle stream's end is written below instead,
    // in the snapshot only, and the ring buffer keeps its history.
    bool idle = false;
    std::uint64_t now = 0;
    if (active) {
        const unsigned long before = producedPosition(stream);
        check(guarded(lttng_ust_ctl_flush_buffer, stream, 1), "lttng_ust_ctl_flush_buffer");
        // Nothing to close: nothing was written since its last packet ended.
        idle = producedPosition(stream) == before;
        if (idle)
            check(guarded(lttng_ust_ctl_get_current_timestamp, stream, &now),
                  "lttng_ust_ctl_get_current_timestamp");
    }
    const int r = guarded(lttng_ust_ctl_snapshot, stream);
    if (r == -EAGAIN)
        return out; // no complete sub-buffer: no file rather than an empty one
    check(r, "lttng_ust_ctl_snapshot");
    unsigned long subbuf = 0;
    check(guarded(lttng_ust_ctl_get_max_subbuf_size, stream, &subbuf),
          "lttng_ust_ctl_get_max_subbuf_size");
    if (subbuf == 0)
        throw UstError("lttng_ust_ctl_get_max_subbuf_size (0)", 0);
    // The last snapshot's range: from its consumed position (the newest
    // `maxPackets` sub-buffers at most) to its produced one. Positions are
    // free-running counters (they wrap): only differences are compared.
    const auto range = [&]() -> std::pair<unsigned long, unsigned long> {
        unsigned long consumed = 0, produced = 0;
        check(guarded(lttng_ust_ctl_snapshot_get_consumed, stream, &consumed),
              "lttng_ust_ctl_snapshot_get_consumed");
        check(guarded(lttng_ust_ctl_snapshot_get_produced, stream, &produced),
              "lttng_ust_ctl_snapshot_get_produced");
        if (maxPackets != 0 && (produced - consumed) / subbuf > maxPackets)
            consumed = produced - static_cast<unsigned long>(maxPackets) * subbuf;
        return {consumed, produced};
    };
    auto [from, to] = range();
    const std::unique_ptr<StreamSink> sink = chunk.openStream(traceDir, name, StreamKind::Data);
    StagedRange copy;
    DiscardedCountFloor floor;
    if (to - from <= kMaxStagedBytes) {
        // All of it in memory before anything is written, then again from
        // a new snapshot of the positions while the producer overwrote
        // some of it first: the copy kept is the one that lost the least.
        copy.bytes.reserve(to - from);
        copyRange(stream, from, to, subbuf, copy);
        ++out.attempts;
        StagedRange again;
        while (copy.lost != 0 && out.attempts < kCopyAttempts) {
            if (guarded(lttng_ust_ctl_snapshot, stream) < 0)
                break;
            std::tie(from, to) = range();
            if (to - from > kMaxStagedBytes)
                break;
            again.bytes.reserve(to - from);
            copyRange(stream, from, to, subbuf, again);
            ++out.attempts;
            if (again.lost < copy.lost)
                std::swap(copy, again);
        }
        writeStaged(copy, *sink, out, floor);
    } else {
        // A ring buffer bigger than that: copied and written in parts of
        // that size, oldest first (the producer needs that many bytes to
        // overwrite the part being copied).
        const unsigned long part = std::max<unsigned long>(1, kMaxStagedBytes / subbuf) * subbuf;
        copy.bytes.reserve(part);
        for (unsigned long pos = from; static_cast<long>(pos - to) < 0;) {
            const unsigned long end = to - pos > part ? pos + part : to;
            copyRange(stream, pos, end, subbuf, copy);
            writeStaged(copy, *sink, out, floor);
            pos = end;
        }
        out.attempts = 1;
    }
    // An idle stream ends where its last packet did, before the snapshot:
    // babeltrace2 --stream-intersection would cut every other stream's
    // events from there. An empty packet (header only, events_discarded and
    // every other field as in that last packet) carries its end from there
    // to the snapshot, as lttng-consumerd's empty switch does, without
    // touching the ring buffer. A bounded snapshot (max-size) has it only
    // in the room of a sub-buffer it did not fill.
    if (idle && copy.newestHeld && (maxPackets == 0 || out.packets < maxPackets)) {
        using L = UstPacketHeaderLayout;
        const StagedRange::Packet& newest = copy.packets.back();
        const IndexEntry& last = newest.entry;
        std::vector<std::byte> header =
            stagedHeader(copy.bytes.data() + newest.at, newest.padded, last);
        if (!header.empty() && now > last.timestampEnd) {
            std::byte* h = header.data();
            IndexEntry end = last;
            end.timestampBegin = last.timestampEnd;
            end.timestampEnd = now;
            end.contentSizeBits = end.packetSizeBits = L::kSize * 8;
            if (last.packetSeqNum != ~std::uint64_t{0})
                end.packetSeqNum = last.packetSeqNum + 1;
            writeAt<std::uint64_t>(h, L::kTimestampBegin, end.timestampBegin);
            writeAt<std::uint64_t>(h, L::kTimestampEnd, end.timestampEnd);
            writeAt<std::uint64_t>(h, L::kContentSize, end.contentSizeBits);
            writeAt<std::uint64_t>(h, L::kPacketSize, end.packetSizeBits);
            if (last.packetSeqNum != ~std::uint64_t{0})
                writeAt<std::uint64_t>(h, L::kPacketSeqNum, end.packetSeqNum);
            sink->write(h, L::kSize, L::kSize, &end);
        }
    }
    out.bytes = sink->bytes();
    sink->close();
    return out;
}

std::uint64_t snapshotMetadata(lttng_ust_ctl_consumer_channel* channel,
                               lttng_ust_ctl_consumer_stream* stream, const ChunkOutput& chunk,
                               std::string_view traceDir, std::string_view text) {
    const std::unique_ptr<StreamSink> sink =
        chunk.openStream(traceDir, "metadata", StreamKind::Metadata);
    // Whatever an earlier failure left in the ring buffer is not ours to write.
    for (;;) {
        const int r = guarded(lttng_ust_ctl_get_next_subbuf, stream);
        if (r == -EAGAIN || r == -ENODATA)
            break;
        check(r, "lttng_ust_ctl_get_next_subbuf");
        check(guarded(lttng_ust_ctl_put_next_subbuf, stream), "lttng_ust_ctl_put_next_subbuf");
    }
    std::size_t written = 0;
    int emptyWrites = 0;
    while (written < text.size()) {
        const ssize_t n = lttng_ust_ctl_write_one_packet_to_channel(channel, text.data() + written,
                                                                    text.size() - written);
        if (n < 0 && n != -ENOBUFS)
            throw UstError("lttng_ust_ctl_write_one_packet_to_channel", static_cast<int>(n));
        if (n <= 0) {
            if (++emptyWrites > 1)
                throw UstError("lttng_ust_ctl_write_one_packet_to_channel (no room)", -ENOBUFS);
        } else {
            emptyWrites = 0;
            written += static_cast<std::size_t>(n);
        }
        check(guarded(lttng_ust_ctl_flush_buffer, stream, 1), "lttng_ust_ctl_flush_buffer");
        for (;;) {
            const int r = guarded(lttng_ust_ctl_get_next_subbuf, stream);
            if (r == -EAGAIN || r == -ENODATA)
                break;
            check(r, "lttng_ust_ctl_get_next_subbuf");
            SubbufHold hold(stream, false);
            appendHeld(stream, *sink, nullptr);
            check(hold.release(), "lttng_ust_ctl_put_next_subbuf");
        }
    }
    const std::uint64_t bytes = sink->bytes();
    sink->close();
    return bytes;
}

} // namespace tracectl::consumer
