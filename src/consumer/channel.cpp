#include "channel.hpp"

#include "common/log.hpp"
#include "ring_buffer_guard.hpp"
#include "snapshot_writer.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <lttng/ust-ctl.h>
#include <map>
#include <optional>
#include <poll.h>
#include <set>
#include <system_error>
#include <unistd.h>
#include <utility>

namespace tracectl::consumer {

namespace cp = consumer_protocol;

namespace {

UstChannel::Attributes attributesFor(const cp::CreateChannel& r) {
    const bool metadata = r.kind == cp::ChannelKind::Metadata;
    const long page = ::sysconf(_SC_PAGESIZE);
    if (page > 0 && r.subbufSize < static_cast<std::uint64_t>(page))
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "sub-buffer size " + std::to_string(r.subbufSize) +
                               " is smaller than the page size " + std::to_string(page));
    if (metadata && r.overwrite)
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "a metadata channel cannot be in overwrite mode");
    UstChannel::Attributes a;
    a.metadata = metadata;
    a.subbufSize = r.subbufSize;
    a.subbufCount = r.subbufCount;
    a.overwrite = r.overwrite;
    // The metadata buffer is written and read by this process only, on
    // demand: no timer may switch it behind our back. Data channels' switch
    // timer runs on our loop (Channel::switchTick), never in ust-ctl's
    // timer thread.
    a.switchTimerUsec = 0;
    a.readTimerUsec = metadata ? 0 : r.readTimerUsec;
    a.blockingTimeoutUsec = metadata ? 0 : r.blockingTimeoutUsec;
    a.chanId = r.chanId;
    a.uuid = r.traceUuid;
    return a;
}

/// The live data channels of each trace folder (CreateChannel::outputDir)
/// of this consumer, which serves one session: a trace's metadata goes into
/// a new chunk only if one of its data streams does too.
std::map<std::string, std::set<const Channel*>>& dataChannelsByFolder() {
    static std::map<std::string, std::set<const Channel*>> folders;
    return folders;
}

} // namespace

bool Channel::declaresStreamClass(std::uint32_t id) const {
    return metadata_.find("stream {\n\tid = " + std::to_string(id) + ";\n") != std::string::npos;
}

Channel::Channel(EventLoop& loop, const ChunkOutput& chunk, const cp::CreateChannel& request,
                 bool snapshotOnly, bool countEvents, bool awaitMetadata)
    : key_(request.key), name_(request.name), outputDir_(request.outputDir),
      chanId_(request.chanId),
      switchTimerUsec_(request.kind == cp::ChannelKind::Data ? request.switchTimerUsec : 0),
      ust_(attributesFor(request)), loop_(loop), snapshotOnly_(snapshotOnly),
      countEvents_(countEvents && !snapshotOnly && request.kind == cp::ChannelKind::Data),
      awaitingMetadata_(awaitMetadata && request.kind == cp::ChannelKind::Data) {
    if (request.monitorTimerUsec != 0)
        log::debug("channel " + name_ + ": monitor timer requested, not implemented");
    if (snapshotOnly_) {
        if (!ust_.isMetadata() && !request.overwrite)
            throw RequestError(cp::ErrorKind::InvalidArgument,
                               "the data channels of a snapshot consumer must overwrite");
        // As lttng-consumerd's channels without monitor: nobody reads them
        // until a snapshot, and nothing is written to the output.
        held_ = ust_.createStreams();
        quiescentAt_.resize(held_.size());
        if (!ust_.isMetadata())
            for (const UstStream& s : held_)
                (void)openPacket(s.get()); // a fresh buffer always has room
        armSwitchTimer();
        return;
    }
    std::vector<UstStream> streams = ust_.createStreams();
    readers_.reserve(streams.size());
    for (UstStream& s : streams) {
        if (ust_.isMetadata()) {
            readers_.push_back(std::make_unique<StreamReader>(loop, std::move(s), chunk, outputDir_,
                                                              "metadata",
                                                              StreamReader::Kind::Metadata, false));
        } else {
            std::string streamName = name_ + "_" + std::to_string(s.cpu());
            streamNames_.push_back(streamName);
            const int shmFd = ust_.shmFd(s.cpu());
            readers_.push_back(std::make_unique<StreamReader>(loop, std::move(s), chunk, outputDir_,
                                                              std::move(streamName),
                                                              StreamReader::Kind::Data, true));
            readers_.back()->setShmFd(shmFd);
            if (countEvents_)
                readers_.back()->enableRecordCounting();
            if (awaitingMetadata_)
                readers_.back()->hold();
        }
    }
    // The chunk begins for these streams now: each gets its first packet at
    // once (lttng-sessiond opens a packet in every stream when tracing
    // starts, cmd.c), so a stream no app writes to until late, or at all,
    // still covers the chunk from here. A fresh buffer always has room.
    // That packet is read at once, before any app has the channel: it is
    // the stream's start, events_discarded 0 and packet_seq_num 0, from
    // which babeltrace2 counts every later loss exactly. Left to the wait
    // fd, an overwrite buffer under load could be lapped before the read,
    // and the first packet read would carry the discards of packets
    // overwritten unread: babeltrace2 can only say "may have discarded"
    // of those, so the trace would show fewer losses than the statistics.
    if (!ust_.isMetadata()) {
        for (const auto& r : readers_) {
            (void)r->openPacket();
            r->drain();
        }
        dataChannelsByFolder()[outputDir_].insert(this);
    }
    chunk.streamsOpened();
    armSwitchTimer();
}

