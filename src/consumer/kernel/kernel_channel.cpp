#include "kernel_channel.hpp"

#include "common/kernel_records.hpp"
#include "common/log.hpp"
#include "kernel/ip_ring_reader.hpp"
#include "kernel/ip_stream.hpp"
#include "kernel/packet_ring.hpp"
#include "kernel/statedump.hpp"
#include "output/local_output.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <system_error>
#include <unistd.h>

namespace tracectl::consumer {

namespace cp = consumer_protocol;

namespace {

std::uint64_t monotonicNow() noexcept {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

/// The "dropped events: N" of a per_cpu stats file (ftrace's
/// ring_buffer_dropped_events_cpu(): events refused with the buffer full),
/// or nullopt if it cannot be read.
std::optional<std::uint64_t> droppedEvents(int fd) {
    char text[1024];
    const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
    if (n <= 0)
        return std::nullopt;
    text[n] = '\0';
    const char* at = std::strstr(text, "dropped events: ");
    if (at == nullptr)
        return std::nullopt;
    return std::strtoull(at + std::strlen("dropped events: "), nullptr, 10);
}

/// Pages one wake-up reads from one CPU at most, so that the loop serves
/// the other CPUs and the daemon in between.
constexpr std::size_t kPagesPerWakeup = 256;
/// Bytes one splice(2) asks for: many whole pages per system call, as
/// trace-cmd's recorder splices a pipe's capacity at a time. One page per
/// call cost two system calls (splice, then read of the pipe) per page:
/// with every system call traced, 4 of a page's ~100 events were the
/// consumer's own.
constexpr std::size_t kSpliceBatchBytes = 256 * 1024;
/// Ring-buffer records one wake-up reads at most, for the same reason.
constexpr std::size_t kIpRecordsPerWakeup = 16384;

} // namespace

struct KernelChannel::Cpu {
    KernelChannel* owner = nullptr;
    std::uint32_t cpu = 0;
    UniqueFd fd;
    UniqueFd stats; ///< per_cpu/cpuN/stats, read with pread
    EventSourcePtr watch;
    Output out;
    std::unique_ptr<kernel::FtraceStream> stream;
    bool shortReadTold = false;
    /// The pipe whole pages are spliced through (wake-ups), read end first;
    /// absent if it could not be made or splice(2) is refused: read(2) then.
    UniqueFd pipeRead, pipeWrite;
    /// Bytes one splice asks for: whole pages, at most the pipe's capacity.
    std::size_t spliceBytes = 0;
    /// Whole pages spliced since the read timer's last tick.
    std::size_t wholeSinceTick = 0;
    /// The wake-up found no whole page (ftrace's watermark below one page,
    /// or the conversions not declared yet): its watch is off until the
    /// next read-timer tick, which reads the partial page.
    bool paused = false;
    /// A snapshot channel's: the stream's newest packets, which every
    /// snapshot writes (kernel/packet_ring.hpp).
    std::unique_ptr<kernel::PacketRing> history;
};

struct KernelChannel::Ip {
    KernelChannel* owner = nullptr;
    std::optional<kernel::IpRingReader> reader;
    EventSourcePtr watch;
    Output out;
    std::unique_ptr<kernel::IpStream> stream;
};

kernel::PacketSink KernelChannel::sinkTo(Output& out) {
    return [this, &out](std::span<const std::byte> packet, const IndexEntry& entry) {
        if (!out.sink || !out.failure.empty())
            return;
        try {
            out.sink->write(packet.data(), packet.size(), packet.size(), &entry);
        } catch (const std::exception& err) {
            out.failure = err.what();
            closeStream(out);
            return;
        }
        out.bytesWritten += packet.size();
        out.chunkBytes += packet.size();
        if (progress_)
            progress_(packet.size());
    };
}

void KernelChannel::openStream(Output& out, const ChunkOutput& chunk,
                               const std::string& stream) const {
    out.sink = chunk.openStream(outputDir_, stream, StreamKind::Data);
    out.chunkBytes = 0;
    out.failure.clear();
}

void KernelChannel::closeStream(Output& out) noexcept {
    if (out.sink)
        out.sink->close();
    out.sink.reset();
}

KernelChannel::KernelChannel(EventLoop& loop, std::shared_ptr<const ChunkOutput> chunk,
                             const cp::CreateKernelChannel& request, std::vector<UniqueFd> fds,
                             bool snapshotOnly,
                             const std::map<std::uint32_t, std::uint64_t>& resumeFrom)
    : key_(request.key), name_(request.name), outputDir_(request.outputDir), loop_(loop),
      snapshotOnly_(snapshotOnly), request_(request), strings_(request.name),
      pageSize_(request.pageSize),
      pages_(std::max<std::size_t>(
          pageSize_, kSpliceBatchBytes / std::max<std::size_t>(pageSize_, 1) * pageSize_)) {
    for (std::size_t i = 0; i < uuid_.size(); ++i)
        uuid_[i] = static_cast<std::byte>(request.traceUuid[i]);
    const std::size_t kallsymsFds = request.kernelStackType != 0 ? 1 : 0;
    if (fds.size() != 2 * request.cpus.size() + kallsymsFds)
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "kernel channel " + name_ + ": " + std::to_string(fds.size()) +
                               " fds for " + std::to_string(request.cpus.size()) + " CPUs");
    if (kallsymsFds != 0) {
        try {
            kernelSymbols_ = kernel::KernelSymbols::read(fds.back().get());
        } catch (const std::exception& e) {
            log::warning("kernel channel " + name_ +
                         ": no kernel symbols, the call stacks stay unnamed: " + e.what());
        }
        fds.pop_back();
    }
    kernel::PageFormat format;
    format.pageSize = request.pageSize;
    format.timestampOffset = request.timestampOffset;
    format.timestampSize = request.timestampSize;
    format.commitOffset = request.commitOffset;
    format.commitSize = request.commitSize;
    format.dataOffset = request.dataOffset;
    if (snapshotOnly_)
        chunk.reset();
    // Every stream begins now (tracing goes on later): the first packets
    // of an idle stream span the time up to its first flush.
    const std::uint64_t begin = monotonicNow();
    for (std::size_t i = 0; i < request.cpus.size(); ++i) {
        auto c = std::make_unique<Cpu>();
        c->owner = this;
        c->cpu = request.cpus[i];
        c->fd = std::move(fds[i]);
        c->stats = std::move(fds[request.cpus.size() + i]);
        makePipe(*c);
        Cpu* raw = c.get();
        kernel::FtraceStreamConfig config;
        config.pageFormat = format;
        config.uuid = uuid_;
        config.streamId = request.streamId;
        config.cpuId = c->cpu;
        config.maxPacketBytes = request.packetSize;
        config.contextMask = request.contextMask;
        config.kernelStackType = request.kernelStackType;
        config.userStackType = request.userStackType;
        config.kernelSymbols = &kernelSymbols_;
        config.userMaps = &userMaps_;
        config.beginTimestamp = begin;
        config.userStrings = strings_.source();
        if (const auto from = resumeFrom.find(c->cpu); from != resumeFrom.end())
            config.beginTimestamp = std::min(begin, from->second);
        kernel::PacketSink sink = sinkTo(c->out);
        if (snapshotOnly_) {
            // What the snapshots read, kept in memory for the next ones.
            c->history = std::make_unique<kernel::PacketRing>(request.bufferBytes);
            sink = [history = c->history.get()](std::span<const std::byte> packet,
                                                const IndexEntry& entry) {
                history->append(packet, entry);
            };
        }
        c->stream = std::make_unique<kernel::FtraceStream>(config, conversions_, &processes_,
                                                           std::move(sink));
        if (chunk) {
            try {
                openStream(*c, *chunk);
            } catch (const std::exception& e) {
                throw RequestError(cp::ErrorKind::Io, "creating the stream " + outputDir_ + "/" +
                                                          name_ + "_" + std::to_string(c->cpu) +
                                                          ": " + e.what());
            }
            sd_event_source* s = nullptr;
            const int r = sd_event_add_io(loop_.get(), &s, c->fd.get(), EPOLLIN,
                                          &KernelChannel::onReadable, raw);
            if (r < 0)
                throw RequestError(cp::ErrorKind::Io, "watching CPU " + std::to_string(c->cpu) +
                                                          ": " + std::strerror(-r));
            // Read from the first DeclareKernelEvents on.
            sd_event_source_set_enabled(s, SD_EVENT_OFF);
            c->watch.reset(s);
        }
        cpus_.push_back(std::move(c));
    }
    // Not over a closed channel's buffers (a takeover): the session's first
    // channel wrote it, and events stamped now would come before the older
    // records still in those buffers, whose times would then be raised to
    // the statedump's (the stream never goes backward).
    if (chunk && request.statedump && !cpus_.empty() && resumeFrom.empty())
        writeStatedump();
    if (chunk)
        chunk->streamsOpened();
    chunk_ = std::move(chunk);
}

KernelChannel::~KernelChannel() = default;

std::map<std::uint32_t, std::uint64_t> KernelChannel::lastTimestamps() const {
    std::map<std::uint32_t, std::uint64_t> last;
    for (const auto& c : cpus_)
        last[c->cpu] = c->stream->lastTimestamp();
    return last;
}

void KernelChannel::openStream(Cpu& c, const ChunkOutput& chunk) {
    openStream(c.out, chunk, name_ + "_" + std::to_string(c.cpu));
}

void KernelChannel::attachIpProbes(const cp::AttachIpProbes& request, UniqueFd ring,
                                   UniqueFd counters) {
    if (ip_)
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "kernel channel " + name_ + " has the ip provider's stream already");
    auto ip = std::make_unique<Ip>();
    ip->owner = this;
    try {
        ip->reader.emplace(std::move(ring), std::move(counters));
    } catch (const std::exception& e) {
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "kernel channel " + name_ + ": the ip provider's maps: " + e.what());
    }
    kernel::IpStreamConfig config;
    config.uuid = uuid_;
    config.streamId = request_.streamId;
    config.maxPacketBytes = request_.packetSize;
    config.contextMask = request_.contextMask;
    config.sendId = request.sendId;
    config.receiveId = request.receiveId;
    config.beginTimestamp = monotonicNow(); // before the program is enabled
    ip->stream = std::make_unique<kernel::IpStream>(config, &processes_, sinkTo(ip->out));
    if (!snapshotOnly_) {
        try {
            openStream(ip->out, *chunk_, name_ + "_ip");
            chunk_->streamsOpened();
        } catch (const std::exception& e) {
            throw RequestError(cp::ErrorKind::Io, "creating the stream " + outputDir_ + "/" +
                                                      name_ + "_ip: " + e.what());
        }
        sd_event_source* s = nullptr;
        const int r = sd_event_add_io(loop_.get(), &s, ip->reader->pollFd(), EPOLLIN,
                                      &KernelChannel::onIpReadable, ip.get());
        if (r < 0)
            throw RequestError(cp::ErrorKind::Io, "watching the ip provider's ring buffer: " +
                                                      std::string(std::strerror(-r)));
        ip->watch.reset(s);
    }
    ip_ = std::move(ip);
}

