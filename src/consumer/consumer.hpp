// tracectl-consumerd's command dispatcher: reads the daemon's requests
// (common/consumer_protocol.hpp) from the command socket on the event loop,
// runs them against the channels, answers each with one reply.
//
// Threads: tracectl-consumerd has one thread of its own, this loop's, which
// owns every channel, stream and file; liblttng-ust-ctl adds its timer
// thread (switch and read timers), which touches only the ring buffers.
#pragma once

#include "channel.hpp"
#include "common/consumer_protocol.hpp"
#include "common/event_loop.hpp"
#include "common/unique_fd.hpp"
#include "output/relay_output.hpp"
#include "output/stream_sink.hpp"
#include "stream_file.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tracectl::consumer {

class LocalChunk;

/// tracectl-consumerd's exit statuses. In every case but ExitUsage every
/// channel was drained and its files closed before exiting.
enum Exit : int {
    ExitOk = 0,            ///< Shutdown request, SIGTERM or SIGINT
    ExitFailure = 1,       ///< start-up or internal failure (output root unusable, ...)
    ExitUsage = 2,         ///< bad command line, or stdin is not a stream socket
    ExitDaemonLost = 3,    ///< the daemon closed the socket or vanished (EOF, EPIPE, reset)
    ExitProtocolError = 4, ///< the daemon sent a malformed frame (framing is lost)
};

/// Not copyable or movable (its event source points at it).
class Consumer {
public:
    /// Starts reading requests from `socket` (a connected AF_UNIX
    /// SOCK_STREAM socket; made blocking here — requests are read with
    /// MSG_DONTWAIT, replies and ust-ctl transfers block) on `loop`. Output
    /// goes below `root`. Throws std::system_error.
    /// `snapshotOnly`: a snapshot session's consumer (channels are never
    /// read, only copied by RecordSnapshot; nothing is written below `root`).
    /// `countEvents`: data channels count the records of the packets they
    /// write (DeclareLayouts is refused otherwise).
    /// `root` nullopt: a network session's consumer (tracectl-consumerd
    /// --network), which writes nothing locally and makes no channel
    /// before AttachRelayd.
    Consumer(EventLoop& loop, UniqueFd socket, std::optional<OutputDir> root,
             bool snapshotOnly = false, bool countEvents = false);
    ~Consumer();
    Consumer(const Consumer&) = delete;
    Consumer& operator=(const Consumer&) = delete;

