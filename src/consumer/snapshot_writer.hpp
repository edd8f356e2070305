// Snapshots of a snapshot session's buffers (lttng-tools
// src/common/ust-consumer/ust-consumer.c, snapshot_channel, for the facts):
// the content of each data stream between its consumed and produced
// positions is copied sub-buffer by sub-buffer (lttng_ust_ctl_snapshot,
// get_subbuf at a position, put_subbuf) without consuming anything, so
// tracing goes on undisturbed and the next snapshot sees the same buffers;
// the metadata is written whole, as packets, through the metadata channel's
// own ring buffer. Both go through a ChunkOutput (output/stream_sink.hpp):
// a LocalChunk on the snapshot's folder (a local output: stream files and
// their indexes, whole padded sub-buffers), or a RelayChunk, the snapshot's
// trace chunk on an lttng-relayd (a network output: each stream a relay
// stream, as lttng-consumerd's lttng_ustconsumer_snapshot_channel sends a
// snapshot to a relay, ust-consumer.c).
#pragma once

#include "output/stream_sink.hpp"

#include <cstdint>
#include <string>
#include <string_view>

struct lttng_ust_ctl_consumer_channel;
struct lttng_ust_ctl_consumer_stream;

namespace tracectl::consumer {

/// What one data stream's snapshot holds.
struct StreamSnapshot {
    std::uint64_t packets = 0; ///< sub-buffers written (the idle stream's end packet not counted)
    /// Sub-buffers of the snapshot's range that the producer overwrote
    /// before they could be copied, in the copy written (the one of the
    /// `attempts` that lost the fewest); their packet_seq_num values are
    /// missing from the stream (a gap, or its oldest ones).
    std::uint64_t lost = 0;
    std::uint64_t attempts = 0; ///< copies taken (1, or more while the producer overwrote some)
    std::uint64_t bytes = 0;    ///< bytes of the stream file
};

/// With `active` (tracing goes on, or went on since the stream's last
/// flush), closes the current packet of `stream` if it holds anything
/// (lttng_ust_ctl_flush_buffer(stream, 1)); if it held nothing (the stream
/// is idle), the snapshot's copy of the stream gets one more packet, empty
/// (header only), from the end of its last packet to now, and the ring
/// buffer is left as it was. Either way the stream ends at the snapshot,
/// as every other one does (lttng-consumerd's
/// lttng_ustconsumer_snapshot_channel, ust-consumer.c, gets there with
/// flush_buffer(stream, 0), which costs an idle stream a sub-buffer of its
/// history each time). A quiescent stream is left as it is (it ends where
/// tracing stopped). Then writes the data stream `name` of
/// `traceDir` (chunk-relative) into `chunk` (locally `<traceDir>/<name>` and
/// `<traceDir>/index/<name>.idx`) with the sub-buffers from the consumed to
/// the produced position, at most the newest `maxPackets` of them (0: all),
/// each padded as in a normal trace. The sub-buffers are first copied into
/// memory, each put back at once (at most 16 MiB of them at a time; a
/// bigger range is copied and written in parts), so that a producer that
/// overwrites the oldest ones as it goes (overwrite mode) seldom gets
/// there first; if it did, the copy is taken again from a new snapshot of
/// the positions, up to 8 copies in all, and the one that lost the fewest
/// is written: StreamSnapshot::lost says how many it lacks (lttng-consumerd
/// skips such a sub-buffer and counts it in the channel's lost packets,
/// ust-consumer.c). A stream with no complete sub-buffer
/// (only possible if it never had a packet) gets no stream at all, never an
/// empty one. Throws UstError (ust-ctl), std::system_error (files) or
/// std::runtime_error (a relay).
StreamSnapshot snapshotDataStream(lttng_ust_ctl_consumer_stream* stream, const ChunkOutput& chunk,
                                  std::string_view traceDir, const std::string& name,
                                  std::uint64_t maxPackets, bool active);

/// Writes all of `text` (the trace's whole TSDL) as the metadata stream of
/// `traceDir` in `chunk` (locally `<traceDir>/metadata`), in metadata
/// packets: lttng_ust_ctl_write_one_packet_to_channel into `channel`,
/// flush, then each packet read from `stream` (the channel's only stream,
/// which nobody else reads). The ring buffer is left empty. Returns the
/// bytes written (whole packets, padding included). Throws UstError,
/// std::system_error or std::runtime_error.
std::uint64_t snapshotMetadata(lttng_ust_ctl_consumer_channel* channel,
                               lttng_ust_ctl_consumer_stream* stream, const ChunkOutput& chunk,
                               std::string_view traceDir, std::string_view text);

} // namespace tracectl::consumer