void KernelChannel::attachSyscallStrings(UniqueFd ring, UniqueFd counters) {
    try {
        strings_.attach(loop_, std::move(ring), std::move(counters), !snapshotOnly_, cpus_.size());
    } catch (const std::exception& e) {
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "kernel channel " + name_ + ": system-call strings: " + e.what());
    }
}

int KernelChannel::onIpReadable(sd_event_source*, int, std::uint32_t, void* userdata) {
    auto* ip = static_cast<Ip*>(userdata);
    try {
        ip->owner->drainIp(kIpRecordsPerWakeup);
    } catch (const std::exception& e) {
        log::warning("kernel channel " + ip->owner->name_ + " (ip): " + e.what());
    }
    return 0;
}

std::size_t KernelChannel::drainIp(std::size_t limit) {
    if (!ip_ || !ip_->reader)
        return 0;
    kernel::IpStream& stream = *ip_->stream;
    const std::size_t n =
        ip_->reader->consume([&stream](const tracectl_ip_record& r) { stream.consume(r); }, limit);
    stream.setDropped(ip_->reader->dropped());
    if (!ip_->out.failure.empty())
        throw std::runtime_error("writing " + name_ + "_ip: " + ip_->out.failure);
    return n;
}

void KernelChannel::writeStatedump() {
    // Into the first CPU's stream, before tracing goes on: its packets
    // then begin with the statedump, and no stream covers only its instant.
    Cpu& first = *cpus_.front();
    kernel::ContextValues context;
    // The consumer's own thread stands in as the writer of these events
    // (lttng-modules' statedump runs in the session daemon's context).
    context.tid = static_cast<std::int32_t>(::gettid());
    context.pid = static_cast<std::int32_t>(::getpid());
    ::prctl(PR_GET_NAME, context.procname); // 16 bytes, NUL padded
    context.cpuId = static_cast<std::int32_t>(first.cpu);
    try {
        kernel::Statedump dump(kernel::StatedumpSources{});
        const kernel::StatedumpCounts counts =
            dump.run([&](std::uint16_t id, std::uint64_t ts, std::span<const std::byte> fields) {
                return first.stream->appendEvent(id, ts, context, fields);
            });
        log::info("kernel channel " + name_ + ": statedump of " + std::to_string(counts.processes) +
                  " processes, " + std::to_string(counts.threads) + " threads, " +
                  std::to_string(counts.files) + " files, into CPU " + std::to_string(first.cpu) +
                  "'s stream");
    } catch (const std::exception& e) {
        // The trace goes on without it: analyses then name only the
        // threads that run or fork while it records.
        log::warning("kernel channel " + name_ + ": statedump: " + e.what());
    }
}

