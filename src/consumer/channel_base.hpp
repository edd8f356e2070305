// What the consumer's dispatcher (consumer.hpp) asks of every channel,
// whatever its domain: the UST ring-buffer channels (channel.hpp) and the
// kernel domain's ftrace channels (kernel/kernel_channel.hpp,
// kernel/kernel_metadata_channel.hpp).
#pragma once

#include "common/consumer_protocol.hpp"
#include "common/unique_fd.hpp"
#include "output/stream_sink.hpp"
#include "stream_file.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tracectl::consumer {

/// A request cannot be honoured; becomes an Error{kind, what()} reply.
class RequestError : public std::runtime_error {
public:
    RequestError(consumer_protocol::ErrorKind kind, const std::string& message)
        : std::runtime_error(message), kind_(kind) {}
    consumer_protocol::ErrorKind kind() const noexcept { return kind_; }

private:
    consumer_protocol::ErrorKind kind_;
};

class ChannelBase {
public:
    virtual ~ChannelBase() = default;

    virtual std::uint64_t key() const noexcept = 0;
    /// A metadata channel: switched at RotateMetadata, written by
    /// SnapshotMetadata.
    virtual bool isMetadata() const noexcept = 0;
    virtual std::uint32_t streamCount() const noexcept = 0;

    /// Writes the channel's content as a snapshot into `snapshot` (the
    /// snapshot's own chunk: its folder, or its trace chunk on a relay; at
    /// most `packetsPerStream` newest packets per stream, 0: all); returns
    /// the bytes written. Throws RequestError.
    virtual std::uint64_t recordSnapshot(const ChunkOutput& snapshot,
                                         std::uint64_t packetsPerStream) = 0;
    /// Snapshot data channels (ClearBuffers): discards what every stream's
    /// buffer holds now, so that the next snapshot holds only what is
    /// produced after this. Throws RequestError (InvalidArgument: not a
    /// snapshot data channel; Tracer/Io) after trying every stream.
    virtual void clearBuffers() {
        throw RequestError(consumer_protocol::ErrorKind::InvalidArgument,
                           "channel " + std::to_string(key()) + " has no buffers to clear");
    }
    /// Appends metadata text at `offset`. Throws RequestError
    /// (InvalidArgument: not a metadata channel, not at the end).
    virtual void pushMetadata(std::uint64_t offset, std::string_view bytes) = 0;
    /// Every stream's current packet is closed, even empty, and written.
    /// Throws RequestError after trying every stream.
    virtual void flush() = 0;

    /// See Channel::rotate(): `switched` once per stream; never throws.
    struct RotateResult {
        std::uint32_t expected = 0; ///< calls of `switched` to expect
        std::string error;          ///< the first failure, "" if none
    };
    virtual RotateResult rotate(const std::shared_ptr<const ChunkOutput>& chunk,
                                const std::function<void()>& switched,
                                std::optional<bool> traceWentOn = std::nullopt) noexcept = 0;
    /// Final drain before destruction; never throws (logged).
    virtual void drainAndClose(bool producersStopped) noexcept = 0;
    /// A metadata channel: its trace still has an open data stream (or no
    /// data channel at all), so it goes on into a new chunk.
    virtual bool traceGoesOn() const noexcept = 0;

    /// DeclareLayouts (UST data channels). Throws RequestError.
    virtual void declareLayouts(const consumer_protocol::LayoutAbi&, std::string_view) {
        throw RequestError(consumer_protocol::ErrorKind::InvalidArgument,
                           "channel " + std::to_string(key()) + " takes no record layouts");
    }
    /// DeclareKernelEvents (kernel data channels). Throws RequestError.
    virtual void declareKernelEvents(std::string_view) {
        throw RequestError(consumer_protocol::ErrorKind::InvalidArgument,
                           "channel " + std::to_string(key()) + " is not a kernel data channel");
    }
    /// AttachIpProbes (kernel data channels): the ip provider's ring
    /// buffer and counters maps. Throws RequestError.
    virtual void attachIpProbes(const consumer_protocol::AttachIpProbes&, UniqueFd, UniqueFd) {
        throw RequestError(consumer_protocol::ErrorKind::InvalidArgument,
                           "channel " + std::to_string(key()) + " is not a kernel data channel");
    }
    /// AttachSyscallStrings (kernel data channels): the system-call string
    /// program's ring buffer and counters maps. Throws RequestError.
    virtual void attachSyscallStrings(UniqueFd, UniqueFd) {
        throw RequestError(consumer_protocol::ErrorKind::InvalidArgument,
                           "channel " + std::to_string(key()) + " is not a kernel data channel");
    }

    /// ProducerGone: an app that wrote into this channel's buffers (shared
    /// with other apps) is gone, as process `pid`. Channels whose buffers
    /// no app shares, or that hold no ring buffer, do nothing. Throws
    /// RequestError.
    virtual void producerGone(std::uint32_t /*pid*/) {}

    /// Live sessions, at each live timer tick: every stream closes its
    /// packet if it holds events and sends it; a stream with nothing sends
    /// a beacon (StreamSink::beacon) instead, or, with
    /// `newStreamsPublished` (the relay published streams since the last
    /// tick), an empty packet where the tracer can make one
    /// (StreamReader::liveTick()). Throws RequestError.
    virtual void liveTick(bool /*newStreamsPublished*/) {}

    /// Samples, without consuming, how far the producers wrote into the
    /// ring buffers (ChannelFigures::bytesProduced), for the next
    /// figures(). Channels that cannot be sampled do nothing: their
    /// bytesProduced is their bytesWritten.
    virtual void sampleProduced() noexcept {}
    /// What the channel wrote so far (consumer_protocol::ChannelFigures).
    virtual consumer_protocol::ChannelFigures figures() const noexcept = 0;
    /// `hook` is called after each packet any stream of the channel writes,
    /// with the packet's bytes.
    virtual void setProgressHook(const std::function<void(std::uint64_t bytes)>& hook) = 0;
};

} // namespace tracectl::consumer
