#include "consumer.hpp"

#include "common/fd_passing.hpp"
#include "common/log.hpp"
#include "config.h"
#include "kernel/kernel_channel.hpp"
#include "kernel/kernel_metadata_channel.hpp"
#include "output/local_output.hpp"
#include "remove_tree.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <limits>
#include <lttng/ust-ctl.h>
#include <optional>
#include <set>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <system_error>
#include <type_traits>
#include <unistd.h>
#include <variant>

namespace tracectl::consumer {

namespace cp = consumer_protocol;

namespace {

/// Most requests handled per wake-up, so streams get drained in between.
constexpr int kRequestsPerWakeup = 16;
/// How often, at most, the figures of channels being written are sent.
constexpr std::chrono::microseconds kStatisticsPeriod{1'000'000};

/// At the session's end, the lingering traces close one at a time this
/// far apart (a viewer whose last stream hung up asks for the next ones
/// within its retry period, 100 ms for babeltrace2's lttng-live), and all
/// within the limit, under the daemon's deadline for Shutdown (20 s).
constexpr std::chrono::milliseconds kShutdownDrainSpacing{800};
/// While the session goes on, the lingering traces close one at a time at
/// least this far apart (liveLinger()).
constexpr std::chrono::milliseconds kLingerSpacing{800};
constexpr std::chrono::seconds kShutdownDrainLimit{14};

/// Live-timer ticks for `span`, at least `minTicks`.
unsigned ticksFor(std::chrono::microseconds span, std::uint64_t liveTimerUsec, unsigned minTicks) {
    const auto usec = static_cast<std::uint64_t>(span.count());
    const std::uint64_t ticks = (usec + liveTimerUsec - 1) / liveTimerUsec;
    return static_cast<unsigned>(std::clamp<std::uint64_t>(ticks, minTicks, 1'000'000));
}

/// Live sessions: how long a stream closed while the session goes on (a
/// per-PID app exited) stays open on the relay, so that the viewers learn
/// of it and read it to its end (RelaySession::setLiveLinger()): at least
/// 3 ticks and 3 s; and the traces close at least 2 ticks and
/// kLingerSpacing apart (a viewer whose last stream hung up asks for the
/// next trace within its retry period, 100 ms for babeltrace2's
/// lttng-live; 2 s apart, a viewer trailed 20 short apps by a minute, and
/// the destroy's limit cut it at 16 of 20; 400 ms apart, a viewer on a
/// loaded machine missed one of 20).
RelaySession::Linger liveLinger(std::uint64_t liveTimerUsec) {
    return {ticksFor(std::chrono::seconds(3), liveTimerUsec, 3),
            ticksFor(kLingerSpacing, liveTimerUsec, 2)};
}
/// A reply or ust-ctl transfer blocked longer than this means the daemon
/// stopped reading: give up on it (SO_SNDTIMEO).
constexpr time_t kSendTimeoutSeconds = 30;
/// How long a Stop of a network session waits for the relay to hold every
/// packet sent (the daemon's deadline for FlushChannel is longer).
constexpr std::chrono::milliseconds kDataPendingTimeout{10'000};
/// What the folder of a user-space trace a snapshot consumer kept across a
/// takeover gets after its name, before the takeover's number.
constexpr std::string_view kKeptSuffix = "-before-restart-";

/// A set of handlers, one per type (std::visit's usual helper).
template <class... F>
struct Overloaded : F... {
    using F::operator()...;
};
// Spelled out for clang before 17 (no deduction for aggregates), which
// scripts/check-names' clang-tidy parses this file with.
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

/// The consumer's own messages (replies and unsolicited ones: their types
/// have the high bit set), which are no request.
template <class T>
concept ConsumerMessage = (static_cast<std::uint16_t>(T::kType) & 0x80) != 0;

/// The reply for a failed request, from the exception that says why.
cp::ErrorReply errorFor(const std::exception& e) {
    if (const auto* r = dynamic_cast<const RequestError*>(&e))
        return {r->kind(), r->what()};
    if (dynamic_cast<const UstError*>(&e) != nullptr)
        return {cp::ErrorKind::Tracer, e.what()};
    if (dynamic_cast<const StreamError*>(&e) != nullptr ||
        dynamic_cast<const std::system_error*>(&e) != nullptr)
        return {cp::ErrorKind::Io, e.what()};
    return {cp::ErrorKind::Tracer, e.what()};
}

/// The current chunk of a network snapshot consumer: none. Its channels
/// write only into each snapshot's own chunk (RecordSnapshotToRelay), never
/// here; anything that tried would be refused.
class NoChunk final : public ChunkOutput {
public:
    std::unique_ptr<StreamSink> openStream(std::string_view traceDir, std::string_view name,
                                           StreamKind) const override {
        throw std::runtime_error("a network snapshot consumer writes " + std::string(traceDir) +
                                 "/" + std::string(name) + " only into its snapshots");
    }
};

std::string truncated(std::string s) {
    if (s.size() > cp::kMaxText)
        s.resize(cp::kMaxText);
    for (char& c : s) {
        if (c == '\0')
            c = '?';
    }
    return s;
}

} // namespace

Consumer::Consumer(EventLoop& loop, UniqueFd socket, std::optional<OutputDir> root,
                   bool snapshotOnly, bool countEvents)
    : loop_(loop), sock_(std::move(socket)), root_(std::move(root)),
      chunk_(root_          ? std::make_shared<LocalChunk>(root_->subdir(""))
             : snapshotOnly ? std::shared_ptr<const ChunkOutput>(std::make_shared<NoChunk>())
                            : nullptr),
      snapshotOnly_(snapshotOnly), countEvents_(countEvents && !snapshotOnly) {
    chunkBegin_ = static_cast<std::uint64_t>(std::time(nullptr));
    const int flags = ::fcntl(sock_.get(), F_GETFL);
    if (flags < 0 || ::fcntl(sock_.get(), F_SETFL, flags & ~O_NONBLOCK) < 0)
        throw std::system_error(errno, std::generic_category(), "fcntl(command socket)");
    timeval tv{};
    tv.tv_sec = kSendTimeoutSeconds;
    if (::setsockopt(sock_.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0)
        throw std::system_error(errno, std::generic_category(), "SO_SNDTIMEO");
    sd_event_source* s = nullptr;
    const int r = sd_event_add_io(loop_.get(), &s, sock_.get(), EPOLLIN, &Consumer::onSocket, this);
    if (r < 0)
        throw std::system_error(-r, std::generic_category(), "sd_event_add_io(command socket)");
    source_.reset(s);
}

Consumer::~Consumer() {
    source_.reset();
    channels_.clear();
}

void Consumer::stop(int code) noexcept {
    if (stopping_)
        return;
    stopping_ = true;
    if (code == ExitOk)
        writeQueuedMetadata();
    source_.reset();
    liveTimer_.reset();
    relayControlWatch_.reset();
    relayDataWatch_.reset();
    for (auto& [key, ch] : channels_) {
        ch->drainAndClose(false);
        noteKernelEnd(*ch);
    }
    removeUndescribedStreams();
    channels_.clear();
    if (relay_) {
        relay_->closeLingering();
        // A rotation under way: its chunk is the relay's pending closure,
        // which must be closed before the current one (main.c,
        // relay_close_trace_chunk); every stream is closed now.
        if (rotation_)
            relay_->closeTraceChunk(rotation_->request.chunkIndex, rotation_->request.boundaryTime,
                                    relayCloseCommand(*rotation_));
        relay_->closeTraceChunk(relayChunkId_, static_cast<std::uint64_t>(std::time(nullptr)),
                                deleteChunkAtStop_
                                    ? std::optional(relayd::TraceChunkCloseCommand::Delete)
                                    : std::nullopt);
        if (deleteChunkAtStop_)
            log::info("relay chunk " + std::to_string(relayChunkId_) +
                      " deleted: opened while the session was stopped, it holds nothing");
        relay_.reset();
    }
    loop_.exit(code);
}

void Consumer::writeQueuedMetadata() noexcept {
    // The daemon pushes an app's registrations as they come and may stop
    // this unit right after (a session failing for another reason): what
    // is already on the socket is written before the channels close, so
    // their traces keep every event class (their records would not read
    // without them). Only PushMetadata: the first other request ends it.
    for (std::size_t i = 0; i < kMaxQueuedMetadataAtStop; ++i) {
        try {
            if (reader_.readFrom(sock_.get()) != cp::MessageReader::Status::Complete)
                return;
            cp::Frame frame = reader_.takeFrame();
            const auto* push = std::get_if<cp::PushMetadata>(&frame.message);
            if (push == nullptr)
                return;
            request_ = frame.request;
            pushMetadata(*push);
            reply(cp::Ok{});
        } catch (const std::exception& e) {
            log::warning(std::string("metadata queued before the stop not written: ") + e.what());
            return;
        }
    }
}

int Consumer::onSocket(sd_event_source*, int, std::uint32_t, void* userdata) {
    static_cast<Consumer*>(userdata)->readRequests();
    return 0;
}

void Consumer::readRequests() {
    for (int i = 0; i < kRequestsPerWakeup && !stopping_; ++i) {
        cp::MessageReader::Status status;
        try {
            status = reader_.readFrom(sock_.get());
        } catch (const cp::TruncatedFrame& e) {
            log::error(std::string("daemon connection lost: ") + e.what());
            stop(ExitDaemonLost);
            return;
        } catch (const cp::ProtocolError& e) {
            log::error(std::string("malformed request from the daemon: ") + e.what());
            // Framing is lost: say why (best effort), then leave.
            reply(cp::ErrorReply{cp::ErrorKind::Protocol, truncated(e.what())});
            stop(ExitProtocolError);
            return;
        } catch (const std::system_error& e) {
            log::error(std::string("daemon connection lost: ") + e.what());
            stop(ExitDaemonLost);
            return;
        }
        switch (status) {
        case cp::MessageReader::Status::WouldBlock:
            return;
        case cp::MessageReader::Status::Eof:
            log::notice("the daemon closed the connection; draining and exiting");
            stop(ExitDaemonLost);
            return;
        case cp::MessageReader::Status::Complete: {
            cp::Frame frame = reader_.takeFrame();
            request_ = frame.request;
            dispatch(std::move(frame.message));
            break;
        }
        }
    }
}

ChannelBase& Consumer::channel(std::uint64_t key) {
    const auto it = channels_.find(key);
    if (it == channels_.end())
        throw RequestError(cp::ErrorKind::UnknownChannel, "no channel " + std::to_string(key));
    return *it->second;
}

void Consumer::dispatch(cp::Message&& request) {
    const cp::MessageType type = cp::typeOf(request);
    log::debug(std::string("request ") + std::string(cp::messageName(type)));
    if (!greeted_ && !std::holds_alternative<cp::Hello>(request) &&
        !std::holds_alternative<cp::Adopt>(request)) {
        reply(cp::ErrorReply{cp::ErrorKind::Protocol, "the first request must be Hello or Adopt"});
        return;
    }
    // One handler per request; a request without one does not compile. A
    // handler that returns nothing leaves the Ok to dispatch().
    const auto handlers = Overloaded{
        [&](const cp::Hello& m) { return hello(m); },
        [&](const cp::Adopt& m) {
            adopt(m);
            return Answer::Sent;
        },
        [&](const cp::CreateChannel& m) {
            createChannel(m);
            return Answer::Sent;
        },
        [&](const cp::CreateKernelChannel& m) { createKernelChannel(m); },
        [&](const cp::DeclareKernelEvents& m) {
            channel(m.key).declareKernelEvents(m.conversions);
        },
        [&](const cp::AttachIpProbes& m) {
            // The fds first, whatever the answer (as for CreateKernelChannel).
            std::vector<UniqueFd> fds = takePassedFds("AttachIpProbes", 2);
            channel(m.key).attachIpProbes(m, std::move(fds[0]), std::move(fds[1]));
        },
        [&](const cp::AttachSyscallStrings& m) {
            std::vector<UniqueFd> fds = takePassedFds("AttachSyscallStrings", 2);
            channel(m.key).attachSyscallStrings(std::move(fds[0]), std::move(fds[1]));
        },
        [&](const cp::AttachRelayd& m) { attachRelayd(m); },
        [&](const cp::Rotate& m) {
            rotate(m);
            return Answer::Sent;
        },
        [&](const cp::RotateMetadata& m) {
            rotateMetadata(m);
            return Answer::Sent;
        },
        [&](const cp::ClearBuffers&) { clearBuffers(); },
        [&](const cp::RecordSnapshot& m) { recordSnapshot(m); },
        [&](const cp::RecordSnapshotToRelay& m) { recordSnapshotToRelay(m); },
        [&](const cp::SnapshotMetadata& m) { snapshotMetadata(m); },
        [&](const cp::PushMetadata& m) { pushMetadata(m); },
        [&](const cp::ProducerGone& m) { channel(m.key).producerGone(m.pid); },
        [&](const cp::FlushChannel& m) { return flushChannel(m); },
        [&](const cp::DestroyChannel& m) { return destroyChannel(m); },
        [&](const cp::WatchChunkSize& m) {
            chunkWatch_ = m.bytes;
            watchChunkAgain();
        },
        [&](const cp::DeclareLayouts& m) { channel(m.key).declareLayouts(m.abi, m.layouts); },
        [&](const cp::Shutdown& m) { return shutdown(m.deleteChunk); },
        [&]<ConsumerMessage T>(const T&) -> Answer {
            throw RequestError(cp::ErrorKind::Protocol,
                               std::string(T::kName) + " is not a request");
        },
    };
    const auto handle = [&](const auto& m) {
        if constexpr (std::is_void_v<decltype(handlers(m))>) {
            handlers(m);
            return Answer::Ok;
        } else {
            return handlers(m);
        }
    };
    try {
        if (std::visit(handle, request) == Answer::Ok)
            reply(cp::Ok{});
    } catch (const std::exception& e) {
        log::warning(std::string(cp::messageName(type)) + " failed: " + e.what());
        reply(errorFor(e));
    }
}

Consumer::Answer Consumer::hello(const cp::Hello& request) {
    if (refusedVersion(request.protocolVersion))
        return Answer::Sent;
    greeted_ = true;
    log::info("daemon " + request.version + " connected");
    reply(cp::HelloReply{cp::kVersion, static_cast<std::uint32_t>(::getpid()), TRACECTL_VERSION});
    return Answer::Sent;
}

Consumer::Answer Consumer::flushChannel(const cp::FlushChannel& request) {
    channel(request.key).flush();
    // Stop returns only once the relay holds everything (lttng-stop(1)
    // waits for the data-pending exchange too).
    if (relay_) {
        try {
            relay_->waitUntilReceived(kDataPendingTimeout);
        } catch (const std::exception& e) {
            throw RequestError(cp::ErrorKind::Io, e.what());
        }
    }
    // Final for this Stop: the figures go before the Ok.
    return reportStatistics() ? Answer::Ok : Answer::Sent;
}

Consumer::Answer Consumer::destroyChannel(const cp::DestroyChannel& request) {
    ChannelBase& doomed = channel(request.key);
    switchBeforeDestroy(request.key);
    doomed.drainAndClose(false);
    const bool sent = reportStatistics(request.key);
    std::optional<UnfinishedTrace> unfinished;
    if (const auto* ust = dynamic_cast<const Channel*>(&doomed);
        ust != nullptr && refusedTraceDirs_.count(ust->outputDir()) != 0)
        unfinished = UnfinishedTrace{ust->outputDir(), ust->streamNames(), ust->isMetadata()};
    channels_.erase(request.key);
    if (unfinished)
        removeUnfinishedTraceFiles(*unfinished);
    return sent ? Answer::Ok : Answer::Sent;
}

Consumer::Answer Consumer::shutdown(bool deleteChunk) {
    if (shutdownPending_)
        throw RequestError(cp::ErrorKind::InvalidArgument, "Shutdown is under way already");
    deleteChunkAtStop_ = deleteChunk;
    if (closeEveryChannel(true) == kNotSent)
        return Answer::Sent;
    if (relay_ && relay_->lingers() && liveTimer_) {
        // The exited apps' traces still linger for the viewers: closed one
        // at a time at their pace, so that a viewer reaches each before it
        // is gone from the relay; the answer comes then.
        shutdownPending_ = true;
        relay_->drainLingering(ticksFor(kShutdownDrainSpacing, liveTimerUsec_, 1));
        shutdownDeadline_ = loop_.addTimer(
            std::chrono::duration_cast<std::chrono::microseconds>(kShutdownDrainLimit), [this] {
                log::warning("the lingering traces of exited apps were not all closed at a "
                             "viewer's pace within " +
                             std::to_string(kShutdownDrainLimit.count()) +
                             " s: the rest close at once (a viewer may miss them)");
                finishShutdown();
            });
        shutdownRequest_ = request_;
        return Answer::Sent;
    }
    finishShutdown();
    return Answer::Sent;
}

void Consumer::finishShutdown() noexcept {
    shutdownPending_ = false;
    shutdownDeadline_.reset();
    if (relay_)
        relay_->closeLingering();
    const std::uint32_t request = std::exchange(shutdownRequest_, std::nullopt).value_or(request_);
    // Every channel is closed: the empty chunk goes before the answer, so that the session's
    // Destroy returns with it gone (a relay's is closed with DELETE at the stop).
    if (!relay_ && std::exchange(deleteChunkAtStop_, false) && root_ && !chunkName_.empty())
        deleteCurrentChunk();
    // Everything is closed either way; a relay that failed on the way did
    // not get it all, which the daemon's Destroy says.
    const bool delivered = !relay_ || relay_->failure().empty();
    if (delivered ? send(cp::Ok{}, request)
                  : send(cp::ErrorReply{cp::ErrorKind::Io,
                                        truncated("the relay failed while the buffers were "
                                                  "drained: " +
                                                  relay_->failure())},
                         request))
        stop(ExitOk);
}

void Consumer::removeUndescribedStreams() noexcept {
    const auto* local = dynamic_cast<const LocalChunk*>(chunk_.get());
    if (local == nullptr)
        return;
    // Judged by the metadata channel of the data channel's trace; a trace
    // without one is left as it is.
    for (const auto& [key, base] : channels_) {
        const auto* ch = dynamic_cast<const Channel*>(base.get());
        if (ch == nullptr || ch->isMetadata() || ch->streamNames().empty() ||
            describedByMetadata(*ch, true))
            continue;
        // No app registered the channel, so none wrote an event record in
        // it: its packets are empty, and name a stream class the trace's
        // metadata lacks, which would make the whole trace unreadable.
        if (removeStreamFiles(*local, *ch))
            log::notice("channel " + std::to_string(key) + " of " + ch->outputDir() +
                        ": no app registered it, so the metadata does not describe it; its "
                        "stream files (empty packets) were removed, so that the trace stays "
                        "readable");
    }
    // Then the metadata files no push reached (their data channels' files
    // went above: the index folder may be empty now).
    for (const auto& [key, base] : channels_)
        if (const auto* ch = dynamic_cast<const Channel*>(base.get()); ch && ch->isMetadata())
            removeEmptyMetadata(*local, key, *ch);
}

void Consumer::pushMetadata(const cp::PushMetadata& push) {
    ChannelBase& target = channel(push.key);
    target.pushMetadata(push.offset, push.bytes);
    const auto* ust = dynamic_cast<const Channel*>(&target);
    if (ust == nullptr)
        return; // the kernel's: its channels do not wait
    const Channel& meta = *ust;
    // Written now: the data that waited for it follows.
    for (auto& [key, base] : channels_)
        if (auto* data = dynamic_cast<Channel*>(base.get());
            data != nullptr && data->awaitsMetadata() && data->outputDir() == meta.outputDir() &&
            meta.declaresStreamClass(data->streamClassId()))
            data->release();
}

bool Consumer::describedByMetadata(const Channel& data, bool withoutMetadata) const noexcept {
    for (const auto& [key, base] : channels_) {
        const auto* meta = dynamic_cast<const Channel*>(base.get());
        if (meta != nullptr && meta->isMetadata() && meta->outputDir() == data.outputDir())
            return meta->declaresStreamClass(data.streamClassId());
    }
    return withoutMetadata;
}

bool Consumer::removeStreamFiles(const LocalChunk& chunk, const Channel& data) noexcept {
    try {
        const OutputDir dir = chunk.root().subdir(data.outputDir());
        const UniqueFd index(
            ::openat(dir.fd(), "index", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        for (const std::string& name : data.streamNames()) {
            (void)::unlinkat(dir.fd(), name.c_str(), 0);
            if (index)
                (void)::unlinkat(index.get(), (name + ".idx").c_str(), 0);
        }
        return true;
    } catch (const std::exception& e) {
        log::warning("channel " + std::to_string(data.key()) + " of " + data.outputDir() +
                     ": its stream files could not be removed: " + e.what());
        return false;
    }
}

void Consumer::forgetUnsentChannel(std::uint64_t key) noexcept {
    const auto it = channels_.find(key);
    if (it == channels_.end())
        return;
    // The daemon never got the channel (it went, or stopped reading): no
    // app will write into it, and its files, made already (empty streams,
    // an empty metadata file), would leave the chunk unreadable.
    if (const auto* local = dynamic_cast<const LocalChunk*>(chunk_.get()))
        if (const auto* ch = dynamic_cast<const Channel*>(it->second.get())) {
            if (ch->isMetadata())
                removeEmptyMetadata(*local, key, *ch);
            else
                (void)removeStreamFiles(*local, *ch);
        }
    channels_.erase(it);
}

void Consumer::removeEmptyMetadata(const LocalChunk& chunk, std::uint64_t key,
                                   const Channel& metadata) noexcept {
    // A chunk closed before the daemon pushed it any metadata (a takeover
    // right after another one began the chunk): its metadata file is empty,
    // which babeltrace2 refuses ("cannot append metadata content"), making
    // every trace read with it unreadable. Its data channels are
    // undescribed, so their stream files go too (above): nothing of the
    // trace is left to read, and its empty metadata file goes with them.
    try {
        const OutputDir dir = chunk.root().subdir(metadata.outputDir());
        struct stat st {};
        if (::fstatat(dir.fd(), "metadata", &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_size != 0)
            return;
        (void)::unlinkat(dir.fd(), "metadata", 0);
        (void)::unlinkat(dir.fd(), "index", AT_REMOVEDIR); // only if empty
        log::notice("channel " + std::to_string(key) + " of " + metadata.outputDir() +
                    ": the chunk closed before any metadata reached it; its empty metadata "
                    "file was removed, so that the chunk's other traces stay readable");
    } catch (const std::exception& e) {
        log::warning("channel " + std::to_string(key) + " of " + metadata.outputDir() +
                     ": its metadata file is empty and could not be removed: " + e.what());
    }
}

std::size_t Consumer::closeEveryChannel(bool viewersPace) {
    // All the metadata was pushed before: a deferred switch is due.
    if (rotation_) {
        const std::uint64_t id = rotation_->request.id; // it may complete below
        for (const auto& [key, wentOn] : std::exchange(rotation_->deferredMetadata, {}))
            switchMetadata(id, key, wentOn);
    }
    for (auto& [key, ch] : channels_) {
        ch->drainAndClose(false);
        noteKernelEnd(*ch);
    }
    removeUndescribedStreams();
    if (!reportStatistics())
        return kNotSent;
    const std::size_t closed = channels_.size();
    channels_.clear();
    if (relay_ && !viewersPace)
        relay_->closeLingering(); // taken over: the next daemon's channels go on
    return closed;
}

void Consumer::noteKernelEnd(const ChannelBase& ch) {
    if (const auto* kernel = dynamic_cast<const KernelChannel*>(&ch))
        kernelEnds_[kernel->name()] = kernel->lastTimestamps();
}

bool Consumer::refusedVersion(std::uint32_t version) noexcept {
    if (version == cp::kVersion)
        return false;
    reply(cp::ErrorReply{cp::ErrorKind::VersionMismatch,
                         "protocol version " + std::to_string(version) +
                             " not supported; this consumer speaks " +
                             std::to_string(cp::kVersion)});
    return true;
}

void Consumer::adopt(const cp::Adopt& request) {
    if (refusedVersion(request.protocolVersion))
        return;
    if (snapshotOnly_)
        return adoptSnapshotChannels(request);
    if (!root_ && !relay_) {
        reply(cp::ErrorReply{cp::ErrorKind::InvalidArgument,
                             "a network session's consumer that never reached its relay cannot "
                             "be taken over"});
        return;
    }
    log::notice("daemon " + request.version + " takes the session over: " +
                std::to_string(channels_.size()) + " channel(s) drained and closed into " +
                (chunkName_.empty() ? std::string("the output folder") : chunkName_));
    // As Shutdown: the previous daemon's metadata is all there is. The
    // streams closing completes a rotation under way (its
    // RotationCompleted goes before the reply).
    const std::size_t closed = closeEveryChannel();
    if (closed == kNotSent)
        return;
    reported_.clear();
    snapshot_.reset();
    greeted_ = true;
    reply(cp::AdoptReply{cp::kVersion, static_cast<std::uint32_t>(::getpid()), TRACECTL_VERSION,
                         nextKey_, chunkIndex_, chunkName_, chunkBegin_,
                         static_cast<std::uint32_t>(closed), relayOutputPath_});
}

void Consumer::adoptSnapshotChannels(const cp::Adopt& request) {
    // The buffers are the session's content: the previous daemon's
    // user-space ones stay, their trace in a folder of its own in the next
    // snapshots (the apps write into the next daemon's buffers, in the
    // folders these had), with the metadata it gave them. Those an earlier
    // takeover kept for a folder hold older events still: they go if the
    // previous daemon had buffers of its own for it (the buffers kept are
    // then twice the session's at most, whatever the restarts), and stay
    // if it had none (two restarts before the app came back). The kernel
    // ones are the tracefs instances' buffers, which the next daemon's
    // channels read: closed without reading them.
    ++takeovers_;
    const auto folderOf = [](const std::string& dir) {
        const std::size_t kept = dir.find(kKeptSuffix);
        return kept == std::string::npos ? dir : dir.substr(0, kept);
    };
    std::set<std::string> renewed; // folders the previous daemon had buffers in
    for (const auto& [key, base] : channels_)
        if (const auto* ust = dynamic_cast<const Channel*>(base.get());
            ust != nullptr && ust->outputDir().find(kKeptSuffix) == std::string::npos)
            renewed.insert(ust->outputDir());
    std::size_t closed = 0;
    for (auto it = channels_.begin(); it != channels_.end();) {
        auto* ust = dynamic_cast<Channel*>(it->second.get());
        const bool keptBefore =
            ust != nullptr && ust->outputDir().find(kKeptSuffix) != std::string::npos;
        if (ust != nullptr && !keptBefore) {
            ust->moveOutputDir(ust->outputDir() + std::string(kKeptSuffix) +
                               std::to_string(takeovers_));
            ++it;
            continue;
        }
        if (keptBefore && renewed.count(folderOf(ust->outputDir())) == 0) {
            ++it; // the previous daemon had nothing newer for that folder
            continue;
        }
        it->second->drainAndClose(false);
        noteKernelEnd(*it->second);
        it = channels_.erase(it);
        ++closed;
    }
    snapshot_.reset();
    greeted_ = true;
    log::notice("daemon " + request.version + " takes the snapshot session over: " +
                std::to_string(channels_.size()) + " user-space channel(s) kept, " +
                std::to_string(closed) + " kernel channel(s) closed");
    reply(cp::AdoptReply{cp::kVersion, static_cast<std::uint32_t>(::getpid()), TRACECTL_VERSION,
                         nextKey_, chunkIndex_, chunkName_, chunkBegin_,
                         static_cast<std::uint32_t>(closed), relayOutputPath_});
}

void Consumer::createChannel(const cp::CreateChannel& request) {
    try {
        makeChannel(request);
    } catch (const RequestError& e) {
        // Refused for want of fds: the daemon destroys what of this trace it
        // made, and it is never finished (no app writes into it, its
        // metadata declares none of its streams): those channels' files go
        // with them (DestroyChannel), so no half-made trace is left for a
        // reader to fail on.
        if (e.kind() == cp::ErrorKind::Resources && !snapshotOnly_)
            refusedTraceDirs_.insert(request.outputDir);
        throw;
    }
    // A trace made again in the folder (per-UID: the next app of that uid)
    // starts with its metadata channel: its files are kept from now on.
    if (request.kind == cp::ChannelKind::Metadata)
        refusedTraceDirs_.erase(request.outputDir);
}

void Consumer::makeChannel(const cp::CreateChannel& request) {
    // The objects socket rides on one byte right after the frame: taken
    // first, whatever the answer, so the next frame starts where it should.
    // Closing it unused (on an error) tells the daemon no object follows.
    UniqueFd objects;
    try {
        objects = takePassedFd("CreateChannel", "objects socket");
    } catch (const std::system_error& e) {
        // recvmsg drops an fd it cannot install (MSG_CTRUNC): out of fds,
        // the marker byte was read all the same, and framing holds.
        if (e.code().value() == EPROTO && fdsLeft() == 0)
            throw RequestError(cp::ErrorKind::Resources,
                               "channel " + request.name + " of " + request.outputDir +
                                   ": its objects socket could not be received (" +
                                   std::strerror(EMFILE) + ")");
        throw;
    }
    if (channels_.count(request.key) != 0)
        throw RequestError(cp::ErrorKind::ChannelExists,
                           "channel " + std::to_string(request.key) + " exists");
    refuseWithoutFdsFor(request);
    std::unique_ptr<Channel> ch;
    try {
        // Live: a data channel's packets wait for the metadata that declares
        // their stream class (StreamReader::hold()).
        const bool live = relay_ != nullptr && liveTimerUsec_ != 0;
        ch = std::make_unique<Channel>(loop_, currentChunk(), request, snapshotOnly_, countEvents_,
                                       live);
    } catch (const std::exception& e) {
        // Whatever of it was made is gone again (the files it opened stay,
        // empty: removed below). Out of fds is this channel's trouble
        // only: the others go on, and the daemon refuses the app.
        int err = 0;
        if (const auto* sys = dynamic_cast<const std::system_error*>(&e))
            err = sys->code().value();
        else if (const auto* ust = dynamic_cast<const UstError*>(&e))
            err = ust->systemErrno();
        if (err != EMFILE && err != ENFILE &&
            std::string_view(e.what()).find(std::strerror(EMFILE)) == std::string_view::npos)
            throw;
        removeFilesOfUnmadeChannel(request);
        throw RequestError(cp::ErrorKind::Resources, "channel " + request.name + " of " +
                                                         request.outputDir + ": " + e.what());
    }
    ch->setProgressHook([this](std::uint64_t bytes) { noteProgress(bytes); });
    Channel& created = *ch;
    nextKey_ = std::max(nextKey_, request.key + 1);
    channels_.emplace(request.key, std::move(ch));
    if (created.awaitsMetadata() && describedByMetadata(created, false))
        created.release();
    log::info("channel " + std::to_string(request.key) + " (" +
              (created.isMetadata() ? std::string("metadata") : request.name) + ") in " +
              request.outputDir + ": " + std::to_string(created.streamCount()) + " streams");
    try {
        // All of it is queued on the objects socket before the reply, so the
        // daemon reads it without waiting once ChannelCreated is there.
        created.sendToDaemon(objects.get());
    } catch (const std::exception& e) {
        forgetUnsentChannel(request.key);
        throw RequestError(cp::ErrorKind::Tracer,
                           std::string("sending the channel's buffers to the daemon: ") + e.what());
    }
    objects.reset();
    reply(cp::ChannelCreated{request.key, created.streamCount()});
    armSampling();
}

std::size_t Consumer::fdsLeft() noexcept {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
        return std::numeric_limits<std::size_t>::max();
    // Listing the folder takes one fd itself: none left, it fails (0).
    std::size_t open = 0;
    DIR* d = ::opendir("/proc/self/fd");
    if (d == nullptr)
        return errno == EMFILE || errno == ENFILE ? 0 : std::numeric_limits<std::size_t>::max();
    while (const dirent* e = ::readdir(d))
        if (e->d_name[0] != '.')
            ++open;
    ::closedir(d);
    open = open > 0 ? open - 1 : 0; // the listing's own
    return limit.rlim_cur > open ? static_cast<std::size_t>(limit.rlim_cur) - open : 0;
}

void Consumer::refuseWithoutFdsFor(const cp::CreateChannel& request) {
    // What a channel holds: per stream its shm, its wakeup pipe (2), its
    // stream file and index file; its own wakeup pipe (2) and the objects
    // socket. And a reserve that no channel takes: the channels made must
    // still rotate, snapshot and close (files opened, folders listed).
    const std::size_t streams =
        request.kind == cp::ChannelKind::Metadata
            ? 1
            : static_cast<std::size_t>(std::max(1, lttng_ust_ctl_get_nr_stream_per_channel()));
    const std::size_t needed = 5 * streams + 3 + kFdReserve;
    const std::size_t left = fdsLeft();
    if (left >= needed)
        return;
    throw RequestError(cp::ErrorKind::Resources,
                       "channel " + request.name + " of " + request.outputDir + " needs " +
                           std::to_string(needed - kFdReserve) + " file descriptors and " +
                           std::to_string(kFdReserve) + " must stay free; " + std::to_string(left) +
                           " are left (" + std::strerror(EMFILE) + ": the consumer's LimitNOFILE)");
}

void Consumer::removeFilesOfUnmadeChannel(const cp::CreateChannel& request) noexcept {
    // A channel whose construction failed half-way may have created its
    // files (empty); nobody will write nor describe them.
    const auto* local = dynamic_cast<const LocalChunk*>(chunk_.get());
    if (local == nullptr || snapshotOnly_)
        return;
    try {
        const OutputDir dir = local->root().subdir(request.outputDir);
        const UniqueFd index(
            ::openat(dir.fd(), "index", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (request.kind == cp::ChannelKind::Metadata) {
            struct stat st {};
            if (::fstatat(dir.fd(), "metadata", &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_size == 0)
                (void)::unlinkat(dir.fd(), "metadata", 0);
            return;
        }
        const int streams = std::max(1, lttng_ust_ctl_get_nr_stream_per_channel());
        for (int cpu = 0; cpu < streams; ++cpu) {
            const std::string name = request.name + "_" + std::to_string(cpu);
            struct stat st {};
            if (::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
                continue;
            (void)::unlinkat(dir.fd(), name.c_str(), 0);
            if (index)
                (void)::unlinkat(index.get(), (name + ".idx").c_str(), 0);
        }
    } catch (const std::exception&) {
        // Out of fds for the folder itself: the files stay (empty).
    }
}

void Consumer::removeUnfinishedTraceFiles(const UnfinishedTrace& trace) noexcept {
    const auto* local = dynamic_cast<const LocalChunk*>(chunk_.get());
    if (local == nullptr)
        return;
    try {
        const OutputDir dir = local->root().subdir(trace.outputDir);
        if (trace.metadata) {
            (void)::unlinkat(dir.fd(), "metadata", 0);
        } else {
            const UniqueFd index(
                ::openat(dir.fd(), "index", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            for (const std::string& name : trace.streams) {
                (void)::unlinkat(dir.fd(), name.c_str(), 0);
                if (index)
                    (void)::unlinkat(index.get(), (name + ".idx").c_str(), 0);
            }
        }
        // The folders once empty (the last of the trace's channels gone).
        (void)::unlinkat(dir.fd(), "index", AT_REMOVEDIR);
        (void)::unlinkat(local->root().fd(), trace.outputDir.c_str(), AT_REMOVEDIR);
        log::info("trace " + trace.outputDir + " was refused: its " +
                  (trace.metadata ? std::string("metadata") : "streams") + " removed");
    } catch (const std::exception&) {
        // The folder is gone already, or no fd to open it: nothing to remove.
    }
}

void Consumer::createKernelChannel(const cp::CreateKernelChannel& request) {
    // The fds come first, whatever the answer, so the next frame starts
    // where it should.
    std::vector<UniqueFd> fds = takePassedFds(
        "CreateKernelChannel", 2 * request.cpus.size() + (request.kernelStackType != 0 ? 1 : 0));
    if (channels_.count(request.key) != 0)
        throw RequestError(cp::ErrorKind::ChannelExists,
                           "channel " + std::to_string(request.key) + " exists");
    currentChunk(); // throws without an output
    std::unique_ptr<ChannelBase> ch;
    if (request.kind == cp::ChannelKind::Metadata)
        ch = std::make_unique<KernelMetadataChannel>(currentChunk(), request, snapshotOnly_);
    else {
        // Over buffers a closed channel of the previous daemon read: its
        // records there keep their time (they are older than now).
        std::map<std::uint32_t, std::uint64_t> resumeFrom;
        if (const auto ended = kernelEnds_.find(request.name); ended != kernelEnds_.end()) {
            resumeFrom = std::move(ended->second);
            kernelEnds_.erase(ended);
        }
        ch = std::make_unique<KernelChannel>(loop_, chunk_, request, std::move(fds), snapshotOnly_,
                                             resumeFrom);
    }
    ch->setProgressHook([this](std::uint64_t bytes) { noteProgress(bytes); });
    log::info("kernel channel " + std::to_string(request.key) + " (" +
              (request.kind == cp::ChannelKind::Metadata ? std::string("metadata") : request.name) +
              ") in " + request.outputDir + ": " + std::to_string(ch->streamCount()) + " streams");
    nextKey_ = std::max(nextKey_, request.key + 1);
    channels_.emplace(request.key, std::move(ch));
}

std::vector<UniqueFd> Consumer::takePassedFds(const char* request, std::size_t count) {
    std::vector<UniqueFd> fds;
    while (fds.size() < count) {
        const std::size_t group = std::min(kMaxPassedFds, count - fds.size());
        std::byte marker{};
        const std::size_t before = fds.size();
        if (recvExactWithFds(sock_.get(), std::span<std::byte>(&marker, 1), fds, before + group) !=
            1) {
            stop(ExitDaemonLost);
            throw RequestError(cp::ErrorKind::Protocol,
                               std::string("EOF instead of the fds of ") + request);
        }
        if (fds.size() != before + group)
            throw RequestError(cp::ErrorKind::Protocol,
                               std::string(request) + " came with " + std::to_string(fds.size()) +
                                   " of its " + std::to_string(count) + " fds");
    }
    return fds;
}

void Consumer::noteProgress(std::uint64_t bytes) noexcept {
    if (stopping_)
        return;
    bool now = false;
    if (chunkWatch_ != 0 && !chunkWatchFired_) {
        chunkBytesSeen_ += bytes;
        // The running sum guesses; the channels' figures decide (a rotation
        // under way moves streams to the next chunk one by one).
        if (chunkBytesSeen_ >= chunkWatch_) {
            chunkBytesSeen_ = chunkBytesNow();
            now = chunkBytesSeen_ >= chunkWatch_;
            chunkWatchFired_ = now;
        }
    }
    if (now) {
        // Sent from the loop, not from inside the read that got here.
        statisticsTimer_.reset();
        statisticsArmed_ = false;
    }
    if (statisticsArmed_)
        return;
    try {
        statisticsTimer_ =
            loop_.addTimer(now ? std::chrono::microseconds(0) : kStatisticsPeriod, [this] {
                statisticsArmed_ = false;
                reportStatistics();
            });
        statisticsArmed_ = true;
    } catch (const std::exception& e) {
        log::warning(std::string("statistics timer: ") + e.what());
    }
}

bool Consumer::reportStatistics(std::optional<std::uint64_t> key) noexcept {
    if (stopping_)
        return false;
    cp::Statistics m;
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    m.sampledAtUsec = static_cast<std::uint64_t>(now.tv_sec) * 1'000'000 +
                      static_cast<std::uint64_t>(now.tv_nsec) / 1000;
    const auto take = [&](ChannelBase& ch) {
        ch.sampleProduced();
        cp::ChannelFigures f = ch.figures();
        f.bytesProduced = std::max(f.bytesProduced, f.bytesWritten);
        const auto it = reported_.find(f.key);
        if (it != reported_.end() && it->second == f)
            return;
        reported_[f.key] = f;
        m.channels.push_back(f);
    };
    if (key) {
        if (const auto it = channels_.find(*key); it != channels_.end())
            take(*it->second);
        reported_.erase(*key);
    } else {
        for (const auto& [k, ch] : channels_)
            take(*ch);
    }
    if (m.channels.empty())
        return true;
    // Split so that each frame holds at most kMaxFiguresPerMessage.
    for (std::size_t from = 0; from < m.channels.size(); from += cp::kMaxFiguresPerMessage) {
        const std::size_t to = std::min(m.channels.size(), from + cp::kMaxFiguresPerMessage);
        cp::Statistics part{m.sampledAtUsec,
                            {m.channels.begin() + static_cast<std::ptrdiff_t>(from),
                             m.channels.begin() + static_cast<std::ptrdiff_t>(to)}};
        if (!send(part, 0))
            return false;
    }
    return true;
}

void Consumer::armSampling() noexcept {
    if (stopping_ || samplingTimer_ || channels_.empty())
        return;
    try {
        samplingTimer_ = loop_.addTimer(kStatisticsPeriod, [this] {
            // Only the channels whose figures moved are sent: nothing while
            // no app writes.
            reportStatistics();
            // The same source, again (it may not be freed in its callback).
            sd_event_source* timer = samplingTimer_.get();
            if (stopping_ || channels_.empty() ||
                sd_event_source_set_time_relative(
                    timer, static_cast<std::uint64_t>(kStatisticsPeriod.count())) < 0 ||
                sd_event_source_set_enabled(timer, SD_EVENT_ONESHOT) < 0)
                loop_.defer([this] {
                    samplingTimer_.reset();
                    armSampling(); // a channel made meanwhile
                });
        });
    } catch (const std::exception& e) {
        log::warning(std::string("sampling timer: ") + e.what());
    }
}

UniqueFd Consumer::takePassedFd(const char* request, const char* what) {
    std::byte marker{};
    std::vector<UniqueFd> fds;
    if (recvExactWithFds(sock_.get(), std::span<std::byte>(&marker, 1), fds, 1) != 1) {
        stop(ExitDaemonLost);
        throw RequestError(cp::ErrorKind::Protocol,
                           std::string("EOF instead of the ") + what + " of " + request);
    }
    if (fds.size() != 1)
        throw RequestError(cp::ErrorKind::Protocol,
                           std::string(request) + " came without its " + what);
    return std::move(fds.front());
}

const OutputDir& Consumer::root() const {
    if (!root_)
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "this consumer streams to a relay and has no local output folder");
    return *root_;
}

const ChunkOutput& Consumer::currentChunk() const {
    if (!chunk_)
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "no output yet: a network session's consumer takes AttachRelayd "
                           "before any channel");
    return *chunk_;
}

void Consumer::attachRelayd(const cp::AttachRelayd& request) {
    // The fds first, whatever the answer, so the next frame starts right.
    std::vector<UniqueFd> fds = takePassedFds("AttachRelayd", 2);
    if (relay_)
        throw RequestError(cp::ErrorKind::InvalidArgument, "a relay is attached already");
    if (!channels_.empty())
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "AttachRelayd after channels were made: they write locally");
    if (snapshotOnly_)
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "a snapshot consumer does not stream: each snapshot comes with its "
                           "own relay connections (RecordSnapshotToRelay)");
    try {
        relayd::RelaydControl control(relayd::RelaydSocket::adopt(std::move(fds[0]), "the relay"));
        control.adoptSession(relayd::Version{relayd::kProtocolMajor, request.relayMinor},
                             request.relaySessionId);
        relayd::RelaydData data(relayd::RelaydSocket::adopt(std::move(fds[1]), "the relay"));
        auto session = std::make_shared<RelaySession>(std::move(control), std::move(data),
                                                      request.relaySessionId);
        session->setFailureHook([this](const std::string& why) {
            // Unsolicited; if even this fails the daemon is gone anyway.
            send(cp::OutputFailed{truncated(why)}, 0); // the daemon names the relay
        });
        session->createTraceChunk(request.chunkId, request.chunkCreationTime);
        relay_ = std::move(session);
    } catch (const std::exception& e) {
        throw RequestError(cp::ErrorKind::Io, std::string("attaching the relay: ") + e.what());
    }
    relayChunkId_ = request.chunkId;
    chunkIndex_ = request.chunkId;
    chunkBegin_ = request.chunkCreationTime;
    relayOutputPath_ = request.outputPath;
    chunk_ = std::make_shared<RelayChunk>(relay_, request.chunkId);
    for (auto [fd, watch] : {std::pair{relay_->controlFd(), &relayControlWatch_},
                             std::pair{relay_->dataFd(), &relayDataWatch_}}) {
        sd_event_source* s = nullptr;
        const int r = sd_event_add_io(loop_.get(), &s, fd, EPOLLIN | EPOLLRDHUP,
                                      &Consumer::onRelayIdle, this);
        if (r < 0)
            throw RequestError(cp::ErrorKind::Io,
                               std::string("watching the relay connection: ") + std::strerror(-r));
        watch->reset(s);
    }
    liveTimerUsec_ = request.liveTimerUsec;
    if (liveTimerUsec_ != 0) {
        relay_->setLiveLinger(liveLinger(liveTimerUsec_));
        rearmLiveTimer();
    }
    log::info("streaming to the relay, session " + std::to_string(request.relaySessionId) +
              (liveTimerUsec_ != 0 ? ", live timer " + std::to_string(liveTimerUsec_) + " us"
                                   : std::string()));
}

int Consumer::onRelayIdle(sd_event_source*, int fd, std::uint32_t, void* userdata) {
    auto* self = static_cast<Consumer*>(userdata);
    if (!self->relay_)
        return 0;
    self->relay_->checkIdleConnection(fd);
    if (!self->relay_->failure().empty()) {
        // Level-triggered: a lost connection stays readable.
        self->relayControlWatch_.reset();
        self->relayDataWatch_.reset();
    }
    return 0;
}

void Consumer::rearmLiveTimer() {
    // addTimer() is one-shot: each tick arms the next.
    liveTimer_ = loop_.addTimer(std::chrono::microseconds(liveTimerUsec_), [this] {
        liveTick();
        if (!stopping_)
            rearmLiveTimer();
    });
}

void Consumer::liveTick() noexcept {
    const bool newStreamsPublished = relay_ && relay_->takeNewStreamsPublished();
    for (auto& [key, ch] : channels_) {
        // Its packets wait for their metadata (StreamReader::hold()), and
        // so does its beacon.
        if (const auto* data = dynamic_cast<const Channel*>(ch.get());
            data != nullptr && data->awaitsMetadata())
            continue;
        try {
            ch->liveTick(newStreamsPublished);
        } catch (const std::exception& e) {
            log::warning("live timer, channel " + std::to_string(key) + ": " + e.what());
        }
    }
    if (relay_)
        relay_->liveTick(); // the streams of exited per-PID apps, lingering for the viewers
    if (shutdownPending_ && relay_ && !relay_->lingers()) {
        finishShutdown(); // every trace closed at the viewers' pace
        return;
    }
}

void Consumer::rotate(const cp::Rotate& request) {
    if (rotation_)
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "rotation " + std::to_string(rotation_->request.id) +
                               " is still under way");
    // Throws: nothing changed yet.
    const auto oldChunk = std::dynamic_pointer_cast<const LocalChunk>(chunk_);
    if (relay_)
        chunk_ = beginRelayRotation(request);
    else
        chunk_ = std::make_shared<LocalChunk>(root().subdir(request.newChunk));
    rotation_ = Rotation{request, 0, true, {}, {}, false, oldChunk, {}};
    for (const auto& [key, ch] : channels_)
        if (const auto* ust = dynamic_cast<const Channel*>(ch.get());
            oldChunk && ust != nullptr && !ust->isMetadata() && !ust->streamNames().empty())
            rotation_->oldDataChannels.insert(key);
    chunkIndex_ = request.chunkIndex + 1;
    chunkName_ = request.newChunk;
    chunkBegin_ = request.boundaryTime;
    log::info("rotation " + std::to_string(request.id) + ": new chunk " + request.newChunk);
    const std::uint64_t id = request.id;
    for (auto& [key, ch] : channels_) {
        if (ch->isMetadata()) {
            // Switched by RotateMetadata: until then what the daemon pushes
            // still belongs to the old chunk too (consumer_protocol.hpp).
            rotation_->deferredMetadata.emplace_back(key, ch->traceGoesOn());
            ++rotation_->pending;
            continue;
        }
        const Channel::RotateResult r = ch->rotate(chunk_, [this, id] { streamSwitched(id); });
        rotation_->pending += r.expected;
        if (!r.error.empty()) {
            log::warning("rotation " + std::to_string(id) + ": " + r.error);
            if (rotation_->firstError.empty())
                rotation_->firstError = r.error;
        }
    }
    // Streams that switched at once were counted down before being counted
    // up: the sum only settles here. Ok first, then maybe RotationCompleted.
    rotation_->asking = false;
    if (!reply(cp::Ok{}))
        return;
    ++rotation_->pending;
    streamSwitched(id);
}

void Consumer::rotateMetadata(const cp::RotateMetadata& request) {
    if (!rotation_ || rotation_->request.id != request.id || rotation_->metadataSwitched) {
        // Over already (it had no metadata to switch), or never began.
        reply(cp::Ok{});
        return;
    }
    rotation_->metadataSwitched = true;
    const std::uint64_t id = request.id;
    const auto keys = std::exchange(rotation_->deferredMetadata, {});
    // Ok first: the switches below may complete the rotation.
    if (!reply(cp::Ok{}))
        return;
    for (const auto& [key, wentOn] : keys)
        switchMetadata(id, key, wentOn);
}

void Consumer::switchMetadata(std::uint64_t id, std::uint64_t key, bool traceWentOn) {
    const auto it = channels_.find(key);
    if (it == channels_.end()) {
        streamSwitched(id);
        return;
    }
    // Judged before the switch may complete the rotation (and archive the
    // old chunk): what was pushed until now is the old chunk's metadata
    // (the switch writes all of it there first).
    if (const auto* meta = dynamic_cast<const Channel*>(it->second.get());
        meta != nullptr && rotation_ && rotation_->request.id == id)
        leaveOutUndescribed(*rotation_, *meta);
    const Channel::RotateResult r = it->second->rotate(
        chunk_, [this, id] { streamSwitched(id); }, traceWentOn);
    if (!r.error.empty()) {
        log::warning("rotation " + std::to_string(id) + ": " + r.error);
        if (rotation_ && rotation_->request.id == id && rotation_->firstError.empty())
            rotation_->firstError = r.error;
    }
}

void Consumer::leaveOutUndescribed(Rotation& r, const Channel& metadata) noexcept {
    if (!r.oldChunk)
        return;
    for (auto it = r.oldDataChannels.begin(); it != r.oldDataChannels.end();) {
        const auto found = channels_.find(*it);
        const auto* data =
            found == channels_.end() ? nullptr : dynamic_cast<const Channel*>(found->second.get());
        if (data == nullptr) {
            it = r.oldDataChannels.erase(it); // destroyed meanwhile: its files stay
            continue;
        }
        if (data->outputDir() != metadata.outputDir()) {
            ++it;
            continue;
        }
        if (!metadata.declaresStreamClass(data->streamClassId()) &&
            removeStreamFiles(*r.oldChunk, *data))
            log::notice("rotation " + std::to_string(r.request.id) + ": channel " +
                        std::to_string(*it) + " of " + data->outputDir() +
                        " left out of the old chunk: its trace's metadata there does not "
                        "describe it (its app had not registered it; empty packets only)");
        it = r.oldDataChannels.erase(it);
    }
}

void Consumer::switchBeforeDestroy(std::uint64_t key) {
    if (!rotation_)
        return;
    auto& keys = rotation_->deferredMetadata;
    const auto it =
        std::find_if(keys.begin(), keys.end(), [key](const auto& k) { return k.first == key; });
    if (it == keys.end())
        return;
    const bool wentOn = it->second;
    const std::uint64_t id = rotation_->request.id;
    keys.erase(it);
    switchMetadata(id, key, wentOn);
}

void Consumer::snapshotMetadata(const cp::SnapshotMetadata& request) {
    if (!snapshot_ || snapshot_->id != request.id)
        throw RequestError(cp::ErrorKind::InvalidArgument, "snapshot " +
                                                               std::to_string(request.id) +
                                                               " is not the last one recorded");
    const Snapshot s = std::move(*snapshot_);
    snapshot_.reset();
    std::string firstError;
    std::size_t written = 0;
    for (auto& [key, ch] : channels_) {
        if (!ch->isMetadata())
            continue;
        ++written;
        try {
            ch->recordSnapshot(*s.chunk, 0);
        } catch (const std::exception& e) {
            if (firstError.empty())
                firstError = e.what();
        }
    }
    if (s.relay) {
        // Every stream is closed: once the relay holds all of it, the
        // chunk is closed as it is (lttng-tools 2.13 cmd.c snapshot_record:
        // LTTNG_TRACE_CHUNK_COMMAND_TYPE_NO_OPERATION), and the relay
        // session goes with its connections (`s` is the last owner).
        try {
            s.relay->archiveChunk(s.relayChunkId, static_cast<std::uint64_t>(std::time(nullptr)),
                                  relayd::TraceChunkCloseCommand::NoOperation, kDataPendingTimeout);
        } catch (const std::exception& e) {
            if (firstError.empty())
                firstError = std::string("the relay: ") + e.what();
        }
    }
    // A trace whose data was copied and whose metadata channel was closed
    // since (its session destroyed meanwhile) cannot be read.
    if (written < s.metadataChannels && firstError.empty())
        firstError = std::to_string(s.metadataChannels - written) +
                     " trace(s)' metadata channel(s) closed after their data was copied";
    // What the snapshot wrote counts now, before the Ok (nothing else
    // reports a snapshot consumer's figures: it reads no packet).
    reportStatistics();
    if (!firstError.empty())
        throw RequestError(cp::ErrorKind::Io, "snapshot " + std::to_string(request.id) +
                                                  " metadata incomplete: " + firstError);
}

void Consumer::recordSnapshot(const cp::RecordSnapshot& request) {
    // The folder's fd rides on one byte right after the frame: take it
    // first, whatever the answer, so the next frame starts where it should.
    UniqueFd folder = takePassedFd("RecordSnapshot", "folder fd");
    if (!snapshotOnly_)
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "this consumer was not started for a snapshot session");
    if (rotation_)
        throw RequestError(cp::ErrorKind::InvalidArgument, "a rotation is under way");
    std::shared_ptr<const ChunkOutput> chunk;
    try {
        chunk = std::make_shared<LocalChunk>(OutputDir::adopt(std::move(folder)));
    } catch (const std::system_error& e) {
        throw RequestError(cp::ErrorKind::InvalidArgument, e.what());
    }
    takeSnapshot(request.id, request.packetsPerStream, std::move(chunk), nullptr, 0);
}

void Consumer::recordSnapshotToRelay(const cp::RecordSnapshotToRelay& request) {
    // The fds first, whatever the answer, so the next frame starts right.
    std::vector<UniqueFd> fds = takePassedFds("RecordSnapshotToRelay", 2);
    if (!snapshotOnly_)
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "this consumer was not started for a snapshot session");
    if (rotation_)
        throw RequestError(cp::ErrorKind::InvalidArgument, "a rotation is under way");
    std::shared_ptr<RelaySession> session;
    try {
        relayd::RelaydControl control(relayd::RelaydSocket::adopt(std::move(fds[0]), "the relay"));
        control.adoptSession(relayd::Version{relayd::kProtocolMajor, request.relayMinor},
                             request.relaySessionId);
        relayd::RelaydData data(relayd::RelaydSocket::adopt(std::move(fds[1]), "the relay"));
        // No failure hook: this relay session lives for one snapshot, whose
        // replies carry its failures; the session's own output is unharmed.
        session = std::make_shared<RelaySession>(std::move(control), std::move(data),
                                                 request.relaySessionId);
        session->setSnapshot();
        session->createTraceChunk(request.chunkId, request.chunkCreationTime, request.chunkName);
    } catch (const std::exception& e) {
        throw RequestError(cp::ErrorKind::Io, "snapshot " + std::to_string(request.id) +
                                                  ": opening its chunk on the relay: " + e.what());
    }
    auto chunk = std::make_shared<RelayChunk>(session, request.chunkId);
    takeSnapshot(request.id, request.packetsPerStream, std::move(chunk), std::move(session),
                 request.chunkId);
}

void Consumer::takeSnapshot(std::uint64_t id, std::uint64_t packetsPerStream,
                            std::shared_ptr<const ChunkOutput> chunk,
                            std::shared_ptr<RelaySession> relay, std::uint64_t relayChunkId) {
    snapshot_.reset(); // one whose metadata never came is over
    std::uint64_t bytes = 0;
    std::size_t metadataChannels = 0;
    std::string firstError;
    for (auto& [key, ch] : channels_) {
        if (ch->isMetadata()) {
            ++metadataChannels;
            continue; // SnapshotMetadata writes it, once the daemon pushed the rest
        }
        // A channel whose stream class its trace's metadata does not
        // declare yet (per-PID: its app is being set up, and registers the
        // channel only when it starts tracing) holds only the empty packets
        // this process opened, and would name a stream class the
        // snapshot's metadata lacks: babeltrace2 would refuse the whole
        // snapshot. It is left out. The metadata only grows, so a stream
        // class declared now is declared in what SnapshotMetadata writes.
        if (const auto* ust = dynamic_cast<const Channel*>(ch.get());
            ust != nullptr && !describedByMetadata(*ust, false)) {
            log::notice("snapshot " + std::to_string(id) + ": channel " + std::to_string(key) +
                        " of " + ust->outputDir() +
                        " left out: its trace's metadata does not describe it yet (its app is "
                        "registering it)");
            continue;
        }
        try {
            bytes += ch->recordSnapshot(*chunk, packetsPerStream);
        } catch (const std::exception& e) {
            if (firstError.empty())
                firstError = e.what();
        }
    }
    reportStatistics(); // the data streams' bytes, before the Ok
    if (!firstError.empty())
        throw RequestError(cp::ErrorKind::Io,
                           "snapshot " + std::to_string(id) + " incomplete: " + firstError);
    snapshot_ = Snapshot{id, metadataChannels, std::move(chunk), std::move(relay), relayChunkId};
    log::info("snapshot " + std::to_string(id) + ": " + std::to_string(bytes) + " bytes from " +
              std::to_string(channels_.size()) + " channels" +
              (snapshot_->relay ? std::string(" sent to the relay") : std::string()));
}

void Consumer::streamSwitched(std::uint64_t id) {
    if (!rotation_ || rotation_->request.id != id)
        return;
    if (--rotation_->pending != 0 || rotation_->asking)
        return;
    Rotation done = std::move(*rotation_);
    rotation_.reset();
    const cp::Rotate& r = done.request;
    std::string error = done.firstError;
    if (relay_) {
        if (const std::string e = endRelayRotation(done); error.empty())
            error = e;
        announceRotation(r.id, error);
        return;
    }
    if (r.discard) {
        // Session.Clear: the closed chunk goes, whatever it holds.
        if (const std::string e = deleteChunk(r); error.empty())
            error = e;
        log::info("rotation " + std::to_string(r.id) + ": chunk " +
                  (r.oldChunk.empty() ? std::string("(the output folder's)") : r.oldChunk) +
                  " deleted (clear)" + (error.empty() ? "" : " (incomplete: " + error + ")"));
        announceRotation(r.id, error);
        return;
    }
    try {
        const auto slash = r.archive.rfind('/');
        const OutputDir parent =
            root().subdir(slash == std::string::npos ? "" : r.archive.substr(0, slash));
        const std::string leaf =
            slash == std::string::npos ? r.archive : r.archive.substr(slash + 1);
        if (r.oldChunk.empty()) {
            // The first chunk is the output folder itself: its domains move.
            const OutputDir archive = root().subdir(r.archive);
            for (const char* domain : {"ust", "kernel"})
                if (root().has(domain))
                    root().moveEntry(domain, archive, domain);
        } else {
            root().moveEntry(r.oldChunk, parent, leaf);
        }
    } catch (const std::exception& e) {
        if (error.empty())
            error = std::string("archiving the chunk: ") + e.what();
    }
    log::info("rotation " + std::to_string(r.id) + ": chunk archived as " + r.archive +
              (error.empty() ? "" : " (incomplete: " + error + ")"));
    announceRotation(r.id, error);
}

void Consumer::announceRotation(std::uint64_t id, const std::string& error) noexcept {
    // The chunk sizes start again: the daemon has them before it is told.
    if (stopping_ || !reportStatistics())
        return;
    if (!send(cp::RotationCompleted{id, error.empty(), truncated(error)}, 0))
        return;
    watchChunkAgain();
}

std::uint64_t Consumer::chunkBytesNow() const noexcept {
    std::uint64_t total = 0;
    for (const auto& [key, ch] : channels_)
        total += ch->figures().chunkBytes;
    return total;
}

void Consumer::watchChunkAgain() noexcept {
    chunkWatchFired_ = false;
    chunkBytesSeen_ = chunkBytesNow();
    noteProgress(0);
}

std::string Consumer::deleteChunk(const cp::Rotate& r) noexcept {
    try {
        if (r.oldChunk.empty()) {
            // The first chunk is the output folder itself: its domains go,
            // the new chunk and any archives stay.
            for (const char* domain : {"ust", "kernel"})
                removeTree(root().fd(), domain);
        } else {
            const auto slash = r.oldChunk.rfind('/');
            const OutputDir parent =
                root().subdir(slash == std::string::npos ? "" : r.oldChunk.substr(0, slash));
            removeTree(parent.fd(),
                       slash == std::string::npos ? r.oldChunk : r.oldChunk.substr(slash + 1));
        }
        return {};
    } catch (const std::exception& e) {
        return std::string("deleting the chunk: ") + e.what();
    }
}

void Consumer::deleteCurrentChunk() noexcept {
    try {
        const auto slash = chunkName_.rfind('/');
        const OutputDir parent =
            root().subdir(slash == std::string::npos ? "" : chunkName_.substr(0, slash));
        removeTree(parent.fd(),
                   slash == std::string::npos ? chunkName_ : chunkName_.substr(slash + 1));
        log::info("chunk " + chunkName_ +
                  " deleted: opened while the session was stopped, it holds nothing");
    } catch (const std::exception& e) {
        log::warning("deleting the chunk " + chunkName_ + ": " + e.what());
    }
}

void Consumer::clearBuffers() {
    if (!snapshotOnly_)
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "this consumer was not started for a snapshot session");
    std::string firstError;
    std::size_t cleared = 0;
    for (auto& [key, ch] : channels_) {
        if (ch->isMetadata())
            continue; // the metadata describes what comes after too
        try {
            ch->clearBuffers();
            ++cleared;
        } catch (const std::exception& e) {
            if (firstError.empty())
                firstError = e.what();
        }
    }
    log::info("buffers of " + std::to_string(cleared) + " channels cleared");
    if (!firstError.empty())
        throw RequestError(cp::ErrorKind::Tracer, "clearing the buffers: " + firstError);
}

bool Consumer::reply(const cp::Message& m) noexcept {
    return send(m, request_);
}

bool Consumer::send(const cp::Message& m, std::uint32_t request) noexcept {
    try {
        cp::writeMessage(sock_.get(), m, request);
        return true;
    } catch (const std::exception& e) {
        log::error(std::string("cannot reply to the daemon: ") + e.what());
        stop(ExitDaemonLost);
        return false;
    }
}

} // namespace tracectl::consumer

namespace tracectl::consumer {

relayd::TraceChunkCloseCommand Consumer::relayCloseCommand(const Rotation& r) noexcept {
    return r.request.discard ? relayd::TraceChunkCloseCommand::Delete
                             : relayd::TraceChunkCloseCommand::MoveToCompleted;
}

std::shared_ptr<const ChunkOutput> Consumer::beginRelayRotation(const cp::Rotate& request) {
    if (request.chunkIndex != relayChunkId_)
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "rotation " + std::to_string(request.id) + " closes chunk " +
                               std::to_string(request.chunkIndex) + ", but the relay's is " +
                               std::to_string(relayChunkId_));
    const std::uint64_t next = request.chunkIndex + 1;
    try {
        relay_->createTraceChunk(next, request.boundaryTime);
    } catch (const std::exception& e) {
        throw RequestError(cp::ErrorKind::Io, std::string("rotating on the relay: ") + e.what());
    }
    relayChunkId_ = next;
    return std::make_shared<RelayChunk>(relay_, next);
}

std::string Consumer::endRelayRotation(const Rotation& done) noexcept {
    const cp::Rotate& r = done.request;
    try {
        const std::string where = relay_->archiveChunk(
            r.chunkIndex, r.boundaryTime, relayCloseCommand(done), kDataPendingTimeout);
        log::info("rotation " + std::to_string(r.id) + ": relay chunk " +
                  std::to_string(r.chunkIndex) + (r.discard ? " deleted (clear)" : " archived") +
                  " (the relay says " + where + ")");
        return {};
    } catch (const std::exception& e) {
        log::warning("rotation " + std::to_string(r.id) + ": " + e.what());
        return std::string("closing the chunk on the relay: ") + e.what();
    }
}

} // namespace tracectl::consumer
