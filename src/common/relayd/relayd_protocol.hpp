// The lttng-relayd 2.13 producer protocol, as bytes: the control commands
// a session daemon and a consumer send, the data socket's packet header and
// the relay's replies, each one struct with its field list, and encode() /
// decode() written once for all of them (common/wire_fields.hpp, big-endian).
// No I/O.
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
// Each struct below states its command (`kCommand`; a reply or the data
// header its `kName` instead), its fields in wire order (`kFields`: member,
// LTTng's name, bound) and, where the relay checks more than bounds, a
// `validate()`. A new command costs its struct, its field list and its
// method on RelaydControl.
//
// The structs are protocol 2.11+ layouts only (the relay must have
// negotiated minor >= 11); the relay's own validation limits are checked
// before encoding so that a bad argument is our error, not a dropped
// connection.
#pragma once

#include "../wire_fields.hpp"
#include "relayd_errors.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
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

/// The names of RelaydCommand's values (without RELAYD_), by value.
inline constexpr std::array<std::string_view, 23> kCommandNames = {
    "",
    "ADD_STREAM",
    "CREATE_SESSION",
    "START_DATA",
    "UPDATE_SYNC_INFO",
    "VERSION",
    "SEND_METADATA",
    "CLOSE_STREAM",
    "DATA_PENDING",
    "QUIESCENT_CONTROL",
    "BEGIN_DATA_PENDING",
    "END_DATA_PENDING",
    "ADD_INDEX",
    "SEND_INDEX",
    "CLOSE_INDEX",
    "LIST_SESSIONS",
    "STREAMS_SENT",
    "RESET_METADATA",
    "ROTATE_STREAMS",
    "CREATE_TRACE_CHUNK",
    "CLOSE_TRACE_CHUNK",
    "TRACE_CHUNK_EXISTS",
    "GET_CONFIGURATION",
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

/// DEFAULT_NETWORK_RELAYD_CTRL_MAX_PAYLOAD_SIZE (configure.ac): 128 MiB.
inline constexpr std::uint64_t kMaxControlPayload = 134217728;
/// LTTNG_PATH_MAX: the producer refuses reply paths of this length or more
/// (relayd.c); so do we.
inline constexpr std::uint32_t kMaxReplyPathLength = 4096;
/// ROTATE_STREAMS: the most positions the control limit leaves room for.
inline constexpr std::size_t kMaxRotatedStreams = (kMaxControlPayload - 20) / 16;

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

// ---- Framing ---------------------------------------------------------------

/// The bytes a struct with fixed-width fields only encodes to (0 for one
/// with a variable part).
template <class M>
inline constexpr std::size_t kWireSize = wire::fixedSize<decltype(M::kFields)>();

/// struct lttcomm_relayd_hdr (relayd.h), 24 bytes:
///   0 u64 circuit_id  8 u64 data_size  16 u32 cmd  20 u32 cmd_version
struct CommandHeader {
    static constexpr std::string_view kName = "relayd command header";
    std::uint64_t circuitId = 0;
    std::uint64_t dataSize = 0; ///< payload bytes after the header
    std::uint32_t command = 0;  ///< a RelaydCommand value (not checked)
    std::uint32_t commandVersion = 0;
    static constexpr auto kFields =
        std::tuple{wire::field("circuit_id", &CommandHeader::circuitId),
                   wire::field("data_size", &CommandHeader::dataSize),
                   wire::field("cmd", &CommandHeader::command),
                   wire::field("cmd_version", &CommandHeader::commandVersion)};
};
inline constexpr std::size_t kCommandHeaderSize = kWireSize<CommandHeader>;
static_assert(kCommandHeaderSize == 24);

/// The data socket's packet header, struct lttcomm_relayd_data_hdr, 32 bytes:
///   0 u64 circuit_id (0)  8 u64 stream_id  16 u64 net_seq_num
///  24 u32 data_size (bytes that follow)  28 u32 padding_size (zeros the relay appends)
/// The data socket has no handshake and no replies.
struct DataHeader {
    static constexpr std::string_view kName = "relayd data header";
    std::uint64_t circuitId = 0;
    std::uint64_t streamHandle = 0;
    std::uint64_t netSeqNum = 0;
    std::uint32_t dataSize = 0;
    std::uint32_t paddingSize = 0;
    static constexpr auto kFields =
        std::tuple{wire::field("circuit_id", &DataHeader::circuitId),
                   wire::field("stream_id", &DataHeader::streamHandle),
                   wire::field("net_seq_num", &DataHeader::netSeqNum),
                   wire::field("data_size", &DataHeader::dataSize),
                   wire::field("padding_size", &DataHeader::paddingSize)};
};
inline constexpr std::size_t kDataHeaderSize = kWireSize<DataHeader>;
static_assert(kDataHeaderSize == 32);

// ---- Commands --------------------------------------------------------------
//
// Each is encoded as the command header (data_size: the payload's bytes)
// then its fields. Names travel as LTTng's detached lengths: a u32 byte
// count with the NUL among the fixed fields, the bytes and the NUL after
// them (wire::lengthOf, wire::cstring), each within the length relayd 2.13
// accepts (cmd-2-11.c).

/// struct lttcomm_relayd_version (relayd.h), 8 bytes: 0 u32 major, 4 u32 minor.
/// Both the VERSION command's payload and its reply.
struct Version {
    static constexpr RelaydCommand kCommand = RelaydCommand::Version;
    std::uint32_t major = 0;
    std::uint32_t minor = 0;
    static constexpr auto kFields =
        std::tuple{wire::field("major", &Version::major), wire::field("minor", &Version::minor)};
    friend bool operator==(const Version&, const Version&) = default;
};

/// GET_CONFIGURATION: struct lttcomm_relayd_get_configuration (relayd.h),
/// 8 bytes: 0 u64 query_flags. relayd 2.13 refuses any non-zero query flag.
struct GetConfiguration {
    static constexpr RelaydCommand kCommand = RelaydCommand::GetConfiguration;
    std::uint64_t queryFlags = 0;
    static constexpr auto kFields =
        std::tuple{wire::field("query_flags", &GetConfiguration::queryFlags)};
};

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
    static constexpr RelaydCommand kCommand = RelaydCommand::CreateSession;
    std::string sessionName;       ///< non-empty, path-safe (relayd refuses a leading '.' or '/')
    std::string hostname;          ///< the tracing host, as it shows in the relay's paths
    std::string basePath;          ///< "" = none; never walks up ("../")
    std::uint32_t liveTimerUs = 0; ///< live timer period, µs; 0 = not a live session
    bool snapshot = false;
    bool sessionNameContainsCreationTime = false;
    std::array<std::uint8_t, 16> sessiondUuid{}; ///< must not be all zero (relayd refuses nil)
    std::uint64_t sessionId = 0;                 ///< the producer's own session id
    std::uint64_t creationTime = 0;              ///< seconds since the Epoch
    std::optional<std::uint64_t> currentChunkId; ///< a chunk already created on this relay
    using M = CreateSessionRequest;
    static constexpr auto kFields = std::tuple{
        wire::lengthOf("session_name_len", &M::sessionName, kMaxSessionNameLength),
        wire::lengthOf("hostname_len", &M::hostname, kMaxHostnameLength),
        wire::lengthOf("base_path_len", &M::basePath, kMaxBasePathLength),
        wire::field("live_timer", &M::liveTimerUs),
        wire::field("snapshot", &M::snapshot),
        wire::field("session_name_contains_creation_time", &M::sessionNameContainsCreationTime),
        wire::field("sessiond_uuid", &M::sessiondUuid),
        wire::field("session_id", &M::sessionId),
        wire::field("creation_time", &M::creationTime),
        wire::optional("current_chunk_id", &M::currentChunkId),
        wire::cstring("session_name", &M::sessionName),
        wire::cstring("hostname", &M::hostname),
        wire::cstring("base_path", &M::basePath)};
    void validate() const;
};

