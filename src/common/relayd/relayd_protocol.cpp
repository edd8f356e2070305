// The lttng-relayd 2.13 codec; layouts documented in relayd_protocol.hpp.
#include "relayd_protocol.hpp"

#include <algorithm>
#include <cstring>

namespace tracectl::relayd {

namespace {

/// Appends big-endian integers and raw bytes.
class Writer {
public:
    explicit Writer(std::size_t reserve = 0) { bytes_.reserve(reserve); }
    Writer& u8(std::uint8_t value) {
        bytes_.push_back(static_cast<std::byte>(value));
        return *this;
    }
    Writer& u32(std::uint32_t value) {
        for (int shift = 24; shift >= 0; shift -= 8)
            bytes_.push_back(static_cast<std::byte>((value >> shift) & 0xffU));
        return *this;
    }
    Writer& u64(std::uint64_t value) {
        for (int shift = 56; shift >= 0; shift -= 8)
            bytes_.push_back(static_cast<std::byte>((value >> shift) & 0xffU));
        return *this;
    }
    Writer& raw(ByteView data) {
        bytes_.insert(bytes_.end(), data.begin(), data.end());
        return *this;
    }
    Writer& zeros(std::size_t count) {
        bytes_.insert(bytes_.end(), count, std::byte{0});
        return *this;
    }
    /// The string's bytes then a NUL.
    Writer& cstring(std::string_view text) {
        raw(std::as_bytes(std::span(text.data(), text.size())));
        return u8(0);
    }
    Bytes take() { return std::move(bytes_); }

private:
    Bytes bytes_;
};

/// Reads big-endian integers from a span whose size was checked before.
class Reader {
public:
    explicit Reader(ByteView bytes) : bytes_(bytes) {}
    std::uint8_t u8() { return static_cast<std::uint8_t>(bytes_[pos_++]); }
    std::uint32_t u32() {
        std::uint32_t value = 0;
        for (int i = 0; i < 4; ++i)
            value = (value << 8) | static_cast<std::uint8_t>(bytes_[pos_++]);
        return value;
    }
    std::uint64_t u64() {
        std::uint64_t value = 0;
        for (int i = 0; i < 8; ++i)
            value = (value << 8) | static_cast<std::uint8_t>(bytes_[pos_++]);
        return value;
    }

private:
    ByteView bytes_;
    std::size_t pos_ = 0;
};

void expectSize(ByteView bytes, std::size_t expected, std::string_view what) {
    if (bytes.size() != expected)
        throw RelaydProtocolError(std::string(what) + ": expected " + std::to_string(expected) +
                                  " bytes, got " + std::to_string(bytes.size()));
}

/// A name the relay reads as a C string: no NUL inside, and, with its
/// terminator, at most `maxWithNul` bytes (0 = no limit but the payload's).
void checkName(std::string_view name, std::size_t maxWithNul, std::string_view what,
               bool mayBeEmpty) {
    if (name.find('\0') != std::string_view::npos)
        throw RelaydProtocolError(std::string(what) + " holds a NUL byte");
    if (!mayBeEmpty && name.empty())
        throw RelaydProtocolError(std::string(what) + " is empty");
    if (name.size() + 1 > maxWithNul)
        throw RelaydProtocolError(std::string(what) + " is " + std::to_string(name.size()) +
                                  " bytes long; lttng-relayd accepts at most " +
                                  std::to_string(maxWithNul - 1));
}

Bytes command(RelaydCommand cmd, Writer& payload) {
    const Bytes body = payload.take();
    return encodeCommand(cmd, body);
}

Bytes u64Command(RelaydCommand cmd, std::uint64_t value) {
    Writer w(8);
    w.u64(value);
    return command(cmd, w);
}

Bytes twoU64Command(RelaydCommand cmd, std::uint64_t first, std::uint64_t second) {
    Writer w(16);
    w.u64(first).u64(second);
    return command(cmd, w);
}

} // namespace

std::string commandName(RelaydCommand command) {
    switch (command) {
    case RelaydCommand::AddStream:
        return "ADD_STREAM";
    case RelaydCommand::CreateSession:
        return "CREATE_SESSION";
    case RelaydCommand::StartData:
        return "START_DATA";
    case RelaydCommand::UpdateSyncInfo:
        return "UPDATE_SYNC_INFO";
    case RelaydCommand::Version:
        return "VERSION";
    case RelaydCommand::SendMetadata:
        return "SEND_METADATA";
    case RelaydCommand::CloseStream:
        return "CLOSE_STREAM";
    case RelaydCommand::DataPending:
        return "DATA_PENDING";
    case RelaydCommand::QuiescentControl:
        return "QUIESCENT_CONTROL";
    case RelaydCommand::BeginDataPending:
        return "BEGIN_DATA_PENDING";
    case RelaydCommand::EndDataPending:
        return "END_DATA_PENDING";
    case RelaydCommand::AddIndex:
        return "ADD_INDEX";
    case RelaydCommand::SendIndex:
        return "SEND_INDEX";
    case RelaydCommand::CloseIndex:
        return "CLOSE_INDEX";
    case RelaydCommand::ListSessions:
        return "LIST_SESSIONS";
    case RelaydCommand::StreamsSent:
        return "STREAMS_SENT";
    case RelaydCommand::ResetMetadata:
        return "RESET_METADATA";
    case RelaydCommand::RotateStreams:
        return "ROTATE_STREAMS";
    case RelaydCommand::CreateTraceChunk:
        return "CREATE_TRACE_CHUNK";
    case RelaydCommand::CloseTraceChunk:
        return "CLOSE_TRACE_CHUNK";
    case RelaydCommand::TraceChunkExists:
        return "TRACE_CHUNK_EXISTS";
    case RelaydCommand::GetConfiguration:
        return "GET_CONFIGURATION";
    }
    return "command " + std::to_string(static_cast<std::uint32_t>(command));
}

Bytes encodeCommand(RelaydCommand cmd, ByteView payload) {
    if (payload.size() > kMaxControlPayload)
        throw RelaydProtocolError(
            commandName(cmd) + ": a payload of " + std::to_string(payload.size()) +
            " bytes exceeds lttng-relayd's control limit of " + std::to_string(kMaxControlPayload));
    Writer w(kCommandHeaderSize + payload.size());
    w.u64(0).u64(payload.size()).u32(static_cast<std::uint32_t>(cmd)).u32(0).raw(payload);
    return w.take();
}

CommandHeader decodeCommandHeader(ByteView bytes) {
    expectSize(bytes, kCommandHeaderSize, "relayd command header");
    Reader r(bytes);
    CommandHeader header;
    header.circuitId = r.u64();
    header.dataSize = r.u64();
    header.command = r.u32();
    header.commandVersion = r.u32();
    return header;
}

Bytes encodeVersion(Version ours) {
    Writer w(8);
    w.u32(ours.major).u32(ours.minor);
    return command(RelaydCommand::Version, w);
}

Bytes encodeGetConfiguration(std::uint64_t queryFlags) {
    return u64Command(RelaydCommand::GetConfiguration, queryFlags);
}

Bytes encodeCreateSession(const CreateSessionRequest& request) {
    checkName(request.sessionName, kMaxSessionNameLength, "the session name", false);
    if (request.sessionName.front() == '.' || request.sessionName.find('/') != std::string::npos)
        throw RelaydProtocolError(
            "the session name '" + request.sessionName +
            "' is not path-safe (lttng-relayd refuses a leading '.' or a '/')");
    checkName(request.hostname, kMaxHostnameLength, "the hostname", false);
    if (request.hostname.front() == '.' || request.hostname.find('/') != std::string::npos)
        throw RelaydProtocolError(
            "the hostname '" + request.hostname +
            "' is not path-safe (lttng-relayd refuses a leading '.' or a '/')");
    checkName(request.basePath, kMaxBasePathLength, "the base path", true);
    if (request.basePath.find("../") != std::string::npos)
        throw RelaydProtocolError("the base path '" + request.basePath + "' walks up ('../')");
    if (std::all_of(request.sessiondUuid.begin(), request.sessiondUuid.end(),
                    [](std::uint8_t b) { return b == 0; }))
        throw RelaydProtocolError("the session daemon UUID is nil (lttng-relayd refuses it)");

    Writer w(59 + request.sessionName.size() + request.hostname.size() + request.basePath.size() +
             3);
    w.u32(static_cast<std::uint32_t>(request.sessionName.size() + 1))
        .u32(static_cast<std::uint32_t>(request.hostname.size() + 1))
        .u32(static_cast<std::uint32_t>(request.basePath.size() + 1))
        .u32(request.liveTimerUs)
        .u8(request.snapshot ? 1 : 0)
        .u8(request.sessionNameContainsCreationTime ? 1 : 0);
    for (std::uint8_t b : request.sessiondUuid)
        w.u8(b);
    w.u64(request.sessionId)
        .u64(request.creationTime)
        .u8(request.currentChunkId ? 1 : 0)
        .u64(request.currentChunkId.value_or(0))
        .cstring(request.sessionName)
        .cstring(request.hostname)
        .cstring(request.basePath);
    return command(RelaydCommand::CreateSession, w);
}

Bytes encodeCreateTraceChunk(std::uint64_t chunkId, std::uint64_t creationTime,
                             const std::optional<std::string>& overrideName) {
    if (overrideName) {
        checkName(*overrideName, kMaxSessionNameLength, "the chunk name", false);
        if (overrideName->find('/') != std::string::npos)
            throw RelaydProtocolError("the chunk name '" + *overrideName + "' holds a '/'");
    }
    Writer w(20 + (overrideName ? overrideName->size() + 1 : 0));
    w.u64(chunkId).u64(creationTime);
    if (overrideName)
        w.u32(static_cast<std::uint32_t>(overrideName->size() + 1)).cstring(*overrideName);
    else
        w.u32(0);
    return command(RelaydCommand::CreateTraceChunk, w);
}

Bytes encodeAddStream(std::string_view channelName, std::string_view pathname,
                      std::uint64_t tracefileSize, std::uint64_t tracefileCount,
                      std::uint64_t traceChunkId) {
    checkName(channelName, kMaxChannelNameLength, "the channel name", false);
    if (channelName.find('/') != std::string_view::npos)
        throw RelaydProtocolError("the channel name '" + std::string(channelName) +
                                  "' holds a '/'");
    checkName(pathname, kMaxStreamPathLength, "the stream path", true);
    if (pathname.find("../") != std::string_view::npos || pathname == "..")
        throw RelaydProtocolError("the stream path '" + std::string(pathname) +
                                  "' walks up ('../')");
    Writer w(32 + channelName.size() + pathname.size() + 2);
    w.u32(static_cast<std::uint32_t>(channelName.size() + 1))
        .u32(static_cast<std::uint32_t>(pathname.size() + 1))
        .u64(tracefileSize)
        .u64(tracefileCount)
        .u64(traceChunkId)
        .cstring(channelName)
        .cstring(pathname);
    return command(RelaydCommand::AddStream, w);
}

Bytes encodeStreamsSent() {
    return encodeCommand(RelaydCommand::StreamsSent, {});
}

Bytes encodeSendMetadata(std::uint64_t streamHandle, ByteView metadata, std::uint32_t paddingSize) {
    if (metadata.size() > kMaxControlPayload - 12)
        throw RelaydProtocolError("SEND_METADATA: " + std::to_string(metadata.size()) +
                                  " bytes of metadata exceed lttng-relayd's control limit of " +
                                  std::to_string(kMaxControlPayload) + " bytes per command");
    Writer w(12 + metadata.size());
    w.u64(streamHandle).u32(paddingSize).raw(metadata);
    return command(RelaydCommand::SendMetadata, w);
}

Bytes encodeResetMetadata(std::uint64_t streamHandle, std::uint64_t version) {
    return twoU64Command(RelaydCommand::ResetMetadata, streamHandle, version);
}

Bytes encodeSendIndex(const RelaydIndex& index) {
    Writer w(kIndexSize);
    w.u64(index.relayStreamId)
        .u64(index.netSeqNum)
        .u64(index.packetSizeBits)
        .u64(index.contentSizeBits)
        .u64(index.timestampBegin)
        .u64(index.timestampEnd)
        .u64(index.eventsDiscarded)
        .u64(index.streamId)
        .u64(index.streamInstanceId)
        .u64(index.packetSeqNum);
    return command(RelaydCommand::SendIndex, w);
}

Bytes encodeQuiescentControl(std::uint64_t streamHandle) {
    return u64Command(RelaydCommand::QuiescentControl, streamHandle);
}

Bytes encodeBeginDataPending(std::uint64_t relaySessionId) {
    return u64Command(RelaydCommand::BeginDataPending, relaySessionId);
}

Bytes encodeEndDataPending(std::uint64_t relaySessionId) {
    return u64Command(RelaydCommand::EndDataPending, relaySessionId);
}

Bytes encodeDataPending(std::uint64_t streamHandle, std::uint64_t lastNetSeqNum) {
    return twoU64Command(RelaydCommand::DataPending, streamHandle, lastNetSeqNum);
}

Bytes encodeCloseStream(std::uint64_t streamHandle, std::uint64_t lastNetSeqNum) {
    return twoU64Command(RelaydCommand::CloseStream, streamHandle, lastNetSeqNum);
}

Bytes encodeCloseTraceChunk(std::uint64_t chunkId, std::uint64_t closeTime,
                            std::optional<TraceChunkCloseCommand> closeCommand) {
    Writer w(21);
    w.u64(chunkId)
        .u64(closeTime)
        .u8(closeCommand ? 1 : 0)
        .u32(closeCommand ? static_cast<std::uint32_t>(*closeCommand) : 0);
    return command(RelaydCommand::CloseTraceChunk, w);
}

Bytes encodeTraceChunkExists(std::uint64_t chunkId) {
    return u64Command(RelaydCommand::TraceChunkExists, chunkId);
}

Bytes encodeRotateStreams(std::optional<std::uint64_t> newChunkId,
                          std::span<const StreamRotationPosition> positions) {
    if (positions.size() > (kMaxControlPayload - 20) / 16)
        throw RelaydProtocolError("ROTATE_STREAMS: too many streams (" +
                                  std::to_string(positions.size()) + ")");
    Writer w(20 + 16 * positions.size());
    w.u32(static_cast<std::uint32_t>(positions.size()))
        .u8(newChunkId ? 1 : 0)
        .zeros(7)
        .u64(newChunkId.value_or(0));
    for (const StreamRotationPosition& position : positions)
        w.u64(position.streamHandle).u64(position.rotateAtSeqNum);
    return command(RelaydCommand::RotateStreams, w);
}

Bytes encodeDataHeader(std::uint64_t streamHandle, std::uint64_t netSeqNum, std::uint32_t dataSize,
                       std::uint32_t paddingSize) {
    Writer w(kDataHeaderSize);
    w.u64(0).u64(streamHandle).u64(netSeqNum).u32(dataSize).u32(paddingSize);
    return w.take();
}

std::uint32_t decodeGenericReply(ByteView bytes) {
    expectSize(bytes, kGenericReplySize, "relayd generic reply");
    return Reader(bytes).u32();
}

Version decodeVersionReply(ByteView bytes) {
    expectSize(bytes, kVersionReplySize, "relayd VERSION reply");
    Reader r(bytes);
    Version version;
    version.major = r.u32();
    version.minor = r.u32();
    return version;
}

ConfigurationReply decodeConfigurationReply(ByteView bytes) {
    expectSize(bytes, kConfigurationReplySize, "relayd GET_CONFIGURATION reply");
    Reader r(bytes);
    ConfigurationReply reply;
    reply.retCode = r.u32();
    reply.flags = r.u64();
    return reply;
}

CreateSessionReplyHeader decodeCreateSessionReplyHeader(ByteView bytes) {
    expectSize(bytes, kCreateSessionReplyHeaderSize, "relayd CREATE_SESSION reply");
    Reader r(bytes);
    CreateSessionReplyHeader header;
    header.relaySessionId = r.u64();
    header.retCode = r.u32();
    header.outputPathLength = r.u32();
    if (header.outputPathLength >= kMaxReplyPathLength)
        throw RelaydProtocolError("relayd CREATE_SESSION reply: an output path of " +
                                  std::to_string(header.outputPathLength) + " bytes (at most " +
                                  std::to_string(kMaxReplyPathLength - 1) + " are allowed)");
    return header;
}

std::string decodeReplyPath(ByteView bytes) {
    if (bytes.empty())
        return {};
    const auto* chars = reinterpret_cast<const char*>(bytes.data());
    const auto* nul = static_cast<const char*>(std::memchr(chars, 0, bytes.size()));
    if (nul == nullptr)
        throw RelaydProtocolError("relayd reply path is not NUL-terminated");
    if (static_cast<std::size_t>(nul - chars) != bytes.size() - 1)
        throw RelaydProtocolError("relayd reply path holds a NUL byte before its end");
    return std::string(chars, bytes.size() - 1);
}

StreamStatusReply decodeStreamStatusReply(ByteView bytes) {
    expectSize(bytes, kStreamStatusReplySize, "relayd ADD_STREAM reply");
    Reader r(bytes);
    StreamStatusReply reply;
    reply.handle = r.u64();
    reply.retCode = r.u32();
    return reply;
}

CloseTraceChunkReplyHeader decodeCloseTraceChunkReplyHeader(ByteView bytes) {
    expectSize(bytes, kCloseTraceChunkReplyHeaderSize, "relayd CLOSE_TRACE_CHUNK reply");
    Reader r(bytes);
    CloseTraceChunkReplyHeader header;
    header.retCode = r.u32();
    header.pathLength = r.u32();
    if (header.retCode == kLttngOk && header.pathLength >= kMaxReplyPathLength)
        throw RelaydProtocolError("relayd CLOSE_TRACE_CHUNK reply: a path of " +
                                  std::to_string(header.pathLength) + " bytes (at most " +
                                  std::to_string(kMaxReplyPathLength - 1) + " are allowed)");
    return header;
}

TraceChunkExistsReply decodeTraceChunkExistsReply(ByteView bytes) {
    expectSize(bytes, kTraceChunkExistsReplySize, "relayd TRACE_CHUNK_EXISTS reply");
    Reader r(bytes);
    TraceChunkExistsReply reply;
    reply.retCode = r.u32();
    const std::uint8_t exists = r.u8();
    if (exists > 1)
        throw RelaydProtocolError("relayd TRACE_CHUNK_EXISTS reply: trace_chunk_exists is " +
                                  std::to_string(exists) + ", not 0 or 1");
    reply.exists = exists == 1;
    return reply;
}

} // namespace tracectl::relayd
