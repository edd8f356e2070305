#include "output/relay_output.hpp"

#include "common/log.hpp"

#include <chrono>
#include <span>
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

RelaySession::Stream& RelaySession::stream(std::uint64_t handle) {
    const auto it = streams_.find(handle);
    if (it == streams_.end())
        throw std::runtime_error("no relay stream " + std::to_string(handle));
    return it->second;
}

void RelaySession::createTraceChunk(std::uint64_t chunkId, std::uint64_t creationTime) {
    requireUsable();
    try {
        control_.createTraceChunk(chunkId, creationTime);
    } catch (const relayd::RelaydError& e) {
        throw fail(std::string("creating trace chunk ") + std::to_string(chunkId) + ": " +
                   e.what());
    }
}

void RelaySession::closeTraceChunk(std::uint64_t chunkId, std::uint64_t closeTime) noexcept {
    if (!failure_.empty())
        return;
    try {
        control_.closeTraceChunk(chunkId, closeTime);
    } catch (const relayd::RelaydError& e) {
        (void)fail(std::string("closing trace chunk ") + std::to_string(chunkId) + ": " + e.what());
    }
}

std::uint64_t RelaySession::addStream(const std::string& name, const std::string& pathname,
                                      std::uint64_t chunkId, bool metadata) {
    requireUsable();
    try {
        const std::uint64_t handle = control_.addStream(name, pathname, 0, 0, chunkId);
        streams_[handle] = Stream{metadata, 0, false};
        return handle;
    } catch (const relayd::RelaydError& e) {
        throw fail("adding the stream " + pathname + "/" + name + ": " + e.what());
    }
}

void RelaySession::streamsSent() {
    requireUsable();
    try {
        control_.streamsSent();
    } catch (const relayd::RelaydError& e) {
        throw fail(std::string("STREAMS_SENT: ") + e.what());
    }
}

void RelaySession::sendPacket(std::uint64_t handle, const void* data, std::size_t contentBytes,
                              std::size_t paddingBytes, const IndexEntry& index) {
    requireUsable();
    Stream& s = stream(handle);
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
    if (it == streams_.end() || it->second.closed)
        return;
    it->second.closed = true;
    if (!failure_.empty())
        return;
    try {
        control_.closeStream(handle, it->second.nextSeq - 1);
    } catch (const relayd::RelaydError& e) {
        (void)fail("closing stream " + std::to_string(handle) + ": " + e.what());
    }
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
                if (s.metadata)
                    control_.quiescentControl(handle);
                else if (s.nextSeq != 0 && control_.dataPending(handle, s.nextSeq - 1))
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
      kind_(kind) {}

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