/// CREATE_TRACE_CHUNK, struct lttcomm_relayd_create_trace_chunk, 20 bytes
/// then the override name with its NUL (when given):
///   0 u64 chunk_id  8 u64 creation_timestamp (s)  16 u32 override_name_length (NUL incl., 0 =
///   none)
struct CreateTraceChunk {
    static constexpr RelaydCommand kCommand = RelaydCommand::CreateTraceChunk;
    std::uint64_t chunkId = 0;
    std::uint64_t creationTime = 0;          ///< seconds since the Epoch
    std::optional<std::string> overrideName; ///< non-empty, no '/'
    static constexpr auto kFields =
        std::tuple{wire::field("chunk_id", &CreateTraceChunk::chunkId),
                   wire::field("creation_timestamp", &CreateTraceChunk::creationTime),
                   wire::lengthOf("override_name_length", &CreateTraceChunk::overrideName,
                                  kMaxSessionNameLength),
                   wire::cstring("override_name", &CreateTraceChunk::overrideName)};
    void validate() const;
};

/// ADD_STREAM, struct lttcomm_relayd_add_stream_2_11, 32 bytes then the
/// names with their NULs:
///   0 u32 channel_name_len  4 u32 pathname_len  8 u64 tracefile_size (bytes, 0 = unbounded)
///  16 u64 tracefile_count  24 u64 trace_chunk_id  32 channel_name\0 pathname\0
/// The relay writes the stream to `<session folder>/<pathname>/<channel_name>`
/// (`_<n>` appended when tracefile_size > 0); a channel named "metadata" is
/// the metadata stream.
struct AddStream {
    static constexpr RelaydCommand kCommand = RelaydCommand::AddStream;
    std::string channelName; ///< non-empty, no '/'
    std::string pathname;    ///< relative ("ust/uid/1000/64-bit"), without "../"
    std::uint64_t tracefileSize = 0;
    std::uint64_t tracefileCount = 0;
    std::uint64_t traceChunkId = 0;
    static constexpr auto kFields = std::tuple{
        wire::lengthOf("channel_name_len", &AddStream::channelName, kMaxChannelNameLength),
        wire::lengthOf("pathname_len", &AddStream::pathname, kMaxStreamPathLength),
        wire::field("tracefile_size", &AddStream::tracefileSize),
        wire::field("tracefile_count", &AddStream::tracefileCount),
        wire::field("trace_chunk_id", &AddStream::traceChunkId),
        wire::cstring("channel_name", &AddStream::channelName),
        wire::cstring("pathname", &AddStream::pathname)};
    void validate() const;
};

