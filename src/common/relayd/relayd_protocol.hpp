// The lttng-relayd 2.13 producer protocol, as bytes: encoders of the
// control commands a session daemon and a consumer send, of the data
// socket's packet header, and decoders of the relay's replies. No I/O.
//
// Source of every layout: lttng-tools v2.13.9
//   src/common/sessiond-comm/relayd.h      (the packed structs)
//   src/common/sessiond-comm/sessiond-comm.h (enum lttcomm_relayd_command)
//   src/common/relayd/relayd.c             (what the producer sends, reads)
//   src/bin/lttng-relayd/main.c, cmd-2-11.c (what the relay accepts, replies)
//
// Wire rules: every struct is packed (no padding) and every integer is
// big-endian. Each control command is the 24-byte header
//     u64 circuit_id (0), u64 data_size (payload bytes), u32 cmd, u32 cmd_version (0)
// followed by data_size payload bytes; the relay closes a control
// connection whose data_size exceeds 128 MiB
// (DEFAULT_NETWORK_RELAYD_CTRL_MAX_PAYLOAD_SIZE, configure.ac).
// Replies have no header: each command has a fixed-size reply, some with a
// trailing string whose length the fixed part gives. Every command except
// SEND_METADATA gets a reply.
//
// The encoders produce protocol 2.11+ layouts only (the relay must have
// negotiated minor >= 11); the relay's own validation limits are checked
// before encoding so that a bad argument is our error, not a dropped
// connection.
#pragma once

#include "relayd_errors.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tracectl::relayd {

/// enum lttcomm_relayd_command (sessiond-comm.h, 2.13). Values are the wire's.
enum class RelaydCommand : std::uint32_t {
    AddStream = 1,
    CreateSession = 2,
    StartData = 3,      ///< pre-2.11; not sent by tracectl
    UpdateSyncInfo = 4, ///< relayd 2.13 answers it as an unknown command
    Version = 5,
    SendMetadata = 6,
    CloseStream = 7,
    DataPending = 8,
    QuiescentControl = 9,
    BeginDataPending = 10,
    EndDataPending = 11,
    AddIndex = 12, ///< never handled by relayd 2.13 (unknown command)
    SendIndex = 13,
    CloseIndex = 14,   ///< never handled by relayd 2.13 (unknown command)
    ListSessions = 15, ///< live-viewer protocol only
    StreamsSent = 16,
    ResetMetadata = 17,
    RotateStreams = 18,
    CreateTraceChunk = 19,
    CloseTraceChunk = 20,
    TraceChunkExists = 21,
    GetConfiguration = 22,
};

/// "VERSION", "CREATE_SESSION", ... (the name without RELAYD_); "command N"
/// for a value outside the enum.
std::string commandName(RelaydCommand command);

using Bytes = std::vector<std::byte>;
using ByteView = std::span<const std::byte>;

// ---- Constants (lttng-tools 2.13) ---------------------------------------

/// RELAYD_VERSION_COMM_MAJOR / MINOR of lttng-tools 2.13.
inline constexpr std::uint32_t kProtocolMajor = 2;
inline constexpr std::uint32_t kProtocolMinor = 13;
/// The lowest minor whose layouts these encoders write (2.11: names with
/// lengths, trace chunks).
inline constexpr std::uint32_t kLowestMinor = 11;

/// LTTNG_OK (include/lttng/lttng-error.h): the success ret_code.
inline constexpr std::uint32_t kLttngOk = 10;

/// sizeof(struct lttcomm_relayd_hdr).
inline constexpr std::size_t kCommandHeaderSize = 24;
/// sizeof(struct lttcomm_relayd_data_hdr).
inline constexpr std::size_t kDataHeaderSize = 32;
/// DEFAULT_NETWORK_RELAYD_CTRL_MAX_PAYLOAD_SIZE (configure.ac): 128 MiB.
inline constexpr std::uint64_t kMaxControlPayload = 134217728;
/// LTTNG_PATH_MAX: the producer refuses reply paths of this length or more
/// (relayd.c); so do we.
inline constexpr std::uint32_t kMaxReplyPathLength = 4096;