void Channel::release() noexcept {
    awaitingMetadata_ = false;
    for (const auto& r : readers_)
        r->release();
}

void Channel::armSwitchTimer() {
    if (switchTimerUsec_ == 0)
        return;
    // addTimer() is one-shot: each tick arms the next.
    switchTimer_ =
        loop_.addTimer(std::chrono::microseconds(switchTimerUsec_), [this] { switchTick(); });
}

void Channel::switchTick() noexcept {
    for (const auto& r : readers_) {
        try {
            r->flush(true);
            r->drain();
        } catch (const std::exception& e) {
            log::warning(std::string("switch timer: ") + e.what());
        }
    }
    for (std::size_t i = 0; i < held_.size(); ++i) {
        if (held_[i].get() == nullptr)
            continue;
        if (const int r = guarded(lttng_ust_ctl_flush_buffer, held_[i].get(), 1); r < 0) {
            const UstError e("lttng_ust_ctl_flush_buffer", r);
            if (r == kSpoiledBuffer)
                dropSpoiled(i, e);
            else
                log::warning("switch timer, stream " + name_ + "_" +
                             std::to_string(held_[i].cpu()) + ": " + e.what());
        }
    }
    try {
        armSwitchTimer();
    } catch (const std::exception& e) {
        log::warning("channel " + name_ + ": the switch timer stops: " + e.what());
    }
}

Channel::~Channel() {
    switchTimer_.reset();
    if (const auto it = dataChannelsByFolder().find(outputDir_);
        it != dataChannelsByFolder().end() && it->second.erase(this) != 0 && it->second.empty())
        dataChannelsByFolder().erase(it);
    hangUpSource_.reset();
    readers_.clear(); // before ust_
    held_.clear();    // before ust_
}

void Channel::moveOutputDir(std::string dir) {
    if (!ust_.isMetadata()) {
        if (const auto it = dataChannelsByFolder().find(outputDir_);
            it != dataChannelsByFolder().end() && it->second.erase(this) != 0 && it->second.empty())
            dataChannelsByFolder().erase(it);
        dataChannelsByFolder()[dir].insert(this);
    }
    outputDir_ = std::move(dir);
}

