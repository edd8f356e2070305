// One channel of the consumer: its ust-ctl buffers, a StreamReader per
// stream, and for a metadata channel the metadata cache that feeds it.
#pragma once

#include "channel_base.hpp"
#include "common/consumer_protocol.hpp"
#include "common/event_loop.hpp"
#include "record_counter.hpp"
#include "stream_file.hpp"
#include "stream_reader.hpp"
#include "ust_channel.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tracectl::consumer {

/// Not copyable or movable (its event sources point at it).
class Channel final : public ChannelBase {
public:
    /// Creates the ust-ctl channel and its streams, and their streams in
    /// `chunk`'s trace folder `request.outputDir` (`<name>_<cpu>` with
    /// their index, or `metadata`). Data streams are watched on
    /// `loop` from now on, and each gets its first packet at once
    /// (openPacket(), an empty one): the chunk begins for them now, so each
    /// covers it even if no app writes to it until late, or at all.
    /// Throws RequestError (InvalidArgument, Io, Tracer).
    /// With `snapshotOnly` (a snapshot session's consumer) no file or
    /// folder is made and nothing is ever read from the buffers: they are
    /// only copied by recordSnapshot(), and the metadata is only cached.
    /// With `countEvents` (data channels of a normal consumer) the records
    /// of every packet written are counted, once DeclareLayouts brought
    /// the layouts. With `awaitMetadata` (data channels of a live session) its
    /// streams read nothing until release() (StreamReader::hold()), their
    /// first packet included.
    Channel(EventLoop& loop, const ChunkOutput& chunk,
            const consumer_protocol::CreateChannel& request, bool snapshotOnly = false,
            bool countEvents = false, bool awaitMetadata = false);
    ~Channel() override;
    Channel(const Channel&) = delete;
    Channel& operator=(const Channel&) = delete;

    std::uint64_t key() const noexcept override { return key_; }
    /// Whether its streams wait for their metadata (the constructor's
    /// `awaitMetadata`, until release()).
    bool awaitsMetadata() const noexcept { return awaitingMetadata_; }
    /// Its trace's metadata declares its stream class now: every stream
    /// reads what waited and goes on (StreamReader::release()). Never
    /// throws.
    void release() noexcept;
    /// The trace folder, relative to the chunk (CreateChannel.outputDir).
    const std::string& outputDir() const noexcept { return outputDir_; }
    /// Snapshot channels kept across a daemon's takeover: their trace goes
    /// to `dir` in the snapshots from now on (the next daemon's channels
    /// take the folder they had).
    void moveOutputDir(std::string dir);
    /// Data channels: the names of its stream files ("<name>_<cpu>").
    const std::vector<std::string>& streamNames() const noexcept { return streamNames_; }
    /// The CTF stream class its packets name (CreateChannel.chanId).
    std::uint32_t streamClassId() const noexcept { return chanId_; }
    /// Metadata channels: whether the metadata pushed so far declares CTF
    /// stream class `id` (its "stream {" block with "id = <id>;", as
    /// tracectld's metadata writes it, metadata/trace_registry.cpp).
    bool declaresStreamClass(std::uint32_t id) const;
    bool isMetadata() const noexcept override { return ust_.isMetadata(); }
    std::uint32_t streamCount() const noexcept override {
        return static_cast<std::uint32_t>(snapshotOnly_ ? held_.size() : readers_.size());
    }

    /// Snapshot channels: writes the buffers' current content below
    /// `<outputDir>` in `snapshot` (snapshot_writer.hpp): data streams
    /// `<name>_<cpu>` with their index, at most `packetsPerStream` newest
    /// sub-buffers each (0: all); the metadata channel the whole metadata.
    /// A data stream that produced anything since flush() (or never had a
    /// flush()) first closes its current packet, even empty, so that it
    /// ends at the snapshot; one quiescent since flush() ends there (as
    /// lttng-consumerd, ust-consumer.c, lttng_ustconsumer_snapshot_channel).
    /// Sub-buffers the tracer overwrote before they could be copied are
    /// logged (a warning per stream) and counted in figures().packetsLost.
    /// Returns the bytes written. Throws RequestError (InvalidArgument: not a
    /// snapshot channel; Io; Tracer) after trying every stream.
    std::uint64_t recordSnapshot(const ChunkOutput& snapshot,
                                 std::uint64_t packetsPerStream) override;

