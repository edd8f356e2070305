#include "snapshot_writer.hpp"

#include "index_writer.hpp"
#include "stream_reader.hpp"
#include "ust_channel.hpp"

#include <algorithm>
#include <cerrno>
#include <lttng/ust-ctl.h>
#include <memory>
#include <utility>

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
        return positional_ ? lttng_ust_ctl_put_subbuf(s) : lttng_ust_ctl_put_next_subbuf(s);
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
    check(lttng_ust_ctl_get_padded_subbuf_size(s, &padded), "lttng_ust_ctl_get_padded_subbuf_size");
    check(lttng_ust_ctl_get_subbuf_size(s, &content), "lttng_ust_ctl_get_subbuf_size");
    const void* base = lttng_ust_ctl_get_mmap_base(s);
    if (base == nullptr)
        throw UstError("lttng_ust_ctl_get_mmap_base", 0);
    unsigned long offset = 0;
    check(lttng_ust_ctl_get_mmap_read_offset(s, &offset), "lttng_ust_ctl_get_mmap_read_offset");
    sink.write(static_cast<const char*>(base) + offset, padded, std::min(content, padded), index);
}

} // namespace

StreamSnapshot snapshotDataStream(lttng_ust_ctl_consumer_stream* stream, const ChunkOutput& chunk,
                                  std::string_view traceDir, const std::string& name,
                                  std::uint64_t maxPackets, bool active) {
    StreamSnapshot out;
    // producer_active 1, as lttng-consumerd's snapshots (consumer.c,
    // lttng_consumer_take_snapshot): the current sub-buffer is closed only if
    // it holds something. Switching an empty one would, in overwrite mode,
    // evict the oldest full one: each snapshot would push history out.
    if (active)
        check(lttng_ust_ctl_flush_buffer(stream, 1), "lttng_ust_ctl_flush_buffer");
    const int r = lttng_ust_ctl_snapshot(stream);
    if (r == -EAGAIN)
        return out; // no complete sub-buffer: no file rather than an empty one
    check(r, "lttng_ust_ctl_snapshot");
    const std::unique_ptr<StreamSink> sink = chunk.openStream(traceDir, name, StreamKind::Data);
    unsigned long consumed = 0, produced = 0, subbuf = 0;
    check(lttng_ust_ctl_snapshot_get_consumed(stream, &consumed),
          "lttng_ust_ctl_snapshot_get_consumed");
    check(lttng_ust_ctl_snapshot_get_produced(stream, &produced),
          "lttng_ust_ctl_snapshot_get_produced");
    check(lttng_ust_ctl_get_max_subbuf_size(stream, &subbuf), "lttng_ust_ctl_get_max_subbuf_size");
    if (subbuf == 0)
        throw UstError("lttng_ust_ctl_get_max_subbuf_size (0)", 0);
    // Positions are free-running counters (they wrap): compare differences.
    unsigned long pos = consumed;
    if (maxPackets != 0 && (produced - consumed) / subbuf > maxPackets)
        pos = produced - static_cast<unsigned long>(maxPackets) * subbuf; // the newest ones
    for (; static_cast<long>(pos - produced) < 0; pos += subbuf) {
        unsigned long at = pos;
        const int got = lttng_ust_ctl_get_subbuf(stream, &at);
        if (got == -EAGAIN) {
            // The producer overwrote it since the snapshot was taken.
            ++out.skipped;
            continue;
        }
        check(got, "lttng_ust_ctl_get_subbuf");
        SubbufHold hold(stream, true);
        IndexEntry entry = packetInfo(stream);
        appendHeld(stream, *sink, &entry);
        check(hold.release(), "lttng_ust_ctl_put_subbuf");
        ++out.packets;
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
        const int r = lttng_ust_ctl_get_next_subbuf(stream);
        if (r == -EAGAIN || r == -ENODATA)
            break;
        check(r, "lttng_ust_ctl_get_next_subbuf");
        check(lttng_ust_ctl_put_next_subbuf(stream), "lttng_ust_ctl_put_next_subbuf");
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
        check(lttng_ust_ctl_flush_buffer(stream, 1), "lttng_ust_ctl_flush_buffer");
        for (;;) {
            const int r = lttng_ust_ctl_get_next_subbuf(stream);
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
