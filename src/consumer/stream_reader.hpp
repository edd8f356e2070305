// The per-stream read loop (lttng-tools src/common/ust-consumer/ust-consumer.c
// and consumer.c): wait fd readable -> lttng_ust_ctl_get_next_subbuf
// (-EAGAIN / -ENODATA = nothing) -> sizes, timestamps, discarded count,
// sequence number -> write the padded sub-buffer from get_mmap_base +
// get_mmap_read_offset -> put_next_subbuf -> index entry. On wait-fd hang-up
// (every producer's wakeup fd closed): flush, drain, close.
#pragma once

#include "common/event_loop.hpp"
#include "discarded_count_floor.hpp"
#include "index_writer.hpp"
#include "output/stream_sink.hpp"
#include "record_counter.hpp"
#include "stalled_subbuffers.hpp"
#include "stream_file.hpp"
#include "ust_channel.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace tracectl::consumer {

/// A stream failed (output write, or a ust-ctl call on its buffer) and has
/// been closed; what() says which and why. spoiled(): the application
/// spoiled the stream's ring buffer (a liblttng-ust-ctl call on it faulted
/// or aborted, ring_buffer_guard.hpp), so the stream was dropped for what
/// its app did: no failure of the request that met it.
class StreamError : public std::runtime_error {
public:
    explicit StreamError(const std::string& what, bool spoiled = false)
        : std::runtime_error(what), spoiled_(spoiled) {}
    bool spoiled() const noexcept { return spoiled_; }

private:
    bool spoiled_;
};

/// Whether `e` says that an application spoiled a ring buffer: a
/// spoiled() StreamError, or a UstError with kSpoiledBuffer.
bool spoiledBuffer(const std::exception& e) noexcept;

/// The index fields of the sub-buffer `s` holds now (taken with get_next_subbuf
/// or get_subbuf): sizes, timestamps, discarded count, stream id, and the
/// sequence number and instance id (all ones where the ring-buffer client
/// has none). `offset` is left 0. Throws UstError.
IndexEntry packetInfo(lttng_ust_ctl_consumer_stream* s);

/// Checks that the sub-buffer held now, at `data` (inside the ring
/// buffer's mapping), begins as lttng-ust's ring-buffer clients begin
/// every packet (ringbuffer-clients/template.h): the CTF magic 0xC1FC1FC1
/// and the stream class id the getters gave (`entry`), with a content size
/// within its packet size. Reads a guarded copy. Throws a spoiled()
/// StreamError otherwise: the app wrote over its buffer (or punched a hole
/// in it, which reads back as zeros), and such a packet would make the
/// whole trace unreadable.
void checkPacketHeader(const void* data, const IndexEntry& entry);

/// Opens a packet in `s`, as lttng-consumerd's consumer_stream_open_packet
/// (consumer-stream.c) does when a trace chunk begins:
/// lttng_ust_ctl_flush_buffer(s, 0) closes the packet under way, or, when
/// the stream is at a packet boundary, delivers an empty packet (header
/// only, timestamp_begin = timestamp_end = now, trace clock). Either way the
/// stream then holds a packet that begins no later than now, so its time
/// range covers the chunk from here even if nothing more is written. Safe
/// while producers write. Returns false if the flush had no effect (the
/// produced position did not move: a full buffer that does not overwrite has
/// no room for a packet). Throws UstError.
bool openPacket(lttng_ust_ctl_consumer_stream* s);

/// The produced position of `s` (lttng_ust_ctl_snapshot_sample_positions,
/// snapshot_get_produced): bytes, free-running (wraps). Throws UstError.
unsigned long producedPosition(lttng_ust_ctl_consumer_stream* s);

/// Reads one stream into its file (and, for data streams, its index).
/// Not copyable or movable (its event source points at it).
class StreamReader {
public:
    enum class Kind {
        Data,     ///< "<channel>_<cpu>" + index/<channel>_<cpu>.idx
        Metadata, ///< "metadata", no index
    };