/// STREAMS_SENT: no payload.
struct StreamsSent {
    static constexpr RelaydCommand kCommand = RelaydCommand::StreamsSent;
    static constexpr std::tuple<> kFields{};
};

/// SEND_METADATA: struct lttcomm_relayd_metadata_payload
/// {0 u64 stream_id, 8 u32 padding_size}, then the metadata bytes, at most
/// kMaxControlPayload - 12. The relay appends `paddingSize` zero bytes
/// itself; the padding is not sent (consumer.c,
/// lttng_consumer_on_read_subbuffer_mmap). The relay sends NO reply to this
/// command.
struct SendMetadata {
    static constexpr RelaydCommand kCommand = RelaydCommand::SendMetadata;
    std::uint64_t streamHandle = 0;
    std::uint32_t paddingSize = 0;
    ByteView metadata; ///< not owned: valid while the struct is used
    static constexpr auto kFields =
        std::tuple{wire::field("stream_id", &SendMetadata::streamHandle),
                   wire::field("padding_size", &SendMetadata::paddingSize),
                   wire::tail("metadata", &SendMetadata::metadata)};
};

/// RESET_METADATA, struct lttcomm_relayd_reset_metadata, 16 bytes:
///   0 u64 stream_id  8 u64 version. Refused by the relay for live sessions.
struct ResetMetadata {
    static constexpr RelaydCommand kCommand = RelaydCommand::ResetMetadata;
    std::uint64_t streamHandle = 0;
    std::uint64_t version = 0;
    static constexpr auto kFields =
        std::tuple{wire::field("stream_id", &ResetMetadata::streamHandle),
                   wire::field("version", &ResetMetadata::version)};
};

/// SEND_INDEX, struct lttcomm_relayd_index, 80 bytes (the 2.8+ length, index
/// format 1.1), every field big-endian at 8 * its position, in this order.
/// The relay stores all but the first two in the stream's index file
/// (struct ctf_packet_index, index/ctf-index.h, after the packet's offset).
/// A packet_size of 0 is a live beacon (consumer-timer.c, send_empty_index).
struct RelaydIndex {
    static constexpr RelaydCommand kCommand = RelaydCommand::SendIndex;
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
    using M = RelaydIndex;
    static constexpr auto kFields =
        std::tuple{wire::field("relay_stream_id", &M::relayStreamId),
                   wire::field("net_seq_num", &M::netSeqNum),
                   wire::field("packet_size", &M::packetSizeBits),
                   wire::field("content_size", &M::contentSizeBits),
                   wire::field("timestamp_begin", &M::timestampBegin),
                   wire::field("timestamp_end", &M::timestampEnd),
                   wire::field("events_discarded", &M::eventsDiscarded),
                   wire::field("stream_id", &M::streamId),
                   wire::field("stream_instance_id", &M::streamInstanceId),
                   wire::field("packet_seq_num", &M::packetSeqNum)};
};
inline constexpr std::size_t kIndexSize = kWireSize<RelaydIndex>;
static_assert(kIndexSize == 80);

