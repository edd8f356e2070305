#include "output/relay_output.hpp"

#include "common/log.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>
#include <span>
#include <sys/socket.h>
#include <thread>

namespace tracectl::consumer {

namespace {

std::span<const std::byte> bytesAt(const void* data, std::size_t size) {
    return {static_cast<const std::byte*>(data), size};
}

std::uint32_t paddingOf(std::size_t padding) {
    if (padding > UINT32_MAX)
        throw std::runtime_error("a packet's padding does not fit the relay's u32");
    return static_cast<std::uint32_t>(padding);
}

} // namespace

RelaySession::RelaySession(relayd::RelaydControl control, relayd::RelaydData data,
                           std::uint64_t relaySessionId)
    : control_(std::move(control)), data_(std::move(data)), relaySessionId_(relaySessionId) {}

void RelaySession::requireUsable() const {
    if (!failure_.empty())
        throw std::runtime_error("the relay session failed before: " + failure_);
}

std::runtime_error RelaySession::fail(const std::string& what) noexcept {
    if (failure_.empty()) {
        failure_ = what;
        log::error("relay: " + what);
        if (failureHook_)
            failureHook_(what);
    }
    return std::runtime_error(what);
}

void RelaySession::checkIdleConnection(int fd) noexcept {
    if (!failure_.empty())
        return;
    char byte = 0;
    const ssize_t n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    const std::string which = fd == controlFd() ? "control" : "data";
    const std::string peer =
        fd == controlFd() ? control_.socket().peerName() : data_.socket().peerName();
    if (n == 0)
        fail("the relay at " + peer + " closed the " + which + " connection");
    else if (n < 0)
        fail("the " + which + " connection to the relay at " + peer +
             " failed: " + std::strerror(errno));
    else
        fail("the relay at " + peer + " sent bytes unasked on the " + which +
             " connection (not lttng-relayd's protocol)");
}

RelaySession::Stream& RelaySession::stream(std::uint64_t handle) {
    const auto it = streams_.find(handle);
    if (it == streams_.end())
        throw std::runtime_error("no relay stream " + std::to_string(handle));
    return it->second;
}

void RelaySession::createTraceChunk(std::uint64_t chunkId, std::uint64_t creationTime,
                                    const std::optional<std::string>& name) {
    requireUsable();
    try {
        control_.createTraceChunk(chunkId, creationTime, name);
    } catch (const relayd::RelaydError& e) {
        throw fail(std::string("creating trace chunk ") + std::to_string(chunkId) + ": " +
                   e.what());
    }
}

void RelaySession::closeTraceChunk(std::uint64_t chunkId, std::uint64_t closeTime,
                                   std::optional<relayd::TraceChunkCloseCommand> command) noexcept {
    if (!failure_.empty())
        return;
    try {
        control_.closeTraceChunk(chunkId, closeTime, command);
    } catch (const relayd::RelaydError& e) {
        (void)fail(std::string("closing trace chunk ") + std::to_string(chunkId) + ": " + e.what());
    }
}

std::string RelaySession::archiveChunk(std::uint64_t chunkId, std::uint64_t closeTime,
                                       relayd::TraceChunkCloseCommand command,
                                       std::chrono::milliseconds timeout) {
    // Waiting first: the relay moves the chunk once its last stream is
    // done with it, i.e. once it holds every packet of the chunk.
    std::string late;
    try {
        waitUntilReceived(timeout);
    } catch (const std::runtime_error& e) {
        if (!failure_.empty())
            throw; // the session failed: nothing more goes to the relay
        late = e.what();
    }
    requireUsable();
    std::string path;
    try {
        path = control_.closeTraceChunk(chunkId, closeTime, command);
    } catch (const relayd::RelaydError& e) {
        throw fail(std::string("closing trace chunk ") + std::to_string(chunkId) + ": " + e.what());
    }
    if (!late.empty())
        throw std::runtime_error("trace chunk " + std::to_string(chunkId) +
                                 " closed, but the relay may still lack some of its data: " + late);
    return path;
}

void RelaySession::rotateStream(std::uint64_t handle, std::uint64_t newChunkId) {
    requireUsable();
    Stream& s = stream(handle);
    if (s.closed)
        throw std::runtime_error("relay stream " + std::to_string(handle) + " is closed");
    // The relay's rotation position is a CTF packet_seq_num: the stream's
    // index goes into the new chunk once it has received the index of
    // packet position - 1 (stream.c, try_rotate_stream_index), and its
    // data from that packet's net_seq_num on (try_rotate_stream_data).
    // lttng-consumerd sends last_sequence_number + 1 + the packets still
    // unread (consumer.c, lttng_consumer_rotate_channel); called right
    // before the first packet of the new chunk, that is the last one sent
    // + 1.
    const relayd::StreamRotationPosition position{handle,
                                                  s.lastPacketSeq ? *s.lastPacketSeq + 1 : 0};
    try {
        control_.rotateStreams(newChunkId, std::span(&position, 1));
    } catch (const relayd::RelaydError& e) {
        throw fail("moving stream " + std::to_string(handle) + " into trace chunk " +
                   std::to_string(newChunkId) + ": " + e.what());
    }
    s.chunkId = newChunkId;
}

std::optional<std::uint64_t> RelaySession::streamChunk(std::uint64_t handle) const noexcept {
    const auto it = streams_.find(handle);
    if (it == streams_.end() || it->second.closed)
        return std::nullopt;
    return it->second.chunkId;
}

std::uint64_t RelaySession::addStream(const std::string& name, const std::string& pathname,
                                      std::uint64_t chunkId, bool metadata) {
    requireUsable();
    try {
        const std::uint64_t handle = control_.addStream(name, pathname, 0, 0, chunkId);
        streams_[handle] =
            Stream{metadata, 0, false, chunkId, std::nullopt, pathname, false, false, ticks_};
        return handle;
    } catch (const relayd::RelaydError& e) {
        throw fail("adding the stream " + pathname + "/" + name + ": " + e.what());
    }
}

void RelaySession::streamsSent() {
    requireUsable();
    publishPending_ = true;
    if (live_ && !snapshot_)
        return; // at a whole trace's first data packet (sendPacket()) or liveTick()
    publish();
}

std::vector<std::string> RelaySession::tracesNotReady(const std::string* sending) const {
    struct State {
        bool metadata = false;
        bool data = false;
        bool sent = false;                        ///< a data stream of it sent a packet
        bool waiting = false;                     ///< an open stream of it is not published
        std::uint64_t oldest = ~std::uint64_t{0}; ///< the tick its first such stream came
    };
    std::map<std::string, State> traces;
    for (const auto& [handle, s] : streams_) {
        State& t = traces[s.pathname];
        (s.metadata ? t.metadata : t.data) = true;
        t.sent = t.sent || (!s.metadata && s.nextSeq > 0);
        // Closed or lingering: the consumer adds nothing more to its
        // trace, which is as whole as it will be.
        if (!s.published && !s.closed && !s.lingering) {
            t.waiting = true;
            t.oldest = std::min(t.oldest, s.addedAtTick);
        }
    }
    std::vector<std::string> notReady;
    for (const auto& [pathname, t] : traces) {
        const bool whole = t.metadata && t.data;
        const bool packet = t.sent || (sending != nullptr && *sending == pathname);
        const bool aged = ticks_ - t.oldest >= kMaxPublishWaitTicks;
        if (t.waiting && !(whole && packet) && !aged)
            notReady.push_back(pathname);
    }
    return notReady;
}

std::vector<std::string> RelaySession::partialTraces() const {
    std::map<std::string, std::pair<bool, bool>> kinds; // metadata, data
    std::set<std::string> waiting;
    for (const auto& [handle, s] : streams_) {
        auto& k = kinds[s.pathname];
        (s.metadata ? k.first : k.second) = true;
        if (!s.published && !s.closed && !s.lingering)
            waiting.insert(s.pathname);
    }
    std::vector<std::string> partial;
    for (const std::string& pathname : waiting)
        if (!kinds[pathname].first || !kinds[pathname].second)
            partial.push_back(pathname);
    return partial;
}

void RelaySession::publish() {
    if (!publishPending_)
        return;
    try {
        control_.streamsSent();
    } catch (const relayd::RelaydError& e) {
        throw fail(std::string("STREAMS_SENT: ") + e.what());
    }
    publishPending_ = false;
    publishWaitTicks_ = 0;
    newStreamsPublished_ = true;
    for (auto& [handle, s] : streams_)
        s.published = true;
}

void RelaySession::sendPacket(std::uint64_t handle, const void* data, std::size_t contentBytes,
                              std::size_t paddingBytes, const IndexEntry& index) {
    requireUsable();
    Stream& s = stream(handle);
    // A live trace goes to the viewers with its first data packet: by then
    // its metadata declares what the packet holds (streamsSent()); and so
    // do the other traces STREAMS_SENT publishes with it.
    if (publishPending_ && !s.published && !s.metadata && tracesNotReady(&s.pathname).empty())
        publish();
    try {
        data_.sendPacket(handle, s.nextSeq, bytesAt(data, contentBytes), paddingOf(paddingBytes));
        relayd::RelaydIndex i;
        i.relayStreamId = handle;
        i.netSeqNum = s.nextSeq;
        i.packetSizeBits = index.packetSizeBits;
        i.contentSizeBits = index.contentSizeBits;
        i.timestampBegin = index.timestampBegin;
        i.timestampEnd = index.timestampEnd;
        i.eventsDiscarded = index.eventsDiscarded;
        i.streamId = index.streamId;
        i.streamInstanceId = index.streamInstanceId;
        i.packetSeqNum = index.packetSeqNum;
        ++s.nextSeq; // sent, whatever the index does
        if (index.packetSeqNum != ~std::uint64_t{0})
            s.lastPacketSeq = index.packetSeqNum;
        if (!snapshot_)
            control_.sendIndex(i);
    } catch (const relayd::RelaydError& e) {
        throw fail("sending a packet of stream " + std::to_string(handle) + ": " + e.what());
    }
}

void RelaySession::sendMetadata(std::uint64_t handle, const void* data, std::size_t contentBytes,
                                std::size_t paddingBytes) {
    requireUsable();
    (void)stream(handle);
    try {
        control_.sendMetadata(handle, bytesAt(data, contentBytes), paddingOf(paddingBytes));
    } catch (const relayd::RelaydError& e) {
        throw fail("sending metadata: " + std::string(e.what()));
    }
}

void RelaySession::sendBeacon(std::uint64_t handle, std::uint64_t timestampEnd,
                              std::uint64_t streamId) {
    requireUsable();
    const Stream& s = stream(handle);
    relayd::RelaydIndex i;
    i.relayStreamId = handle;
    i.netSeqNum = s.nextSeq - 1; // the last packet sent (all ones: none yet), as LTTng
    i.timestampEnd = timestampEnd;
    i.streamId = streamId;
    try {
        control_.sendIndex(i);
    } catch (const relayd::RelaydError& e) {
        throw fail("sending a live beacon: " + std::string(e.what()));
    }
}

void RelaySession::closeStream(std::uint64_t handle) noexcept {
    const auto it = streams_.find(handle);
    if (it == streams_.end() || it->second.closed || it->second.lingering)
        return;
    if (linger_.ticks == 0 || !failure_.empty()) {
        sendClose(handle, it->second);
        return;
    }
    it->second.lingering = true;
    // The streams of one trace (one app's) linger together, in the order
    // their trace first closed one.
    auto trace = std::find_if(lingering_.begin(), lingering_.end(), [&](const LingeringTrace& t) {
        return t.pathname == it->second.pathname && !t.dataClosed;
    });
    if (trace == lingering_.end())
        trace = lingering_.insert(
            lingering_.end(), LingeringTrace{it->second.pathname, {}, {}, linger_.ticks, false});
    (it->second.metadata ? trace->metadataStreams : trace->dataStreams).push_back(handle);
}

void RelaySession::sendClose(std::uint64_t handle, Stream& s) noexcept {
    s.closed = true;
    s.lingering = false;
    if (!failure_.empty())
        return;
    try {
        control_.closeStream(handle, s.nextSeq - 1);
    } catch (const relayd::RelaydError& e) {
        (void)fail("closing stream " + std::to_string(handle) + ": " + e.what());
    }
}

void RelaySession::closeData(LingeringTrace& trace) noexcept {
    for (const std::uint64_t handle : trace.dataStreams)
        sendClose(handle, streams_.at(handle));
    trace.dataStreams.clear();
    trace.dataClosed = true;
}

bool RelaySession::dataOpen(const std::string& pathname) const noexcept {
    return std::any_of(streams_.begin(), streams_.end(), [&](const auto& o) {
        return !o.second.metadata && !o.second.closed && o.second.pathname == pathname;
    });
}

void RelaySession::liveTick() noexcept {
    ++ticks_;
    if (publishPending_ && failure_.empty()) {
        ++publishWaitTicks_;
        // Every trace ready, or traces kept coming for so long that the
        // ready ones would wait on and on: publish.
        const bool ready = tracesNotReady(nullptr).empty();
        if (ready || publishWaitTicks_ >= 2 * kMaxPublishWaitTicks) {
            std::string partial;
            for (const std::string& p : partialTraces())
                partial += (partial.empty() ? "" : ", ") + p;
            if (!partial.empty())
                log::warning("relay session " + std::to_string(relaySessionId_) + ": trace(s) " +
                             partial + " published to live viewers without their metadata or " +
                             "data streams after " + std::to_string(publishWaitTicks_) +
                             " live-timer ticks");
            publishAsItIs();
        }
    }
    if (lingering_.empty())
        return;
    ++ticksSinceClose_;
    // Metadata a tick after its trace's data at the earliest, so that a
    // viewer reads the data to its end before the trace's metadata ends.
    for (auto t = lingering_.begin(); t != lingering_.end();) {
        if (!t->dataClosed || dataOpen(t->pathname)) {
            ++t;
            continue;
        }
        for (const std::uint64_t handle : t->metadataStreams)
            sendClose(handle, streams_.at(handle));
        t = lingering_.erase(t);
    }
    std::size_t waiting = 0;
    for (auto& t : lingering_) {
        if (t.dataClosed)
            continue;
        ++waiting;
        if (t.ticksLeft > 0)
            --t.ticksLeft;
    }
    // Too many: the oldest go at once (a viewer may miss them).
    for (auto t = lingering_.begin(); t != lingering_.end() && waiting > kMaxLingeringTraces; ++t)
        if (!t->dataClosed) {
            closeData(*t);
            --waiting;
        }
    // One trace at a time, spaced: a viewer that reads a lingering stream
    // learns of the next trace's streams only once every stream it knows
    // hung up (babeltrace2's lttng-live asks for new streams when it has
    // no active one, or when a data index says so), so the next one must
    // still be there then.
    const auto head = std::find_if(lingering_.begin(), lingering_.end(),
                                   [](const LingeringTrace& t) { return !t.dataClosed; });
    if (drainSpacing_) {
        // The session's end: no trace comes any more, and a viewer that
        // waits on the head only needs to see it hang up to ask for the rest.
        if (head != lingering_.end() && ticksSinceClose_ >= *drainSpacing_) {
            closeData(*head);
            ticksSinceClose_ = 0;
        }
        return;
    }
    if (head != lingering_.end() && head->ticksLeft == 0 &&
        ticksSinceClose_ >= linger_.spacingTicks) {
        closeData(*head);
        ticksSinceClose_ = 0;
    }
}

void RelaySession::drainLingering(unsigned spacingTicks) noexcept {
    drainSpacing_ = spacingTicks;
    publishAsItIs();
}

void RelaySession::publishAsItIs() noexcept {
    if (!publishPending_ || !failure_.empty())
        return;
    try {
        publish();
    } catch (const std::exception&) {
        // fail() recorded it and told the hook
    }
}

void RelaySession::closeLingering() noexcept {
    publishAsItIs(); // the session's end: nothing more comes
    // Data first, then metadata, as a viewer reads them.
    for (auto& t : lingering_)
        if (!t.dataClosed)
            closeData(t);
    for (auto& t : lingering_)
        for (const std::uint64_t handle : t.metadataStreams)
            sendClose(handle, streams_.at(handle));
    lingering_.clear();
}

void RelaySession::waitUntilReceived(std::chrono::milliseconds timeout) {
    requireUsable();
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    auto pause = std::chrono::milliseconds(1);
    try {
        for (;;) {
            control_.beginDataPending();
            bool pending = false;
            for (const auto& [handle, s] : streams_) {
                if (s.closed)
                    continue;
                // Every open stream is asked, also one that sent nothing
                // yet (last_net_seq_num -1, as lttng-consumerd's
                // next_net_seq_num - 1 wraps, consumer.c
                // consumer_data_pending): END_DATA_PENDING counts a stream
                // never asked since BEGIN as in flight (relayd main.c,
                // relay_end_data_pending), so a channel flushed later (the
                // kernel's, after the UST one's) would hold up this wait.
                if (s.metadata)
                    control_.quiescentControl(handle);
                else if (control_.dataPending(handle, s.nextSeq - 1))
                    pending = true;
            }
            if (control_.endDataPending())
                pending = true;
            if (!pending)
                return;
            if (std::chrono::steady_clock::now() >= deadline)
                throw std::runtime_error(
                    "the relay still lacks data after " +
                    std::to_string(
                        std::chrono::duration_cast<std::chrono::seconds>(timeout).count()) +
                    " s");
            std::this_thread::sleep_for(pause);
            pause = std::min(pause * 2, std::chrono::milliseconds(50));
        }
    } catch (const relayd::RelaydError& e) {
        throw fail("the data-pending exchange: " + std::string(e.what()));
    }
}

RelayStreamSink::RelayStreamSink(RelaySession& session, const std::string& pathname,
                                 const std::string& name, std::uint64_t chunkId, StreamKind kind)
    : session_(session),
      handle_(session.addStream(name, pathname, chunkId, kind == StreamKind::Metadata)),
      chunkId_(chunkId), kind_(kind) {}

void RelayStreamSink::write(const void* data, std::size_t paddedBytes, std::size_t contentBytes,
                            const IndexEntry* index) {
    if (closed_)
        throw std::runtime_error("relay stream " + std::to_string(handle_) + " is closed");
    const std::size_t content = std::min(contentBytes, paddedBytes);
    if (kind_ == StreamKind::Metadata || index == nullptr)
        session_.sendMetadata(handle_, data, content, paddedBytes - content);
    else
        session_.sendPacket(handle_, data, content, paddedBytes - content, *index);
    bytes_ += paddedBytes;
}

void RelayStreamSink::close() noexcept {
    if (std::exchange(closed_, true))
        return;
    // Handed over: the relay stream goes on in a later chunk.
    if (const auto chunk = session_.streamChunk(handle_); chunk && *chunk != chunkId_)
        return;
    session_.closeStream(handle_);
}

void RelayStreamSink::beacon(std::uint64_t timestampEnd, std::uint64_t streamId) {
    if (!closed_ && kind_ == StreamKind::Data)
        session_.sendBeacon(handle_, timestampEnd, streamId);
}

std::unique_ptr<StreamSink> RelayChunk::openStream(std::string_view traceDir, std::string_view name,
                                                   StreamKind kind) const {
    return std::make_unique<RelayStreamSink>(*session_, std::string(traceDir), std::string(name),
                                             chunkId_, kind);
}

} // namespace tracectl::consumer

namespace tracectl::consumer {

std::unique_ptr<StreamSink> RelayChunk::continueStream(const StreamSink& previous,
                                                       std::string_view traceDir,
                                                       std::string_view name,
                                                       StreamKind kind) const {
    const auto* relayed = dynamic_cast<const RelayStreamSink*>(&previous);
    if (relayed == nullptr || &relayed->session() != session_.get() || relayed->kind() != kind ||
        session_->streamChunk(relayed->handle()) != relayed->chunkId() ||
        relayed->chunkId() == chunkId_)
        return openStream(traceDir, name, kind);
    session_->rotateStream(relayed->handle(), chunkId_);
    return std::make_unique<RelayStreamSink>(RelayStreamSink::Continued{}, *session_,
                                             relayed->handle(), chunkId_, kind);
}

} // namespace tracectl::consumer