void Channel::sendToDaemon(int sock) {
    ust_.sendToDaemon(sock);
    for (const auto& r : readers_)
        UstChannel::sendStreamToDaemon(sock, &r->ustStream());
    for (const UstStream& s : held_)
        UstChannel::sendStreamToDaemon(sock, &s);
    UstChannel::sendStreamToDaemon(sock, nullptr);

    // As lttng-consumerd: once the channel is handed over, our copy of its
    // wakeup fd goes, so the wait fd hangs up when the last holder lets go.
    ust_.closeWakeupFd();
    // Snapshot channels keep their streams until destroyed: an exited app's
    // last events stay in them for the next snapshot.
    if (!ust_.isMetadata() && !snapshotOnly_) {
        sd_event_source* s = nullptr;
        // No event bits: epoll always reports EPOLLHUP/EPOLLERR, and nobody
        // ever writes to a channel's wakeup pipe.
        const int r =
            sd_event_add_io(loop_.get(), &s, ust_.waitFd(), 0, &Channel::onChannelHangUp, this);
        if (r < 0)
            throw std::system_error(-r, std::generic_category(), "sd_event_add_io(channel)");
        hangUpSource_.reset(s);
    }
}

int Channel::onChannelHangUp(sd_event_source*, int, std::uint32_t, void* userdata) {
    auto* self = static_cast<Channel*>(userdata);
    log::debug("channel " + self->name_ + ": released by every holder, closing stream wakeup fds");
    // Each stream's wait fd now hangs up as soon as the producers' copies of
    // its wakeup fd are gone too; StreamReader flushes, drains and closes then.
    for (const auto& r : self->readers_)
        r->closeWakeupFd();
    self->hangUpSource_.reset(); // fine inside its own callback
    return 0;
}

void Channel::pushMetadata(std::uint64_t offset, std::string_view bytes) {
    if (!ust_.isMetadata())
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "channel " + std::to_string(key_) + " is not a metadata channel");
    if (offset != metadata_.size())
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "metadata offset " + std::to_string(offset) + " but " +
                               std::to_string(metadata_.size()) + " bytes were pushed before");
    metadata_.append(bytes);
    if (!snapshotOnly_) // a snapshot writes it whole each time
        commitMetadata();
}

void Channel::clearBuffers() {
    if (!snapshotOnly_ || ust_.isMetadata())
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "channel " + std::to_string(key_) + " is not a snapshot data channel");
    std::string firstError;
    for (std::size_t i = 0; i < held_.size(); ++i) {
        const UstStream& s = held_[i];
        if (s.get() == nullptr)
            continue;
        const std::string name = name_ + "_" + std::to_string(s.cpu());
        try {
            // Stopped and nothing produced since: it stays so (nothing is
            // opened; a snapshot then has nothing of it, as it recorded
            // nothing since the clear).
            const bool quiescent = quiescentAt_[i] && producedPosition(s.get()) == *quiescentAt_[i];
            // As lttng-consumerd's consumer_clear_stream (consumer.c):
            // close the packet under way, then move the reader to the
            // producer's position.
            if (const int r = guarded(lttng_ust_ctl_flush_buffer, s.get(), 1); r < 0)
                throw UstError("lttng_ust_ctl_flush_buffer", r);
            if (const int r = guarded(lttng_ust_ctl_clear_buffer, s.get()); r < 0)
                throw UstError("lttng_ust_ctl_clear_buffer", r);
            if (quiescent) {
                quiescentAt_[i] = producedPosition(s.get());
                continue;
            }
            // Tracing goes on: a packet opens in every stream now, as
            // lttng-sessiond's clear of an active session ends with
            // session_open_packets (clear.c, lttng-tools 2.13). So every
            // stream of the next snapshot begins at the clear, the idle
            // ones included, and one written to begins there too rather
            // than at its first event (its packet would open lazily then):
            // babeltrace2 --stream-intersection keeps what follows the
            // clear. The buffer was just emptied: there is room.
            (void)openPacket(s.get());
        } catch (const UstError& e) {
            if (spoiledBuffer(e))
                dropSpoiled(i, e);
            else if (firstError.empty())
                firstError = name + ": " + e.what();
        }
    }
    if (!firstError.empty())
        throw RequestError(cp::ErrorKind::Tracer, "channel " + name_ + ": " + firstError);
}