/// Limits relayd 2.13 applies to the lengths (terminating NUL included) it
/// receives (cmd-2-11.c): LTTNG_NAME_MAX, LTTNG_HOST_NAME_MAX, LTTNG_PATH_MAX,
/// DEFAULT_STREAM_NAME_LEN (LTTNG_SYMBOL_NAME_LEN + 8), and LTTNG_NAME_MAX
/// again for a stream's path.
inline constexpr std::size_t kMaxSessionNameLength = 255;
inline constexpr std::size_t kMaxHostnameLength = 256;
inline constexpr std::size_t kMaxBasePathLength = 4096;
inline constexpr std::size_t kMaxChannelNameLength = 264;
inline constexpr std::size_t kMaxStreamPathLength = 255;

/// LTTCOMM_RELAYD_CONFIGURATION_FLAG_CLEAR_ALLOWED (relayd.h).
inline constexpr std::uint64_t kConfigurationClearAllowed = 1;

/// enum lttng_trace_chunk_command_type (src/common/trace-chunk.h).
enum class TraceChunkCloseCommand : std::uint32_t {
    MoveToCompleted = 0,
    NoOperation = 1,
    Delete = 2,
};

// ---- Header --------------------------------------------------------------

/// struct lttcomm_relayd_hdr (relayd.h), 24 bytes:
///   0 u64 circuit_id  8 u64 data_size  16 u32 cmd  20 u32 cmd_version
struct CommandHeader {
    std::uint64_t circuitId = 0;
    std::uint64_t dataSize = 0; ///< payload bytes after the header
    std::uint32_t command = 0;  ///< a RelaydCommand value (not checked)
    std::uint32_t commandVersion = 0;
};

/// The 24 header bytes then `payload`. Throws RelaydProtocolError when the
/// payload exceeds kMaxControlPayload.
Bytes encodeCommand(RelaydCommand command, ByteView payload);

/// Reads a header (exactly kCommandHeaderSize bytes, else
/// RelaydProtocolError). For peers of the protocol (tests, a relay).
CommandHeader decodeCommandHeader(ByteView bytes);

// ---- Commands --------------------------------------------------------------

/// struct lttcomm_relayd_version (relayd.h), 8 bytes: 0 u32 major, 4 u32 minor.
/// Both the VERSION command's payload and its reply.
struct Version {
    std::uint32_t major = 0;
    std::uint32_t minor = 0;
    friend bool operator==(const Version&, const Version&) = default;
};
Bytes encodeVersion(Version ours);

/// GET_CONFIGURATION: struct lttcomm_relayd_get_configuration (relayd.h),
/// 8 bytes: 0 u64 query_flags. relayd 2.13 refuses any non-zero query flag.
Bytes encodeGetConfiguration(std::uint64_t queryFlags = 0);

/// CREATE_SESSION, struct lttcomm_relayd_create_session_2_11 (relayd.h),
/// 59 bytes then the three names, each with its NUL:
///    0 u32 session_name_len   4 u32 hostname_len   8 u32 base_path_len
///   12 u32 live_timer        16 u8 snapshot        17 u8 session_name_contains_creation_time
///   18 u8[16] sessiond_uuid  34 u64 session_id     42 u64 creation_time
///   50 u8 current_chunk_id.is_set  51 u64 current_chunk_id.value
///   59 names: session_name\0 hostname\0 base_path\0
/// As relayd.c does, base_path is always sent ("" as one NUL byte).
/// relayd names the session's folder `hostname/session_name-YYYYmmdd-HHMMSS`
/// (creation_time in the relay's local time; session.c,
/// init_session_output_path_group_by_host), or `hostname/session_name` when
/// session_name_contains_creation_time, or `hostname/base_path` when a base
/// path is given.
struct CreateSessionRequest {
    std::string sessionName;       ///< non-empty, path-safe (relayd refuses a leading '.' or '/')
    std::string hostname;          ///< the tracing host, as it shows in the relay's paths
    std::string basePath;          ///< "" = none
    std::uint32_t liveTimerUs = 0; ///< live timer period, µs; 0 = not a live session
    bool snapshot = false;
    bool sessionNameContainsCreationTime = false;
    std::array<std::uint8_t, 16> sessiondUuid{}; ///< must not be all zero (relayd refuses nil)
    std::uint64_t sessionId = 0;                 ///< the producer's own session id
    std::uint64_t creationTime = 0;              ///< seconds since the Epoch
    std::optional<std::uint64_t> currentChunkId; ///< a chunk already created on this relay
};
Bytes encodeCreateSession(const CreateSessionRequest& request);

