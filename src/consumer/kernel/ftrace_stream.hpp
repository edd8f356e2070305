// One CPU's kernel stream: ftrace pages in (per_cpu/cpuN/trace_pipe_raw),
// CTF packets out (kernel_records.hpp).
#pragma once

#include "conversion_table.hpp"
#include "ftrace_page.hpp"
#include "kernel_symbols.hpp"
#include "packet_builder.hpp"
#include "process_info.hpp"
#include "user_maps.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace tracectl::consumer::kernel {

struct FtraceStreamConfig {
    Uuid uuid{};                    ///< the trace's UUID
    std::uint32_t streamId = 0;     ///< the channel's stream class id
    std::uint32_t cpuId = 0;        ///< stream_instance_id, cpu_id and the _cpu_id context
    std::size_t maxPacketBytes = 0; ///< the channel's sub-buffer size (>= 84)
    std::uint32_t contextMask = 0;  ///< kernel_records ContextField bits
    PageFormat pageFormat;          ///< from events/header_page
    /// When the stream begins (ns, the trace's clock): its first packet's
    /// timestamp_begin, however late its first event or flush comes, so
    /// that packets of consecutive chunks never begin at the same time (0:
    /// at the first event or flush).
    std::uint64_t beginTimestamp = 0;
    /// Where UserString steps take their strings (none: ""); outlives the stream.
    UserStringSource* userStrings = nullptr;
    /// common_type of ftrace's kernel_stack and user_stack entries
    /// (events/ftrace/{kernel,user}_stack/format `ID:`), read when the
    /// context mask has callstack-kernel / callstack-user; 0: none (ftrace
    /// gives no record type 0).
    std::uint16_t kernelStackType = 0;
    std::uint16_t userStackType = 0;
    /// The kernel's symbols (callstack-kernel; none: no symbol events);
    /// outlives the stream.
    const KernelSymbols* kernelSymbols = nullptr;
    /// Where the mappings of the processes in user stacks come from
    /// (callstack-user; none: no tracectl_vm_map events); outlives the stream.
    UserMapsSource* userMaps = nullptr;
};

/// What a stream did so far. Events counts are of ftrace records.
struct FtraceStreamCounters {
    std::uint64_t eventsWritten = 0;    ///< events in packets (closed or not)
    std::uint64_t eventsDiscarded = 0;  ///< the events_discarded running count
    std::uint64_t missedStored = 0;     ///< of those: counts the pages stored
    std::uint64_t missedUnknown = 0;    ///< pages flagged missed without a count (1 each above)
    std::uint64_t tooLarge = 0;         ///< of those: events no empty packet could hold
    std::uint64_t malformedPages = 0;   ///< pages whose header or an event lied (walk stopped)
    std::uint64_t malformedRecords = 0; ///< records shorter than their conversion's minSize
    std::uint64_t unknownIds = 0;       ///< records of a common_type without a conversion
    std::uint64_t pages = 0;            ///< pages consumed
    std::uint64_t packets = 0;          ///< packets handed to the sink
    /// Stack entries that followed no event waiting for one (lost with a
    /// flush between the event and its stack, or after an unconverted one)
    std::uint64_t orphanStacks = 0;
};