void Channel::dropSpoiled(std::size_t i, const std::exception& e) noexcept {
    // The trace folder names the app (per-PID: <name>-<pid>-<date>).
    log::warning("stream " + name_ + "_" + std::to_string(held_[i].cpu()) + " of " + outputDir_ +
                 ": " + e.what() + "; the stream is dropped, the others go on");
    held_[i].reset();
}

std::uint64_t Channel::recordSnapshot(const ChunkOutput& snapshot, std::uint64_t packetsPerStream) {
    if (!snapshotOnly_)
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "channel " + std::to_string(key_) + " is not a snapshot channel");
    if (ust_.isMetadata()) {
        if (held_.empty() || held_.front().get() == nullptr)
            throw RequestError(cp::ErrorKind::Io, "the metadata stream was closed after an error");
        const std::uint64_t written =
            snapshotMetadata(ust_.get(), held_.front().get(), snapshot, outputDir_, metadata_);
        snapshotBytes_ += written;
        return written;
    }
    std::uint64_t bytes = 0;
    std::string firstError;
    for (std::size_t i = 0; i < held_.size(); ++i) {
        const UstStream& s = held_[i];
        if (s.get() == nullptr)
            continue;
        const std::string name = name_ + "_" + std::to_string(s.cpu());
        try {
            // Quiescent: nothing was produced since Stop closed its last
            // packet, which is where the snapshot ends then.
            const bool quiescent = quiescentAt_[i] && producedPosition(s.get()) == *quiescentAt_[i];
            if (!quiescent)
                quiescentAt_[i].reset();
            const StreamSnapshot got = snapshotDataStream(s.get(), snapshot, outputDir_, name,
                                                          packetsPerStream, !quiescent);
            bytes += got.bytes;
            snapshotBytes_ += got.bytes;
            // Said, and counted as the channel's lost packets (as
            // lttng-consumerd counts them, ust-consumer.c): the stream
            // lacks these packet_seq_num values.
            if (got.lost != 0) {
                snapshotLost_ += got.lost;
                log::warning("snapshot of " + outputDir_ + "/" + name + ": " +
                             std::to_string(got.lost) +
                             " sub-buffer(s) overwritten by the tracer before they could be "
                             "copied (" +
                             std::to_string(got.packets) + " copied; best of " +
                             std::to_string(got.attempts) + " copies)");
            } else if (got.attempts > 1) {
                log::debug("snapshot of " + name + ": whole at copy " +
                           std::to_string(got.attempts));
            }
        } catch (const std::exception& e) {
            // Its files in the snapshot go too: they may hold what the app
            // spoiled.
            if (spoiledBuffer(e)) {
                dropSpoiled(i, e);
                snapshot.removeStream(outputDir_, name);
            } else if (firstError.empty()) {
                firstError = name + ": " + e.what();
            }
        }
    }
    if (!firstError.empty())
        throw RequestError(cp::ErrorKind::Io, "channel " + name_ + ": " + firstError);
    return bytes;
}

void Channel::commitMetadata() {
    StreamReader& reader = *readers_.front();
    if (!reader.isOpen())
        throw RequestError(cp::ErrorKind::Io, "the metadata stream was closed after an error");
    // lttng_ust_ctl_write_metadata_to_channel would wait (up to 10 s, polling)
    // for room in a full buffer that only this very thread empties; one
    // packet at a time, each switched out and drained at once, never waits.
    int emptyWrites = 0;
    while (metadataCommitted_ < metadata_.size()) {
        const ssize_t n = lttng_ust_ctl_write_one_packet_to_channel(
            ust_.get(), metadata_.data() + metadataCommitted_,
            metadata_.size() - metadataCommitted_);
        if (n < 0 && n != -ENOBUFS)
            throw RequestError(cp::ErrorKind::Tracer,
                               "lttng_ust_ctl_write_one_packet_to_channel failed: " +
                                   std::to_string(n));
        if (n <= 0) {
            // Full (-ENOBUFS) or no room left in the current packet: switch
            // and drain, then try again once.
            if (++emptyWrites > 1)
                throw RequestError(cp::ErrorKind::Tracer,
                                   "no room in the metadata ring buffer after draining it");
        } else {
            emptyWrites = 0;
            metadataCommitted_ += static_cast<std::size_t>(n);
        }
        reader.flush(true);
        reader.drain();
    }
}

