// Trace chunks streamed to an lttng-relayd 2.13 (a network session), as
// lttng-consumerd does it (lttng-tools 2.13 src/common/consumer/consumer.c,
// consumer-stream.c, consumer-timer.c): each stream is a relay stream
// (ADD_STREAM, then STREAMS_SENT per channel); a data packet goes on the
// data connection with its net_seq_num, its index entry (SEND_INDEX) on the
// control connection; metadata goes on the control connection
// (SEND_METADATA). The relay writes the padding itself.
//
// The connections were opened by the daemon and passed to the consumer
// (consumer_protocol::AttachRelayd). Every call blocks, each bounded by the
// connections' timeout; a relay that fails, stalls past it or sends what
// the protocol does not allow fails the whole relay session at once: every
// later write throws, and the failure hook tells the daemon (once).
//
// Threads: the consumer's loop only.
#pragma once

#include "common/relayd/relayd_control.hpp"
#include "output/stream_sink.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace tracectl::consumer {

/// The consumer's two connections to its session on the relay, and what
/// it sent on each stream. Not copyable or movable (sinks point at it).
class RelaySession {
public:
    /// `relaySessionId`: the relay's id of the session (CREATE_SESSION's
    /// reply, made by the daemon); `minor`: the protocol minor in use.
    RelaySession(relayd::RelaydControl control, relayd::RelaydData data,
                 std::uint64_t relaySessionId);
    RelaySession(const RelaySession&) = delete;
    RelaySession& operator=(const RelaySession&) = delete;

    /// `hook(why)` is called once, at the first failure.
    void setFailureHook(std::function<void(const std::string&)> hook) {
        failureHook_ = std::move(hook);
    }
    /// Why the relay session failed; "" while it works.
    const std::string& failure() const noexcept { return failure_; }

    /// CREATE_TRACE_CHUNK. Throws std::runtime_error (and fails the session).
    void createTraceChunk(std::uint64_t chunkId, std::uint64_t creationTime);
    /// CLOSE_TRACE_CHUNK of `chunkId` (no command: the relay keeps it where
    /// it is). Never throws (logged, fails the session).
    void closeTraceChunk(std::uint64_t chunkId, std::uint64_t closeTime) noexcept;

    /// A new relay stream; returns its handle. Throws std::runtime_error.
    std::uint64_t addStream(const std::string& name, const std::string& pathname,
                            std::uint64_t chunkId, bool metadata);
    /// STREAMS_SENT. Throws std::runtime_error.
    void streamsSent();
    /// One data packet and its index entry (net_seq_num assigned here).
    /// Throws std::runtime_error.
    void sendPacket(std::uint64_t handle, const void* data, std::size_t contentBytes,
                    std::size_t paddingBytes, const IndexEntry& index);
    /// Metadata bytes of stream `handle`. Throws std::runtime_error.
    void sendMetadata(std::uint64_t handle, const void* data, std::size_t contentBytes,
                      std::size_t paddingBytes);
    /// A live beacon: an empty index carrying only `timestampEnd` and the
    /// CTF stream id (consumer-timer.c, send_empty_index), so that live
    /// viewers move time forward on an idle stream. Throws std::runtime_error.
    void sendBeacon(std::uint64_t handle, std::uint64_t timestampEnd, std::uint64_t streamId);
    /// CLOSE_STREAM with the last packet sent. Never throws (logged).
    void closeStream(std::uint64_t handle) noexcept;

    /// The data-pending exchange (consumer.c, consumer_data_pending): until
    /// the relay holds every packet sent on every open stream, or `timeout`
    /// passed. Throws std::runtime_error (a failed session, or the timeout:
    /// "the relay still lacks data after N s").
    void waitUntilReceived(std::chrono::milliseconds timeout);

    std::uint64_t relaySessionId() const noexcept { return relaySessionId_; }

private:
    struct Stream {
        bool metadata = false;
        std::uint64_t nextSeq = 0; ///< net_seq_num of the next packet
        bool closed = false;
    };
    /// Throws std::runtime_error if the session failed already.
    void requireUsable() const;
    /// Records the failure `what` (the first one only) and tells the hook;
    /// returns the error to throw.
    std::runtime_error fail(const std::string& what) noexcept;
    Stream& stream(std::uint64_t handle);

    relayd::RelaydControl control_;
    relayd::RelaydData data_;
    std::uint64_t relaySessionId_;
    std::map<std::uint64_t, Stream> streams_;
    std::string failure_;
    std::function<void(const std::string&)> failureHook_;
};

/// One stream in the relay session.
class RelayStreamSink final : public StreamSink {
public:
    /// Adds the stream `name` of `pathname` in chunk `chunkId`. Throws
    /// std::runtime_error.
    RelayStreamSink(RelaySession& session, const std::string& pathname, const std::string& name,
                    std::uint64_t chunkId, StreamKind kind);
    ~RelayStreamSink() override { close(); }

    /// Sends `contentBytes` of the packet; the relay appends the padding.
    void write(const void* data, std::size_t paddedBytes, std::size_t contentBytes,
               const IndexEntry* index) override;
    std::uint64_t bytes() const noexcept override { return bytes_; }
    void close() noexcept override;
    void beacon(std::uint64_t timestampEnd, std::uint64_t streamId) override;

private:
    RelaySession& session_;
    std::uint64_t handle_;
    StreamKind kind_;
    std::uint64_t bytes_ = 0;
    bool closed_ = false;
};

/// A chunk of the relay session.
class RelayChunk final : public ChunkOutput {
public:
    RelayChunk(std::shared_ptr<RelaySession> session, std::uint64_t chunkId)
        : session_(std::move(session)), chunkId_(chunkId) {}

    std::unique_ptr<StreamSink> openStream(std::string_view traceDir, std::string_view name,
                                           StreamKind kind) const override;
    /// STREAMS_SENT.
    void streamsOpened() const override { session_->streamsSent(); }
    std::uint64_t chunkId() const noexcept { return chunkId_; }

private:
    std::shared_ptr<RelaySession> session_;
    std::uint64_t chunkId_;
};

} // namespace tracectl::consumer
