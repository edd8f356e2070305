// The daemon <-> consumer protocol (tracectld <-> tracectl-consumerd).
//
// Transport: one connected AF_UNIX SOCK_STREAM socket (a socketpair); the
// consumer has its end as stdin. The daemon sends requests, each with a
// request id of its choosing (non-zero); the consumer answers each with
// exactly one reply carrying the same id, in the order the requests came.
// The daemon may send the next requests before the replies
// (pipelining), and matches replies by id, so a reply that comes after the
// daemon stopped waiting for it is recognised and dropped, never taken for
// another request's answer. The one exception:
// RotationCompleted, which the consumer sends on its own (request id 0) when
// a rotation it accepted is over; it may come before or after any reply,
// never inside a frame.
//
// Frame: a 16-byte header then `length` payload bytes, all integers
// little-endian whatever the host:
//
//     u32 magic   = kMagic ("TCCP" on the wire)
//     u16 type    = MessageType
//     u16 flags   = 0 (anything else is rejected)
//     u32 length  = payload bytes, <= kMaxPayload
//     u32 request = the request's id; a reply carries its request's; 0 for
//                   unsolicited messages
//
// Payload: the fields of the message's struct below, in the order of its
// `kFields` (common/wire_fields.hpp), little-endian: u8/u16/u32/u64 as
// themselves, i64 as two's complement u64, bool as one byte 0 or 1, enums
// at their stated width within their range, `text` as u32 byte count then
// the bytes (no terminator; NUL bytes are rejected), `bytes` the same with
// NUL bytes allowed, `list` as u32 count then the elements, uuid as 16 raw
// bytes; each string and list within its bound. Decoding is strict: unknown
// types, non-zero flags, short or long payloads (every byte must be
// consumed), out-of-range enums/bools, over-long or unsafe strings, and any
// file descriptor attached to a frame (the frames carry none) are all
// ProtocolError. Encoding refuses the same, so nothing invalid is sent.
//
// Each message is one struct that states its wire type (`kType`), its name
// (`kName`) and its fields (`kFields`: member, wire name, bound); encoding,
// decoding, type lookup and names are generic (consumer_protocol.cpp), and
// so is dispatch: the consumer visits the Message variant with one handler
// per request (consumer/consumer.cpp). A new message costs its struct with
// those three, its place in the Message variant and in MessageType, its
// semantic checks if any (validate() in consumer_protocol.cpp), its typed
// method on the daemon's ConsumerConnection and its handler in the
// consumer.
//
// Conversation:
//   daemon: Hello{version}           consumer: HelloReply, or Error(VersionMismatch)
//   daemon: CreateChannel{...}, then one byte carrying (SCM_RIGHTS) one end
//       of a socketpair of its own, the channel's objects socket
//                                    consumer: on the objects socket,
//       liblttng-ust-ctl's own byte stream: lttng_ust_ctl_send_channel_to_
//       sessiond() and n times lttng_ust_ctl_send_stream_to_sessiond(), then a
//       NULL stream, and closes it; then ChannelCreated{key, n} on the command
//       socket. The daemon reads the objects with
//       lttng_ust_ctl_recv_channel_from_consumer() and
//       lttng_ust_ctl_recv_stream_from_consumer() until -LTTNG_UST_ERR_NOENT
//       once ChannelCreated is there (all of it is queued by then). Or Error,
//       and the objects socket is closed empty. The command socket thus only
//       ever carries frames, and no request waits behind another's byte
//       stream.
//   daemon: PushMetadata / FlushChannel / DestroyChannel / Shutdown
//                                    consumer: Ok or Error.
//   daemon: Rotate{id, ...}          consumer: Ok (the rotation is under way) or
//       Error; later, unsolicited, RotationCompleted{id, ok, message} once every
//       data stream has passed its sampled position (or was drained and
//       closed), RotateMetadata{id} has switched the metadata, and the old
//       chunk was moved to its archive folder.
//   daemon: RotateMetadata{id}, once Rotate{id}'s Ok came   consumer: Ok
//       (the old chunk's metadata is whole; RotationCompleted may follow).
//   daemon: RecordSnapshot{id, packetsPerStream}, then one byte carrying the
//       snapshot folder's fd (SCM_RIGHTS)   consumer: Ok once the data
//       streams are written, or Error. Then daemon: SnapshotMetadata{id}
//       consumer: Ok once the metadata is written too.
//   daemon: DeclareLayouts{key, abi, layouts}, whenever a
//       channel's context or new events are registered: what the consumer
//       needs to step over the channel's event records and count them
//                                    consumer: Ok or Error.
//   daemon: CreateKernelChannel{...}, then, for a data channel,
//       one byte per group of at most kMaxPassedFds of its fds (SCM_RIGHTS):
//       each CPU's `trace_pipe_raw`, in `cpus` order, then each CPU's
//       `stats`, in the same order
//                                    consumer: Ok or Error.
//   daemon: DeclareKernelEvents{key, conversions}: how the
//       kernel channel's ftrace records become CTF event records; a data
//       channel reads its buffers only from its first one on (tracing may
//       be on already: a restarted daemon's takeover)
//                                    consumer: Ok or Error.
//   daemon: AttachIpProbes{key, sendId, receiveId}, then one
//       byte carrying two fds (SCM_RIGHTS): the `ip` provider's BPF ring
//       buffer map, then its counters map (src/common/ip_probe_abi.h)
//                                    consumer: Ok or Error.
//   daemon: AttachSyscallStrings{key}, then one byte carrying
//       two fds (SCM_RIGHTS): the system-call string program's BPF ring
//       buffer map, then its counters map
//       (src/common/syscall_string_abi.h)
//                                    consumer: Ok or Error.
//   daemon: Rotate{..., discard = true}: Session.Clear of a
//       normal session; as any Rotate, but the old chunk is deleted instead
//       of archived.
//   daemon: ClearBuffers{}, snapshot consumers only
//                                    consumer: Ok once every data stream's
//       buffer content is discarded, or Error.
//   daemon: Adopt{version}, instead of Hello, on a connection
//       a restarted daemon took from systemd's fd store: the consumer
//       drains and closes every channel into the current trace chunk (a
//       rotation under way completes on the way) and answers AdoptReply with
//       that chunk, which the daemon then rotates into an archive before it
//       makes new channels; a snapshot consumer keeps its user-space
//       channels instead (their trace goes to a folder of its own in the
//       next snapshots) and closes its kernel ones; or Error(VersionMismatch).
//   daemon: WatchChunkSize{bytes}: the session rotates on
//       size; the consumer sends Statistics at once when its channels'
//       chunkBytes reach `bytes` in all (0: no longer watched)
//                                    consumer: Ok.
//   consumer, unsolicited: Statistics{...}, at most once a
//       second while its channels write something (or while
//       the apps write into the ring buffers, bytesProduced, though no
//       sub-buffer is complete yet), and at once before the
//       reply to FlushChannel, DestroyChannel and Shutdown and before
//       RotationCompleted, so that the figures a daemon holds once a Stop,
//       a channel's end or a rotation is answered are final for it.
// After Shutdown's Ok the consumer exits.
#pragma once