    /// Opens the stream `name` of the trace folder `traceDir` in `chunk`
    /// (ChunkOutput::openStream). With `watch`, an
    /// io source on the stream's wait fd (EPOLLIN, and HUP/ERR which epoll
    /// always reports) drives drain() / hangUp() from `loop`; without it the
    /// owner calls drain() (the metadata stream, which only the consumer
    /// itself writes). Throws std::system_error or std::runtime_error (the output),
    /// or UstError.
    StreamReader(EventLoop& loop, UstStream stream, const ChunkOutput& chunk, std::string traceDir,
                 std::string name, Kind kind, bool watch);
    ~StreamReader();
    StreamReader(const StreamReader&) = delete;
    StreamReader& operator=(const StreamReader&) = delete;

    const std::string& name() const noexcept { return name_; }
    bool isOpen() const noexcept { return stream_.get() != nullptr; }

    /// Writes every complete sub-buffer available now; returns how many.
    /// On failure the stream is closed and StreamError thrown. A closed
    /// stream drains nothing.
    std::size_t drain();

    /// lttng_ust_ctl_flush_buffer(stream, producerActive): closes the current
    /// packet so drain() can take it; with producerActive == false an empty
    /// packet is closed too (end of tracing: the packet marks the stream's
    /// end time). Throws StreamError (and closes) on failure.
    void flush(bool producerActive);

    /// Live timer tick (data streams; lttng-tools 2.13 consumer-timer.c,
    /// check_stream): takes the stream's current timestamp, closes a packet
    /// that holds events (flush_buffer(stream, 1)) and drains; if nothing
    /// was read, sends a beacon with that timestamp. With
    /// `newStreamsPublished`, an idle stream closes an empty packet
    /// instead (flush_buffer(stream, 0)) and sends it: lttng-relayd 2.13
    /// tells a viewer of new streams only in an index it sends
    /// (LTTNG_VIEWER_INDEX_OK, live.c viewer_get_next_index), not in a
    /// beacon's, and babeltrace2 2.0.4's lttng-live asks for new streams
    /// only then or once every stream it reads hung up: a viewer whose
    /// streams were all idle never saw a new app (LTTng bug 1406, fixed in
    /// lttng-relayd 2.13.12 and babeltrace2's master after 2.0; Debian 12
    /// has 2.13.9 and 2.0.4). Throws StreamError (and closes) on failure.
    void liveTick(bool newStreamsPublished);

    /// flush(false), fixUpStalled(), drain, close: the producers are gone.
    /// While held, it waits for release(). Never throws (failures are
    /// logged).
    void hangUp() noexcept;

    /// Live sessions: while held, drain() reads nothing (the sub-buffers
    /// wait in the ring buffer, as the tracer's discard or overwrite mode
    /// says when it fills up) and a hang-up waits: a trace's packets must
    /// not reach a live viewer before the metadata that declares their
    /// stream class (babeltrace2's lttng-live fails on "No stream class
    /// with ID"; lttng-consumerd syncs the metadata before each live data
    /// sub-buffer, consumer-stream.c consumer_stream_sync_metadata).
    void hold() noexcept { held_ = true; }
    /// Lifts hold(): drains, and finishes a hang-up that waited. Never
    /// throws (failures are logged).
    void release() noexcept;
    bool held() const noexcept { return held_; }

    /// Data streams whose shm is `fd` (owned by the channel, which outlives
    /// this reader): fixUpStalled() can map it.
    void setShmFd(int fd) noexcept { shmFd_ = fd; }
    /// Delivers the sub-buffers left stalled by writers that died inside a
    /// reservation (stalled_subbuffers.hpp: only when no writer can be in
    /// one any more, after a flush), logs which and what was lost, and
    /// closes one more packet (flush(false)) to carry the new discarded
    /// count. Returns the packets delivered. Throws StreamError as flush().
    std::uint32_t fixUpStalled(const std::vector<ShortSubbuffer>* only = nullptr,
                               const std::string& why = {});
    /// A producer is gone while others may still write (per-UID buffers):
    /// closes the packet under way (flush(true)) if it holds a reservation
    /// not committed, so that the others go on in the next sub-buffer, and
    /// returns the sub-buffers left short now,
    /// for fixUpStalled(&them) once a grace period showed no writer moved
    /// them. Throws StreamError as flush().
    std::vector<ShortSubbuffer> switchAndListShort();
    /// Whether the stream's wait fd has hung up: every producer's copy of
    /// its wakeup fd is closed (the apps that shared it are gone).
    bool producersGone() const noexcept;

