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
    std::uint64_t packets = 0; ///< sub-buffers written
    std::uint64_t skipped = 0; ///< sub-buffers overwritten by the producer while copying
    std::uint64_t bytes = 0;   ///< bytes of the stream file
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
/// each padded as in a normal trace. A stream with no complete sub-buffer
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
