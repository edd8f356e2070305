// Trace chunks streamed to an lttng-relayd 2.13 (a network session), as
// lttng-consumerd does it (lttng-tools 2.13 src/common/consumer/consumer.c,
// consumer-stream.c, consumer-timer.c): each stream is a relay stream
// (ADD_STREAM, then STREAMS_SENT per channel); a data packet goes on the
// data connection with its net_seq_num, its index entry (SEND_INDEX) on the
// control connection; metadata goes on the control connection
// (SEND_METADATA). The relay writes the padding itself.
//
// Rotation (lttng-tools 2.13 consumer.c lttng_consumer_rotate_channel,
// relayd.c relayd_rotate_streams; lttng-relayd main.c
// relay_rotate_session_streams, relay_close_trace_chunk; stream.c
// stream_set_pending_rotation, try_rotate_stream_index/_data): the new
// chunk is made on the relay first (CREATE_TRACE_CHUNK); each relay stream
// is kept and moved into it (ROTATE_STREAMS) right before its first packet
// of the new chunk is sent, at the CTF packet_seq_num following the last
// one sent; the metadata stream moves at once and its whole text is sent
// again. Once every stream moved (or closed), the old chunk is closed with
// MOVE_TO_COMPLETED: the relay moves it to
// `<session folder>/archives/<begin>-<end>-<chunk id>` when its last stream
// is done with it.
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

    /// A snapshot's relay session (created with CREATE_SESSION's snapshot
    /// flag): lttng-relayd 2.13 keeps no index for its streams
    /// (main.c session_streams_have_index), and lttng-consumerd sends none
    /// (ust-consumer.c snapshot_channel): packets go without SEND_INDEX.
    void setSnapshot() noexcept { snapshot_ = true; }
    /// `hook(why)` is called once, at the first failure.
    void setFailureHook(std::function<void(const std::string&)> hook) {
        failureHook_ = std::move(hook);
    }
    /// Why the relay session failed; "" while it works.
    const std::string& failure() const noexcept { return failure_; }
    /// Between exchanges the relay sends nothing: a connection that turns
    /// readable then (EOF, a reset, stray bytes) is lost. Called when
    /// `fd` (controlFd() or dataFd()) polled readable outside an exchange:
    /// fails the session (once) unless it was a spurious wake-up. Never
    /// throws.
    void checkIdleConnection(int fd) noexcept;
    int controlFd() const noexcept { return control_.socket().fd(); }
    int dataFd() const noexcept { return data_.socket().fd(); }

    /// CREATE_TRACE_CHUNK; with `name`, the relay writes the chunk in
    /// `<session folder>/<name>/` (a snapshot's chunk: lttng-relayd 2.13
    /// main.c relay_create_trace_chunk, lttng_trace_chunk_override_name sets
    /// the chunk's path to its name). Throws std::runtime_error (and fails
    /// the session).
    void createTraceChunk(std::uint64_t chunkId, std::uint64_t creationTime,
                          const std::optional<std::string>& name = std::nullopt);
    /// CLOSE_TRACE_CHUNK of `chunkId` at `closeTime` (seconds since the
    /// Epoch); `command` nullopt: the relay keeps it where it is (the end of
    /// a session). Never throws (logged, fails the session).
    void
    closeTraceChunk(std::uint64_t chunkId, std::uint64_t closeTime,
                    std::optional<relayd::TraceChunkCloseCommand> command = std::nullopt) noexcept;

    /// The end of a rotation, every stream having moved out of `chunkId`
    /// or closed: waits until the relay holds every packet sent
    /// (waitUntilReceived(timeout)), so that its streams are done with the
    /// chunk, then closes it at `closeTime` (seconds since the Epoch, the
    /// archive name's end) with `command` (MoveToCompleted: archived;
    /// Delete: Session.Clear). Returns the path the relay gives for the
    /// chunk (relative to its output folder; lttng-relayd 2.13 gives the
    /// session's folder for the first chunk it archives, main.c
    /// relay_close_trace_chunk). The chunk is closed even when waiting
    /// timed out (the relay then archives it when the data arrives) and
    /// std::runtime_error("... still lacks data ...") is thrown after; any
    /// other failure fails the session and throws std::runtime_error.
    std::string archiveChunk(std::uint64_t chunkId, std::uint64_t closeTime,
                             relayd::TraceChunkCloseCommand command,
                             std::chrono::milliseconds timeout);

    /// Moves open stream `handle` into chunk `newChunkId` (created with
    /// createTraceChunk()): ROTATE_STREAMS with one position, the CTF
    /// packet_seq_num from which the stream's packets belong to the new
    /// chunk (the last one sent + 1; 0 if none was sent; the relay ignores
    /// it for the metadata stream, whose file it switches at once). Call it
    /// before sending the stream's first packet of the new chunk. Throws
    /// std::runtime_error (and fails the session).
    void rotateStream(std::uint64_t handle, std::uint64_t newChunkId);
    /// The chunk that open stream `handle` writes into; nullopt if it is
    /// unknown or closed.
    std::optional<std::uint64_t> streamChunk(std::uint64_t handle) const noexcept;

    /// A new relay stream; returns its handle. Throws std::runtime_error.
    std::uint64_t addStream(const std::string& name, const std::string& pathname,
                            std::uint64_t chunkId, bool metadata);
    /// STREAMS_SENT. Throws std::runtime_error.
    void streamsSent();
    /// One data packet and its index entry (net_seq_num assigned here; no
    /// index for a snapshot's session). Throws std::runtime_error.
    void sendPacket(std::uint64_t handle, const void* data, std::size_t contentBytes,
                    std::size_t paddingBytes, const IndexEntry& index);
    /// Metadata bytes of stream `handle`. Throws std::runtime_error.
    void sendMetadata(std::uint64_t handle, const void* data, std::size_t contentBytes,
                      std::size_t paddingBytes);
    /// A live beacon: an empty index carrying only `timestampEnd` and the
    /// CTF stream id (consumer-timer.c, send_empty_index), so that live
    /// viewers move time forward on an idle stream. Throws std::runtime_error.
    void sendBeacon(std::uint64_t handle, std::uint64_t timestampEnd, std::uint64_t streamId);
    /// CLOSE_STREAM with the last packet sent, at once, or, in a live
    /// session (setLiveLinger()), once the stream lingered. Never throws
    /// (logged).
    void closeStream(std::uint64_t handle) noexcept;

    /// Live sessions: a stream closed while the session goes on (the
    /// streams of a per-PID app that exited, and its metadata) stays open
    /// on the relay for `ticks` more live-timer ticks (liveTick()), its
    /// data streams sending a beacon at each. lttng-relayd 2.13 forgets a
    /// stream as soon as it is closed and holds all its data (stream.c,
    /// try_stream_close unpublishes it), and a viewer only learns of the
    /// streams published when it asks for new ones (live.c,
    /// make_viewer_streams): closed at once, a short-lived app's trace was
    /// gone before any viewer asked, and a viewer attached all along saw
    /// none of it. A metadata stream lingers until no data stream of its
    /// trace is open or lingering any more, so that a viewer reads the
    /// data to its end before the trace's metadata ends. 0: close at once
    /// (the default).
    void setLiveLinger(unsigned ticks) noexcept { lingerTicks_ = ticks; }
    /// A live-timer tick: the lingering metadata streams whose time is up
    /// and whose trace had no open or lingering data stream left before
    /// this tick are closed (a tick after the last one at the earliest);
    /// then each lingering data stream, its time up, is closed, or else
    /// sends a beacon at `now` (clock cycles of the trace clock). Never
    /// throws (logged, fails the session).
    void liveTick(std::uint64_t now) noexcept;
    /// Closes every lingering stream at once (the session's end). Never
    /// throws.
    void closeLingering() noexcept;

    /// The data-pending exchange (consumer.c, consumer_data_pending): until
    /// the relay holds every packet sent on every open stream (closed ones
    /// are the relay's to finish: it may have forgotten them), or `timeout`
    /// passed. Throws std::runtime_error (a failed session, or the timeout:
    /// "the relay still lacks data after N s").
    void waitUntilReceived(std::chrono::milliseconds timeout);

    std::uint64_t relaySessionId() const noexcept { return relaySessionId_; }