void Channel::flush() {
    if (snapshotOnly_) {
        // Stop: close the last packets (even empty) so that snapshots taken
        // while stopped end where tracing did; nothing is read.
        if (ust_.isMetadata())
            return;
        for (std::size_t i = 0; i < held_.size(); ++i) {
            const UstStream& s = held_[i];
            if (s.get() == nullptr)
                continue;
            try {
                (void)openPacket(s.get()); // flush_buffer(stream, 0)
                quiescentAt_[i] = producedPosition(s.get());
            } catch (const UstError& e) {
                if (!spoiledBuffer(e))
                    throw RequestError(cp::ErrorKind::Tracer, e.what());
                dropSpoiled(i, e);
            }
        }
        return;
    }
    if (ust_.isMetadata()) {
        commitMetadata();
        readers_.front()->drain();
        return;
    }
    std::string firstError;
    for (const auto& r : readers_) {
        if (!r->isOpen())
            continue;
        try {
            r->flush(false);
            // Stop: the apps were made quiescent first (FlushChannel), so
            // a reservation still open is one whose writer died.
            r->fixUpStalled();
            r->drain();
        } catch (const std::exception& e) {
            if (spoiledBuffer(e))
                log::warning(e.what()); // dropped: its app's doing
            else if (firstError.empty())
                firstError = e.what();
        }
    }
    if (!firstError.empty())
        throw RequestError(cp::ErrorKind::Io, firstError);
}

Channel::RotateResult Channel::rotate(const std::shared_ptr<const ChunkOutput>& chunk,
                                      const std::function<void()>& switched,
                                      std::optional<bool> traceWentOn) noexcept {
    if (snapshotOnly_)
        return {0, "channel " + name_ + ": a snapshot session does not rotate"};
    std::uint32_t expected = 0;
    std::string firstError;
    if (!(ust_.isMetadata() ? traceWentOn.value_or(traceGoesOn()) : hasOpenStream())) {
        // Every data stream of this trace is closed (its app left): none
        // goes into the new chunk, so neither does its metadata, nor even
        // its folder. The trace is absent from the new chunk, not half
        // there; what is still pushed of its metadata goes to the old one.
        if (ust_.isMetadata()) {
            try {
                commitMetadata();
                readers_.front()->drain();
            } catch (const std::exception& e) {
                firstError = "channel " + name_ + ": " + e.what();
            }
        }
        for (std::size_t i = 0; i < readers_.size(); ++i) {
            ++expected;
            switched();
        }
        return {expected, firstError};
    }
    if (ust_.isMetadata()) {
        StreamReader& reader = *readers_.front();
        ++expected;
        try {
            commitMetadata(); // all of it into the old chunk first
            reader.drain();
            reader.switchFiles(*chunk);
            metadataCommitted_ = 0; // then all of it again into the new one
            commitMetadata();
        } catch (const std::exception& e) {
            reader.close();
            if (firstError.empty())
                firstError = e.what();
        }
        switched();
    } else {
        for (const auto& r : readers_) {
            ++expected;
            // Called exactly once per stream, whoever gets there first.
            auto once = std::make_shared<bool>(false);
            auto mine = [once, switched] {
                if (!std::exchange(*once, true))
                    switched();
            };
            try {
                r->rotate(chunk, mine);
            } catch (const std::exception& e) {
                if (spoiledBuffer(e))
                    log::warning(e.what()); // dropped: its app's doing
                else if (firstError.empty())
                    firstError = e.what();
                r->close(); // a failed stream has nothing more for any chunk
                mine();
            }
        }
    }
    if (!firstError.empty())
        firstError = "channel " + name_ + ": " + firstError;
    return {expected, firstError};
}