    /// Stops watching, closes the files and destroys the ust-ctl stream
    /// (idempotent). Data still in the buffer is lost: drain first.
    void close() noexcept;

    /// Rotation (data streams): flush(false), so that the old chunk's last
    /// packet ends now, even if empty; sample the produced and consumed
    /// positions; then openPacket(), so that the new chunk's first packet
    /// begins now, even if nothing more is written (as lttng-consumerd's
    /// lttng_consumer_rotate_channel, consumer.c, does). Every stream of every
    /// chunk thus holds at least one packet and covers the chunk's time
    /// range, which `babeltrace2 --stream-intersection` relies on. If the
    /// buffer has no room for the packet, opening is tried again after each
    /// sub-buffer read, until the new chunk has a packet. The files go on
    /// writing the current chunk until the sub-buffers produced before the
    /// sample have been read; then they go on in `next` (same names) and
    /// `switched` is called, once. A closed stream, or one closed before it
    /// gets there, calls `switched` at once (at close): it has nothing more
    /// to write. Throws StreamError.
    void rotate(std::shared_ptr<const ChunkOutput> next, std::function<void()> switched);

    /// openPacket() on this stream (a data stream's first chunk begins:
    /// the channel was just made). False if closed or no room. Throws
    /// StreamError (and closes) on failure.
    bool openPacket();
    /// Closes the current output and goes on in `next` at once (the
    /// metadata stream, which only this process writes). Throws as
    /// ChunkOutput::openStream().
    void switchFiles(const ChunkOutput& next);

    /// The ust-ctl stream (to send it to the daemon); empty once closed.
    const UstStream& ustStream() const noexcept { return stream_; }

    /// Our copy of the stream's wakeup fd (see UstStream::closeWakeupFd).
    void closeWakeupFd() noexcept { stream_.closeWakeupFd(); }

    std::uint64_t packetsWritten() const noexcept { return packets_; }
    /// Bytes written to the stream files since the stream was made, every
    /// chunk's (closing keeps the figure).
    std::uint64_t bytesWritten() const noexcept { return bytesBefore_ + sink_->bytes(); }
    /// Bytes written to the current chunk's stream.
    std::uint64_t chunkBytes() const noexcept { return sink_->bytes(); }
    /// bytesWritten() plus what the producer wrote into the buffer past the
    /// read position, as of the last sampleProduced() (data streams; the
    /// metadata stream, which only this process writes: bytesWritten()).
    /// Never goes back; equals bytesWritten() once everything is read.
    std::uint64_t bytesProduced() const noexcept;
    /// Data streams: samples the produced position without consuming
    /// (lttng_ust_ctl_snapshot_sample_positions): the stream's write
    /// position's advance since the reader was made, less the unwritten end
    /// of every sub-buffer read (past its padded size). A failed sample
    /// keeps the last figure. Never throws.
    void sampleProduced() noexcept;
    /// Event records in the packets written (data streams with a record
    /// counter; packets whose layouts have not come yet count once they do).
    std::uint64_t eventsRecorded() const noexcept { return eventsRecorded_; }
    /// Data streams of a consumer that counts events: from now on each
    /// packet written has its records counted, once setRecordCounter() gave
    /// the layouts (until then, packets are kept to be counted then).
    void enableRecordCounting() noexcept { counting_ = true; }
    /// Data streams: from now on each packet written has its records
    /// counted with `counter` (the channel's, which outlives this reader),
    /// and the packets kept for want of a layout are counted again now.
    void setRecordCounter(const RecordCounter* counter) noexcept;
    /// Counts again the packets kept for want of a layout (the channel's
    /// counter just learned new ones).
    void recountPending() noexcept;
    /// Called after each sub-buffer written (the consumer's statistics
    /// timer); must not throw.
    void setProgressHook(std::function<void(std::uint64_t bytes)> hook) {
        progress_ = std::move(hook);
    }
    /// Packets the ring buffer lost (gaps in packet_seq_num), data streams.
    std::uint64_t lostPackets() const noexcept { return lostPackets_; }
    /// The last packet's events_discarded counter, data streams.
    std::uint64_t eventsDiscarded() const noexcept { return discardedFloor_.highest(); }

private:
    static int onWaitFd(sd_event_source* s, int fd, std::uint32_t revents, void* userdata);
    void emptyWakeupPipe() noexcept;
    void consumeCurrent();
    /// Switches files if a rotation is pending and the read position has
    /// reached the sampled one. Throws StreamError without closing (the
    /// caller may hold a sub-buffer; drain() closes).
    void switchIfDue();
    struct PendingSwitch {
        std::uint64_t switchAt = 0; ///< read position from which packets go to `next`
        std::shared_ptr<const ChunkOutput> next;
        std::function<void()> switched;
    };
    std::optional<PendingSwitch> pendingSwitch_;
    /// Tries openPacket() again if the new chunk still has no packet: the
    /// producer wrote nothing past `openAt_` since the rotation.
    void retryOpen();
    bool openPending_ = false; ///< a rotation could not open its packet (no room)
    bool held_ = false;        ///< hold()
    bool hungUpWhileHeld_ = false;
    std::uint64_t openAt_ = 0; ///< the position where the new chunk begins
    /// Closes the stream and throws StreamError (spoiled if `spoiled`).
    [[noreturn]] void fail(const std::string& what, bool spoiled = false);
    /// fail() for a failed call's exception `e` (spoiled if it is a
    /// UstError with kSpoiledBuffer), what() prefixed with `context`.
    [[noreturn]] void failOn(const std::exception& e, const std::string& context = {});