/// CREATE_TRACE_CHUNK, struct lttcomm_relayd_create_trace_chunk, 20 bytes
/// then the override name with its NUL (when given):
///   0 u64 chunk_id  8 u64 creation_timestamp (s)  16 u32 override_name_length (NUL incl., 0 =
///   none)
Bytes encodeCreateTraceChunk(std::uint64_t chunkId, std::uint64_t creationTime,
                             const std::optional<std::string>& overrideName = std::nullopt);

/// ADD_STREAM, struct lttcomm_relayd_add_stream_2_11, 32 bytes then the
/// names with their NULs:
///   0 u32 channel_name_len  4 u32 pathname_len  8 u64 tracefile_size (bytes, 0 = unbounded)
///  16 u64 tracefile_count  24 u64 trace_chunk_id  32 channel_name\0 pathname\0
/// The relay writes the stream to `<session folder>/<pathname>/<channel_name>`
/// (`_<n>` appended when tracefile_size > 0); a channel named "metadata" is
/// the metadata stream. `pathname` is relative ("ust/uid/1000/64-bit"),
/// without "../".
Bytes encodeAddStream(std::string_view channelName, std::string_view pathname,
                      std::uint64_t tracefileSize, std::uint64_t tracefileCount,
                      std::uint64_t traceChunkId);

/// STREAMS_SENT: no payload.
Bytes encodeStreamsSent();

/// SEND_METADATA: header with data_size = 12 + bytes, then
/// struct lttcomm_relayd_metadata_payload {0 u64 stream_id, 8 u32 padding_size},
/// then `metadata`. The relay appends `paddingSize` zero bytes itself; the
/// padding is not sent (consumer.c, lttng_consumer_on_read_subbuffer_mmap).
/// The relay sends NO reply to this command.
Bytes encodeSendMetadata(std::uint64_t streamHandle, ByteView metadata, std::uint32_t paddingSize);

/// RESET_METADATA, struct lttcomm_relayd_reset_metadata, 16 bytes:
///   0 u64 stream_id  8 u64 version. Refused by the relay for live sessions.
Bytes encodeResetMetadata(std::uint64_t streamHandle, std::uint64_t version);

/// SEND_INDEX, struct lttcomm_relayd_index, 80 bytes (the 2.8+ length, index
/// format 1.1), every field big-endian at 8 * its position:
///   relay_stream_id, net_seq_num, packet_size, content_size, timestamp_begin,
///   timestamp_end, events_discarded, stream_id, stream_instance_id, packet_seq_num.
/// The relay stores all but the first two in the stream's index file
/// (struct ctf_packet_index, index/ctf-index.h, after the packet's offset).
/// A packet_size of 0 is a live beacon (consumer-timer.c, send_empty_index).
struct RelaydIndex {
    std::uint64_t relayStreamId = 0;   ///< the relay's stream handle (ADD_STREAM reply)
    std::uint64_t netSeqNum = 0;       ///< the data packet's net_seq_num
    std::uint64_t packetSizeBits = 0;  ///< CTF packet_size, in bits (with padding)
    std::uint64_t contentSizeBits = 0; ///< CTF content_size, in bits
    std::uint64_t timestampBegin = 0;  ///< clock cycles
    std::uint64_t timestampEnd = 0;    ///< clock cycles
    std::uint64_t eventsDiscarded = 0;
    std::uint64_t streamId = 0;         ///< CTF stream class id
    std::uint64_t streamInstanceId = 0; ///< CTF stream instance id
    std::uint64_t packetSeqNum = 0;     ///< CTF packet_seq_num
};
inline constexpr std::size_t kIndexSize = 80;
Bytes encodeSendIndex(const RelaydIndex& index);