/// QUIESCENT_CONTROL, struct lttcomm_relayd_quiescent_control, 8 bytes:
/// 0 u64 stream_id (the metadata stream, in consumer.c).
struct QuiescentControl {
    static constexpr RelaydCommand kCommand = RelaydCommand::QuiescentControl;
    std::uint64_t streamHandle = 0;
    static constexpr auto kFields =
        std::tuple{wire::field("stream_id", &QuiescentControl::streamHandle)};
};

/// BEGIN_DATA_PENDING / END_DATA_PENDING, struct
/// lttcomm_relayd_begin_data_pending / end_data_pending, 8 bytes:
/// 0 u64 session_id (the relay's session id from CREATE_SESSION's reply).
template <RelaydCommand C>
struct SessionCommand {
    static constexpr RelaydCommand kCommand = C;
    std::uint64_t relaySessionId = 0;
    static constexpr auto kFields =
        std::tuple{wire::field("session_id", &SessionCommand::relaySessionId)};
};
using BeginDataPending = SessionCommand<RelaydCommand::BeginDataPending>;
using EndDataPending = SessionCommand<RelaydCommand::EndDataPending>;

/// DATA_PENDING (struct lttcomm_relayd_data_pending) / CLOSE_STREAM (struct
/// lttcomm_relayd_close_stream), 16 bytes:
///   0 u64 stream_id  8 u64 last_net_seq_num (of the last packet sent)
template <RelaydCommand C>
struct StreamUpTo {
    static constexpr RelaydCommand kCommand = C;
    std::uint64_t streamHandle = 0;
    std::uint64_t lastNetSeqNum = 0;
    static constexpr auto kFields =
        std::tuple{wire::field("stream_id", &StreamUpTo::streamHandle),
                   wire::field("last_net_seq_num", &StreamUpTo::lastNetSeqNum)};
};
using DataPending = StreamUpTo<RelaydCommand::DataPending>;
using CloseStream = StreamUpTo<RelaydCommand::CloseStream>;

/// CLOSE_TRACE_CHUNK, struct lttcomm_relayd_close_trace_chunk, 21 bytes:
///   0 u64 chunk_id  8 u64 close_timestamp (s)  16 u8 close_command.is_set
///  17 u32 close_command.value (TraceChunkCloseCommand)
struct CloseTraceChunk {
    static constexpr RelaydCommand kCommand = RelaydCommand::CloseTraceChunk;
    std::uint64_t chunkId = 0;
    std::uint64_t closeTime = 0; ///< seconds since the Epoch
    std::optional<TraceChunkCloseCommand> closeCommand;
    static constexpr auto kFields = std::tuple{
        wire::field("chunk_id", &CloseTraceChunk::chunkId),
        wire::field("close_timestamp", &CloseTraceChunk::closeTime),
        wire::optional("close_command", &CloseTraceChunk::closeCommand,
                       TraceChunkCloseCommand::MoveToCompleted, TraceChunkCloseCommand::Delete)};
};

/// TRACE_CHUNK_EXISTS, struct lttcomm_relayd_trace_chunk_exists, 8 bytes: 0 u64 chunk_id.
struct TraceChunkExists {
    static constexpr RelaydCommand kCommand = RelaydCommand::TraceChunkExists;
    std::uint64_t chunkId = 0;
    static constexpr auto kFields = std::tuple{wire::field("chunk_id", &TraceChunkExists::chunkId)};
};

/// One stream of ROTATE_STREAMS: struct lttcomm_relayd_stream_rotation_position,
/// 16 bytes: 0 u64 stream_id  8 u64 rotate_at_seq_num (ignored for metadata).
struct StreamRotationPosition {
    std::uint64_t streamHandle = 0;
    std::uint64_t rotateAtSeqNum = 0;
    static constexpr auto kFields =
        std::tuple{wire::field("stream_id", &StreamRotationPosition::streamHandle),
                   wire::field("rotate_at_seq_num", &StreamRotationPosition::rotateAtSeqNum)};
};