private:
    struct Stream {
        bool metadata = false;
        std::uint64_t nextSeq = 0; ///< net_seq_num of the next packet
        bool closed = false;
        std::uint64_t chunkId = 0; ///< the chunk it writes into now
        /// CTF packet_seq_num of the last packet sent (none yet, or the
        /// tracer gives none).
        std::optional<std::uint64_t> lastPacketSeq;
        std::string pathname;                ///< its trace's folder, as ADD_STREAM named it
        std::optional<std::uint64_t> ctfId;  ///< CTF stream class id (its packets' stream_id)
        std::optional<unsigned> lingerTicks; ///< closed by us, open on the relay: ticks left
    };
    /// CLOSE_STREAM of `s` now. Never throws.
    void sendClose(std::uint64_t handle, Stream& s) noexcept;
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
    bool snapshot_ = false;
    unsigned lingerTicks_ = 0;
};

/// One stream in the relay session.
class RelayStreamSink final : public StreamSink {
public:
    /// Adds the stream `name` of `pathname` in chunk `chunkId`. Throws
    /// std::runtime_error.
    RelayStreamSink(RelaySession& session, const std::string& pathname, const std::string& name,
                    std::uint64_t chunkId, StreamKind kind);
    /// Relay stream `handle`, already moved into chunk `chunkId`
    /// (RelaySession::rotateStream), going on there.
    struct Continued {};
    RelayStreamSink(Continued, RelaySession& session, std::uint64_t handle, std::uint64_t chunkId,
                    StreamKind kind)
        : session_(session), handle_(handle), chunkId_(chunkId), kind_(kind) {}
    ~RelayStreamSink() override { close(); }

    /// Sends `contentBytes` of the packet; the relay appends the padding.
    void write(const void* data, std::size_t paddedBytes, std::size_t contentBytes,
               const IndexEntry* index) override;
    std::uint64_t bytes() const noexcept override { return bytes_; }
    /// CLOSE_STREAM, unless the stream went on in a later chunk (handed
    /// over by RelayChunk::continueStream): then nothing.
    void close() noexcept override;
    void beacon(std::uint64_t timestampEnd, std::uint64_t streamId) override;

    const RelaySession& session() const noexcept { return session_; }
    std::uint64_t handle() const noexcept { return handle_; }
    std::uint64_t chunkId() const noexcept { return chunkId_; }
    StreamKind kind() const noexcept { return kind_; }

private:
    RelaySession& session_;
    std::uint64_t handle_;
    std::uint64_t chunkId_;
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
    /// `previous` an open stream of this relay session in another chunk:
    /// the same relay stream goes on in this one (RelaySession::rotateStream);
    /// otherwise a new stream (openStream()). Throws std::runtime_error.
    std::unique_ptr<StreamSink> continueStream(const StreamSink& previous,
                                               std::string_view traceDir, std::string_view name,
                                               StreamKind kind) const override;
    /// STREAMS_SENT.
    void streamsOpened() const override { session_->streamsSent(); }
    std::uint64_t chunkId() const noexcept { return chunkId_; }

private:
    std::shared_ptr<RelaySession> session_;
    std::uint64_t chunkId_;
};

} // namespace tracectl::consumer