/// QUIESCENT_CONTROL, struct lttcomm_relayd_quiescent_control, 8 bytes:
/// 0 u64 stream_id (the metadata stream, in consumer.c).
Bytes encodeQuiescentControl(std::uint64_t streamHandle);

/// BEGIN_DATA_PENDING / END_DATA_PENDING, 8 bytes: 0 u64 session_id (the
/// relay's session id from CREATE_SESSION's reply).
Bytes encodeBeginDataPending(std::uint64_t relaySessionId);
Bytes encodeEndDataPending(std::uint64_t relaySessionId);

/// DATA_PENDING, struct lttcomm_relayd_data_pending, 16 bytes:
///   0 u64 stream_id  8 u64 last_net_seq_num (of the last packet sent)
Bytes encodeDataPending(std::uint64_t streamHandle, std::uint64_t lastNetSeqNum);

/// CLOSE_STREAM, struct lttcomm_relayd_close_stream, 16 bytes:
///   0 u64 stream_id  8 u64 last_net_seq_num
Bytes encodeCloseStream(std::uint64_t streamHandle, std::uint64_t lastNetSeqNum);

/// CLOSE_TRACE_CHUNK, struct lttcomm_relayd_close_trace_chunk, 21 bytes:
///   0 u64 chunk_id  8 u64 close_timestamp (s)  16 u8 close_command.is_set
///  17 u32 close_command.value (TraceChunkCloseCommand)
Bytes encodeCloseTraceChunk(std::uint64_t chunkId, std::uint64_t closeTime,
                            std::optional<TraceChunkCloseCommand> command);

/// TRACE_CHUNK_EXISTS, struct lttcomm_relayd_trace_chunk_exists, 8 bytes: 0 u64 chunk_id.
Bytes encodeTraceChunkExists(std::uint64_t chunkId);

/// One stream of ROTATE_STREAMS: struct lttcomm_relayd_stream_rotation_position,
/// 16 bytes: 0 u64 stream_id  8 u64 rotate_at_seq_num (ignored for metadata).
struct StreamRotationPosition {
    std::uint64_t streamHandle = 0;
    std::uint64_t rotateAtSeqNum = 0;
};

/// ROTATE_STREAMS, struct lttcomm_relayd_rotate_streams as lttng-tools
/// 2.13's producer lays it out on x86-64 (the `new_chunk_id` optional is not
/// packed, relayd.h): 20 bytes then the positions:
///   0 u32 stream_count  4 u8 new_chunk_id.is_set  5 u8[7] padding (0)
///  12 u64 new_chunk_id.value  20 positions[stream_count]
/// relayd 2.13.9 accepts this and the 0- and 3-byte padding variants
/// (main.c, relay_unpack_rotate_streams_header); unpatched x86-64 relays
/// accept only this one, hence the choice.
Bytes encodeRotateStreams(std::optional<std::uint64_t> newChunkId,
                          std::span<const StreamRotationPosition> positions);

/// The data socket's packet header, struct lttcomm_relayd_data_hdr, 32 bytes:
///   0 u64 circuit_id (0)  8 u64 stream_id  16 u64 net_seq_num
///  24 u32 data_size (bytes that follow)  28 u32 padding_size (zeros the relay appends)
/// The data socket has no handshake and no replies.
Bytes encodeDataHeader(std::uint64_t streamHandle, std::uint64_t netSeqNum, std::uint32_t dataSize,
                       std::uint32_t paddingSize);

// ---- Replies ---------------------------------------------------------------
//
// Every decoder takes exactly the bytes of its reply (or of the reply's
// fixed part) and throws RelaydProtocolError when the size is not the
// struct's or a length field is out of bounds. None checks ret_code: the
// caller decides what an error code means.