    /// Snapshot data channels: on every stream, flush_buffer(stream, 1) and
    /// lttng_ust_ctl_clear_buffer() (lttng-tools 2.13 consumer.c
    /// consumer_clear_stream: the current packet is closed and the reader
    /// moved to the producer's position); then, unless the stream is
    /// quiescent since flush() (stopped), an empty packet is opened in it
    /// (openPacket(), as lttng-sessiond's session_open_packets after
    /// clearing an active session), so that it begins at the clear.
    void clearBuffers() override;

    /// Hands the buffers to the daemon on `sock` (blocking): the channel, each
    /// stream, the end marker (lttng_ust_ctl_send_*_to_sessiond). Then closes
    /// our copy of the channel's wakeup fd and, for data channels, watches the
    /// channel's wait fd: when it hangs up (no producer or daemon holds the
    /// channel any more) our stream wakeup fds are closed so each stream hangs
    /// up in turn once drained. Throws UstError (the connection is then
    /// unusable: the daemon was in the middle of reading ust-ctl's stream).
    void sendToDaemon(int sock);

    /// Appends `bytes` at `offset` of the metadata text and writes it out as
    /// metadata packets (lttng_ust_ctl_write_one_packet_to_channel,
    /// flush_buffer(stream, 1), drain, until all is written). Throws
    /// RequestError: InvalidArgument (not a metadata channel, offset not at
    /// the end of what was pushed), Tracer, Io.
    void pushMetadata(std::uint64_t offset, std::string_view bytes) override;

    /// Data: flush_buffer(stream, 0) on every stream and drain (stop);
    /// snapshot channels only flush, and note each stream's produced
    /// position (quiescent until it moves). Metadata: writes what is
    /// pending. Throws RequestError (Io/Tracer) after trying every stream.
    void flush() override;

    /// Rotation to the chunk `chunk` (see StreamReader::rotate): data
    /// streams switch once read past their sampled position, each with a
    /// packet covering the old chunk up to now and one beginning the new
    /// chunk now; the metadata stream switches at once and the whole
    /// metadata is written again into the new chunk, unless every data
    /// stream of its trace (the data channels of the same outputDir in this
    /// process) is closed: then the trace stays out of the new chunk (it
    /// would have metadata and no stream there) and its metadata goes on in
    /// the old one. `switched` is called once per stream (maybe before
    /// this returns). Streams that fail are closed (and count as switched).
    /// Never throws.
    /// `traceWentOn` (metadata channels): whether the trace went on into
    /// the new chunk when the rotation took its boundary (traceGoesOn()
    /// then), for a metadata switch made later (RotateMetadata); unset: now.
    RotateResult rotate(const std::shared_ptr<const ChunkOutput>& chunk,
                        const std::function<void()>& switched,
                        std::optional<bool> traceWentOn = std::nullopt) noexcept override;

    /// Final drain before destruction: flush_buffer(stream, 0) on every data
    /// stream, which closes the last packet even if empty and is safe while
    /// producers still write (`producersStopped` says which; both are
    /// handled alike, so that an idle stream's last packet ends at its
    /// close and it covers the final chunk), then drains and closes every
    /// stream. Never throws (logged).
    void drainAndClose(bool producersStopped) noexcept override;

    /// Data channels that are read (not snapshot-only): every stream
    /// closes its packet under way and lists its short sub-buffers
    /// (StreamReader::switchAndListShort()); kStalledGrace later, those
    /// still short with the same commit count are fixed up
    /// (StreamReader::fixUpStalled()), the log naming `pid`. A later call
    /// before then lists again and puts the check off. Throws
    /// RequestError(Io) after trying every stream.
    void producerGone(std::uint32_t pid) override;

    /// Data channels of a live session: StreamReader::liveTick() on every
    /// stream. Throws RequestError(Io) after trying every stream.
    void liveTick(bool newStreamsPublished) override;

    /// A metadata channel: its trace has a data stream still open, or no
    /// data channel at all.
    bool traceGoesOn() const noexcept override;