#include "error.hpp"
#include "record_layout.hpp"
#include "wire_fields.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <variant>
#include <vector>

namespace tracectl::consumer_protocol {

inline constexpr std::uint32_t kMagic = 0x50434354; // bytes 'T' 'C' 'C' 'P'
/// The protocol's version, checked by Hello and Adopt; what each version
/// added is in CHANGELOG.md.
inline constexpr std::uint32_t kVersion = 19;
inline constexpr std::size_t kHeaderSize = 16;
/// Largest payload accepted (1 MiB); the daemon splits bigger metadata.
inline constexpr std::size_t kMaxPayload = std::size_t{1} << 20;
/// Largest PushMetadata::bytes that fits kMaxPayload.
inline constexpr std::size_t kMaxMetadataChunk = kMaxPayload - 20;
/// Longest channel name (bytes); the stream file is "<name>_<cpu>".
inline constexpr std::size_t kMaxChannelName = 200;
/// Longest trace-relative output directory (bytes).
inline constexpr std::size_t kMaxOutputDir = 1024;
/// Longest version string / error message (bytes).
inline constexpr std::size_t kMaxText = 4096;

enum class MessageType : std::uint16_t {
    // daemon -> consumer
    Hello = 0x01,
    CreateChannel = 0x02,
    PushMetadata = 0x03,
    FlushChannel = 0x04,
    DestroyChannel = 0x05,
    Shutdown = 0x06,
    Rotate = 0x07,
    RecordSnapshot = 0x08,
    RotateMetadata = 0x09,
    SnapshotMetadata = 0x0A,
    DeclareLayouts = 0x0B,
    CreateKernelChannel = 0x0C,
    DeclareKernelEvents = 0x0D,
    AttachIpProbes = 0x0E,
    ClearBuffers = 0x0F,
    AttachRelayd = 0x10,
    RecordSnapshotToRelay = 0x11,
    Adopt = 0x12,
    WatchChunkSize = 0x13,
    AttachSyscallStrings = 0x14,
    ProducerGone = 0x15,
    // consumer -> daemon
    Ok = 0x81,
    Error = 0x82,
    HelloReply = 0x83,
    ChannelCreated = 0x84,
    RotationCompleted = 0x85, ///< unsolicited (see above)
    Statistics = 0x86,        ///< unsolicited (see above)
    OutputFailed = 0x87,      ///< unsolicited (see above)
    AdoptReply = 0x88,
};

/// Opens the conversation.
struct Hello {
    static constexpr MessageType kType = MessageType::Hello;
    static constexpr std::string_view kName = "Hello";
    std::uint32_t protocolVersion = kVersion;
    std::string version; ///< the daemon's package version, for logs
    static constexpr auto kFields =
        std::tuple{wire::field("protocolVersion", &Hello::protocolVersion),
                   wire::text("version", &Hello::version, kMaxText)};
    bool operator==(const Hello&) const = default;
};

/// Answer to Hello.
struct HelloReply {
    static constexpr MessageType kType = MessageType::HelloReply;
    static constexpr std::string_view kName = "HelloReply";
    std::uint32_t protocolVersion = kVersion;
    std::uint32_t pid = 0; ///< the consumer's pid (as it sees itself)
    std::string version;   ///< the consumer's package version
    static constexpr auto kFields =
        std::tuple{wire::field("protocolVersion", &HelloReply::protocolVersion),
                   wire::field("pid", &HelloReply::pid),
                   wire::text("version", &HelloReply::version, kMaxText)};
    bool operator==(const HelloReply&) const = default;
};

/// A restarted daemon takes the connection over (see above): instead of
/// Hello.
struct Adopt {
    static constexpr MessageType kType = MessageType::Adopt;
    static constexpr std::string_view kName = "Adopt";
    std::uint32_t protocolVersion = kVersion;
    std::string version; ///< the new daemon's package version, for logs
    static constexpr auto kFields =
        std::tuple{wire::field("protocolVersion", &Adopt::protocolVersion),
                   wire::text("version", &Adopt::version, kMaxText)};
    bool operator==(const Adopt&) const = default;
};

/// Answer to Adopt, once every channel is drained and closed.
struct AdoptReply {
    static constexpr MessageType kType = MessageType::AdoptReply;
    static constexpr std::string_view kName = "AdoptReply";
    std::uint32_t protocolVersion = kVersion;
    std::uint32_t pid = 0;     ///< the consumer's pid (as it sees itself)
    std::string version;       ///< the consumer's package version
    std::uint64_t nextKey = 1; ///< above every channel key the consumer was given
    /// The trace chunk the consumer writes: its index (0 until the first
    /// rotation, then Rotate.chunkIndex + 1), its folder relative to the
    /// output root ("" for the root itself, else Rotate.newChunk), and when
    /// it began (s since the Epoch: the consumer's start, or the rotation's
    /// boundaryTime).
    std::uint64_t chunkIndex = 0;
    std::string chunk;
    std::uint64_t chunkBegin = 0;
    std::uint32_t channelsClosed = 0; ///< channels drained and closed by the Adopt
    /// A network session's consumer: its AttachRelayd.outputPath (the
    /// relay's folder of the session, where its archives go); "" otherwise.
    std::string relayOutputPath;
    static constexpr auto kFields =
        std::tuple{wire::field("protocolVersion", &AdoptReply::protocolVersion),
                   wire::field("pid", &AdoptReply::pid),
                   wire::text("version", &AdoptReply::version, kMaxText),
                   wire::field("nextKey", &AdoptReply::nextKey),
                   wire::field("chunkIndex", &AdoptReply::chunkIndex),
                   wire::text("chunk", &AdoptReply::chunk, kMaxOutputDir),
                   wire::field("chunkBegin", &AdoptReply::chunkBegin),
                   wire::field("channelsClosed", &AdoptReply::channelsClosed),
                   wire::text("relayOutputPath", &AdoptReply::relayOutputPath, kMaxOutputDir)};
    bool operator==(const AdoptReply&) const = default;
};

/// u8 on the wire.
enum class ChannelKind : std::uint8_t { Data = 0, Metadata = 1 };

/// Creates a ring-buffer channel (lttng_ust_ctl_create_channel) and its
/// streams, and the output files under `<output root>/<outputDir>/`.
struct CreateChannel {
    static constexpr MessageType kType = MessageType::CreateChannel;
    static constexpr std::string_view kName = "CreateChannel";
    std::uint64_t key = 0; ///< daemon-chosen, unique among live channels
    ChannelKind kind = ChannelKind::Data;
    /// Trace-relative directory, e.g. "ust/uid/1000/64-bit": relative, '/'
    /// separated, no empty, "." or ".." component, no control character.
    std::string outputDir;
    /// Channel name (stream files "<name>_<cpu>"; ignored for metadata, whose
    /// file is "metadata"): 1..kMaxChannelName bytes, no '/', no control
    /// character, not starting with '.'.
    std::string name;
    std::uint64_t subbufSize = 0;  ///< bytes, power of two, >= 4096
    std::uint64_t subbufCount = 0; ///< power of two, 1 .. 2^20
    bool overwrite = false;        ///< flight-recorder mode (data channels only)
    std::uint32_t switchTimerUsec = 0;
    std::uint32_t readTimerUsec = 0;
    std::uint32_t monitorTimerUsec = 0;   ///< accepted, not used yet
    std::int64_t blockingTimeoutUsec = 0; ///< 0 never block, -1 forever, >0 usec
    std::uint32_t chanId = 0;             ///< CTF stream class id (attr.chan_id)
    std::array<std::uint8_t, 16> traceUuid{};
    static constexpr auto kFields = std::tuple{
        wire::field("key", &CreateChannel::key),
        wire::field("kind", &CreateChannel::kind, ChannelKind::Data, ChannelKind::Metadata),
        wire::text("outputDir", &CreateChannel::outputDir, kMaxOutputDir),
        wire::text("name", &CreateChannel::name, kMaxChannelName),
        wire::field("subbufSize", &CreateChannel::subbufSize),
        wire::field("subbufCount", &CreateChannel::subbufCount),
        wire::field("overwrite", &CreateChannel::overwrite),
        wire::field("switchTimerUsec", &CreateChannel::switchTimerUsec),
        wire::field("readTimerUsec", &CreateChannel::readTimerUsec),
        wire::field("monitorTimerUsec", &CreateChannel::monitorTimerUsec),
        wire::field("blockingTimeoutUsec", &CreateChannel::blockingTimeoutUsec),
        wire::field("chanId", &CreateChannel::chanId),
        wire::field("traceUuid", &CreateChannel::traceUuid)};
    bool operator==(const CreateChannel&) const = default;
};

/// Answer to CreateChannel, followed by the ust-ctl objects (see above).
struct ChannelCreated {
    static constexpr MessageType kType = MessageType::ChannelCreated;
    static constexpr std::string_view kName = "ChannelCreated";
    std::uint64_t key = 0;
    std::uint32_t streamCount = 0; ///< streams that follow (metadata: 1)
    static constexpr auto kFields =
        std::tuple{wire::field("key", &ChannelCreated::key),
                   wire::field("streamCount", &ChannelCreated::streamCount)};
    bool operator==(const ChannelCreated&) const = default;
};

/// Appends TSDL text to a metadata channel's cache and writes it to the
/// `metadata` file as packets. `offset` is where `bytes` start in the whole
/// metadata text: it must equal what was pushed before (append only).
struct PushMetadata {
    static constexpr MessageType kType = MessageType::PushMetadata;
    static constexpr std::string_view kName = "PushMetadata";
    std::uint64_t key = 0;
    std::uint64_t offset = 0;
    std::string bytes;
    static constexpr auto kFields = std::tuple{
        wire::field("key", &PushMetadata::key), wire::field("offset", &PushMetadata::offset),
        wire::text("bytes", &PushMetadata::bytes, kMaxMetadataChunk)};
    bool operator==(const PushMetadata&) const = default;
};

/// Closes the current packet of every stream, even empty
/// (lttng_ust_ctl_flush_buffer(stream, 0)), and writes all complete packets.
/// Used at stop, after the apps are quiescent.
struct FlushChannel {
    static constexpr MessageType kType = MessageType::FlushChannel;
    static constexpr std::string_view kName = "FlushChannel";
    std::uint64_t key = 0;
    static constexpr auto kFields = std::tuple{wire::field("key", &FlushChannel::key)};
    bool operator==(const FlushChannel&) const = default;
};

/// Flushes, drains and closes a channel's streams and files, then frees the
/// buffers.
struct DestroyChannel {
    static constexpr MessageType kType = MessageType::DestroyChannel;
    static constexpr std::string_view kName = "DestroyChannel";
    std::uint64_t key = 0;
    static constexpr auto kFields = std::tuple{wire::field("key", &DestroyChannel::key)};
    bool operator==(const DestroyChannel&) const = default;
};

/// A size-based rotation schedule (tracectl enable-rotation --size): the
/// consumer sends Statistics at once, instead of within its one-second
/// period, when the sum of its channels' ChannelFigures::chunkBytes (every
/// domain's streams and metadata in the current trace chunk) reaches `bytes`;
/// then once per trace chunk, watched again when a rotation completes. 0: not
/// watched. A later WatchChunkSize replaces it.
struct WatchChunkSize {
    static constexpr MessageType kType = MessageType::WatchChunkSize;
    static constexpr std::string_view kName = "WatchChunkSize";
    std::uint64_t bytes = 0;
    static constexpr auto kFields = std::tuple{wire::field("bytes", &WatchChunkSize::bytes)};
    bool operator==(const WatchChunkSize&) const = default;
};

/// Drains and closes every channel; the consumer answers Ok and exits 0.
/// `deleteChunk`: the current chunk was opened by a rotation (or a clear) of
/// a stopped session and nothing was recorded since, so it is deleted, not
/// left as an empty trace (locally its folder goes; a relay's chunk is closed
/// with DELETE instead of staying where it is). LTTng opens no chunk at all
/// for a stopped session's rotation (lttng-tools cmd.cpp cmd_rotate_session:
/// a new chunk only if the session is active).
struct Shutdown {
    static constexpr MessageType kType = MessageType::Shutdown;
    static constexpr std::string_view kName = "Shutdown";
    bool deleteChunk = false;
    static constexpr auto kFields = std::tuple{wire::field("deleteChunk", &Shutdown::deleteChunk)};
    bool operator==(const Shutdown&) const = default;
};

/// Closes the current trace chunk and opens `newChunk`: channels created from
/// now on, and every stream once it has been read past the position it had
/// produced when this request arrived (after a flush), write below
/// `<output root>/<newChunk>/`; the metadata of every trace is written whole
/// into the new chunk at once. When every stream has switched (a stream
/// drained and closed meanwhile counts too), the old chunk is moved to
/// `<output root>/<archive>/` (`oldChunk` "" is the output root itself: its
/// "ust" folder moves) and RotationCompleted{id} follows. One rotation at a
/// time (a second one is InvalidArgument). `discard` (Session.Clear): the old
/// chunk's files are deleted instead of moved, `archive` is then only the
/// name the chunk would have had (nothing is made there). newChunk and
/// archive are safe relative dirs (isSafeRelativeDir), oldChunk is "" or one.
/// (LTTng clears a session with a rotation whose closed chunk gets
/// LTTNG_TRACE_CHUNK_COMMAND_TYPE_DELETE instead of MOVE_TO_COMPLETED:
/// lttng-tools 2.13 clear.c, cmd.c cmd_rotate_session.) A network session's
/// consumer (AttachRelayd) writes nothing locally and ignores the three
/// folders: it makes chunk `chunkIndex + 1` on the relay (CREATE_TRACE_CHUNK
/// at `boundaryTime`), moves each relay stream into it (ROTATE_STREAMS), and
/// once every stream has switched and the relay holds their data, closes
/// chunk `chunkIndex` at `boundaryTime` with MOVE_TO_COMPLETED (DELETE with
/// `discard`); the relay then archives it as
/// `<session folder>/archives/<begin>-<boundaryTime>-<chunkIndex>` (chunk
/// names, lttng-tools 2.13 trace-chunk.c generate_chunk_name), which the
/// daemon's `archive` must name too. `chunkIndex` must be the relay chunk the
/// consumer writes now (AttachRelayd.chunkId for the first rotation), else
/// InvalidArgument.
struct Rotate {
    static constexpr MessageType kType = MessageType::Rotate;
    static constexpr std::string_view kName = "Rotate";
    std::uint64_t id = 0;
    std::string oldChunk;
    std::string newChunk;
    std::string archive;
    bool discard = false;
    std::uint64_t chunkIndex = 0;   ///< the chunk being closed; the new one is chunkIndex + 1
    std::uint64_t boundaryTime = 0; ///< s since the Epoch: the old chunk's end, the new one's begin
    static constexpr auto kFields =
        std::tuple{wire::field("id", &Rotate::id),
                   wire::text("oldChunk", &Rotate::oldChunk, kMaxOutputDir),
                   wire::text("newChunk", &Rotate::newChunk, kMaxOutputDir),
                   wire::text("archive", &Rotate::archive, kMaxOutputDir),
                   wire::field("discard", &Rotate::discard),
                   wire::field("chunkIndex", &Rotate::chunkIndex),
                   wire::field("boundaryTime", &Rotate::boundaryTime)};
    bool operator==(const Rotate&) const = default;
};

/// Snapshot consumers (Session.Clear): discards what every data stream's
/// buffer holds (lttng_ust_ctl_clear_buffer, as lttng-tools 2.13's consumer
/// clear_channel does), so the next snapshot holds only later events; the
/// metadata is kept.
struct ClearBuffers {
    static constexpr MessageType kType = MessageType::ClearBuffers;
    static constexpr std::string_view kName = "ClearBuffers";
    static constexpr std::tuple<> kFields{};
    bool operator==(const ClearBuffers&) const = default;
};

/// Unsolicited: rotation `id` is over. `ok` false: the archive may be
/// incomplete, `message` says why.
struct RotationCompleted {
    static constexpr MessageType kType = MessageType::RotationCompleted;
    static constexpr std::string_view kName = "RotationCompleted";
    std::uint64_t id = 0;
    bool ok = true;
    std::string message;
    static constexpr auto kFields = std::tuple{
        wire::field("id", &RotationCompleted::id), wire::field("ok", &RotationCompleted::ok),
        wire::text("message", &RotationCompleted::message, kMaxText)};
    bool operator==(const RotationCompleted&) const = default;
};

/// Writes the current content of every channel (snapshot consumers, started
/// with --snapshot: nothing else is ever read from their buffers) as a
/// complete trace below the folder whose fd follows the frame on one byte
/// (SCM_RIGHTS; an O_PATH or O_DIRECTORY fd the daemon opened, so the folder
/// may lie outside the consumer's own view of the file system): the same
/// trace-relative layout as the session's output, the whole metadata of each
/// trace, and for each data stream the sub-buffers between its consumed and
/// produced positions (lttng_ust_ctl_snapshot), at most the newest
/// `packetsPerStream` of them (0: all). Tracing is not disturbed: nothing is
/// consumed.
struct RecordSnapshot {
    static constexpr MessageType kType = MessageType::RecordSnapshot;
    static constexpr std::string_view kName = "RecordSnapshot";
    std::uint64_t id = 0;
    std::uint64_t packetsPerStream = 0;
    static constexpr auto kFields =
        std::tuple{wire::field("id", &RecordSnapshot::id),
                   wire::field("packetsPerStream", &RecordSnapshot::packetsPerStream)};
    bool operator==(const RecordSnapshot&) const = default;
};

/// After rotation `id`'s Ok: every metadata push of registrations the daemon
/// answered before that Ok has been sent before this request, so the old
/// chunk's metadata is whole. Until now, the metadata of the traces the
/// rotation found went on into the old chunk (an app answered after the
/// daemon sent Rotate, but before the consumer took its boundary, may have
/// written events of a class pushed after Rotate into the old chunk); now it
/// switches: all of it is written again into the new chunk, and the rotation
/// may complete. Answered Ok; Error if no such rotation is under way.
/// (LTTng's consumer asks its session daemon for the pending metadata at the
/// same point of a rotation, consumer.c lttng_consumer_rotate_channel.)
struct RotateMetadata {
    static constexpr MessageType kType = MessageType::RotateMetadata;
    static constexpr std::string_view kName = "RotateMetadata";
    std::uint64_t id = 0;
    static constexpr auto kFields = std::tuple{wire::field("id", &RotateMetadata::id)};
    bool operator==(const RotateMetadata&) const = default;
};

/// RecordSnapshot for a snapshot session with a network output (a snapshot
/// consumer started with --network): the snapshot goes to the lttng-relayd
/// whose control and data connections follow the frame, on one byte
/// (SCM_RIGHTS, control first), instead of a folder. The daemon connected
/// them for this snapshot alone and created the relay session
/// `relaySessionId` (VERSION, CREATE_SESSION with its snapshot flag, so the
/// relay keeps no index and the consumer sends none); the consumer creates
/// the trace chunk `chunkId` named `chunkName` there (CREATE_TRACE_CHUNK with
/// an override name, so the relay writes it in
/// `<session folder>/<chunkName>/`), adds a relay stream per stream file a
/// local snapshot would have, sends the data streams' packets now and the
/// metadata at SnapshotMetadata, after which it waits until the relay holds
/// everything, closes the chunk (CLOSE_TRACE_CHUNK, NO_OPERATION) and the
/// connections. (lttng-tools 2.13 cmd.c snapshot_record: a relay session per
/// snapshot output, set_relayd_for_snapshot, and a trace chunk named
/// `<output name>-<datetime>-<n>`, closed with
/// LTTNG_TRACE_CHUNK_COMMAND_TYPE_NO_OPERATION.) Answered as RecordSnapshot.
struct RecordSnapshotToRelay {
    static constexpr MessageType kType = MessageType::RecordSnapshotToRelay;
    static constexpr std::string_view kName = "RecordSnapshotToRelay";
    std::uint64_t id = 0;
    std::uint64_t packetsPerStream = 0;
    std::uint64_t relaySessionId = 0;
    std::uint32_t relayMinor = 0;
    std::uint64_t chunkId = 0;
    std::uint64_t chunkCreationTime = 0; ///< seconds since the Epoch
    std::string chunkName;               ///< e.g. "snapshot-1-20261204-140000-0"
    static constexpr auto kFields =
        std::tuple{wire::field("id", &RecordSnapshotToRelay::id),
                   wire::field("packetsPerStream", &RecordSnapshotToRelay::packetsPerStream),
                   wire::field("relaySessionId", &RecordSnapshotToRelay::relaySessionId),
                   wire::field("relayMinor", &RecordSnapshotToRelay::relayMinor),
                   wire::field("chunkId", &RecordSnapshotToRelay::chunkId),
                   wire::field("chunkCreationTime", &RecordSnapshotToRelay::chunkCreationTime),
                   wire::text("chunkName", &RecordSnapshotToRelay::chunkName, kMaxOutputDir)};
    bool operator==(const RecordSnapshotToRelay&) const = default;
};

/// After RecordSnapshot `id`'s Ok, for the same reason as RotateMetadata:
/// writes the metadata of every trace into that snapshot's folder (the data
/// was written by RecordSnapshot). Answered Ok once written; Error if `id` is
/// not the last snapshot recorded.
struct SnapshotMetadata {
    static constexpr MessageType kType = MessageType::SnapshotMetadata;
    static constexpr std::string_view kName = "SnapshotMetadata";
    std::uint64_t id = 0;
    static constexpr auto kFields = std::tuple{wire::field("id", &SnapshotMetadata::id)};
    bool operator==(const SnapshotMetadata&) const = default;
};

/// The type alignments and byte order of a trace's apps, that the record
/// layouts depend on (record_layout::Abi: lttng-ust's registration message,
/// lttng_ust_ctl_reg_msg; the TSDL typealiases of trace_environment.cpp).
/// On the wire each alignment must be 8, 16, 32 or 64 bits (1 would be a
/// packed ABI, which lttng-ust uses on no Linux architecture), bitsPerLong
/// 32 or 64.
using LayoutAbi = record_layout::Abi;

/// LayoutAbi on the wire: each figure as one byte, then the byte order.
inline constexpr auto kLayoutAbiFields =
    std::tuple{wire::narrow<std::uint8_t>("bitsPerLong", &LayoutAbi::bitsPerLong),
               wire::narrow<std::uint8_t>("uint8Alignment", &LayoutAbi::uint8Alignment),
               wire::narrow<std::uint8_t>("uint16Alignment", &LayoutAbi::uint16Alignment),
               wire::narrow<std::uint8_t>("uint32Alignment", &LayoutAbi::uint32Alignment),
               wire::narrow<std::uint8_t>("uint64Alignment", &LayoutAbi::uint64Alignment),
               wire::narrow<std::uint8_t>("longAlignment", &LayoutAbi::longAlignment),
               wire::field("bigEndian", &LayoutAbi::bigEndian)};

/// Longest DeclareLayouts::layouts (bytes).
inline constexpr std::size_t kMaxLayouts = kMaxPayload - 32;

/// How to step over the event records of data channel `key`: the encoded
/// record_layout::ChannelLayouts (common/record_layout.hpp) registered since
/// the last DeclareLayouts of that channel (the context once, events as they
/// come), and the trace's ABI. The consumer counts the records of every
/// packet it writes with them (Statistics::eventsRecorded); records of an
/// event it has no layout for yet are counted once it comes. Answered Ok;
/// Error(UnknownChannel), Error(InvalidArgument) for layouts that do not
/// decode or contradict earlier ones.
struct DeclareLayouts {
    static constexpr MessageType kType = MessageType::DeclareLayouts;
    static constexpr std::string_view kName = "DeclareLayouts";
    std::uint64_t key = 0;
    LayoutAbi abi;
    std::string layouts;
    static constexpr auto kFields =
        std::tuple{wire::field("key", &DeclareLayouts::key),
                   wire::nested("abi", &DeclareLayouts::abi, kLayoutAbiFields),
                   wire::bytes("layouts", &DeclareLayouts::layouts, kMaxLayouts)};
    bool operator==(const DeclareLayouts&) const = default;
};

/// Most CPUs of one kernel channel.
inline constexpr std::size_t kMaxKernelCpus = 4096;
/// Longest kernel channel metadata / conversions blob (bytes).
inline constexpr std::size_t kMaxConversionBytes = kMaxPayload - 32;

/// Creates a kernel-domain channel (common/kernel_records.hpp): a data
/// channel reads the per-CPU ftrace buffers whose `trace_pipe_raw` fds follow
/// the frame (one per entry of `cpus`, in order, then as many fds of the
/// CPUs' `per_cpu/cpuN/stats` files, whose "dropped events" count what the
/// pages do not tell; then, when kernelStackType is not 0, an fd of
/// /proc/kallsyms the daemon opened (its addresses shown: kallsyms shows
/// them by its opener's credentials), whose text symbols name the kernel
/// stacks' addresses; on one byte per group of at most kMaxPassedFds) and
/// writes `<outputDir>/<name>_<cpu>` with
/// `index/<name>_<cpu>.idx`; a metadata channel writes `<outputDir>/metadata`
/// from what PushMetadata brings (plain TSDL text), and takes no fd. With
/// `statedump`, a data channel first writes the statedump at the head of
/// its first CPU's stream at its creation.
struct CreateKernelChannel {
    static constexpr MessageType kType = MessageType::CreateKernelChannel;
    static constexpr std::string_view kName = "CreateKernelChannel";
    std::uint64_t key = 0;
    ChannelKind kind = ChannelKind::Data;
    std::string outputDir; ///< as CreateChannel::outputDir ("kernel")
    std::string name;      ///< as CreateChannel::name
    /// Largest CTF packet (bytes, power of two, >= pageSize): the channel's
    /// sub-buffer size.
    std::uint64_t packetSize = 0;
    std::uint32_t streamId = 0;    ///< CTF stream class id
    std::uint32_t contextMask = 0; ///< kernel_records::ContextField bits
    /// common_type of ftrace's kernel_stack / user_stack entries
    /// (FtraceStreamConfig); 0 unless the mask has callstack-kernel /
    /// callstack-user.
    std::uint16_t kernelStackType = 0;
    std::uint16_t userStackType = 0;
    bool statedump = false;
    std::array<std::uint8_t, 16> traceUuid{};
    // The ftrace sub-buffer format (events/header_page), bytes.
    std::uint32_t pageSize = 4096; ///< power of two, 4096 .. 2^24
    std::uint32_t timestampOffset = 0;
    std::uint32_t timestampSize = 8;
    std::uint32_t commitOffset = 8;
    std::uint32_t commitSize = 8;
    std::uint32_t dataOffset = 16;
    /// How often the buffers are read when nothing wakes the consumer (µs,
    /// 1000 .. 10^7).
    std::uint32_t readTimerUsec = 100000;
    /// Each CPU's ring buffer (bytes: the channel's sub-buffer size times
    /// their count). A snapshot session's data channel keeps that much of
    /// each CPU's newest packets in memory, from which every snapshot is
    /// written (0: one packet).
    std::uint64_t bufferBytes = 0;
    std::vector<std::uint32_t> cpus; ///< data: one per fd (<= kMaxKernelCpus); metadata: none
    static constexpr auto kFields = std::tuple{
        wire::field("key", &CreateKernelChannel::key),
        wire::field("kind", &CreateKernelChannel::kind, ChannelKind::Data, ChannelKind::Metadata),
        wire::text("outputDir", &CreateKernelChannel::outputDir, kMaxOutputDir),
        wire::text("name", &CreateKernelChannel::name, kMaxChannelName),
        wire::field("packetSize", &CreateKernelChannel::packetSize),
        wire::field("streamId", &CreateKernelChannel::streamId),
        wire::field("contextMask", &CreateKernelChannel::contextMask),
        wire::field("kernelStackType", &CreateKernelChannel::kernelStackType),
        wire::field("userStackType", &CreateKernelChannel::userStackType),
        wire::field("statedump", &CreateKernelChannel::statedump),
        wire::field("traceUuid", &CreateKernelChannel::traceUuid),
        wire::field("pageSize", &CreateKernelChannel::pageSize),
        wire::field("timestampOffset", &CreateKernelChannel::timestampOffset),
        wire::field("timestampSize", &CreateKernelChannel::timestampSize),
        wire::field("commitOffset", &CreateKernelChannel::commitOffset),
        wire::field("commitSize", &CreateKernelChannel::commitSize),
        wire::field("dataOffset", &CreateKernelChannel::dataOffset),
        wire::field("readTimerUsec", &CreateKernelChannel::readTimerUsec),
        wire::field("bufferBytes", &CreateKernelChannel::bufferBytes),
        wire::list("cpus", &CreateKernelChannel::cpus, kMaxKernelCpus)};
    bool operator==(const CreateKernelChannel&) const = default;
};

/// The kernel channel `key`'s event conversions (kernel_records::encode()),
/// added to those it has (events enabled later come in a later one; an ftrace
/// id given again replaces its conversion).
struct DeclareKernelEvents {
    static constexpr MessageType kType = MessageType::DeclareKernelEvents;
    static constexpr std::string_view kName = "DeclareKernelEvents";
    std::uint64_t key = 0;
    std::string conversions;
    static constexpr auto kFields = std::tuple{
        wire::field("key", &DeclareKernelEvents::key),
        wire::bytes("conversions", &DeclareKernelEvents::conversions, kMaxConversionBytes)};
    bool operator==(const DeclareKernelEvents&) const = default;
};

/// The `ip` provider's events for kernel data channel `key`: records of the
/// BPF ring buffer whose map fd follows (with the counters map's fd) become
/// the CTF events `sendId` (ip:send) and `receiveId` (ip:receive) of the
/// channel's stream class, in the stream `<name>_ip`. Once per channel.
struct AttachIpProbes {
    static constexpr MessageType kType = MessageType::AttachIpProbes;
    static constexpr std::string_view kName = "AttachIpProbes";
    std::uint64_t key = 0;
    std::uint16_t sendId = 0;
    std::uint16_t receiveId = 0;
    static constexpr auto kFields = std::tuple{
        wire::field("key", &AttachIpProbes::key), wire::field("sendId", &AttachIpProbes::sendId),
        wire::field("receiveId", &AttachIpProbes::receiveId)};
    bool operator==(const AttachIpProbes&) const = default;
};

/// The system-call string program for kernel data channel `key`: its records
/// (string arguments copied from user memory at sys_enter) fill in the
/// channel's user-string steps (kernel_records StepKind::UserString). The
/// ring buffer map fd and the counters map fd follow. Once per channel.
struct AttachSyscallStrings {
    static constexpr MessageType kType = MessageType::AttachSyscallStrings;
    static constexpr std::string_view kName = "AttachSyscallStrings";
    std::uint64_t key = 0;
    static constexpr auto kFields = std::tuple{wire::field("key", &AttachSyscallStrings::key)};
    bool operator==(const AttachSyscallStrings&) const = default;
};

/// An app that wrote into channel `key` (per-UID buffers, shared with other
/// apps) is gone: process `pid` (for the log). If it died inside a
/// reservation, the sub-buffer holding it would never be delivered. The
/// consumer closes each stream's packet under way that holds a reservation
/// not committed (lttng_ust_ctl_flush_buffer(stream, 1)), so the apps still
/// writing go on in the next sub-buffer, then delivers, after a grace period
/// in which their commit counts did not move, the sub-buffers that were left
/// short (stalled_subbuffers.hpp). Ok at once.
struct ProducerGone {
    static constexpr MessageType kType = MessageType::ProducerGone;
    static constexpr std::string_view kName = "ProducerGone";
    std::uint64_t key = 0;
    std::uint32_t pid = 0;
    static constexpr auto kFields =
        std::tuple{wire::field("key", &ProducerGone::key), wire::field("pid", &ProducerGone::pid)};
    bool operator==(const ProducerGone&) const = default;
};

/// A network session: from now on the consumer's streams go to the
/// lttng-relayd whose control and data connections follow the frame, on one
/// byte (SCM_RIGHTS, control first). The daemon connected them (the
/// consumer's unit has no network of its own), exchanged the version and
/// created the relay session `relaySessionId`; the consumer creates the trace
/// chunk `chunkId` there (CREATE_TRACE_CHUNK) before any stream. Sent once,
/// before the first CreateChannel or CreateKernelChannel.
struct AttachRelayd {
    static constexpr MessageType kType = MessageType::AttachRelayd;
    static constexpr std::string_view kName = "AttachRelayd";
    std::uint64_t relaySessionId = 0; ///< the relay's CREATE_SESSION reply
    std::uint32_t relayMinor = 0;     ///< the protocol minor both sides use (2.<minor>)
    std::uint64_t liveTimerUsec = 0;  ///< 0: not a live session
    std::uint64_t chunkId = 0;
    std::uint64_t chunkCreationTime = 0; ///< seconds since the Epoch
    /// The relay's folder of the session (CREATE_SESSION's reply, relative
    /// to the relay's output folder), kept for a daemon that takes the
    /// consumer over (AdoptReply.relayOutputPath).
    std::string outputPath;
    static constexpr auto kFields =
        std::tuple{wire::field("relaySessionId", &AttachRelayd::relaySessionId),
                   wire::field("relayMinor", &AttachRelayd::relayMinor),
                   wire::field("liveTimerUsec", &AttachRelayd::liveTimerUsec),
                   wire::field("chunkId", &AttachRelayd::chunkId),
                   wire::field("chunkCreationTime", &AttachRelayd::chunkCreationTime),
                   wire::text("outputPath", &AttachRelayd::outputPath, kMaxOutputDir)};
    bool operator==(const AttachRelayd&) const = default;
};

/// Unsolicited: the session's output failed for good (a network session's
/// relay went away, refused something or broke the protocol); nothing more is
/// recorded. Sent once.
struct OutputFailed {
    static constexpr MessageType kType = MessageType::OutputFailed;
    static constexpr std::string_view kName = "OutputFailed";
    std::string message;
    static constexpr auto kFields =
        std::tuple{wire::text("message", &OutputFailed::message, kMaxText)};
    bool operator==(const OutputFailed&) const = default;
};

/// What one channel of the consumer wrote, since it was created: every
/// figure only grows, except chunkBytes, which starts again from 0 when a
/// rotation switches the channel's streams to a new chunk.
struct ChannelFigures {
    std::uint64_t key = 0;
    std::uint64_t eventsRecorded = 0;  ///< event records in the packets written
    std::uint64_t eventsDiscarded = 0; ///< sum over streams of the last packet's events_discarded
    std::uint64_t packetsLost = 0;     ///< gaps in packet_seq_num (overwrite mode)
    std::uint64_t bytesWritten = 0;    ///< stream file bytes (packets), index files not included
    std::uint64_t chunkBytes = 0;      ///< the same, in the current trace chunk
    /// bytesWritten plus what the producers wrote into the ring buffers
    /// that is not read yet, sampled without consuming: UST
    /// data streams' produced positions (lttng_ust_ctl_snapshot_sample_positions),
    /// less the unwritten end of each sub-buffer read (what lies past its
    /// padded size), so it equals bytesWritten once all is read; it moves
    /// as the apps write, not as whole sub-buffers complete. Never goes
    /// back. Snapshot channels: how far their write positions advanced.
    /// Channels the consumer cannot sample (metadata, kernel): bytesWritten.
    std::uint64_t bytesProduced = 0;
    static constexpr auto kFields =
        std::tuple{wire::field("key", &ChannelFigures::key),
                   wire::field("eventsRecorded", &ChannelFigures::eventsRecorded),
                   wire::field("eventsDiscarded", &ChannelFigures::eventsDiscarded),
                   wire::field("packetsLost", &ChannelFigures::packetsLost),
                   wire::field("bytesWritten", &ChannelFigures::bytesWritten),
                   wire::field("chunkBytes", &ChannelFigures::chunkBytes),
                   wire::field("bytesProduced", &ChannelFigures::bytesProduced)};
    bool operator==(const ChannelFigures&) const = default;
};

/// Longest Statistics::channels.
inline constexpr std::size_t kMaxFiguresPerMessage = (kMaxPayload - 12) / 56;

/// Unsolicited: the figures of the channels that changed since the last
/// Statistics (all of them the first time), sampled at `sampledAtUsec`
/// (CLOCK_MONOTONIC, microseconds). A consumer with more channels sends
/// several.
struct Statistics {
    static constexpr MessageType kType = MessageType::Statistics;
    static constexpr std::string_view kName = "Statistics";
    std::uint64_t sampledAtUsec = 0;
    std::vector<ChannelFigures> channels;
    static constexpr auto kFields =
        std::tuple{wire::field("sampledAtUsec", &Statistics::sampledAtUsec),
                   wire::list("channels", &Statistics::channels, kMaxFiguresPerMessage)};
    bool operator==(const Statistics&) const = default;
};

/// Success.
struct Ok {
    static constexpr MessageType kType = MessageType::Ok;
    static constexpr std::string_view kName = "Ok";
    static constexpr std::tuple<> kFields{};
    bool operator==(const Ok&) const = default;
};

/// u32 on the wire.
enum class ErrorKind : std::uint32_t {
    Protocol = 1,        ///< unexpected or malformed request
    VersionMismatch = 2, ///< Hello with another protocol version
    UnknownChannel = 3,  ///< no live channel with that key
    ChannelExists = 4,   ///< CreateChannel with a key in use
    InvalidArgument = 5, ///< well-formed but unusable values
    Io = 6,              ///< creating or writing output files failed
    Tracer = 7,          ///< a liblttng-ust-ctl call failed
    /// The consumer lacks a resource for this request alone (file
    /// descriptors: EMFILE, ENFILE); it goes on with what it has: the
    /// daemon refuses the app(s) the request was for, not the session.
    Resources = 8,
};

/// Failure.
struct ErrorReply {
    static constexpr MessageType kType = MessageType::Error;
    static constexpr std::string_view kName = "Error";
    ErrorKind code = ErrorKind::Protocol;
    std::string message;
    static constexpr auto kFields = std::tuple{
        wire::field("code", &ErrorReply::code, ErrorKind::Protocol, ErrorKind::Resources),
        wire::text("message", &ErrorReply::message, kMaxText)};
    bool operator==(const ErrorReply&) const = default;
};

using Message =
    std::variant<Hello, HelloReply, CreateChannel, ChannelCreated, PushMetadata, FlushChannel,
                 DestroyChannel, Shutdown, Ok, ErrorReply, Rotate, RotationCompleted,
                 RecordSnapshot, RotateMetadata, SnapshotMetadata, DeclareLayouts, Statistics,
                 CreateKernelChannel, DeclareKernelEvents, AttachIpProbes, ClearBuffers,
                 AttachRelayd, OutputFailed, RecordSnapshotToRelay, Adopt, AdoptReply,
                 WatchChunkSize, AttachSyscallStrings, ProducerGone>;

/// A frame or payload that breaks the rules above.
class ProtocolError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The peer closed the connection in the middle of a frame (it died or gave
/// up) rather than sending something malformed.
class TruncatedFrame : public ProtocolError {
public:
    using ProtocolError::ProtocolError;
};

/// The wire type of `m`.
MessageType typeOf(const Message& m) noexcept;
/// "Hello", "CreateChannel", ... ("unknown" for values outside the enum).
std::string_view messageName(MessageType type) noexcept;
/// The project error code closest to a consumer error (for D-Bus replies).
ErrorCode toErrorCode(ErrorKind kind) noexcept;

/// True when `dir` is an acceptable CreateChannel::outputDir.
bool isSafeRelativeDir(std::string_view dir) noexcept;
/// True when `name` is an acceptable CreateChannel::name.
bool isSafeChannelName(std::string_view name) noexcept;

/// Header fields of one frame.
struct FrameHeader {
    MessageType type;
    std::uint32_t length;  ///< payload bytes
    std::uint32_t request; ///< the request id (0: unsolicited)
};

/// One decoded frame: its request id and its message.
struct Frame {
    std::uint32_t request = 0;
    Message message;
};

/// The whole frame (header + payload) for `m` with request id `request`.
/// Throws ProtocolError if `m` itself breaks the rules (e.g. an over-long
/// string), so nothing invalid is ever sent.
std::vector<std::byte> encode(const Message& m, std::uint32_t request = 0);

/// Checks and decodes a 12-byte header. Throws ProtocolError.
FrameHeader decodeHeader(const std::byte* header);

/// Decodes and validates one payload of the given type. Throws ProtocolError.
Message decodePayload(MessageType type, const std::byte* payload, std::size_t length);

/// Decodes exactly one whole frame (header + payload, nothing after),
/// whatever its request id. Throws ProtocolError.
Message decode(const std::vector<std::byte>& frame);

/// Sends one frame (blocking; see sendWithFds()). Throws ProtocolError for an
/// invalid message, std::system_error for socket errors (EPIPE: peer gone).
void writeMessage(int sock, const Message& m, std::uint32_t request = 0);

/// Blocking read of exactly one frame, never a byte more. Returns nullopt on
/// EOF before the first header byte. Throws TruncatedFrame for EOF inside a
/// frame, ProtocolError for a malformed frame or an fd attached to it,
/// std::system_error for socket errors.
std::optional<Message> readMessage(int sock);
/// readMessage() with the frame's request id.
std::optional<Frame> readFrame(int sock);

/// Incremental, non-blocking frame reader for an event loop: each call reads
/// at most up to the end of the current frame (so fds could be attributed to
/// one frame), keeping partial frames between calls.
class MessageReader {
public:
    enum class Status {
        Complete,   ///< a message is ready: take() it
        WouldBlock, ///< nothing more to read now
        Eof,        ///< orderly EOF at a frame boundary
    };

    /// Reads what is available (MSG_DONTWAIT). Throws TruncatedFrame (EOF
    /// inside a frame), ProtocolError (malformed frame, fds attached) or
    /// std::system_error.
    Status readFrom(int sock);
    /// The message completed by the last readFrom(); resets for the next one.
    Message take();
    /// take() with the frame's request id.
    Frame takeFrame();
    /// True while a frame has been started but not completed.
    bool midFrame() const noexcept { return filled_ > 0; }

private:
    std::vector<std::byte> buffer_ = std::vector<std::byte>(kHeaderSize);
    std::size_t filled_ = 0;
    std::optional<FrameHeader> header_;
    std::optional<Message> ready_;
    std::uint32_t readyRequest_ = 0;
};

} // namespace tracectl::consumer_protocol