namespace {
/// How long a sub-buffer left short when an app died must keep its commit
/// count before it counts as stalled: a live writer commits its record
/// within microseconds of reserving it (lttng-ust 2.13 records no owner, so
/// which app holds a reservation cannot be read from the buffer).
constexpr auto kStalledGrace = std::chrono::seconds(3);
} // namespace

void Channel::producerGone(std::uint32_t pid) {
    if (snapshotOnly_ || ust_.isMetadata())
        return;
    gonePids_.push_back(pid);
    shortAtGone_.assign(readers_.size(), {});
    std::string firstError;
    bool any = false;
    for (std::size_t i = 0; i < readers_.size(); ++i) {
        try {
            shortAtGone_[i] = readers_[i]->switchAndListShort();
            readers_[i]->drain();
            any = any || !shortAtGone_[i].empty();
        } catch (const std::exception& e) {
            if (firstError.empty())
                firstError = e.what();
        }
    }
    std::size_t count = 0;
    for (const auto& found : shortAtGone_)
        count += found.size();
    if (any)
        log::notice("channel " + name_ + " of " + outputDir_ + ": app " + std::to_string(pid) +
                    " exited leaving " + std::to_string(count) +
                    " sub-buffer(s) short of a commit; each still short in " +
                    std::to_string(kStalledGrace.count()) +
                    " s is taken as stalled by a writer that died inside a reservation");
    if (any)
        stalledCheck_ =
            loop_.addTimer(std::chrono::duration_cast<std::chrono::microseconds>(kStalledGrace),
                           [this] { checkStalled(); });
    else if (!stalledCheck_)
        gonePids_.clear();
    if (!firstError.empty())
        throw RequestError(cp::ErrorKind::Io, firstError);
}

void Channel::checkStalled() noexcept {
    std::string who = "after app";
    who += gonePids_.size() > 1 ? "s " : " ";
    for (std::size_t i = 0; i < gonePids_.size(); ++i)
        who += (i != 0 ? ", " : "") + std::to_string(gonePids_[i]);
    who += " of channel " + name_ + " exited";
    gonePids_.clear();
    std::vector<std::vector<ShortSubbuffer>> suspects = std::exchange(shortAtGone_, {});
    for (std::size_t i = 0; i < readers_.size() && i < suspects.size(); ++i) {
        if (suspects[i].empty())
            continue;
        try {
            readers_[i]->fixUpStalled(&suspects[i], who);
            readers_[i]->drain();
        } catch (const std::exception& e) {
            log::warning(e.what());
        }
    }
    stalledCheck_.reset(); // this very source: the last thing done
}

void Channel::liveTick(bool newStreamsPublished) {
    if (snapshotOnly_ || ust_.isMetadata())
        return;
    std::string firstError;
    for (const auto& r : readers_) {
        try {
            r->liveTick(newStreamsPublished);
        } catch (const std::exception& e) {
            if (spoiledBuffer(e))
                log::warning(e.what()); // dropped: its app's doing
            else if (firstError.empty())
                firstError = e.what();
        }
    }
    if (!firstError.empty())
        throw RequestError(cp::ErrorKind::Io, firstError);
}

bool Channel::hasOpenStream() const noexcept {
    return std::any_of(readers_.begin(), readers_.end(), [](const auto& r) { return r->isOpen(); });
}

bool Channel::traceGoesOn() const noexcept {
    const auto it = dataChannelsByFolder().find(outputDir_);
    if (it == dataChannelsByFolder().end())
        return true; // no data channel (yet): the metadata alone is the trace
    return std::any_of(it->second.begin(), it->second.end(),
                       [](const Channel* c) { return c->hasOpenStream(); });
}

