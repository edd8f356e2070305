// A kernel-domain data channel of the consumer: the session's tracefs
// instance's per-CPU ring buffers, reached through the `trace_pipe_raw` fds
// the daemon opened and passed (the consumer itself cannot open tracefs),
// read one ftrace sub-buffer ("page") per read(2) (perfetto's
// traced_probes cpu_reader.cc reads them the same way) and turned into CTF
// packets (kernel/ftrace_stream.hpp) written to `<outputDir>/<name>_<cpu>`
// with their index `<outputDir>/index/<name>_<cpu>.idx`. With the `ip`
// provider attached (AttachIpProbes), the records of its BPF ring buffer
// become the stream `<outputDir>/<name>_ip` (kernel/ip_stream.hpp), read
// at the same times: the timer, and the ring buffer's wake-ups (the
// program forces one when the ring is half full).
// With the system-call string program attached (AttachSyscallStrings),
// its ring's strings fill the UserString steps of the records
// (kernel/syscall_strings.hpp), drained before each page is converted.
//
// When: every readTimerUsec (the daemon's CreateKernelChannel), and at once
// when a CPU's fd reports data (tracefs wakes a poller once the buffer is
// `buffer_percent` full). A read that finds nothing (EAGAIN), or a
// buffer that went away (ENODEV), ends that CPU's batch; a short read is
// logged and ends it too.
//
// Threads: the consumer's loop only.
#pragma once

#include "channel_base.hpp"
#include "common/event_loop.hpp"
#include "common/unique_fd.hpp"
#include "index_writer.hpp"
#include "kernel/conversion_table.hpp"
#include "kernel/ftrace_stream.hpp"
#include "kernel/process_info.hpp"
#include "kernel/syscall_strings.hpp"
#include "stream_file.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tracectl::consumer {

class KernelChannel final : public ChannelBase {
public:
    /// Opens in `chunk` (kept: the channel's current chunk) one stream of
    /// `request.outputDir` per CPU of `request.cpus` (`fds`: their trace_pipe_raw fds in the same
    /// order, then their stats fds), the first one headed by the statedump if
    /// asked for; starts
    /// reading on `loop`. With `snapshotOnly` nothing is read or written
    /// until recordSnapshot(), which keeps what it read in memory, each
    /// CPU's newest `request.bufferBytes` of packets (kernel/packet_ring.hpp).
    /// Throws
    /// RequestError (InvalidArgument: not as
    /// many fds as CPUs; Io).
    /// `resumeFrom` (CPU -> CLOCK_MONOTONIC ns): where the streams of the
    /// channel this one follows over the same tracefs buffers ended (a
    /// taken-over session): the records still in the buffers are that old,
    /// and keep their time; absent CPUs begin now.
    KernelChannel(EventLoop& loop, std::shared_ptr<const ChunkOutput> chunk,
                  const consumer_protocol::CreateKernelChannel& request, std::vector<UniqueFd> fds,
                  bool snapshotOnly, const std::map<std::uint32_t, std::uint64_t>& resumeFrom = {});
    ~KernelChannel() override;
    KernelChannel(const KernelChannel&) = delete;
    KernelChannel& operator=(const KernelChannel&) = delete;

