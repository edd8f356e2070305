// Where the consumer's streams go in the current trace chunk: a local
// folder (local_output.hpp: stream files and CTF index files) or an
// lttng-relayd (relay_output.hpp: the relay's streams, packets on its data
// connection and index entries on its control connection). The channels
// (channel.hpp, kernel/kernel_channel.hpp) write through these and never
// know which.
#pragma once

#include "index_writer.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace tracectl::consumer {

enum class StreamKind {
    Data,     ///< packets with an index entry each
    Metadata, ///< the trace's metadata stream ("metadata"), no index
};

/// One stream's output in one trace chunk. Move-only through its owner.
class StreamSink {
public:
    virtual ~StreamSink() = default;

    /// Appends one packet: `paddedBytes` bytes at `data`, of which the first
    /// `contentBytes` (rounded up to a byte; <= paddedBytes) hold the packet
    /// and the rest is padding. `data` may point into a ring-buffer
    /// mapping: it is only read by system calls, so a truncated mapping
    /// fails the call (EFAULT) instead of the process. `index` (data
    /// streams; its `offset` is filled in here) is null for metadata.
    /// Throws std::system_error (local I/O) or std::runtime_error (a relay
    /// that failed or went away); the sink is then unusable.
    virtual void write(const void* data, std::size_t paddedBytes, std::size_t contentBytes,
                       const IndexEntry* index) = 0;
    /// Bytes written to this stream in this chunk (padding included).
    virtual std::uint64_t bytes() const noexcept = 0;
    /// Ends the stream in this chunk (idempotent; never throws).
    virtual void close() noexcept = 0;
    /// Live sessions, a data stream that had nothing to send at a live
    /// timer tick: tells live viewers that it holds nothing up to
    /// `timestampEnd` (clock cycles) either. `streamId` is its CTF stream
    /// class id. Nothing to do for a local stream. Throws as write().
    virtual void beacon(std::uint64_t timestampEnd, std::uint64_t streamId) {
        (void)timestampEnd;
        (void)streamId;
    }
};

/// A trace chunk's destination. Shared by the channels that write into it
/// (a rotation hands each the next chunk's).
class ChunkOutput {
public:
    virtual ~ChunkOutput() = default;

    /// A new stream `name` (no '/') of the trace folder `traceDir` (a path
    /// relative to the chunk, already checked with
    /// consumer_protocol::isSafeRelativeDir()). Throws std::system_error or
    /// std::runtime_error.
    virtual std::unique_ptr<StreamSink> openStream(std::string_view traceDir, std::string_view name,
                                                   StreamKind kind) const = 0;
    /// Rotation: the stream `name` of `traceDir`, written until now
    /// through `previous` (its sink in the chunk before, still open), goes
    /// on in this chunk; returns its sink here. The caller closes
    /// `previous` afterwards, as always. A local chunk opens new files
    /// (this default: openStream()); a relay chunk keeps the relay's
    /// stream and moves it into this chunk (ROTATE_STREAMS,
    /// relay_output.hpp), `previous` then being handed over (closing it
    /// does nothing). Throws as openStream().
    virtual std::unique_ptr<StreamSink> continueStream(const StreamSink& previous,
                                                       std::string_view traceDir,
                                                       std::string_view name,
                                                       StreamKind kind) const {
        (void)previous;
        return openStream(traceDir, name, kind);
    }
    /// Every stream of one channel was opened (a relay tells its live
    /// viewers then). Throws as openStream().
    virtual void streamsOpened() const {}
    /// Takes the stream `name` of `traceDir` out of the chunk again (its
    /// sink closed): what it wrote is not to be read. True if it is gone; a
    /// relay chunk cannot take back what it sent (false, this default).
    /// Never throws.
    virtual bool removeStream(std::string_view traceDir, std::string_view name) const noexcept {
        (void)traceDir;
        (void)name;
        return false;
    }
};

} // namespace tracectl::consumer