/// struct lttcomm_relayd_generic_reply, 4 bytes: 0 u32 ret_code. The reply
/// of STREAMS_SENT, SEND_INDEX, QUIESCENT_CONTROL, BEGIN/END_DATA_PENDING,
/// DATA_PENDING (0 = not pending, 1 = pending), CLOSE_STREAM, CREATE_TRACE_CHUNK,
/// RESET_METADATA, ROTATE_STREAMS, and of any unknown command (LTTNG_ERR_UNK).
inline constexpr std::size_t kGenericReplySize = 4;
std::uint32_t decodeGenericReply(ByteView bytes);

/// The VERSION reply (struct lttcomm_relayd_version, 8 bytes).
inline constexpr std::size_t kVersionReplySize = 8;
Version decodeVersionReply(ByteView bytes);

/// struct lttcomm_relayd_get_configuration_reply, 12 bytes:
///   0 u32 ret_code  4 u64 relayd_configuration_flags
struct ConfigurationReply {
    std::uint32_t retCode = 0;
    std::uint64_t flags = 0; ///< kConfigurationClearAllowed, ...
};
inline constexpr std::size_t kConfigurationReplySize = 12;
ConfigurationReply decodeConfigurationReply(ByteView bytes);

/// struct lttcomm_relayd_create_session_reply_2_11, 16 bytes then
/// output_path_length bytes of path (NUL included):
///   0 u64 session_id (the relay's)  8 u32 ret_code  12 u32 output_path_length
/// The relay sends a zero length when it refuses.
struct CreateSessionReplyHeader {
    std::uint64_t relaySessionId = 0;
    std::uint32_t retCode = 0;
    std::uint32_t outputPathLength = 0; ///< < kMaxReplyPathLength (checked)
};
inline constexpr std::size_t kCreateSessionReplyHeaderSize = 16;
CreateSessionReplyHeader decodeCreateSessionReplyHeader(ByteView bytes);

/// A reply's trailing path: the bytes must end with their only NUL. Returns
/// the path without it; an empty view gives "". Throws RelaydProtocolError.
std::string decodeReplyPath(ByteView bytes);

/// struct lttcomm_relayd_status_stream (ADD_STREAM's reply), 12 bytes:
///   0 u64 handle  8 u32 ret_code
struct StreamStatusReply {
    std::uint64_t handle = 0;
    std::uint32_t retCode = 0;
};
inline constexpr std::size_t kStreamStatusReplySize = 12;
StreamStatusReply decodeStreamStatusReply(ByteView bytes);

/// struct lttcomm_relayd_close_trace_chunk_reply, 8 bytes then path_length
/// bytes of path (NUL included) when ret_code is LTTNG_OK (the relay sends
/// no path otherwise, whatever path_length says; main.c):
///   0 u32 ret_code  4 u32 path_length
struct CloseTraceChunkReplyHeader {
    std::uint32_t retCode = 0;
    std::uint32_t pathLength = 0; ///< < kMaxReplyPathLength when retCode is LTTNG_OK (checked)
    /// The trailing bytes to read after this header.
    std::uint32_t trailingBytes() const noexcept { return retCode == kLttngOk ? pathLength : 0; }
};
inline constexpr std::size_t kCloseTraceChunkReplyHeaderSize = 8;
CloseTraceChunkReplyHeader decodeCloseTraceChunkReplyHeader(ByteView bytes);

/// struct lttcomm_relayd_trace_chunk_exists_reply, 5 bytes:
///   0 u32 ret_code  4 u8 trace_chunk_exists (0 or 1, else RelaydProtocolError)
struct TraceChunkExistsReply {
    std::uint32_t retCode = 0;
    bool exists = false;
};
inline constexpr std::size_t kTraceChunkExistsReplySize = 5;
TraceChunkExistsReply decodeTraceChunkExistsReply(ByteView bytes);

} // namespace tracectl::relayd