void KernelChannel::makePipe(Cpu& c) {
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC | O_NONBLOCK) < 0) {
        log::warning("kernel channel " + name_ + " CPU " + std::to_string(c.cpu) +
                     ": no pipe to splice pages through (" + std::strerror(errno) +
                     "); each wake-up reads partial pages too");
        return;
    }
    c.pipeRead.reset(ends[0]);
    c.pipeWrite.reset(ends[1]);
    // As many whole pages as pages_ holds, if the pipe can be made that
    // large (pipe-max-size permitting); at least one page, or no pipe.
    ::fcntl(c.pipeWrite.get(), F_SETPIPE_SZ, static_cast<int>(pages_.size()));
    const int capacity = ::fcntl(c.pipeWrite.get(), F_GETPIPE_SZ);
    const std::size_t whole =
        capacity > 0 ? std::min(static_cast<std::size_t>(capacity), pages_.size()) / pageSize_ : 0;
    if (whole == 0) {
        c.pipeRead.reset();
        c.pipeWrite.reset();
        return;
    }
    c.spliceBytes = whole * pageSize_;
}

void KernelChannel::armTimer() {
    timer_ = loop_.addTimer(std::chrono::microseconds(request_.readTimerUsec), [this] {
        tick();
        // Strings no record took by now never will (their records were
        // filtered out or lost): a record is read within a few ticks.
        strings_.tick(monotonicNow(),
                      std::max<std::uint64_t>(2'000'000'000, 4000 * request_.readTimerUsec));
        // The wake-ups that found no whole page watch again.
        for (auto& c : cpus_)
            if (std::exchange(c->paused, false) && c->watch)
                sd_event_source_set_enabled(c->watch.get(), SD_EVENT_ON);
        armTimer();
    });
}

int KernelChannel::onReadable(sd_event_source*, int, std::uint32_t, void* userdata) {
    auto* c = static_cast<Cpu*>(userdata);
    try {
        // Readable (ftrace's watermark) yet no whole page to splice: what
        // is there is taken as the read timer takes it (a few reads at
        // most), rather than left to fill the buffer until the next tick.
        if (c->owner->drain(*c, kPagesPerWakeup, true) == 0 &&
            c->owner->drain(*c, kPagesPerWakeup, false) == 0 && c->watch) {
            // Still nothing: watching again at once would spin. The read
            // timer looks again.
            c->paused = true;
            sd_event_source_set_enabled(c->watch.get(), SD_EVENT_OFF);
        }
    } catch (const std::exception& e) {
        log::warning("kernel channel " + c->owner->name_ + " CPU " + std::to_string(c->cpu) + ": " +
                     e.what());
    }
    return 0;
}

ssize_t KernelChannel::takePages(Cpu& c, bool wholeOnly, std::size_t most) {
    if (!wholeOnly || !c.pipeWrite)
        return ::read(c.fd.get(), pages_.data(), pageSize_);
    // splice(2) hands over only whole pages (ftrace's
    // tracing_buffers_splice_read): the page being written stays, so the
    // consumer's own system calls, recorded there, do not wake it again.
    const std::size_t ask = std::min(c.spliceBytes, std::max<std::size_t>(most, 1) * pageSize_);
    const ssize_t n =
        ::splice(c.fd.get(), nullptr, c.pipeWrite.get(), nullptr, ask, SPLICE_F_NONBLOCK);
    if (n < 0 && (errno == EINVAL || errno == ENOSYS)) {
        log::warning("kernel channel " + name_ + " CPU " + std::to_string(c.cpu) +
                     ": splice(2) refused (" + std::strerror(errno) +
                     "); each wake-up reads partial pages too");
        c.pipeRead.reset();
        c.pipeWrite.reset();
        return ::read(c.fd.get(), pages_.data(), pageSize_);
    }
    if (n <= 0)
        return n;
    std::size_t got = 0;
    while (got < static_cast<std::size_t>(n)) {
        const ssize_t r =
            ::read(c.pipeRead.get(), pages_.data() + got, static_cast<std::size_t>(n) - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            throw std::system_error(r < 0 ? errno : EIO, std::generic_category(),
                                    "reading CPU " + std::to_string(c.cpu) + "'s spliced pages");
        got += static_cast<std::size_t>(r);
    }
    return n;
}

std::size_t KernelChannel::drain(Cpu& c, std::size_t limit, bool wholeOnly) {
    if (!declared_)
        return 0; // what the buffer holds stays there until it can be converted
    std::size_t pages = 0;
    // Whole pages first, then (unless `wholeOnly`) what is left, read(2)
    // a few times at most: a read of the page being written records the
    // read itself (with every system call traced) into what becomes the
    // next partial page, so reading until nothing is left never ends. A
    // few, not one: a page read in part before (ftrace's reader page) is
    // not spliced, and the page being written is behind it (at Stop, with
    // tracing off, both must be taken). Without splice(2), every read may
    // be a partial page: bounded as a wake-up is.
    constexpr std::size_t kPartialReads = 4;
    std::size_t partialReads = 0;
    bool spliceDone = !c.pipeWrite;
    const std::size_t most = c.pipeWrite ? limit : std::min(limit, kPagesPerWakeup);
    while (pages < most && c.fd) {
        ssize_t n = takePages(c, wholeOnly || !spliceDone, most - pages);
        if (n < 0 && errno == EINTR)
            continue;
        if (!spliceDone && !wholeOnly &&
            (n == 0 || (n < 0 && (errno == EAGAIN || errno == ENOMEM || errno == EBUSY)))) {
            spliceDone = true; // no whole page left: what is left, by read(2)
            continue;
        }
        if (n < 0) {
            if (errno == EAGAIN || errno == ENOMEM || errno == EBUSY || errno == ENODEV)
                break; // nothing more now (perfetto's cpu_reader.cc does the same)
            throw std::system_error(errno, std::generic_category(),
                                    "reading CPU " + std::to_string(c.cpu) + "'s buffer");
        }
        if (n == 0)
            break;
        if (static_cast<std::size_t>(n) % pageSize_ != 0) {
            // ftrace hands out whole sub-buffers (perfetto's cpu_reader.cc
            // treats anything else as an error too): told once per CPU.
            if (!c.shortReadTold)
                log::warning("kernel channel " + name_ + " CPU " + std::to_string(c.cpu) +
                             ": read " + std::to_string(n) +
                             " bytes, not whole sub-buffers; dropped (said once)");
            c.shortReadTold = true;
            break;
        }
        // The strings copied at sys_enter of the pages' records are in the
        // ring by now (the program runs before ftrace writes the record):
        // they go to the table before the pages are converted.
        strings_.drain();
        for (std::size_t at = 0; at < static_cast<std::size_t>(n); at += pageSize_) {
            c.stream->consumePage(std::span<const std::byte>(pages_.data() + at, pageSize_));
            ++pages;
        }
        if (!spliceDone || wholeOnly)
            c.wholeSinceTick += static_cast<std::size_t>(n) / pageSize_;
        if (spliceDone && c.pipeWrite && ++partialReads == kPartialReads)
            break;
    }
    if (c.stats) {
        if (const auto dropped = droppedEvents(c.stats.get()))
            c.stream->setDropped(*dropped);
    }
    if (!c.out.failure.empty())
        throw std::runtime_error("writing " + name_ + "_" + std::to_string(c.cpu) + ": " +
                                 c.out.failure);
    return pages;
}

void KernelChannel::tick() noexcept {
    for (auto& c : cpus_) {
        try {
            // Whole pages first. A CPU that filled a page since the last
            // tick holds back less than a timer period in its partial
            // page, which stays until it fills: reading it meanwhile
            // takes ftrace's reader page in part, and splice(2) then hands
            // over nothing until it is read whole, while the buffer fills
            // (at 1.5 M system calls/s, a 20 ms read timer lost 147,000
            // events of 3 million). A quieter CPU's partial page is read.
            const std::size_t whole = drain(*c, SIZE_MAX, true);
            if (std::exchange(c->wholeSinceTick, 0) + whole == 0)
                drain(*c);
        } catch (const std::exception& e) {
            log::warning("kernel channel " + name_ + " CPU " + std::to_string(c->cpu) + ": " +
                         e.what());
        }
    }
    try {
        drainIp();
    } catch (const std::exception& e) {
        log::warning("kernel channel " + name_ + " (ip): " + e.what());
    }
}

std::string KernelChannel::drainAll() noexcept {
    std::string first;
    for (auto& c : cpus_) {
        try {
            drain(*c);
        } catch (const std::exception& e) {
            if (first.empty())
                first = e.what();
        }
    }
    try {
        drainIp();
    } catch (const std::exception& e) {
        if (first.empty())
            first = e.what();
    }
    return first;
}

void KernelChannel::clearBuffers() {
    if (!snapshotOnly_)
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "kernel channel " + name_ + " is not a snapshot channel");
    // What the buffers hold now is dropped unread, and so is the history
    // with the packet under way. Bounded, in case a CPU produces faster
    // than it is read.
    constexpr std::size_t kMaxPages = std::size_t{1} << 20;
    std::string first;
    for (auto& c : cpus_) {
        for (std::size_t pages = 0; pages < kMaxPages && c->fd; ++pages) {
            const ssize_t n = ::read(c->fd.get(), pages_.data(), pageSize_);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && errno != EAGAIN && errno != ENOMEM && errno != EBUSY && errno != ENODEV &&
                first.empty())
                first =
                    "clearing CPU " + std::to_string(c->cpu) + "'s buffer: " + std::strerror(errno);
            if (n <= 0)
                break;
        }
    }
    const std::uint64_t now = monotonicNow();
    for (auto& c : cpus_) {
        c->stream->flush(now); // its packet under way goes with the history
        c->history->clear();
    }
    if (ip_ && ip_->reader)
        ip_->reader->consume([](const tracectl_ip_record&) {}, SIZE_MAX);
    strings_.tick(now, 0); // their records are gone
    if (!first.empty())
        throw RequestError(cp::ErrorKind::Io, "kernel channel " + name_ + ": " + first);
}

void KernelChannel::flush() {
    if (snapshotOnly_)
        return;
    std::string first = drainAll();
    const std::uint64_t now = monotonicNow();
    for (auto& c : cpus_) {
        c->stream->flush(now);
        if (first.empty() && !c->out.failure.empty())
            first = c->out.failure;
    }
    if (ip_) {
        ip_->stream->flush(now);
        if (first.empty() && !ip_->out.failure.empty())
            first = ip_->out.failure;
    }
    if (!first.empty())
        throw RequestError(cp::ErrorKind::Io, "kernel channel " + name_ + ": " + first);
}

ChannelBase::RotateResult KernelChannel::rotate(const std::shared_ptr<const ChunkOutput>& chunk,
                                                const std::function<void()>& switched,
                                                std::optional<bool>) noexcept {
    RotateResult r;
    if (snapshotOnly_)
        return r;
    r.error = drainAll();
    const std::uint64_t now = monotonicNow();
    r.expected = streamCount();
    const auto next = [&](auto& stream, Output& out, const std::string& file) {
        stream.flush(now);
        try {
            // The same stream going on (a relay keeps its stream), then the
            // old chunk's sink closes (handed over: nothing to do).
            std::unique_ptr<StreamSink> sink =
                out.sink ? chunk->continueStream(*out.sink, outputDir_, file, StreamKind::Data)
                         : chunk->openStream(outputDir_, file, StreamKind::Data);
            closeStream(out);
            out.sink = std::move(sink);
            out.chunkBytes = 0;
            out.failure.clear();
        } catch (const std::exception& e) {
            closeStream(out);
            out.failure = e.what();
            if (r.error.empty())
                r.error = "kernel channel " + file + ": " + e.what();
        }
        switched();
    };
    for (auto& c : cpus_) {
        next(*c->stream, c->out, name_ + "_" + std::to_string(c->cpu));
        c->stream->forgetSymbols(); // each chunk names its own
    }
    if (ip_)
        next(*ip_->stream, ip_->out, name_ + "_ip");
    try {
        chunk->streamsOpened();
    } catch (const std::exception& e) {
        if (r.error.empty())
            r.error = "kernel channel " + name_ + ": " + e.what();
    }
    chunk_ = chunk;
    return r;
}

void KernelChannel::drainAndClose(bool) noexcept {
    timer_.reset();
    if (!snapshotOnly_) {
        const std::string failed = drainAll();
        if (!failed.empty())
            log::warning("kernel channel " + name_ + ": " + failed);
        const std::uint64_t now = monotonicNow();
        for (auto& c : cpus_)
            c->stream->flush(now);
        if (ip_)
            ip_->stream->flush(now);
    }
    for (auto& c : cpus_) {
        c->watch.reset();
        closeStream(c->out);
        c->fd.reset();
        c->stats.reset();
    }
    if (ip_) {
        ip_->watch.reset();
        closeStream(ip_->out);
        ip_->reader.reset(); // closes the maps: the program's last fds may go with them
    }
    strings_.close();
}

std::uint64_t KernelChannel::recordSnapshot(const ChunkOutput& snapshot,
                                            std::uint64_t packetsPerStream) {
    if (!snapshotOnly_)
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "kernel channel " + name_ + " is not a snapshot channel");
    std::string first;
    std::uint64_t bytes = 0;
    const std::uint64_t now = monotonicNow();
    const auto failed = [&](const std::exception& e) {
        if (first.empty())
            first = e.what();
    };
    // Each CPU: what its buffer holds now joins its history, its packet
    // closed at the snapshot; then a copy of the history, which stays.
    for (auto& c : cpus_) {
        try {
            drain(*c);
            c->stream->flush(now);
            const std::unique_ptr<StreamSink> sink = snapshot.openStream(
                outputDir_, name_ + "_" + std::to_string(c->cpu), StreamKind::Data);
            c->history->writeTo(*sink, packetsPerStream);
            c->out.bytesWritten += sink->bytes();
            bytes += sink->bytes();
            sink->close();
        } catch (const std::exception& e) {
            failed(e);
        }
    }
    // The ip provider's ring buffer holds what came since the last snapshot
    // read it (a BPF ring buffer does not overwrite: records that found it
    // full are counted as discarded).
    if (ip_) {
        try {
            const std::uint64_t before = ip_->out.bytesWritten;
            openStream(ip_->out, snapshot, name_ + "_ip");
            drainIp();
            ip_->stream->flush(now);
            bytes += ip_->out.bytesWritten - before;
        } catch (const std::exception& e) {
            failed(e);
        }
        closeStream(ip_->out);
    }
    snapshotBytes_ += bytes;
    if (!first.empty())
        throw RequestError(cp::ErrorKind::Io, "kernel channel " + name_ + ": " + first);
    return bytes;
}

