// The two connections a producer keeps to lttng-relayd 2.13: the control
// connection (one blocking request/reply per call) and the data connection
// (packet headers then packet bytes, no replies).
//
// Who sends what (lttng-tools v2.13.9 src/bin/lttng-sessiond/cmd.c,
// consumer.c, src/common/consumer/consumer.c, src/common/relayd/relayd.c):
// the session daemon sends VERSION, GET_CONFIGURATION, CREATE_SESSION; the
// consumer, handed both sockets, sends CREATE_TRACE_CHUNK, ADD_STREAM per
// stream, STREAMS_SENT per channel, SEND_METADATA, SEND_INDEX per data
// packet, and at stop QUIESCENT_CONTROL / BEGIN_DATA_PENDING / DATA_PENDING /
// END_DATA_PENDING, CLOSE_STREAM, CLOSE_TRACE_CHUNK; rotations add
// ROTATE_STREAMS. The data socket has no handshake of its own.
#pragma once

#include "relayd_protocol.hpp"
#include "relayd_socket.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace tracectl::relayd {

inline constexpr std::chrono::milliseconds kDefaultRelaydTimeout{10'000};

/// What CREATE_SESSION gave back.
struct CreatedSession {
    std::uint64_t relaySessionId = 0; ///< the relay's id (for BEGIN/END_DATA_PENDING)
    std::string outputPath; ///< e.g. "testhost/wire-20261203-084000", relative to relayd -o
};

/// The relay's GET_CONFIGURATION answer.
struct RelaydConfiguration {
    std::uint64_t flags = 0;
    bool clearAllowed =
        false; ///< kConfigurationClearAllowed (relayd --disallow-clear turns it off)
};

/// The control connection. Every call sends one command and reads its whole
/// reply within `timeout()` (SEND_METADATA has no reply), and throws:
///   RelaydRefused       - a well-formed reply with an error code (names the command);
///   RelaydProtocolError - a reply of the wrong shape, or an argument that cannot be encoded;
///   RelaydIoError       - the socket failed, the peer closed it, or the timeout passed.
/// After a RelaydProtocolError from a reply or any RelaydIoError the
/// connection is out of step: every later call throws RelaydIoError at once.
/// A reply never makes us allocate more than kMaxReplyPathLength bytes.
/// Not thread-safe (the consumer serialises its control socket use).
class RelaydControl {
public:
    explicit RelaydControl(RelaydSocket socket,
                           std::chrono::milliseconds timeout = kDefaultRelaydTimeout);

    /// VERSION. Offers `ours`; the relay answers its own version. Majors must
    /// match (else RelaydRefused, code 0: the relay drops the connection
    /// then); both sides then use the lower minor, which must be at least
    /// kLowestMinor (else RelaydRefused). Returns the negotiated version,
    /// also kept as negotiated().
    Version version(std::uint32_t major = kProtocolMajor, std::uint32_t minor = kProtocolMinor);

    /// A connection whose VERSION and CREATE_SESSION another process made
    /// (the daemon, for the consumer it hands the socket to): takes the
    /// negotiated version and the relay's session id as they were.
    void adoptSession(Version negotiated, std::uint64_t relaySessionId) noexcept {
        negotiated_ = negotiated;
        relaySessionId_ = relaySessionId;
    }
    /// GET_CONFIGURATION (2.12+; a 2.11 relay is not asked and reports no flags).
    RelaydConfiguration getConfiguration();

    /// CREATE_SESSION (2.11 layout). Keeps the relay's session id.
    CreatedSession createSession(const CreateSessionRequest& request);

    /// CREATE_TRACE_CHUNK. `creationTime`: seconds since the Epoch.
    void createTraceChunk(std::uint64_t chunkId, std::uint64_t creationTime,
                          const std::optional<std::string>& overrideName = std::nullopt);

    /// ADD_STREAM (2.11 layout); returns the relay's stream handle.
    std::uint64_t addStream(const std::string& channelName, const std::string& pathname,
                            std::uint64_t tracefileSize, std::uint64_t tracefileCount,
                            std::uint64_t chunkId);

    /// STREAMS_SENT: every stream of a channel was added.
    void streamsSent();

    /// SEND_METADATA: `bytes` then `paddingBytes` zeros appended by the relay
    /// to the metadata stream. No reply: a refusal shows only as the relay
    /// closing the connection (seen by the next call).
    void sendMetadata(std::uint64_t streamHandle, std::span<const std::byte> bytes,
                      std::uint32_t paddingBytes);

    /// RESET_METADATA (metadata regeneration; not for live sessions).
    void resetMetadata(std::uint64_t streamHandle, std::uint64_t version);

    /// SEND_INDEX (80-byte 2.8+ layout).
    void sendIndex(const RelaydIndex& index);

    /// QUIESCENT_CONTROL (for the metadata stream, in LTTng's data-pending loop).
    void quiescentControl(std::uint64_t streamHandle);

    /// BEGIN_DATA_PENDING / END_DATA_PENDING for the session createSession()
    /// made (RelaydProtocolError if none yet). endDataPending() returns true
    /// while data is still in flight.
    void beginDataPending();
    bool endDataPending();

    /// DATA_PENDING: true while the relay has not both the data and the index
    /// up to `lastNetSeqNum`. A reply other than 0 or 1 (the relay's -1 for
    /// an unknown stream) is RelaydRefused.
    bool dataPending(std::uint64_t streamHandle, std::uint64_t lastNetSeqNum);

    /// CLOSE_STREAM: the relay closes the stream once everything up to
    /// `lastNetSeqNum` arrived.
    void closeStream(std::uint64_t streamHandle, std::uint64_t lastNetSeqNum);

    /// CLOSE_TRACE_CHUNK; returns the path the relay gives for the closed
    /// chunk (the session's output path when it never rotated).
    std::string closeTraceChunk(std::uint64_t chunkId, std::uint64_t closeTime,
                                std::optional<TraceChunkCloseCommand> command = std::nullopt);

    /// TRACE_CHUNK_EXISTS.
    bool traceChunkExists(std::uint64_t chunkId);

    /// ROTATE_STREAMS to `newChunkId` (created before) at the given positions.
    void rotateStreams(std::optional<std::uint64_t> newChunkId,
                       std::span<const StreamRotationPosition> positions);

    std::optional<std::uint64_t> relaySessionId() const noexcept { return relaySessionId_; }
    std::optional<Version> negotiated() const noexcept { return negotiated_; }
    std::chrono::milliseconds timeout() const noexcept { return timeout_; }
    void setTimeout(std::chrono::milliseconds timeout) noexcept { timeout_ = timeout; }
    bool broken() const noexcept { return broken_; }
    const RelaydSocket& socket() const noexcept { return socket_; }
    /// Gives the connection's socket away (the daemon hands it to the
    /// consumer after CREATE_SESSION); this object is unusable after.
    RelaydSocket releaseSocket() && {
        broken_ = true;
        return std::move(socket_);
    }

private:
    /// Sends `message`, marking the connection broken if that fails (the
    /// RelaydIoError's message then starts with the command's name).
    void send(RelaydCommand command, const Bytes& message);
    /// Reads exactly buffer.size() bytes (same).
    void receive(RelaydCommand command, std::span<std::byte> buffer);
    /// Reads and decodes the fixed-size reply `Reply` to `command`; a reply
    /// that does not decode marks the connection broken.
    template <class Reply>
    Reply receiveReply(RelaydCommand command);
    /// Reads a reply's trailing path of `length` bytes (same).
    std::string receivePath(RelaydCommand command, std::uint32_t length);
    /// Sends `message` and returns its fixed-size reply.
    template <class Reply, class Message>
    Reply exchange(const Message& message);
    /// Sends `message`, whose reply is the generic one, and requires LTTNG_OK.
    template <class Message>
    void call(const Message& message);
    static void requireOk(RelaydCommand command, std::uint32_t retCode);
    void requireUsable() const;
    std::uint64_t requireSession(RelaydCommand command) const;

    RelaydSocket socket_;
    std::chrono::milliseconds timeout_;
    std::optional<Version> negotiated_;
    std::optional<std::uint64_t> relaySessionId_;
    bool broken_ = false;
};

/// The data connection: each packet is the 32-byte data header then its
/// bytes, in one send; the relay appends `paddingBytes` zeros. Throws
/// RelaydIoError (and marks itself broken) as RelaydControl does, or
/// RelaydProtocolError for a packet over 4 GiB - 1 (data_size is a u32).
class RelaydData {
public:
    explicit RelaydData(RelaydSocket socket,
                        std::chrono::milliseconds timeout = kDefaultRelaydTimeout);

    /// `netSeqNum` counts the stream's packets from 0, one per call (the
    /// consumer's next_net_seq_num); DATA_PENDING and CLOSE_STREAM take the
    /// last one sent.
    void sendPacket(std::uint64_t streamHandle, std::uint64_t netSeqNum,
                    std::span<const std::byte> bytes, std::uint32_t paddingBytes);

    std::chrono::milliseconds timeout() const noexcept { return timeout_; }
    void setTimeout(std::chrono::milliseconds timeout) noexcept { timeout_ = timeout; }
    bool broken() const noexcept { return broken_; }
    const RelaydSocket& socket() const noexcept { return socket_; }

private:
    RelaydSocket socket_;
    std::chrono::milliseconds timeout_;
    bool broken_ = false;
};

} // namespace tracectl::relayd