/// Converts one CPU's pages. Not thread-safe; `table`, `processes` (may be
/// null: then pid = tid, and procname and prio only what the trace tells) and the sink outlive it.
///
/// Missed events: a page with RB_MISSED_EVENTS and a stored count adds that
/// count to events_discarded; without a stored count (the kernel had no
/// room for it) it adds 1 and counts missedUnknown. trace-cmd prints
/// "[LOST EVENTS]" without a number in that case (kbuffer_missed_events()
/// returns -1); adding at least 1 keeps "events were lost here" visible to
/// CTF readers, which only see the running count grow.
///
/// Contexts: `tid` is the record's common_pid. `procname` and `prio` are
/// the running thread's at event time when the trace tells them (a
/// sched_switch on this CPU named the thread switched in, and execs and
/// renames since then: kernel_records TaskRole); otherwise, and for `pid`,
/// `processes` answers, except for an event with a user stack, whose `pid`
/// is the user_stack entry's tgid (a thread gone before the lookup would
/// otherwise be its own process).
///
/// Call stacks (callstack-kernel, callstack-user): ftrace writes a
/// kernel_stack / user_stack entry right after the event it belongs to
/// (the kernel's trace_buffer_unlock_commit_regs), in the same CPU's ring
/// buffer, possibly on the next page, and an interrupt's event (with its
/// own stack entries) may come between the two. So an event of such a
/// stream waits (at most kMaxPending of them, in order) until its stacks
/// came; a stack entry goes to the latest waiting event of the same thread
/// without one. The event is written when it has every stack the mask
/// asks for, when kMaxPending newer events wait behind it, or at flush()
/// and appendEvent(); a stack that comes later is an orphan (counted,
/// never written as an event). Stack entries are never events of their
/// own; records without a conversion take their stacks with them.
///
/// Names: before the first event of a chunk whose kernel stack has an
/// address in a kallsyms symbol, that symbol's tracectl_kernel_symbol
/// event; before the first event of a chunk with a user stack of process
/// P (the user_stack entry's tgid), P's executable file mappings as
/// tracectl_vm_map events, read from `userMaps` then. If a later stack of
/// P has an address none of those holds (P exec'd, or dlopen'ed), P's
/// mappings are read again, once per chunk, and the new ones written. A
/// process gone before its first stack is converted has no mappings: its
/// addresses stay unnamed. Before the first event of a chunk with a user
/// stack of thread T of process P (T != P), a tracectl_thread event (T, P);
/// again if a later stack of T is of another process.
///
/// Timestamps: every event's is clamped to the stream's last one, and a
/// flush(now) raises that to its end, so a stream never goes backward
/// (drain the pages read so far before flush(now), or their events are
/// clamped to `now`).
class FtraceStream {
public:
    FtraceStream(const FtraceStreamConfig& config, const ConversionTable& table,
                 ProcessInfo* processes, PacketSink sink);

    /// Converts one whole page (the sub-buffer read from trace_pipe_raw).
    /// A full packet is closed, handed to the sink, and the next opened.
    void consumePage(std::span<const std::byte> page);

    /// Appends an event that is not an ftrace record (the statedump's), its
    /// fields laid out already, with `context` as its event context, at
    /// `timestamp` (ns; raised to the stream's latest, so the stream never
    /// goes backward). False, counted in tooLarge and events_discarded, when
    /// not even an empty packet holds it.
    bool appendEvent(std::uint16_t ctfId, std::uint64_t timestamp, const ContextValues& context,
                     std::span<const std::byte> fields);

    /// ftrace's count of events dropped so far because this CPU's buffer
    /// was full (per_cpu/cpuN/stats "dropped events", discard mode: the
    /// pages do not tell those): what it grew by since the last call is
    /// added to events_discarded. Overwritten events (overwrite mode) are
    /// not in it: the pages tell those (RB_MISSED_EVENTS).
    void setDropped(std::uint64_t total);

    /// The symbols written so far are forgotten: the next chunk's stream
    /// gets its own tracectl_kernel_symbol events (call after flush()).
    /// So are the processes whose mappings were written.
    void forgetSymbols() {
        symbolWritten_.assign(symbolWritten_.size(), false);
        mapsWritten_.clear();
        threadsWritten_.clear();
    }

    /// Closes the current packet, even an empty one, with timestamp_end =
    /// max(now, last event's timestamp) and hands it to the sink.
    void flush(std::uint64_t now);

    const FtraceStreamCounters& counters() const noexcept { return counters_; }
    /// The stream's latest timestamp (ns).
    std::uint64_t lastTimestamp() const noexcept { return last_; }