    /// Stops reading requests, drains and closes every channel (producers
    /// may still be active: flush_buffer(stream, 1)) and makes the loop
    /// return `code`. Idempotent: the first code wins.
    void stop(int code) noexcept;

private:
    /// Before a stop (SIGTERM, Shutdown): writes the PushMetadata requests
    /// already queued on the daemon's socket, up to kMaxQueuedMetadataAtStop,
    /// stopping at the first other request.
    void writeQueuedMetadata() noexcept;
    static constexpr std::size_t kMaxQueuedMetadataAtStop = 100000;
    static int onSocket(sd_event_source* s, int fd, std::uint32_t revents, void* userdata);
    void readRequests();
    /// Runs one request through its handler (a visit of the Message) and
    /// answers Ok when the handler leaves it to dispatch(), or the error
    /// its exception says.
    void dispatch(consumer_protocol::Message&& request);
    /// What a request's handler leaves to dispatch().
    enum class Answer {
        Ok,   ///< done: dispatch() answers Ok
        Sent, ///< the handler answered itself, or must not (the consumer stops)
    };
    Answer hello(const consumer_protocol::Hello& request);
    /// FlushChannel: the figures, then Ok, once a relay holds everything.
    Answer flushChannel(const consumer_protocol::FlushChannel& request);
    /// DestroyChannel: drained, closed, its final figures sent.
    Answer destroyChannel(const consumer_protocol::DestroyChannel& request);
    /// Shutdown: every channel closed, the answer, then the stop; with
    /// `deleteChunk`, the current chunk is deleted at the stop
    /// (consumer_protocol.hpp Shutdown).
    Answer shutdown(bool deleteChunk);
    /// Adopt: a restarted daemon takes the connection over; every channel
    /// is drained and closed into the current chunk, and AdoptReply names
    /// that chunk (consumer_protocol.hpp). A snapshot consumer:
    /// adoptSnapshotChannels().
    void adopt(const consumer_protocol::Adopt& request);
    /// Adopt of a snapshot consumer: the previous daemon's user-space
    /// channels are kept, their buffers in the next snapshots as a trace of
    /// their own (`<outputDir>-before-restart-<n>`, n counting takeovers);
    /// those an earlier takeover kept, and the kernel ones (their tracefs
    /// buffers are the next daemon's to read), are closed without reading.
    void adoptSnapshotChannels(const consumer_protocol::Adopt& request);
    /// Hello and Adopt: answers Error(VersionMismatch) and returns true if
    /// the daemon speaks another protocol version than kVersion.
    bool refusedVersion(std::uint32_t version) noexcept;
    /// Shutdown and Adopt: every channel drained and closed (a deferred
    /// metadata switch first), the final figures sent. Returns how many
    /// channels were closed, or kNotSent if the figures could not be sent
    /// (the consumer is stopping then, as reply() does).
    /// With `viewersPace` (Shutdown), a live session's lingering traces
    /// are left for finishShutdown() to close.
    std::size_t closeEveryChannel(bool viewersPace = false);
    /// Shutdown's end, once a live session's lingering traces are closed at
    /// a viewer's pace (RelaySession::drainLingering()) or
    /// kShutdownDrainLimit passed: the answer, then the exit.
    void finishShutdown() noexcept;
    /// After every channel was drained without the daemon's last word (a
    /// takeover, or the daemon gone): the stream files of data channels
    /// whose stream class the trace's metadata does not declare (no app
    /// registered them before the daemon went: they hold empty packets
    /// only) are removed, so that the trace stays readable. Local chunks only.
    void removeUndescribedStreams() noexcept;
    /// Whether the metadata pushed so far for data channel `data`'s trace
    /// (the metadata channel of the same outputDir) declares its stream
    /// class. No metadata channel for the folder: `withoutMetadata`.
    bool describedByMetadata(const Channel& data, bool withoutMetadata) const noexcept;
    /// PushMetadata: into its channel, then the live data channels of that
    /// trace that waited for it go on (Channel::release()). Throws
    /// RequestError.
    void pushMetadata(const consumer_protocol::PushMetadata& push);
    /// Part of removeUndescribedStreams(): the metadata file of
    /// `metadata` (channel `key`) in `chunk`, if still empty (the chunk
    /// closed before any metadata was pushed to it), is removed, with its
    /// trace's index folder if that is empty too.
    static void removeEmptyMetadata(const LocalChunk& chunk, std::uint64_t key,
                                    const Channel& metadata) noexcept;
    /// Unlinks data channel `data`'s stream and index files in `chunk`;
    /// false (logged) if its folder cannot be opened.
    static bool removeStreamFiles(const LocalChunk& chunk, const Channel& data) noexcept;
    /// A CreateChannel whose buffers could not be handed to the daemon (it
    /// went meanwhile): channel `key` goes, and the files it made in a
    /// local chunk with it (empty streams, an empty metadata file), which
    /// would otherwise leave the chunk's trace unreadable.
    void forgetUnsentChannel(std::uint64_t key) noexcept;
    static constexpr std::size_t kNotSent = static_cast<std::size_t>(-1);
    void createChannel(const consumer_protocol::CreateChannel& request);
    /// File descriptors this process may still open (RLIMIT_NOFILE's soft
    /// limit less those open); 0 when even /proc/self/fd cannot be listed.
    static std::size_t fdsLeft() noexcept;
    /// Throws RequestError(Resources) when the channel's fds would leave
    /// fewer than kFdReserve free: that channel is refused, not the session.
    static void refuseWithoutFdsFor(const consumer_protocol::CreateChannel& request);
    /// Removes the (empty) files a channel that failed half-way opened.
    void removeFilesOfUnmadeChannel(const consumer_protocol::CreateChannel& request) noexcept;
    /// createChannel()'s work; createChannel() notes the folders refused.
    void makeChannel(const consumer_protocol::CreateChannel& request);
    /// A channel of a trace whose making was refused (refusedTraceDirs_),
    /// as DestroyChannel removes it.
    struct UnfinishedTrace {
        std::string outputDir;
        std::vector<std::string> streams; ///< data channels' stream files
        bool metadata = false;
    };
    /// Removes `trace`'s files (its streams and indexes, or its metadata),
    /// then its folders if they are empty.
    void removeUnfinishedTraceFiles(const UnfinishedTrace& trace) noexcept;
    /// Trace folders (CreateChannel.outputDir) where a channel was refused
    /// for want of fds: the trace is never finished, and its channels'
    /// files go when the daemon destroys them. A metadata channel made in
    /// the folder again (a new trace there) takes it off.
    std::set<std::string> refusedTraceDirs_;
    /// fds no new channel may take (refuseWithoutFdsFor()).
    static constexpr std::size_t kFdReserve = 32;
    /// CreateKernelChannel: takes the per-CPU fds that follow (data), then
    /// makes the channel. Throws RequestError.
    void createKernelChannel(const consumer_protocol::CreateKernelChannel& request);
    /// The fds that follow request `request`'s frame: `count` of them, on
    /// one byte per group of at most kMaxPassedFds. Throws RequestError.
    std::vector<UniqueFd> takePassedFds(const char* request, std::size_t count);
    /// AttachRelayd: takes the two relay connections that follow, creates
    /// the first trace chunk on the relay; new channels stream there from
    /// now on. Throws RequestError.
    void attachRelayd(const consumer_protocol::AttachRelayd& request);
    /// The live timer's tick: every channel flushes what its streams hold
    /// and idle streams send a beacon (ChannelBase::liveTick()).
    void liveTick() noexcept;
    /// Arms the live timer's next tick.
    void rearmLiveTimer();
    /// Starts rotation `request` (see consumer_protocol::Rotate).
    void rotate(const consumer_protocol::Rotate& request);
    /// One stream of rotation `id` switched; the last one archives the old
    /// chunk and tells the daemon.
    void streamSwitched(std::uint64_t id);
    /// RecordSnapshot: takes the folder fd that follows the frame, then
    /// writes every data channel into it. Throws RequestError.
    void recordSnapshot(const consumer_protocol::RecordSnapshot& request);
    /// RecordSnapshotToRelay: takes the relay's two connections that follow
    /// the frame, creates the snapshot's named trace chunk on the relay,
    /// then sends every data channel there. Throws RequestError.
    void recordSnapshotToRelay(const consumer_protocol::RecordSnapshotToRelay& request);
    /// Both RecordSnapshots: every data channel into `chunk`; keeps
    /// it (and `relay`, for a network snapshot) for SnapshotMetadata.
    void takeSnapshot(std::uint64_t id, std::uint64_t packetsPerStream,
                      std::shared_ptr<const ChunkOutput> chunk, std::shared_ptr<RelaySession> relay,
                      std::uint64_t relayChunkId);
    /// ClearBuffers (snapshot consumers): every data channel's buffers are
    /// emptied. Throws RequestError.
    void clearBuffers();
    /// Rotate with `discard` done: deletes the old chunk's files. Returns
    /// the error ("" if none).
    std::string deleteChunk(const consumer_protocol::Rotate& r) noexcept;
    /// A Shutdown with deleteChunk, every channel closed, before its answer:
    /// removes the current chunk's folder (chunkName_, never root_ itself);
    /// a failure is logged.
    void deleteCurrentChunk() noexcept;
    /// RotateMetadata: the metadata channels the rotation found switch now.
    void rotateMetadata(const consumer_protocol::RotateMetadata& request);
    /// Channel `key` is about to be destroyed: if the rotation under way
    /// waits to switch its metadata, it switches now (the daemon pushed all
    /// of it before DestroyChannel).
    void switchBeforeDestroy(std::uint64_t key);
    /// Switches deferred metadata channel `key` of rotation `id`.
    void switchMetadata(std::uint64_t id, std::uint64_t key, bool traceWentOn);
    /// SnapshotMetadata: the last snapshot's metadata files. Throws RequestError.
    void snapshotMetadata(const consumer_protocol::SnapshotMetadata& request);
    ChannelBase& channel(std::uint64_t key);
    /// A stream wrote a sub-buffer of `bytes`: the figures are sent within a
    /// second (arms the statistics timer if it is not armed), or at once if
    /// the chunk now holds the WatchChunkSize bytes.
    void noteProgress(std::uint64_t bytes) noexcept;
    /// Once a second while the consumer has channels: Statistics for those
    /// whose figures moved, bytesProduced included (the apps write, though
    /// no sub-buffer completes). Arms the timer if it is not armed.
    void armSampling() noexcept;
    /// Sum of every live channel's chunkBytes (ChannelFigures).
    std::uint64_t chunkBytesNow() const noexcept;
    /// A new trace chunk, or a new WatchChunkSize: watched from the bytes
    /// the chunk holds now (figures sent at once if that is enough).
    void watchChunkAgain() noexcept;
    /// Rotation `id` is over (`error`: "" or why it is incomplete):
    /// Statistics, then RotationCompleted, then the next chunk is watched.
    void announceRotation(std::uint64_t id, const std::string& error) noexcept;
    /// Sends Statistics for every channel whose figures differ from the
    /// last ones sent (unsolicited). `key`: only that channel, which is then
    /// forgotten (it is about to be destroyed). Returns false if sending
    /// failed (the consumer then stops, as reply() does).
    bool reportStatistics(std::optional<std::uint64_t> key = std::nullopt) noexcept;
    /// Sends `m` as the reply to the request being handled (its id); on
    /// failure logs, stops with ExitDaemonLost, returns false.
    bool reply(const consumer_protocol::Message& m) noexcept;
    /// Sends `m` with request id `request` (0: unsolicited); as reply().
    bool send(const consumer_protocol::Message& m, std::uint32_t request) noexcept;
    /// The fd that follows request `request`'s frame on one byte (SCM_RIGHTS).
    /// Throws RequestError(Protocol) if none came (EOF also stops the consumer).
    UniqueFd takePassedFd(const char* request, const char* what);