/// ROTATE_STREAMS, struct lttcomm_relayd_rotate_streams as lttng-tools
/// 2.13's producer lays it out on x86-64 (the `new_chunk_id` optional is not
/// packed, relayd.h): 20 bytes then the positions:
///   0 u32 stream_count  4 u8 new_chunk_id.is_set  5 u8[7] padding (0)
///  12 u64 new_chunk_id.value  20 positions[stream_count]
/// relayd 2.13.9 accepts this and the 0- and 3-byte padding variants
/// (main.c, relay_unpack_rotate_streams_header); unpatched x86-64 relays
/// accept only this one, hence the choice.
struct RotateStreams {
    static constexpr RelaydCommand kCommand = RelaydCommand::RotateStreams;
    std::optional<std::uint64_t> newChunkId;
    std::vector<StreamRotationPosition> positions; ///< at most kMaxRotatedStreams
    static constexpr auto kFields =
        std::tuple{wire::countOf("stream_count", &RotateStreams::positions, kMaxRotatedStreams),
                   wire::optional<7>("new_chunk_id", &RotateStreams::newChunkId),
                   wire::elements("positions", &RotateStreams::positions)};
};

// ---- Replies ---------------------------------------------------------------
//
// A reply has no header: each command has a fixed-size reply, two with a
// trailing path whose length the fixed part gives (decodeReplyPath). None
// of the checks looks at ret_code's meaning: the caller decides what an
// error code means.

namespace detail {
/// Throws RelaydProtocolError: `name`'s trailing path of `length` bytes is
/// kMaxReplyPathLength or more.
[[noreturn]] void pathTooLong(std::string_view name, std::uint32_t length);
} // namespace detail

/// struct lttcomm_relayd_generic_reply, 4 bytes: 0 u32 ret_code. The reply
/// of STREAMS_SENT, SEND_INDEX, QUIESCENT_CONTROL, BEGIN/END_DATA_PENDING,
/// DATA_PENDING (0 = not pending, 1 = pending), CLOSE_STREAM, CREATE_TRACE_CHUNK,
/// RESET_METADATA, ROTATE_STREAMS, and of any unknown command (LTTNG_ERR_UNK).
struct GenericReply {
    static constexpr std::string_view kName = "relayd generic reply";
    std::uint32_t retCode = 0;
    static constexpr auto kFields = std::tuple{wire::field("ret_code", &GenericReply::retCode)};
};

/// struct lttcomm_relayd_get_configuration_reply, 12 bytes:
///   0 u32 ret_code  4 u64 relayd_configuration_flags
struct ConfigurationReply {
    static constexpr std::string_view kName = "relayd GET_CONFIGURATION reply";
    std::uint32_t retCode = 0;
    std::uint64_t flags = 0; ///< kConfigurationClearAllowed, ...
    static constexpr auto kFields =
        std::tuple{wire::field("ret_code", &ConfigurationReply::retCode),
                   wire::field("relayd_configuration_flags", &ConfigurationReply::flags)};
};

/// struct lttcomm_relayd_create_session_reply_2_11, 16 bytes then
/// output_path_length bytes of path (NUL included):
///   0 u64 session_id (the relay's)  8 u32 ret_code  12 u32 output_path_length
/// The relay sends a zero length when it refuses.
struct CreateSessionReplyHeader {
    static constexpr std::string_view kName = "relayd CREATE_SESSION reply";
    std::uint64_t relaySessionId = 0;
    std::uint32_t retCode = 0;
    std::uint32_t outputPathLength = 0; ///< < kMaxReplyPathLength (checked)
    static constexpr auto kFields =
        std::tuple{wire::field("session_id", &CreateSessionReplyHeader::relaySessionId),
                   wire::field("ret_code", &CreateSessionReplyHeader::retCode),
                   wire::field("output_path_length", &CreateSessionReplyHeader::outputPathLength)};
    void validate() const {
        if (outputPathLength >= kMaxReplyPathLength)
            detail::pathTooLong(kName, outputPathLength);
    }
};

/// struct lttcomm_relayd_status_stream (ADD_STREAM's reply), 12 bytes:
///   0 u64 handle  8 u32 ret_code
struct StreamStatusReply {
    static constexpr std::string_view kName = "relayd ADD_STREAM reply";
    std::uint64_t handle = 0;
    std::uint32_t retCode = 0;
    static constexpr auto kFields =
        std::tuple{wire::field("handle", &StreamStatusReply::handle),
                   wire::field("ret_code", &StreamStatusReply::retCode)};
};

