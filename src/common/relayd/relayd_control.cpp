// RelaydControl and RelaydData: one exchange per call over RelaydSocket.
#include "relayd_control.hpp"

#include <array>
#include <cerrno>
#include <limits>

namespace tracectl::relayd {

RelaydControl::RelaydControl(RelaydSocket socket, std::chrono::milliseconds timeout)
    : socket_(std::move(socket)), timeout_(timeout) {}

void RelaydControl::requireUsable() const {
    if (broken_)
        throw RelaydIoError(RelaydIoError::Kind::System, ENOTCONN,
                            "the control connection to " + socket_.peerName() +
                                " is unusable after an earlier error");
}

void RelaydControl::send(RelaydCommand command, const Bytes& message) {
    requireUsable();
    try {
        socket_.sendAll(message, timeout_);
    } catch (const RelaydIoError& e) {
        broken_ = true;
        throw RelaydIoError(e.kind(), e.errnoValue(), commandName(command) + ": " + e.what());
    }
}

void RelaydControl::receive(RelaydCommand command, std::span<std::byte> buffer) {
    try {
        socket_.recvExact(buffer, timeout_);
    } catch (const RelaydIoError& e) {
        broken_ = true;
        throw RelaydIoError(e.kind(), e.errnoValue(), commandName(command) + ": " + e.what());
    }
}

void RelaydControl::requireOk(RelaydCommand command, std::uint32_t retCode) {
    if (retCode != kLttngOk)
        throw RelaydRefused(commandName(command), retCode,
                            "the relay refused " + commandName(command) + " (lttng error code " +
                                std::to_string(retCode) + ")");
}

std::uint32_t RelaydControl::genericExchange(RelaydCommand command, const Bytes& message) {
    send(command, message);
    std::array<std::byte, kGenericReplySize> reply{};
    receive(command, reply);
    return decodeGenericReply(reply);
}

std::uint64_t RelaydControl::requireSession(RelaydCommand command) const {
    if (!relaySessionId_)
        throw RelaydProtocolError(commandName(command) +
                                  " needs a relay session: CREATE_SESSION first");
    return *relaySessionId_;
}

Version RelaydControl::version(std::uint32_t major, std::uint32_t minor) {
    send(RelaydCommand::Version, encodeVersion({major, minor}));
    std::array<std::byte, kVersionReplySize> reply{};
    receive(RelaydCommand::Version, reply);
    const Version theirs = decodeVersionReply(reply);
    if (theirs.major != major) {
        broken_ = true;
        throw RelaydRefused(commandName(RelaydCommand::Version), 0,
                            "the relay speaks protocol " + std::to_string(theirs.major) + "." +
                                std::to_string(theirs.minor) + ", not major " +
                                std::to_string(major));
    }
    const Version used{major, std::min(minor, theirs.minor)};
    if (used.minor < kLowestMinor) {
        broken_ = true;
        throw RelaydRefused(commandName(RelaydCommand::Version), 0,
                            "the relay speaks protocol " + std::to_string(theirs.major) + "." +
                                std::to_string(theirs.minor) + "; tracectl needs " +
                                std::to_string(kProtocolMajor) + "." +
                                std::to_string(kLowestMinor) + " or later");
    }
    negotiated_ = used;
    return used;
}

RelaydConfiguration RelaydControl::getConfiguration() {
    if (negotiated_ && negotiated_->minor < 12)
        return {};
    send(RelaydCommand::GetConfiguration, encodeGetConfiguration(0));
    std::array<std::byte, kConfigurationReplySize> reply{};
    receive(RelaydCommand::GetConfiguration, reply);
    const ConfigurationReply decoded = decodeConfigurationReply(reply);
    requireOk(RelaydCommand::GetConfiguration, decoded.retCode);
    return {decoded.flags, (decoded.flags & kConfigurationClearAllowed) != 0};
}

CreatedSession RelaydControl::createSession(const CreateSessionRequest& request) {
    send(RelaydCommand::CreateSession, encodeCreateSession(request));
    std::array<std::byte, kCreateSessionReplyHeaderSize> header{};
    receive(RelaydCommand::CreateSession, header);
    CreateSessionReplyHeader decoded;
    try {
        decoded = decodeCreateSessionReplyHeader(header);
    } catch (const RelaydProtocolError&) {
        broken_ = true; // the path that follows cannot be skipped safely
        throw;
    }
    Bytes path(decoded.outputPathLength);
    receive(RelaydCommand::CreateSession, path);
    CreatedSession created;
    try {
        created.outputPath = decodeReplyPath(path);
    } catch (const RelaydProtocolError&) {
        broken_ = true;
        throw;
    }
    requireOk(RelaydCommand::CreateSession, decoded.retCode);
    created.relaySessionId = decoded.relaySessionId;
    relaySessionId_ = created.relaySessionId;
    return created;
}

void RelaydControl::createTraceChunk(std::uint64_t chunkId, std::uint64_t creationTime,
                                     const std::optional<std::string>& overrideName) {
    requireOk(RelaydCommand::CreateTraceChunk,
              genericExchange(RelaydCommand::CreateTraceChunk,
                              encodeCreateTraceChunk(chunkId, creationTime, overrideName)));
}

std::uint64_t RelaydControl::addStream(const std::string& channelName, const std::string& pathname,
                                       std::uint64_t tracefileSize, std::uint64_t tracefileCount,
                                       std::uint64_t chunkId) {
    send(RelaydCommand::AddStream,
         encodeAddStream(channelName, pathname, tracefileSize, tracefileCount, chunkId));
    std::array<std::byte, kStreamStatusReplySize> reply{};
    receive(RelaydCommand::AddStream, reply);
    const StreamStatusReply decoded = decodeStreamStatusReply(reply);
    requireOk(RelaydCommand::AddStream, decoded.retCode);
    return decoded.handle;
}

void RelaydControl::streamsSent() {
    requireOk(RelaydCommand::StreamsSent,
              genericExchange(RelaydCommand::StreamsSent, encodeStreamsSent()));
}

void RelaydControl::sendMetadata(std::uint64_t streamHandle, std::span<const std::byte> bytes,
                                 std::uint32_t paddingBytes) {
    send(RelaydCommand::SendMetadata, encodeSendMetadata(streamHandle, bytes, paddingBytes));
}

void RelaydControl::resetMetadata(std::uint64_t streamHandle, std::uint64_t version) {
    requireOk(
        RelaydCommand::ResetMetadata,
        genericExchange(RelaydCommand::ResetMetadata, encodeResetMetadata(streamHandle, version)));
}

void RelaydControl::sendIndex(const RelaydIndex& index) {
    requireOk(RelaydCommand::SendIndex,
              genericExchange(RelaydCommand::SendIndex, encodeSendIndex(index)));
}

void RelaydControl::quiescentControl(std::uint64_t streamHandle) {
    requireOk(
        RelaydCommand::QuiescentControl,
        genericExchange(RelaydCommand::QuiescentControl, encodeQuiescentControl(streamHandle)));
}

void RelaydControl::beginDataPending() {
    const std::uint64_t id = requireSession(RelaydCommand::BeginDataPending);
    requireOk(RelaydCommand::BeginDataPending,
              genericExchange(RelaydCommand::BeginDataPending, encodeBeginDataPending(id)));
}

namespace {

/// DATA_PENDING and END_DATA_PENDING answer a boolean in ret_code.
bool booleanReply(RelaydCommand command, std::uint32_t retCode) {
    if (retCode > 1)
        throw RelaydRefused(commandName(command), retCode,
                            "the relay refused " + commandName(command) + " (reply " +
                                std::to_string(retCode) + ", not 0 or 1)");
    return retCode == 1;
}

} // namespace

bool RelaydControl::endDataPending() {
    const std::uint64_t id = requireSession(RelaydCommand::EndDataPending);
    return booleanReply(RelaydCommand::EndDataPending,
                        genericExchange(RelaydCommand::EndDataPending, encodeEndDataPending(id)));
}

bool RelaydControl::dataPending(std::uint64_t streamHandle, std::uint64_t lastNetSeqNum) {
    return booleanReply(RelaydCommand::DataPending,
                        genericExchange(RelaydCommand::DataPending,
                                        encodeDataPending(streamHandle, lastNetSeqNum)));
}

void RelaydControl::closeStream(std::uint64_t streamHandle, std::uint64_t lastNetSeqNum) {
    requireOk(RelaydCommand::CloseStream,
              genericExchange(RelaydCommand::CloseStream,
                              encodeCloseStream(streamHandle, lastNetSeqNum)));
}

std::string RelaydControl::closeTraceChunk(std::uint64_t chunkId, std::uint64_t closeTime,
                                           std::optional<TraceChunkCloseCommand> command) {
    send(RelaydCommand::CloseTraceChunk, encodeCloseTraceChunk(chunkId, closeTime, command));
    std::array<std::byte, kCloseTraceChunkReplyHeaderSize> header{};
    receive(RelaydCommand::CloseTraceChunk, header);
    CloseTraceChunkReplyHeader decoded;
    try {
        decoded = decodeCloseTraceChunkReplyHeader(header);
    } catch (const RelaydProtocolError&) {
        broken_ = true;
        throw;
    }
    Bytes path(decoded.trailingBytes());
    receive(RelaydCommand::CloseTraceChunk, path);
    requireOk(RelaydCommand::CloseTraceChunk, decoded.retCode);
    try {
        return decodeReplyPath(path);
    } catch (const RelaydProtocolError&) {
        broken_ = true;
        throw;
    }
}

bool RelaydControl::traceChunkExists(std::uint64_t chunkId) {
    send(RelaydCommand::TraceChunkExists, encodeTraceChunkExists(chunkId));
    std::array<std::byte, kTraceChunkExistsReplySize> reply{};
    receive(RelaydCommand::TraceChunkExists, reply);
    TraceChunkExistsReply decoded;
    try {
        decoded = decodeTraceChunkExistsReply(reply);
    } catch (const RelaydProtocolError&) {
        broken_ = true;
        throw;
    }
    requireOk(RelaydCommand::TraceChunkExists, decoded.retCode);
    return decoded.exists;
}

void RelaydControl::rotateStreams(std::optional<std::uint64_t> newChunkId,
                                  std::span<const StreamRotationPosition> positions) {
    requireOk(
        RelaydCommand::RotateStreams,
        genericExchange(RelaydCommand::RotateStreams, encodeRotateStreams(newChunkId, positions)));
}

RelaydData::RelaydData(RelaydSocket socket, std::chrono::milliseconds timeout)
    : socket_(std::move(socket)), timeout_(timeout) {}

void RelaydData::sendPacket(std::uint64_t streamHandle, std::uint64_t netSeqNum,
                            std::span<const std::byte> bytes, std::uint32_t paddingBytes) {
    if (broken_)
        throw RelaydIoError(RelaydIoError::Kind::System, ENOTCONN,
                            "the data connection to " + socket_.peerName() +
                                " is unusable after an earlier error");
    if (bytes.size() > std::numeric_limits<std::uint32_t>::max())
        throw RelaydProtocolError("a data packet of " + std::to_string(bytes.size()) +
                                  " bytes does not fit the relay's u32 data_size");
    const Bytes header = encodeDataHeader(streamHandle, netSeqNum,
                                          static_cast<std::uint32_t>(bytes.size()), paddingBytes);
    const std::span<const std::byte> pieces[] = {header, bytes};
    try {
        socket_.sendAll(pieces, timeout_);
    } catch (...) {
        broken_ = true;
        throw;
    }
}

} // namespace tracectl::relayd
