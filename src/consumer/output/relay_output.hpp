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
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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
    /// STREAMS_SENT: the relay publishes every stream added since the
    /// last one to live viewers (lttng-relayd 2.13 main.c
    /// relay_streams_sent, stream_publish). In a live session it waits:
    /// - until each trace with a stream it would publish has its metadata
    ///   stream and a data stream added: a viewer that asks for new streams
    ///   in between would get a trace with its metadata and no data stream,
    ///   or the reverse, and babeltrace2 2.0.4's lttng-live then asks for
    ///   new streams in a loop and never reads the data streams that come
    ///   next (seen: a per-UID trace after a daemon restart, its metadata
    ///   published 11 ms before its data streams). lttng-consumerd
    ///   publishes a UST trace whole (ust-consumer.c setup_metadata);
    /// - and until such a trace's first data packet (sendPacket()): a
    ///   viewer builds its decoders from the metadata it finds when it
    ///   learns of a trace, and babeltrace2 2.0.4 sizes their table of
    ///   sequence lengths then, never after (fixed after 2.0, babeltrace
    ///   839df1da8 "ctf: grow stored_values array when necessary"): an
    ///   event class with a sequence that came in a later metadata packet
    ///   made it write past that table and crash (SIGSEGV, 2 of 4 runs of
    ///   8 per-PID apps at once). The first data packet goes after the
    ///   metadata of the events it holds.
    /// STREAMS_SENT publishes every stream added, so each trace it would
    /// publish must be ready: whole, with its first data packet sent or
    /// being sent (tracesNotReady(); one app's first packet published 29
    /// other apps' traces whose metadata lacked their events, and the
    /// viewer crashed in 10 of 14 runs of 30 apps started at once). A
    /// trace waiting kMaxPublishWaitTicks ticks is ready as it is (an idle
    /// app; logged if partial); after twice that, or at the session's end,
    /// everything goes. Throws std::runtime_error.
    void streamsSent();
    /// Whether a STREAMS_SENT went since the last call (the consumer's live
    /// tick then has idle streams send an empty packet:
    /// StreamReader::liveTick()).
    bool takeNewStreamsPublished() noexcept { return std::exchange(newStreamsPublished_, false); }
    /// How long streamsSent() waits for a trace's other streams, in
    /// live-timer ticks.
    static constexpr unsigned kMaxPublishWaitTicks = 10;
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

    /// How a live session's closed streams linger (setLiveLinger()).
    struct Linger {
        unsigned ticks = 0;        ///< live-timer ticks at least; 0: close at once
        unsigned spacingTicks = 0; ///< ticks at least between two traces' closings
    };
    /// At most this many traces linger; beyond, the oldest close at once.
    static constexpr std::size_t kMaxLingeringTraces = 64;

    /// Live sessions: the streams a consumer closes while the session goes
    /// on (a per-PID app exited: its data streams and its metadata) stay
    /// open on the relay: lttng-relayd 2.13 forgets a stream as soon as it
    /// is closed and holds all its data (stream.c, try_stream_close
    /// unpublishes it), and a viewer only learns of the streams published
    /// when it asks for new ones (live.c, make_viewer_streams), which
    /// babeltrace2's lttng-live does when it has no active stream left or
    /// when a data index carries LTTNG_VIEWER_FLAG_NEW_STREAM. Closed at
    /// once, a short-lived app's trace was gone before any viewer asked.
    /// Each trace's data streams close `linger.ticks` live-timer ticks
    /// after the consumer closed them at the earliest, one trace at a time
    /// in the order they were closed, `linger.spacingTicks` apart, so that a
    /// viewer whose last stream hung up still finds the next trace; its
    /// metadata closes a tick after them. No beacon is sent for them: a
    /// viewer waits for a lingering stream to hang up before it shows later
    /// events; at the session's end drainLingering() closes them at a
    /// viewer's pace (closeLingering() at once, when that takes too long).
    void setLiveLinger(Linger linger) noexcept {
        linger_ = linger;
        live_ = true;
    }
    /// A live-timer tick: closes the lingering streams whose time is up
    /// (setLiveLinger()), and publishes the partial traces that waited
    /// too long (streamsSent()). Never throws (a failure fails the
    /// session).
    void liveTick() noexcept;
    /// Closes every lingering stream at once: data first, then metadata.
    /// A viewer that had not reached a trace by then does not see it.
    /// Never throws.
    void closeLingering() noexcept;
    /// The session's end, at a viewer's pace: from now on liveTick()
    /// closes the lingering traces one at a time, `spacingTicks` apart
    /// whatever their linger time (a viewer asks for the next trace's
    /// streams once the last one it reads hung up: closed at once, the
    /// traces it had not reached were gone from the relay before it
    /// asked; lttng-relayd 2.13 unpublishes a closed stream once it holds
    /// all its data, stream.c try_stream_close). Never throws.
    void drainLingering(unsigned spacingTicks) noexcept;
    /// Whether a stream still lingers (drainLingering() is done once not).
    bool lingers() const noexcept { return !lingering_.empty(); }

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
        std::string pathname;          ///< its trace's folder, as ADD_STREAM named it
        bool lingering = false;        ///< closed by the consumer, still open on the relay
        bool published = false;        ///< a STREAMS_SENT went after its ADD_STREAM
        std::uint64_t addedAtTick = 0; ///< ticks_ when it was added
    };
    /// One trace's lingering streams (setLiveLinger()).
    struct LingeringTrace {
        std::string pathname;
        std::vector<std::uint64_t> dataStreams;
        std::vector<std::uint64_t> metadataStreams;
        unsigned ticksLeft = 0;
        bool dataClosed = false; ///< its metadata closes at the next tick
    };
    /// CLOSE_STREAM of `s` now. Never throws.
    void sendClose(std::uint64_t handle, Stream& s) noexcept;
    /// Closes the data streams of `trace`. Never throws.
    void closeData(LingeringTrace& trace) noexcept;
    /// Whether a data stream of trace `pathname` is open (not lingering).
    bool dataOpen(const std::string& pathname) const noexcept;
    /// The folders of the traces that an unpublished open stream belongs
    /// to and that lack a metadata or a data stream (streamsSent()).
    std::vector<std::string> partialTraces() const;
    /// The folders of the traces with an unpublished open stream that are
    /// not ready to go to viewers: ready is whole (partialTraces()) with a
    /// data packet sent, or being sent (`sending`, the trace of the packet
    /// sendPacket() sends), or waiting for kMaxPublishWaitTicks ticks.
    std::vector<std::string> tracesNotReady(const std::string* sending) const;
    /// Sends the STREAMS_SENT that streamsSent() deferred, if any, and
    /// marks every stream published. Throws std::runtime_error.
    void publish();
    /// publish(), failures left to the failure hook. Never throws.
    void publishAsItIs() noexcept;
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
    bool live_ = false; ///< setLiveLinger() was called
    /// streamsSent() was called and its STREAMS_SENT not sent yet; the
    /// live-timer ticks it waited.
    bool publishPending_ = false;
    bool newStreamsPublished_ = false; ///< takeNewStreamsPublished()
    unsigned publishWaitTicks_ = 0;
    std::uint64_t ticks_ = 0; ///< live-timer ticks so far
    Linger linger_;
    std::list<LingeringTrace> lingering_; ///< in the order they were closed
    unsigned ticksSinceClose_ = 0;
    /// drainLingering()'s spacing; nullopt until the session's end.
    std::optional<unsigned> drainSpacing_;
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