    std::uint64_t key() const noexcept override { return key_; }
    const std::string& name() const noexcept { return name_; }
    /// Each CPU stream's last time stamp (CLOCK_MONOTONIC ns): where a
    /// channel over the same buffers goes on (resumeFrom).
    std::map<std::uint32_t, std::uint64_t> lastTimestamps() const;
    bool isMetadata() const noexcept override { return false; }
    std::uint32_t streamCount() const noexcept override {
        return static_cast<std::uint32_t>(cpus_.size() + (ip_ ? 1 : 0));
    }
    /// Reads what each CPU's buffer holds now into its history, closes its
    /// packet, and writes a copy of the history (its newest
    /// `packetsPerStream` packets; 0: all) into the streams of
    /// `<outputDir>` in `snapshot`; the history stays for the next
    /// snapshot. The ip provider's stream gets what its ring buffer holds
    /// (read, so in one snapshot only). Returns the bytes written. Throws
    /// RequestError(Io) after trying every CPU.
    std::uint64_t recordSnapshot(const ChunkOutput& snapshot,
                                 std::uint64_t packetsPerStream) override;
    /// Snapshot channels (ClearBuffers): reads every CPU's buffer, and
    /// the ip ring buffer, to its end and drops what was read, and the
    /// history with it.
    void clearBuffers() override;
    void pushMetadata(std::uint64_t, std::string_view) override;
    /// Reads every CPU's buffer to its end, then closes each stream's
    /// packet (even empty, so its time range reaches now). Used at Stop,
    /// once the daemon turned the instance's tracing off. Throws
    /// RequestError(Io) after trying every CPU.
    void flush() override;
    /// Reads every CPU to its end, closes its packet and its stream, and
    /// goes on in `chunk`; `switched` once per CPU.
    RotateResult rotate(const std::shared_ptr<const ChunkOutput>& chunk,
                        const std::function<void()>& switched,
                        std::optional<bool> traceWentOn = std::nullopt) noexcept override;
    void drainAndClose(bool producersStopped) noexcept override;
    /// Live sessions: reads every CPU and closes each stream's packet (an
    /// idle stream's empty packet tells live viewers it is idle up to now).
    void liveTick(bool /*newStreamsPublished*/) override { flush(); }
    bool traceGoesOn() const noexcept override { return true; }
    /// The conversions (kernel_records::encode()) of events enabled now.
    /// Throws RequestError(InvalidArgument) if they do not decode.
    void declareKernelEvents(std::string_view conversions) override;
    /// Starts the `<name>_ip` stream from the ring buffer `ring` (its
    /// program's drop count in `counters`). Throws RequestError
    /// (InvalidArgument: attached already, or the maps cannot be used; Io).
    void attachIpProbes(const consumer_protocol::AttachIpProbes& request, UniqueFd ring,
                        UniqueFd counters) override;
    /// The system-call string program's ring buffer (`ring`, its drop
    /// count in `counters`): UserString steps take their strings from it
    /// (kernel/syscall_strings.hpp). Throws RequestError (InvalidArgument:
    /// attached already, or the maps cannot be used).
    void attachSyscallStrings(UniqueFd ring, UniqueFd counters) override;
    consumer_protocol::ChannelFigures figures() const noexcept override;
    void setProgressHook(const std::function<void(std::uint64_t bytes)>& hook) override {
        progress_ = hook;
    }

private:
    /// Where one stream's packets go: its stream in the current chunk (or
    /// snapshot), and what it wrote.
    struct Output {
        std::unique_ptr<StreamSink> sink; ///< none: closed, or not open yet
        std::uint64_t bytesWritten = 0;
        std::uint64_t chunkBytes = 0;
        std::string failure; ///< why its stream was closed, "" while fine
    };
    struct Cpu;
    struct Ip;
    /// The sink that writes a stream's packets to `out`.
    kernel::PacketSink sinkTo(Output& out);
    /// Opens `out`'s stream `stream` of outputDir_ in `chunk`. Throws as
    /// ChunkOutput::openStream().
    void openStream(Output& out, const ChunkOutput& chunk, const std::string& stream) const;
    /// Closes `out`'s stream (if open).
    static void closeStream(Output& out) noexcept;
    /// Reads the ring buffer until it has nothing more (or `limit`
    /// records), then the drop count. Write failures close the files and throw.
    std::size_t drainIp(std::size_t limit = SIZE_MAX);
    static int onIpReadable(sd_event_source* s, int fd, std::uint32_t revents, void* userdata);
    static int onReadable(sd_event_source* s, int fd, std::uint32_t revents, void* userdata);
    /// Reads CPU `c` until it has nothing more (or `limit` pages), then its
    /// dropped-events count; returns the pages read. `wholeOnly` (a
    /// wake-up): only pages ftrace has filled, the one being written stays
    /// (the read timer, Stop, Rotate and snapshots take it). Write failures
    /// close the CPU's files and throw.
    std::size_t drain(Cpu& c, std::size_t limit = SIZE_MAX, bool wholeOnly = false);
    /// Pages of CPU `c` into pages_: whole pages spliced through its pipe
    /// if `wholeOnly` (and it has one), as many as the pipe holds and at
    /// most `most`; else one read(2) of a page. As read(2) returns.
    ssize_t takePages(Cpu& c, bool wholeOnly, std::size_t most);
    /// `c`'s pipe for splice(2); none if it cannot be made (read(2) then).
    void makePipe(Cpu& c);
    /// drain() of every CPU; the first failure is returned ("" if none).
    std::string drainAll() noexcept;
    /// The read timer's drain: every CPU's whole pages, and the partial
    /// page of those that filled none since the last tick.
    void tick() noexcept;
    /// Opens `c`'s stream in `chunk`. Throws as ChunkOutput::openStream().
    void openStream(Cpu& c, const ChunkOutput& chunk);
    void armTimer();
    void writeStatedump();

    std::uint64_t key_;
    std::string name_;
    std::string outputDir_;
    EventLoop& loop_;
    bool snapshotOnly_;
    consumer_protocol::CreateKernelChannel request_;
    kernel::Uuid uuid_{};
    kernel::ConversionTable conversions_;
    /// /proc/kallsyms' text symbols, from the fd the daemon passed
    /// (callstack-kernel; empty otherwise): the streams' symbol events.
    kernel::KernelSymbols kernelSymbols_;
    /// The first DeclareKernelEvents came: the buffers are read from then
    /// on (a record read before could not be converted).
    bool declared_ = false;
    kernel::ProcfsProcessInfo processes_;
    /// /proc/PID/maps, for the streams' tracectl_vm_map events (callstack-user).
    kernel::ProcUserMaps userMaps_;
    kernel::SyscallStrings strings_; ///< before cpus_: their streams take strings from it
    std::vector<std::unique_ptr<Cpu>> cpus_;
    std::unique_ptr<Ip> ip_;                   ///< the ip provider's stream, once attached
    std::shared_ptr<const ChunkOutput> chunk_; ///< the current chunk (none: snapshots only)
    std::size_t pageSize_;                     // one sub-buffer
    std::vector<std::byte> pages_;             // sub-buffers read at once, reused
    EventSourcePtr timer_;
    std::function<void(std::uint64_t bytes)> progress_;
    std::uint64_t snapshotBytes_ = 0;
};

} // namespace tracectl::consumer