    EventLoop& loop_;
    UniqueFd sock_;
    /// The local output folder (throws RequestError for a network consumer).
    const OutputDir& root() const;
    /// Where new channels go now (throws RequestError before AttachRelayd
    /// in a network consumer).
    const ChunkOutput& currentChunk() const;

    std::optional<OutputDir> root_; ///< nullopt: a network consumer
    /// The chunk chunk_ is, as AdoptReply names it: its index, its folder
    /// relative to root_ ("" for root_ itself) and when it began (s since
    /// the Epoch).
    std::uint64_t chunkIndex_ = 0;
    std::string chunkName_;
    std::uint64_t chunkBegin_ = 0;
    /// Above every channel key a daemon gave (AdoptReply.nextKey).
    std::uint64_t nextKey_ = 1;
    /// Where new channels go: root_ until the first rotation, or the relay.
    std::shared_ptr<const ChunkOutput> chunk_;
    /// A network session's relay (AttachRelayd), its chunk and live timer.
    std::shared_ptr<RelaySession> relay_;
    std::uint64_t relayChunkId_ = 0;
    /// Shutdown.deleteChunk: the current chunk is deleted before the answer
    /// (locally) or closed with DELETE at the stop (a relay's).
    bool deleteChunkAtStop_ = false;
    /// AttachRelayd.outputPath, for AdoptReply.
    std::string relayOutputPath_;
    /// Takeovers of a snapshot consumer so far (the folders of the user-space
    /// traces it kept are named after it).
    unsigned takeovers_ = 0;
    std::uint64_t liveTimerUsec_ = 0;
    EventSourcePtr liveTimer_;
    /// Shutdown waits for the lingering traces (finishShutdown()).
    bool shutdownPending_ = false;
    std::optional<std::uint32_t> shutdownRequest_; ///< its request id
    EventSourcePtr shutdownDeadline_;
    /// Watch the relay's two connections between exchanges (a relay that
    /// goes away is seen at once, not at the next packet).
    EventSourcePtr relayControlWatch_;
    EventSourcePtr relayDataWatch_;
    static int onRelayIdle(sd_event_source* s, int fd, std::uint32_t revents, void* userdata);
    struct Rotation {
        consumer_protocol::Rotate request;
        std::int64_t pending = 0; // streams not switched yet (counted down first, maybe)
        bool asking = true;       // still asking the channels: not done whatever pending says
        std::string firstError;
        /// Metadata channels to switch at RotateMetadata (counted in
        /// pending), and whether their trace went on into the new chunk when
        /// the rotation took its boundary.
        std::vector<std::pair<std::uint64_t, bool>> deferredMetadata;
        bool metadataSwitched = false;
        /// The old chunk, local rotations: where its streams' files are.
        std::shared_ptr<const LocalChunk> oldChunk;
        /// The user-space data channels whose streams began in the old
        /// chunk, not judged yet (leaveOutUndescribed()).
        std::set<std::uint64_t> oldDataChannels;
    };
    /// Rotation `r`: metadata channel `metadata` just switched, so the old
    /// chunk's metadata of its trace is final. The old chunk's stream files
    /// of that trace's data channels whose stream class it does not declare
    /// (their app had not registered them: empty packets only) are removed
    /// from the old chunk, which babeltrace2 could not read otherwise.
    void leaveOutUndescribed(Rotation& r, const Channel& metadata) noexcept;
    std::optional<Rotation> rotation_;
    /// A network session's rotation begins (see consumer_protocol::Rotate):
    /// checks that `request` closes the relay's current chunk, makes the
    /// next one there (CREATE_TRACE_CHUNK); returns it. Throws RequestError
    /// (InvalidArgument, Io).
    std::shared_ptr<const ChunkOutput> beginRelayRotation(const consumer_protocol::Rotate& request);
    /// Every stream of network rotation `done` switched: the old chunk is
    /// closed on the relay (RelaySession::archiveChunk). Returns the error
    /// ("" if none).
    std::string endRelayRotation(const Rotation& done) noexcept;
    /// MOVE_TO_COMPLETED, or DELETE for a Session.Clear.
    static relayd::TraceChunkCloseCommand relayCloseCommand(const Rotation& r) noexcept;
    /// The last RecordSnapshot's output, until SnapshotMetadata writes its
    /// metadata: its folder (LocalChunk), or its chunk on the relay session
    /// made for it alone (RelayChunk of `relay`), closed at SnapshotMetadata.
    struct Snapshot {
        std::uint64_t id = 0;
        /// The metadata channels when the data was copied: each must write
        /// its trace's metadata (SnapshotMetadata), or the snapshot is not whole.
        std::size_t metadataChannels = 0;
        std::shared_ptr<const ChunkOutput> chunk;
        std::shared_ptr<RelaySession> relay;
        std::uint64_t relayChunkId = 0;
    };
    std::optional<Snapshot> snapshot_;
    /// The kernel channels a takeover closed, by name: where each CPU
    /// stream ended, for the next daemon's channel over the same buffers.
    std::map<std::string, std::map<std::uint32_t, std::uint64_t>> kernelEnds_;
    /// Notes where kernel channel `ch` (if it is one) ended, before it goes.
    void noteKernelEnd(const ChannelBase& ch);
    consumer_protocol::MessageReader reader_;
    std::uint32_t request_ = 0; // id of the request being handled
    EventSourcePtr source_;
    std::map<std::uint64_t, std::unique_ptr<ChannelBase>> channels_;
    /// The figures last sent, per channel.
    std::map<std::uint64_t, consumer_protocol::ChannelFigures> reported_;
    EventSourcePtr statisticsTimer_;
    EventSourcePtr samplingTimer_; ///< armSampling()
    bool statisticsArmed_ = false; ///< statisticsTimer_ will fire
    /// WatchChunkSize's bytes (0: none); the chunk's bytes as last summed
    /// plus what was written since; whether this chunk's figures went.
    std::uint64_t chunkWatch_ = 0;
    std::uint64_t chunkBytesSeen_ = 0;
    bool chunkWatchFired_ = false;
    bool snapshotOnly_ = false;
    bool countEvents_ = false;
    bool greeted_ = false;
    bool stopping_ = false;
};

} // namespace tracectl::consumer