    std::string name_;
    Kind kind_;
    UstStream stream_;
    std::string traceDir_;
    std::unique_ptr<StreamSink> sink_; ///< never null; closed with the stream
    EventSourcePtr source_;
    int waitFd_ = -1; // owned by stream_
    std::uint64_t packets_ = 0;
    std::uint64_t bytesBefore_ = 0; ///< bytes of the files of earlier chunks
    std::function<void(std::uint64_t bytes)> progress_;
    std::uint64_t lostPackets_ = 0;
    DiscardedCountFloor discardedFloor_;
    /// Raises the events_discarded of the held sub-buffer at `packet`, in
    /// the mapping and in `entry`, to the stream's floor
    /// (discarded_count_floor.hpp). Throws StreamError (spoiled) if the
    /// mapping faulted.
    void keepDiscardedCountUp(void* packet, IndexEntry& entry);
    int shmFd_ = -1;
    bool warnedFixUp_ = false;
    /// Counts the records of the sub-buffer at `data` (`padded` bytes,
    /// content_size `contentBits`), reading a copy of it.
    void countRecords(const void* data, std::size_t padded, std::uint64_t contentBits) noexcept;
    /// Counts `packet` from `fromBit`; keeps a copy if a layout is
    /// missing. Throws std::bad_alloc.
    void countPacket(std::span<const std::byte> packet, std::uint64_t fromBit,
                     std::uint64_t contentBits);
    /// Logs (once per stream) that some records were not counted, and why.
    void uncounted(const std::string& why) noexcept;
    bool counting_ = false;
    const RecordCounter* counter_ = nullptr;
    std::uint64_t eventsRecorded_ = 0;
    struct PendingPacket {
        std::vector<std::byte> bytes; ///< the packet up to its content size
        std::uint64_t fromBit = 0;    ///< the first record not counted yet
        std::uint64_t contentBits = 0;
    };
    std::vector<PendingPacket> pendingPackets_;
    std::size_t pendingBytes_ = 0;
    bool warnedUncounted_ = false;
    std::optional<std::uint64_t> lastSeq_;
    // sampleProduced(): whether the stream can be sampled (data streams),
    // its produced position when the reader was made, its sub-buffers'
    // size, the bytes of the sub-buffers read that lie past their padded
    // size (never written), and the last figure.
    bool sampling_ = false;
    unsigned long producedStart_ = 0;
    std::uint64_t subbufSize_ = 0;
    std::uint64_t unwritten_ = 0;
    std::uint64_t produced_ = 0;
};

} // namespace tracectl::consumer