/// struct lttcomm_relayd_close_trace_chunk_reply, 8 bytes then path_length
/// bytes of path (NUL included) when ret_code is LTTNG_OK (the relay sends
/// no path otherwise, whatever path_length says; main.c):
///   0 u32 ret_code  4 u32 path_length
struct CloseTraceChunkReplyHeader {
    static constexpr std::string_view kName = "relayd CLOSE_TRACE_CHUNK reply";
    std::uint32_t retCode = 0;
    std::uint32_t pathLength = 0; ///< < kMaxReplyPathLength when retCode is LTTNG_OK (checked)
    /// The trailing bytes to read after this header.
    std::uint32_t trailingBytes() const noexcept { return retCode == kLttngOk ? pathLength : 0; }
    static constexpr auto kFields =
        std::tuple{wire::field("ret_code", &CloseTraceChunkReplyHeader::retCode),
                   wire::field("path_length", &CloseTraceChunkReplyHeader::pathLength)};
    void validate() const {
        if (retCode == kLttngOk && pathLength >= kMaxReplyPathLength)
            detail::pathTooLong(kName, pathLength);
    }
};

/// struct lttcomm_relayd_trace_chunk_exists_reply, 5 bytes:
///   0 u32 ret_code  4 u8 trace_chunk_exists (0 or 1, else RelaydProtocolError)
struct TraceChunkExistsReply {
    static constexpr std::string_view kName = "relayd TRACE_CHUNK_EXISTS reply";
    std::uint32_t retCode = 0;
    bool exists = false;
    static constexpr auto kFields =
        std::tuple{wire::field("ret_code", &TraceChunkExistsReply::retCode),
                   wire::field("trace_chunk_exists", &TraceChunkExistsReply::exists)};
};

/// A reply's trailing path: the bytes must end with their only NUL. Returns
/// the path without it; an empty view gives "". Throws RelaydProtocolError.
std::string decodeReplyPath(ByteView bytes);

// ---- The codec, for every struct above --------------------------------------

template <class M>
concept Command = requires {
    M::kCommand;
};

/// A command's name, or a reply's / header's kName: what errors call it.
template <class M>
constexpr std::string_view nameOf() {
    if constexpr (Command<M>)
        return kCommandNames[static_cast<std::size_t>(M::kCommand)];
    else
        return M::kName;
}

namespace detail {
using Writer = wire::BufferWriter<std::endian::big>;
using Reader = wire::Reader<std::endian::big, RelaydProtocolError>;
/// Throws RelaydProtocolError when `payload` exceeds kMaxControlPayload.
void checkPayload(std::string_view name, std::size_t payload);
/// Throws RelaydProtocolError: `name` needs `expected` bytes, not `size`.
[[noreturn]] void wrongSize(std::size_t size, std::size_t expected, std::string_view name);
} // namespace detail

/// A command: the 24-byte command header (data_size = the payload's bytes)
/// then its fields; the data header (or a reply, for peers): its fields.
/// Throws RelaydProtocolError, before writing anything, for a value out of
/// its bound, a name the relay would refuse (validate()) or a payload over
/// kMaxControlPayload.
template <class M>
Bytes encode(const M& message) {
    if constexpr (requires { message.validate(); })
        message.validate();
    const std::size_t payload = wire::wireSize(message, M::kFields);
    std::size_t header = 0;
    if constexpr (Command<M>) {
        detail::checkPayload(nameOf<M>(), payload);
        header = kCommandHeaderSize;
    }
    Bytes out(header + payload);
    detail::Writer w(out);
    if constexpr (Command<M>) {
        const CommandHeader h{0, payload, static_cast<std::uint32_t>(M::kCommand), 0};
        wire::putFields<RelaydProtocolError>(w, h, CommandHeader::kFields, CommandHeader::kName);
    }
    wire::putFields<RelaydProtocolError>(w, message, M::kFields, nameOf<M>());
    if (w.left() != 0)
        throw std::logic_error("relayd encode: fewer bytes than wireSize() said");
    return out;
}

/// Reads exactly `bytes` as an M: a reply, a header, or (for peers of the
/// protocol: tests, a relay) a command's payload. A struct of fixed-width
/// fields needs exactly its size. Throws RelaydProtocolError for a size,
/// bound or validate() check that fails. A SendMetadata's metadata views
/// `bytes`.
template <class M>
M decode(ByteView bytes) {
    if constexpr (kWireSize<M> != 0)
        if (bytes.size() != kWireSize<M>)
            detail::wrongSize(bytes.size(), kWireSize<M>, nameOf<M>());
    detail::Reader r(bytes.data(), bytes.size());
    M message;
    wire::getFields(r, message, M::kFields, nameOf<M>());
    r.finish();
    if constexpr (requires { message.validate(); })
        message.validate();
    return message;
}

} // namespace tracectl::relayd
