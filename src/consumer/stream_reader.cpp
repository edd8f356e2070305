#include "stream_reader.hpp"

#include "common/log.hpp"
#include "ring_buffer_guard.hpp"
#include "stalled_subbuffers.hpp"
#include "ust_packet_header.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <lttng/ust-ctl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <system_error>
#include <unistd.h>
#include <utility>

namespace tracectl::consumer {

namespace {

/// Most bytes of packets a stream keeps for want of a layout (an app wrote
/// an event before the daemon's layout for it arrived, or a corrupt event
/// id looks like one): past it, later packets go uncounted (logged once).
constexpr std::size_t kMaxPendingBytes = std::size_t{8} << 20;

void check(int r, const char* call) {
    if (r < 0)
        throw UstError(call, r);
}

// lttng_ust_ctl_put_next_subbuf on scope exit unless dismissed: a sub-buffer
// taken with get_next_subbuf must be given back whatever happens.
class PutGuard {
public:
    explicit PutGuard(lttng_ust_ctl_consumer_stream* s) : s_(s) {}
    ~PutGuard() {
        if (s_ != nullptr)
            (void)guarded(lttng_ust_ctl_put_next_subbuf, s_);
    }
    PutGuard(const PutGuard&) = delete;
    PutGuard& operator=(const PutGuard&) = delete;
    int put() { return guarded(lttng_ust_ctl_put_next_subbuf, std::exchange(s_, nullptr)); }

private:
    lttng_ust_ctl_consumer_stream* s_;
};

} // namespace

bool spoiledBuffer(const std::exception& e) noexcept {
    if (const auto* stream = dynamic_cast<const StreamError*>(&e))
        return stream->spoiled();
    const auto* ust = dynamic_cast<const UstError*>(&e);
    return ust != nullptr && ust->code() == kSpoiledBuffer;
}

IndexEntry packetInfo(lttng_ust_ctl_consumer_stream* s) {
    IndexEntry entry;
    check(guarded(lttng_ust_ctl_get_packet_size, s, &entry.packetSizeBits), "get_packet_size");
    check(guarded(lttng_ust_ctl_get_content_size, s, &entry.contentSizeBits), "get_content_size");
    check(guarded(lttng_ust_ctl_get_timestamp_begin, s, &entry.timestampBegin),
          "get_timestamp_begin");
    check(guarded(lttng_ust_ctl_get_timestamp_end, s, &entry.timestampEnd), "get_timestamp_end");
    check(guarded(lttng_ust_ctl_get_events_discarded, s, &entry.eventsDiscarded),
          "get_events_discarded");
    // Not every ring-buffer client implements these two (-ENOSYS):
    // LTTng then records all ones.
    if (const int r = guarded(lttng_ust_ctl_get_sequence_number, s, &entry.packetSeqNum); r < 0) {
        check(r == kSpoiledBuffer ? r : 0, "get_sequence_number");
        entry.packetSeqNum = ~std::uint64_t{0};
    }
    check(guarded(lttng_ust_ctl_get_stream_id, s, &entry.streamId), "get_stream_id");
    if (const int r = guarded(lttng_ust_ctl_get_instance_id, s, &entry.streamInstanceId); r < 0) {
        check(r == kSpoiledBuffer ? r : 0, "get_instance_id");
        entry.streamInstanceId = ~std::uint64_t{0};
    }
    return entry;
}

void checkPacketHeader(const void* data, const IndexEntry& entry) {
    // struct packet_header: uint32_t magic, uint8_t uuid[16], uint32_t
    // stream_id, then the context; native byte order.
    constexpr std::uint32_t kCtfMagic = 0xC1FC1FC1;
    constexpr std::size_t kStreamIdAt = 20;
    std::byte header[kStreamIdAt + sizeof(std::uint32_t)];
    std::uint32_t magic = 0, streamId = 0;
    if (copyFromMapping(header, data, sizeof header)) {
        std::memcpy(&magic, header, sizeof magic);
        std::memcpy(&streamId, header + kStreamIdAt, sizeof streamId);
    }
    if (magic != kCtfMagic || streamId != entry.streamId ||
        entry.contentSizeBits > entry.packetSizeBits)
        throw StreamError("a packet that lttng-ust did not write (magic " + std::to_string(magic) +
                              ", stream class " + std::to_string(streamId) +
                              "): the application spoiled its ring buffer",
                          true);
}

unsigned long producedPosition(lttng_ust_ctl_consumer_stream* s) {
    unsigned long produced = 0;
    check(guarded(lttng_ust_ctl_snapshot_sample_positions, s),
          "lttng_ust_ctl_snapshot_sample_positions");
    check(guarded(lttng_ust_ctl_snapshot_get_produced, s, &produced),
          "lttng_ust_ctl_snapshot_get_produced");
    return produced;
}

bool openPacket(lttng_ust_ctl_consumer_stream* s) {
    const unsigned long before = producedPosition(s);
    check(guarded(lttng_ust_ctl_flush_buffer, s, 0), "lttng_ust_ctl_flush_buffer");
    return producedPosition(s) != before;
}

StreamReader::StreamReader(EventLoop& loop, UstStream stream, const ChunkOutput& chunk,
                           std::string traceDir, std::string name, Kind kind, bool watch)
    : name_(std::move(name)), kind_(kind), stream_(std::move(stream)),
      traceDir_(std::move(traceDir)),
      sink_(chunk.openStream(traceDir_, name_,
                             kind == Kind::Data ? StreamKind::Data : StreamKind::Metadata)) {
    waitFd_ = stream_.waitFd();
    // The read end of the wakeup pipe is ours alone: make it non-blocking so
    // emptying it never waits.
    const int flags = ::fcntl(waitFd_, F_GETFL);
    if (flags < 0 || ::fcntl(waitFd_, F_SETFL, flags | O_NONBLOCK) < 0)
        throw std::system_error(errno, std::generic_category(), "fcntl(wait fd)");
    if (watch) {
        sd_event_source* s = nullptr;
        const int r =
            sd_event_add_io(loop.get(), &s, waitFd_, EPOLLIN, &StreamReader::onWaitFd, this);
        if (r < 0)
            throw std::system_error(-r, std::generic_category(), "sd_event_add_io(wait fd)");
        source_.reset(s);
    }
    if (kind_ == Kind::Data) {
        // Before the first packet: its whole extent counts until it is read.
        unsigned long subbuf = 0;
        try {
            producedStart_ = producedPosition(stream_.get());
            sampling_ = guarded(lttng_ust_ctl_get_max_subbuf_size, stream_.get(), &subbuf) == 0;
            subbufSize_ = subbuf;
        } catch (const UstError& e) {
            log::warning("stream " + name_ + ": its produced bytes cannot be sampled: " + e.what());
        }
    }
}

std::uint64_t StreamReader::bytesProduced() const noexcept {
    return std::max(produced_, bytesWritten());
}

void StreamReader::sampleProduced() noexcept {
    if (!sampling_ || !isOpen())
        return;
    try {
        // Free-running positions: the difference is right across a wrap.
        const std::uint64_t advance = producedPosition(stream_.get()) - producedStart_;
        if (advance > unwritten_)
            produced_ = std::max(produced_, advance - unwritten_);
    } catch (const UstError&) {
        // The app spoiled its buffer: the reads will say so; keep the figure.
    }
}

StreamReader::~StreamReader() {
    close();
}

void StreamReader::close() noexcept {
    sampleProduced(); // the last figure stays
    source_.reset();
    sink_->close();
    stream_.reset();
    waitFd_ = -1;
    if (pendingSwitch_) {
        // Closed before it got there: everything it had is in the old chunk.
        auto switched = std::move(pendingSwitch_->switched);
        pendingSwitch_.reset();
        if (switched)
            switched();
    }
}

void StreamReader::switchFiles(const ChunkOutput& next) {
    // The same stream going on (a relay keeps its stream: ROTATE_STREAMS).
    std::unique_ptr<StreamSink> sink = next.continueStream(
        *sink_, traceDir_, name_, kind_ == Kind::Data ? StreamKind::Data : StreamKind::Metadata);
    sink_->close();
    bytesBefore_ += sink_->bytes();
    sink_ = std::move(sink);
}

void StreamReader::rotate(std::shared_ptr<const ChunkOutput> next, std::function<void()> switched) {
    if (!isOpen()) {
        switched();
        return;
    }
    if (pendingSwitch_)
        throw StreamError("stream " + name_ + ": a rotation is already under way");
    // The old chunk's last packet ends now, even if nothing was written since
    // the last one: a stream idle at the end of a chunk still covers it.
    flush(false);
    lttng_ust_ctl_consumer_stream* s = stream_.get();
    unsigned long produced = 0, consumed = 0, subbuf = 0;
    int r = guarded(lttng_ust_ctl_snapshot_sample_positions, s);
    if (r >= 0)
        r = guarded(lttng_ust_ctl_snapshot_get_produced, s, &produced);
    if (r >= 0)
        r = guarded(lttng_ust_ctl_snapshot_get_consumed, s, &consumed);
    if (r >= 0)
        r = guarded(lttng_ust_ctl_get_max_subbuf_size, s, &subbuf);
    if (r < 0 || subbuf == 0)
        fail("sampling the positions for a rotation failed", r == kSpoiledBuffer);
    // The end of the whole sub-buffers produced before the sample; a packet
    // begun after the flush belongs to the new chunk (waiting for it to fill
    // could take for ever).
    const std::uint64_t whole = produced >= consumed ? (produced - consumed) / subbuf : 0;
    const std::uint64_t switchAt = consumed + whole * subbuf;
    pendingSwitch_ = PendingSwitch{switchAt, std::move(next), std::move(switched)};
    // The new chunk's first packet begins now (it lies past the sampled
    // position, so it is read into the new files), even if the stream stays
    // idle, or only a late producer writes into it.
    openAt_ = switchAt;
    openPending_ = !openPacket();
    switchIfDue();
    drain();
}

bool StreamReader::openPacket() {
    if (!isOpen())
        return false;
    try {
        return tracectl::consumer::openPacket(stream_.get());
    } catch (const std::exception& e) {
        failOn(e, "opening a packet: ");
    }
}

void StreamReader::retryOpen() {
    if (!openPending_)
        return;
    // Something produced since the rotation point: the new chunk has its
    // first packet already (it begins later than the chunk, but an empty
    // one now would begin later still).
    if (producedPosition(stream_.get()) != openAt_) {
        openPending_ = false;
        return;
    }
    openPending_ = !tracectl::consumer::openPacket(stream_.get());
}

void StreamReader::switchIfDue() {
    if (!pendingSwitch_)
        return;
    // Positions, not a count of packets: in overwrite mode the producer
    // pushes the read position past sub-buffers it overwrites.
    lttng_ust_ctl_consumer_stream* s = stream_.get();
    unsigned long consumed = 0;
    int r = guarded(lttng_ust_ctl_snapshot_sample_positions, s);
    if (r >= 0)
        r = guarded(lttng_ust_ctl_snapshot_get_consumed, s, &consumed);
    if (r < 0)
        throw StreamError("sampling the read position for a rotation failed", r == kSpoiledBuffer);
    if (consumed < pendingSwitch_->switchAt)
        return;
    PendingSwitch p = std::move(*pendingSwitch_);
    pendingSwitch_.reset();
    try {
        switchFiles(*p.next);
    } catch (const std::exception& e) {
        p.switched();
        throw StreamError(std::string("opening its files in the new chunk: ") + e.what());
    }
    p.switched();
}

void StreamReader::fail(const std::string& what, bool spoiled) {
    close();
    // The trace folder names the app (per-PID: <name>-<pid>-<date>).
    throw StreamError(
        "stream " + name_ + " of " + traceDir_ + ": " + what +
            (spoiled ? "; the stream is dropped, the others go on" : "; the stream is closed"),
        spoiled);
}

void StreamReader::failOn(const std::exception& e, const std::string& context) {
    fail(context + e.what(), spoiledBuffer(e));
}

void StreamReader::emptyWakeupPipe() noexcept {
    if (waitFd_ < 0)
        return;
    char buf[64];
    for (;;) {
        const ssize_t n = ::read(waitFd_, buf, sizeof buf);
        if (n > 0)
            continue;
        if (n < 0 && errno == EINTR)
            continue;
        return; // EAGAIN (empty), 0 (hung up) or an error: nothing more to read
    }
}

std::size_t StreamReader::drain() {
    if (!isOpen())
        return 0;
    emptyWakeupPipe();
    if (held_)
        return 0;
    std::size_t count = 0;
    for (;;) {
        const int r = guarded(lttng_ust_ctl_get_next_subbuf, stream_.get());
        if (r == -EAGAIN || r == -ENODATA)
            break;
        if (r < 0)
            fail(UstError("lttng_ust_ctl_get_next_subbuf", r).what(), r == kSpoiledBuffer);
        try {
            consumeCurrent();
        } catch (const std::exception& e) {
            failOn(e);
        }
        ++count;
    }
    return count;
}

void StreamReader::consumeCurrent() {
    lttng_ust_ctl_consumer_stream* s = stream_.get();
    PutGuard guard(s);
    // This packet starts at the read position: past the sampled one (the
    // producer pushed it, overwriting), it is the new chunk's.
    switchIfDue();

    unsigned long padded = 0, content = 0;
    check(guarded(lttng_ust_ctl_get_padded_subbuf_size, s, &padded),
          "lttng_ust_ctl_get_padded_subbuf_size");
    check(guarded(lttng_ust_ctl_get_subbuf_size, s, &content), "lttng_ust_ctl_get_subbuf_size");

    IndexEntry entry;
    if (kind_ == Kind::Data) {
        entry = packetInfo(s);
        if (entry.packetSizeBits != static_cast<std::uint64_t>(padded) * 8)
            log::debug("stream " + name_ + ": packet_size " +
                       std::to_string(entry.packetSizeBits / 8) + " != padded size " +
                       std::to_string(padded));
    }

    // Only ust-ctl touches the mapping (under its SIGBUS guard); write(2)
    // reads it in the kernel, where a truncated mapping is EFAULT.
    void* base = guarded(lttng_ust_ctl_get_mmap_base, s);
    if (base == nullptr)
        throw UstError("lttng_ust_ctl_get_mmap_base", 0);
    unsigned long offset = 0;
    check(guarded(lttng_ust_ctl_get_mmap_read_offset, s, &offset), "get_mmap_read_offset");

    if (kind_ == Kind::Data) {
        checkPacketHeader(static_cast<const char*>(base) + offset, entry);
        keepDiscardedCountUp(static_cast<char*>(base) + offset, entry);
    }
    if (counting_)
        countRecords(static_cast<const char*>(base) + offset, padded, entry.contentSizeBits);
    sink_->write(static_cast<const char*>(base) + offset, padded, std::min(content, padded),
                 kind_ == Kind::Data ? &entry : nullptr);
    check(guard.put(), "lttng_ust_ctl_put_next_subbuf");
    ++packets_;
    if (subbufSize_ > padded)
        unwritten_ += subbufSize_ - padded; // the read position skipped it

    if (kind_ == Kind::Data) {
        if (entry.packetSeqNum != ~std::uint64_t{0}) {
            if (lastSeq_ && entry.packetSeqNum > *lastSeq_ + 1)
                lostPackets_ += entry.packetSeqNum - *lastSeq_ - 1;
            lastSeq_ = entry.packetSeqNum;
        }
    }
    // Read up to the sampled position: the next packet goes to the new chunk
    // (checked now, or a stream with nothing more to read never switches).
    switchIfDue();
    // A sub-buffer was freed: room for the packet a rotation could not open
    // (as lttng-consumerd does after the first packet read in a rotation).
    retryOpen();
    if (progress_)
        progress_(padded);
}

void StreamReader::keepDiscardedCountUp(void* packet, IndexEntry& entry) {
    const std::uint64_t count = discardedFloor_.next(entry.eventsDiscarded);
    if (count == entry.eventsDiscarded)
        return;
    // The sub-buffer is held (got, not put): no writer touches it.
    const unsigned long value = count;
    if (!copyToMapping(static_cast<std::byte*>(packet) + UstPacketHeaderLayout::kEventsDiscarded,
                       &value, sizeof value))
        throw StreamError("its ring buffer's mapping faulted: the application spoiled it", true);
    if (discardedFloor_.raised() == 1)
        log::debug("stream " + traceDir_ + "/" + name_ + ": a packet's events_discarded (" +
                   std::to_string(entry.eventsDiscarded) + ") was below an earlier packet's (" +
                   std::to_string(count) + "), a stale count of lttng-ust 2.13: raised to it");
    entry.eventsDiscarded = count;
}

void StreamReader::setRecordCounter(const RecordCounter* counter) noexcept {
    counter_ = counter;
    recountPending();
}

void StreamReader::uncounted(const std::string& why) noexcept {
    if (std::exchange(warnedUncounted_, true))
        return;
    log::warning("stream " + name_ + ": some event records are not counted in the statistics (" +
                 why + "); the trace itself is written whole");
}

void StreamReader::countRecords(const void* data, std::size_t padded,
                                std::uint64_t contentBits) noexcept {
    const std::size_t bytes = std::min<std::uint64_t>(padded, (contentBits + 7) / 8);
    try {
        // The app may write into its buffer at any time: the copy is read,
        // and a truncated mapping fails the copy instead of the process.
        // One copy buffer for every stream of the thread (the consumer's
        // loop), as big as the biggest packet.
        thread_local std::vector<std::byte> scratch;
        if (scratch.size() < bytes)
            scratch.resize(bytes);
        if (!copyFromMapping(scratch.data(), data, bytes))
            return uncounted("its ring buffer's mapping faulted");
        countPacket(std::span<const std::byte>(scratch.data(), bytes), 0, contentBits);
    } catch (const std::bad_alloc&) {
        uncounted("out of memory");
    }
}

void StreamReader::countPacket(std::span<const std::byte> packet, std::uint64_t fromBit,
                               std::uint64_t contentBits) {
    if (counter_ != nullptr) {
        const CountResult r = counter_->count(packet, fromBit, contentBits);
        eventsRecorded_ += r.records;
        if (r.stop == CountResult::Stop::End)
            return;
        if (r.stop == CountResult::Stop::Malformed)
            return uncounted("a packet does not follow the event layouts: " + r.why);
        fromBit = r.stopBit; // UnknownEvent: kept until its layout comes
    }
    if (pendingBytes_ + packet.size() > kMaxPendingBytes)
        return uncounted("the layouts of its events did not come in time");
    pendingBytes_ += packet.size();
    pendingPackets_.push_back(
        PendingPacket{std::vector<std::byte>(packet.begin(), packet.end()), fromBit, contentBits});
}

void StreamReader::recountPending() noexcept {
    if (counter_ == nullptr || pendingPackets_.empty())
        return;
    std::vector<PendingPacket> pending = std::exchange(pendingPackets_, {});
    pendingBytes_ = 0;
    try {
        for (const PendingPacket& p : pending)
            countPacket(p.bytes, p.fromBit, p.contentBits);
    } catch (const std::bad_alloc&) {
        uncounted("out of memory");
    }
}

void StreamReader::flush(bool producerActive) {
    if (!isOpen())
        return;
    const int r = guarded(lttng_ust_ctl_flush_buffer, stream_.get(), producerActive ? 1 : 0);
    if (r < 0)
        fail(UstError("lttng_ust_ctl_flush_buffer", r).what(), r == kSpoiledBuffer);
}

void StreamReader::liveTick(bool newStreamsPublished) {
    if (!isOpen() || kind_ != Kind::Data)
        return;
    std::uint64_t now = 0, streamId = 0;
    int r = guarded(lttng_ust_ctl_get_current_timestamp, stream_.get(), &now);
    if (r >= 0)
        r = guarded(lttng_ust_ctl_get_stream_id, stream_.get(), &streamId);
    if (r < 0)
        fail("reading the current timestamp for the live timer failed", r == kSpoiledBuffer);
    flush(true);
    if (drain() != 0)
        return;
    if (newStreamsPublished) {
        flush(false); // an empty packet, the viewer's cue to ask for new streams
        if (drain() != 0)
            return;
    }
    try {
        sink_->beacon(now, streamId);
    } catch (const std::exception& e) {
        fail(std::string("live beacon: ") + e.what());
    }
}

std::vector<ShortSubbuffer> StreamReader::switchAndListShort() {
    if (!isOpen() || kind_ != Kind::Data || shmFd_ < 0)
        return {};
    // Only a packet holding an open reservation is closed: an app that
    // exited cleanly costs its buffers no packet.
    std::string refused;
    bool open = false;
    std::vector<ShortSubbuffer> found = shortSubbuffers(stream_.get(), shmFd_, refused, &open);
    if (open && refused.empty()) {
        flush(true);
        found = shortSubbuffers(stream_.get(), shmFd_, refused);
    }
    if (!refused.empty() && !std::exchange(warnedFixUp_, true))
        log::warning("stream " + traceDir_ + "/" + name_ +
                     ": stalled sub-buffers, if any, cannot be fixed up: " + refused);
    return found;
}

std::uint32_t StreamReader::fixUpStalled(const std::vector<ShortSubbuffer>* only,
                                         const std::string& why) {
    if (!isOpen() || kind_ != Kind::Data || shmFd_ < 0)
        return 0;
    const StalledFixUp r = fixUpStalledSubbuffers(stream_.get(), shmFd_, only);
    if (!r.refused.empty() && !std::exchange(warnedFixUp_, true))
        log::warning("stream " + traceDir_ + "/" + name_ +
                     ": stalled sub-buffers, if any, cannot be fixed up: " + r.refused);
    if (r.packets == 0)
        return 0;
    log::warning("stream " + traceDir_ + "/" + name_ + ": " + std::to_string(r.packets) +
                 " sub-buffer(s) stalled by a writer that died inside a reservation (an app "
                 "killed while recording an event" +
                 (why.empty() ? std::string() : "; " + why) +
                 "): closed after the records committed before it; " +
                 std::to_string(r.eventsLost) + " event(s) counted as discarded, " +
                 std::to_string(r.bytesCut) + " byte(s) cut");
    flush(false);
    return r.packets;
}

bool StreamReader::producersGone() const noexcept {
    if (waitFd_ < 0)
        return false;
    pollfd p{waitFd_, 0, 0};
    return ::poll(&p, 1, 0) == 1 && (p.revents & POLLHUP) != 0;
}

void StreamReader::hangUp() noexcept {
    if (held_) {
        hungUpWhileHeld_ = true;
        source_.reset(); // a hung-up pipe stays readable: no busy loop
        return;
    }
    try {
        flush(false);
        fixUpStalled();
        drain();
    } catch (const std::exception& e) {
        log::warning(std::string("on hang-up: ") + e.what());
    }
    if (isOpen())
        log::debug("stream " + name_ + " hung up after " + std::to_string(packets_) + " packets");
    close();
}

void StreamReader::release() noexcept {
    if (!held_)
        return;
    held_ = false;
    if (hungUpWhileHeld_) {
        hangUp();
        return;
    }
    try {
        drain();
    } catch (const std::exception& e) {
        log::warning(e.what());
    }
}

int StreamReader::onWaitFd(sd_event_source*, int, std::uint32_t revents, void* userdata) {
    auto* self = static_cast<StreamReader*>(userdata);
    if ((revents & EPOLLIN) != 0) {
        try {
            self->drain();
        } catch (const std::exception& e) {
            log::error(e.what());
            return 0;
        }
    }
    if ((revents & (EPOLLHUP | EPOLLERR)) != 0)
        self->hangUp(); // removes this source: fine inside its own callback
    return 0;
}

} // namespace tracectl::consumer
