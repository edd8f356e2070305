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

template <class Reply>
Reply RelaydControl::receiveReply(RelaydCommand command) {
    std::array<std::byte, kWireSize<Reply>> bytes{};
    receive(command, bytes);
    try {
        return decode<Reply>(bytes);
    } catch (const RelaydProtocolError&) {
        broken_ = true; // what follows the reply cannot be told apart
        throw;
    }
}

std::string RelaydControl::receivePath(RelaydCommand command, std::uint32_t length) {
    Bytes path(length);
    receive(command, path);
    try {
        return decodeReplyPath(path);
    } catch (const RelaydProtocolError&) {
        broken_ = true;
        throw;
    }
}

template <class Reply, class Message>
Reply RelaydControl::exchange(const Message& message) {
    send(Message::kCommand, encode(message));
    return receiveReply<Reply>(Message::kCommand);
}

template <class Message>
void RelaydControl::call(const Message& message) {
    requireOk(Message::kCommand, exchange<GenericReply>(message).retCode);
}

std::uint64_t RelaydControl::requireSession(RelaydCommand command) const {
    if (!relaySessionId_)
        throw RelaydProtocolError(commandName(command) +
                                  " needs a relay session: CREATE_SESSION first");
    return *relaySessionId_;
}

Version RelaydControl::version(std::uint32_t major, std::uint32_t minor) {
    const auto theirs = exchange<Version>(Version{major, minor});
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
    const auto reply = exchange<ConfigurationReply>(GetConfiguration{0});
    requireOk(GetConfiguration::kCommand, reply.retCode);
    return {reply.flags, (reply.flags & kConfigurationClearAllowed) != 0};
}

CreatedSession RelaydControl::createSession(const CreateSessionRequest& request) {
    const auto reply = exchange<CreateSessionReplyHeader>(request);
    CreatedSession created;
    created.outputPath = receivePath(request.kCommand, reply.outputPathLength);
    requireOk(request.kCommand, reply.retCode);
    created.relaySessionId = reply.relaySessionId;
    relaySessionId_ = created.relaySessionId;
    return created;
}

void RelaydControl::createTraceChunk(std::uint64_t chunkId, std::uint64_t creationTime,
                                     const std::optional<std::string>& overrideName) {
    call(CreateTraceChunk{chunkId, creationTime, overrideName});
}

std::uint64_t RelaydControl::addStream(const std::string& channelName, const std::string& pathname,
                                       std::uint64_t tracefileSize, std::uint64_t tracefileCount,
                                       std::uint64_t chunkId) {
    const auto reply = exchange<StreamStatusReply>(
        AddStream{channelName, pathname, tracefileSize, tracefileCount, chunkId});
    requireOk(AddStream::kCommand, reply.retCode);
    return reply.handle;
}

void RelaydControl::streamsSent() {
    call(StreamsSent{});
}

void RelaydControl::sendMetadata(std::uint64_t streamHandle, std::span<const std::byte> bytes,
                                 std::uint32_t paddingBytes) {
    send(SendMetadata::kCommand, encode(SendMetadata{streamHandle, paddingBytes, bytes}));
}

void RelaydControl::resetMetadata(std::uint64_t streamHandle, std::uint64_t version) {
    call(ResetMetadata{streamHandle, version});
}

void RelaydControl::sendIndex(const RelaydIndex& index) {
    call(index);
}

void RelaydControl::quiescentControl(std::uint64_t streamHandle) {
    call(QuiescentControl{streamHandle});
}

void RelaydControl::beginDataPending() {
    call(BeginDataPending{requireSession(BeginDataPending::kCommand)});
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
    const EndDataPending message{requireSession(EndDataPending::kCommand)};
    return booleanReply(message.kCommand, exchange<GenericReply>(message).retCode);
}

bool RelaydControl::dataPending(std::uint64_t streamHandle, std::uint64_t lastNetSeqNum) {
    const DataPending message{streamHandle, lastNetSeqNum};
    return booleanReply(message.kCommand, exchange<GenericReply>(message).retCode);
}

void RelaydControl::closeStream(std::uint64_t streamHandle, std::uint64_t lastNetSeqNum) {
    call(CloseStream{streamHandle, lastNetSeqNum});
}

std::string RelaydControl::closeTraceChunk(std::uint64_t chunkId, std::uint64_t closeTime,
                                           std::optional<TraceChunkCloseCommand> command) {
    const auto reply =
        exchange<CloseTraceChunkReplyHeader>(CloseTraceChunk{chunkId, closeTime, command});
    std::string path = receivePath(CloseTraceChunk::kCommand, reply.trailingBytes());
    requireOk(CloseTraceChunk::kCommand, reply.retCode);
    return path;
}

bool RelaydControl::traceChunkExists(std::uint64_t chunkId) {
    const auto reply = exchange<TraceChunkExistsReply>(TraceChunkExists{chunkId});
    requireOk(TraceChunkExists::kCommand, reply.retCode);
    return reply.exists;
}

void RelaydControl::rotateStreams(std::optional<std::uint64_t> newChunkId,
                                  std::span<const StreamRotationPosition> positions) {
    call(RotateStreams{newChunkId, {positions.begin(), positions.end()}});
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
    const Bytes header = encode(DataHeader{0, streamHandle, netSeqNum,
                                           static_cast<std::uint32_t>(bytes.size()), paddingBytes});
    const std::span<const std::byte> pieces[] = {header, bytes};
    try {
        socket_.sendAll(pieces, timeout_);
    } catch (...) {
        broken_ = true;
        throw;
    }
}

} // namespace tracectl::relayd