void KernelChannel::pushMetadata(std::uint64_t, std::string_view) {
    throw RequestError(cp::ErrorKind::InvalidArgument,
                       "kernel channel " + name_ + " is not a metadata channel");
}

void KernelChannel::declareKernelEvents(std::string_view conversions) {
    try {
        conversions_.add(kernel_records::decode(conversions));
    } catch (const kernel_records::DecodeError& e) {
        throw RequestError(cp::ErrorKind::InvalidArgument,
                           "kernel channel " + name_ + ": event conversions: " + e.what());
    }
    if (std::exchange(declared_, true))
        return;
    for (const auto& c : cpus_)
        if (c->watch)
            sd_event_source_set_enabled(c->watch.get(), SD_EVENT_ON);
    if (chunk_)
        armTimer();
}

cp::ChannelFigures KernelChannel::figures() const noexcept {
    cp::ChannelFigures f;
    f.key = key_;
    for (const auto& c : cpus_) {
        f.eventsRecorded += c->stream->counters().eventsWritten;
        f.eventsDiscarded += c->stream->counters().eventsDiscarded;
        f.bytesWritten += c->out.bytesWritten;
        f.chunkBytes += c->out.chunkBytes;
    }
    if (ip_) {
        f.eventsRecorded += ip_->stream->counters().eventsWritten;
        f.eventsDiscarded += ip_->stream->counters().eventsDiscarded;
        f.bytesWritten += ip_->out.bytesWritten;
        f.chunkBytes += ip_->out.chunkBytes;
    }
    // Strings the program had no room for: their events are recorded, with
    // "" for what was lost.
    f.eventsDiscarded += strings_.dropped();
    return f;
}

} // namespace tracectl::consumer