    /// DeclareLayouts: the layouts of the channel's event records (encoded
    /// record_layout::ChannelLayouts) and the trace's ABI; the first one
    /// makes the channel's record counter, and packets kept for want of a
    /// layout are counted again. Throws RequestError(InvalidArgument): a
    /// metadata or snapshot channel, layouts that do not decode, contradict
    /// earlier ones, or another ABI than the first.
    void declareLayouts(const consumer_protocol::LayoutAbi& abi, std::string_view layouts) override;

    /// What the channel wrote so far (consumer_protocol::ChannelFigures),
    /// summed over its streams, closed ones included. Snapshot channels
    /// count the bytes their snapshots wrote, and nothing else.
    consumer_protocol::ChannelFigures figures() const noexcept override;
    /// Data channels: StreamReader::sampleProduced() on every stream;
    /// snapshot channels: how far their streams' write positions advanced
    /// since the channel was made. Never throws.
    void sampleProduced() noexcept override;
    /// `hook` is called after each sub-buffer any stream of the channel
    /// writes (StreamReader::setProgressHook).
    void setProgressHook(const std::function<void(std::uint64_t bytes)>& hook) override;

private:
    static int onChannelHangUp(sd_event_source* s, int fd, std::uint32_t revents, void* userdata);
    void commitMetadata();
    /// A data channel: one of its streams is still open.
    bool hasOpenStream() const noexcept;

    std::uint64_t key_;
    std::string name_;
    std::string outputDir_; // trace-relative, below the chunk root
    std::uint32_t chanId_ = 0;
    std::vector<std::string> streamNames_; // data channels
    /// Snapshot channels: logs that the app spoiled held_[i] (`e`) and
    /// destroys it; the channel's other streams go on.
    void dropSpoiled(std::size_t i, const std::exception& e) noexcept;
    /// The switch timer (data channels with CreateChannel.switchTimerUsec):
    /// run here, on the loop, rather than by liblttng-ust-ctl's own timer
    /// thread, whose flushes of the app-shared buffers nothing could guard
    /// (an app that spoiled its buffer made that thread abort the process).
    /// Each tick closes every stream's packet if it holds anything
    /// (flush_buffer(stream, 1)) and drains it; a stream its app spoiled is
    /// dropped. Arms the next tick.
    void switchTick() noexcept;
    void armSwitchTimer();
    std::uint32_t switchTimerUsec_ = 0;
    EventSourcePtr switchTimer_;
    UstChannel ust_; // declared before readers_: streams must go first
    std::vector<std::unique_ptr<StreamReader>> readers_;
    EventLoop& loop_;
    EventSourcePtr hangUpSource_;
    bool snapshotOnly_ = false;
    bool countEvents_ = false;
    bool awaitingMetadata_ = false;   ///< the constructor's `awaitMetadata`, until release()
    std::vector<UstStream> held_;     // snapshotOnly_: the streams (readers_ is empty)
    std::uint64_t snapshotBytes_ = 0; // snapshotOnly_: bytes its snapshots wrote
    std::uint64_t snapshotLost_ = 0;  // snapshotOnly_: sub-buffers its snapshots could not copy
    std::unique_ptr<RecordCounter> counter_; // once the first DeclareLayouts came
    std::string metadata_;                   // every byte pushed so far (the cache)
    std::size_t metadataCommitted_ = 0;      // bytes of metadata_ written into the ring buffer
    // snapshotOnly_: per held_ stream, its produced position after the last
    // flush() (Stop), while nothing more was produced; empty when active.
    std::vector<std::optional<unsigned long>> quiescentAt_;
    // producerGone(): per reader, its sub-buffers short when the last
    // producer went; the apps gone since the last check; its timer.
    std::vector<std::vector<ShortSubbuffer>> shortAtGone_;
    std::vector<std::uint32_t> gonePids_;
    EventSourcePtr stalledCheck_;
    void checkStalled() noexcept;
    /// Data channels: its wait fd has hung up (every copy of the channel's
    /// wakeup fd, the apps' and the daemon's, is closed).
    bool releasedByAll() const noexcept;
};

} // namespace tracectl::consumer