void Channel::declareLayouts(const cp::LayoutAbi& abi, std::string_view layouts) {
    if (!countEvents_)
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "channel " + std::to_string(key_) +
                               " counts no event records (a metadata or snapshot channel, or a "
                               "consumer started without --count-events)");
    try {
        const record_layout::ChannelLayouts decoded = record_layout::decode(layouts);
        if (counter_ == nullptr)
            counter_ = std::make_unique<RecordCounter>(record_layout::PacketFormat::fromAbi(abi));
        else if (!(abi == counter_->format().abi))
            throw record_layout::LayoutError("another ABI than the channel's first layouts");
        counter_->declare(decoded);
        // Also counts what waited for these layouts.
        for (const auto& r : readers_)
            r->setRecordCounter(counter_.get());
    } catch (const record_layout::LayoutError& e) {
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "channel " + std::to_string(key_) + ": layouts refused: " + e.what());
    }
}

cp::ChannelFigures Channel::figures() const noexcept {
    cp::ChannelFigures f;
    f.key = key_;
    if (snapshotOnly_) {
        f.bytesWritten = snapshotBytes_;
        f.bytesProduced = snapshotBytes_; // sampleProduced(): none of its own
        f.packetsLost = snapshotLost_;
        return f;
    }
    for (const auto& r : readers_) {
        f.bytesProduced += r->bytesProduced();
        f.eventsRecorded += r->eventsRecorded();
        f.eventsDiscarded += r->eventsDiscarded();
        f.packetsLost += r->lostPackets();
        f.bytesWritten += r->bytesWritten();
        f.chunkBytes += r->chunkBytes();
    }
    return f;
}

void Channel::sampleProduced() noexcept {
    // A snapshot session's buffers are never read as they fill, and their
    // produced position moves by whole sub-buffers (an app's first event
    // opens one; each snapshot's flush closes one): it says nothing of what
    // the apps wrote (a few KiB showed as 2 MiB, a fresh-user pass found).
    // Such a channel reports none (bytes-produced stays its bytes-written).
    if (snapshotOnly_)
        return;
    for (const auto& r : readers_)
        r->sampleProduced();
}

void Channel::setProgressHook(const std::function<void(std::uint64_t bytes)>& hook) {
    for (const auto& r : readers_)
        r->setProgressHook(hook);
}

bool Channel::releasedByAll() const noexcept {
    try {
        pollfd p{ust_.waitFd(), 0, 0};
        return ::poll(&p, 1, 0) == 1 && (p.revents & POLLHUP) != 0;
    } catch (const UstError&) {
        return false;
    }
}

void Channel::drainAndClose(bool producersStopped) noexcept {
    // No app holds the channel any more (a per-PID app that exited), even
    // if onChannelHangUp() has not run yet: no writer can be left.
    const bool noProducer = producersStopped || (!ust_.isMetadata() && releasedByAll());
    hangUpSource_.reset();
    switchTimer_.reset();
    if (snapshotOnly_) {
        held_.clear(); // its content goes with it: only snapshots write anything
        return;
    }
    if (ust_.isMetadata()) {
        try {
            commitMetadata();
        } catch (const std::exception& e) {
            log::warning("channel " + name_ + ": metadata not fully written: " + e.what());
        }
    }
    for (const auto& r : readers_) {
        try {
            // Even empty, and even with producers still writing (which
            // flush_buffer(stream, 0) allows): the stream's last packet ends
            // now, so a stream idle since the chunk began still covers it.
            if (!ust_.isMetadata()) {
                r->flush(false);
                // No writer left: a reservation still open is a dead one.
                if (noProducer || r->producersGone())
                    r->fixUpStalled();
            }
            r->drain();
        } catch (const std::exception& e) {
            log::warning(e.what());
        }
        r->close();
    }
}

} // namespace tracectl::consumer