    /// Events waiting for their stacks at most (ftrace's ring buffer nests
    /// 4 deep: normal, softirq, irq, NMI).
    static constexpr std::size_t kMaxPending = 4;

private:
    /// An event waiting for its call stacks.
    struct Pending {
        const kernel_records::EventConversion* conversion = nullptr; ///< null: none (dropped)
        std::uint64_t timestamp = 0;
        ContextValues context;
        std::vector<std::byte> record;
        std::vector<std::uint64_t> kernelStack;
        std::vector<std::uint64_t> userStack;
        std::int32_t userPid = 0; ///< the user_stack entry's tgid
        bool hasKernel = false;
        bool hasUser = false;
    };

    /// The thread running on this stream's CPU, as the trace tells it.
    struct Running {
        std::int32_t tid = -1; ///< -1: not known yet (no sched_switch seen)
        std::array<char, 16> procname{};
        std::int32_t prio = 0; ///< as the `prio` context gives it (task_prio())
    };

    void onRecord(const FtraceRecord& record);
    ContextValues contextOf(std::int32_t tid);
    /// Opens the first packet at config_.beginTimestamp (if set) before its
    /// first event.
    void openFirstPacket();
    /// Applies what `record` tells of the running thread (its conversion's
    /// task role); `before`: the roles that act before the event's context
    /// is taken (exec), else those that act after (switch, rename).
    void learn(const kernel_records::TaskFields& task, const FtraceRecord& record, bool before);
    void emit(std::uint64_t end);
    /// Writes one event (the builder's append, a new packet if full).
    void write(std::uint64_t ts, const kernel_records::EventConversion& conversion,
               const std::byte* record, std::uint32_t length, const ContextValues& ctx);
    /// Queues an event to wait for its stacks (writes the oldest when full).
    void hold(const kernel_records::EventConversion* conversion, std::uint64_t ts,
              const ContextValues& ctx, const FtraceRecord& record);
    /// Gives a stack entry to the latest waiting event of its thread.
    void attachStack(const FtraceRecord& record, bool user);
    bool complete(const Pending& p) const noexcept;
    /// Writes the waiting events from the oldest: those complete, or all.
    void release(bool all);
    /// Writes the tracectl_kernel_symbol events `stack` needs first.
    void writeSymbols(std::uint64_t ts, const ContextValues& ctx,
                      std::span<const std::uint64_t> stack);
    /// Writes the tracectl_vm_map events of process `pid` that `stack`
    /// needs first (see the class comment).
    void writeMaps(std::uint64_t ts, const ContextValues& ctx, std::int32_t pid,
                   std::span<const std::uint64_t> stack);
    /// Writes the tracectl_thread event of thread `tid` of process `pid` if
    /// the stream has not told it (see the class comment).
    void writeThread(std::uint64_t ts, const ContextValues& ctx, std::int32_t tid,
                     std::int32_t pid);
    bool appendRawNow(std::uint16_t ctfId, std::uint64_t ts, const ContextValues& ctx,
                      std::span<const std::byte> fields);

    FtraceStreamConfig config_;
    const ConversionTable& table_;
    ProcessInfo* processes_;
    PacketSink sink_;
    PacketBuilder builder_;
    bool needsProcess_;
    std::uint64_t last_ = 0;
    std::uint64_t malformedBase_ = 0;
    std::uint64_t dropped_ = 0; ///< the last setDropped() total
    Running running_;
    FtraceStreamCounters counters_;
    bool wantKernel_ = false;                  ///< callstack-kernel with a kernelStackType
    bool wantUser_ = false;                    ///< callstack-user with a userStackType
    std::array<Pending, kMaxPending> pending_; ///< a ring, reused
    std::size_t pendingHead_ = 0;
    std::size_t pendingCount_ = 0;
    std::vector<bool> symbolWritten_; ///< by KernelSymbols index, in this chunk
    std::vector<std::byte> symbolFields_;
    /// The mappings written of each process in this chunk.
    struct MapsWritten {
        std::vector<UserMapping> mappings;
        bool readAgain = false; ///< read a second time already
    };
    std::unordered_map<std::int32_t, MapsWritten> mapsWritten_;
    /// The process each thread's tracectl_thread event gave, in this chunk.
    std::unordered_map<std::int32_t, std::int32_t> threadsWritten_;
};

} // namespace tracectl::consumer::kernel
