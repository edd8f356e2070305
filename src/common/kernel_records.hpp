// The kernel domain's CTF 1.8 stream layout and the conversion of ftrace
// records into it: what the daemon describes in the kernel trace's TSDL
// (src/daemon/kernel/kernel_metadata.hpp) and what the consumer writes
// (src/consumer/kernel/). Both sides build on this file, so that the
// metadata and the bytes cannot drift apart.
//
// Byte layout of every kernel stream file (`kernel/<channel>_<cpu>`): CTF
// packets, every integer little-endian (x86-64 only: the ftrace payload is
// copied as the kernel wrote it, in its native order) and byte-aligned
// (`align = 8` in the TSDL), so there is no padding anywhere:
//
//   trace.packet.header  u32 magic (0xC1FC1FC1), u8 uuid[16],
//                        u32 stream_id (the channel's stream class id),
//                        u64 stream_instance_id (the CPU; kIpProbesInstance
//                        for the ip provider's stream)
//   stream.packet.context
//                        u64 timestamp_begin, u64 timestamp_end (clock
//                        `monotonic`, ns), u64 content_size, u64 packet_size
//                        (bits), u64 packet_seq_num (0, 1, ... per stream),
//                        u64 events_discarded (running count per stream: the
//                        events ftrace reported missed so far), u32 cpu_id
//   stream.event.header  u16 id, u64 timestamp (clock `monotonic`, ns)
//   stream.event.context the channel's contexts, in ContextField order,
//                        each only if enabled: i32 _tid, i32 _pid,
//                        u8 _procname[16] (text), i32 _prio, i32 _cpu_id,
//                        then the call stacks, lttng-modules 2.13's
//                        lttng-context-callstack.c layout: u32
//                        __callstack_kernel_length, u64
//                        _callstack_kernel[that many] (base 16: return
//                        addresses, innermost first), then u32
//                        __callstack_user_length, u64 _callstack_user[]
//                        (babeltrace2 shows them without their first
//                        underscore). The addresses are those of ftrace's
//                        kernel_stack / user_stack entry that follows the
//                        event in the ring buffer (FtraceStream attaches
//                        it); an event without one has a zero-length
//                        sequence.
//   event.fields         the event's fields, as its EventConversion writes
//                        them (below)
//
// A packet is at most the channel's sub-buffer size (packet_size ==
// content_size rounded up to whole bytes: no padding is written after the
// last event).
//
// ftrace records (KERNEL-NOTES.md; the kernel's
// include/linux/trace_events.h, struct trace_entry) begin with the common
// fields: u16 common_type, u8 common_flags, u8 common_preempt_count,
// i32 common_pid. An EventConversion turns one record's payload (from
// common_type on) into the CTF event's fields by its steps, in order:
//
//   Copy             `size` bytes at `offset` (a run of scalars and fixed
//                    arrays; consecutive fields are one step). Bytes past
//                    the record's end (a conversion whose minSize is short
//                    of its steps) are written as zeros.
//   DataLocString    the u32 at `offset` is a __data_loc: (length << 16) |
//                    (offset of the bytes from the record's start). Writes
//                    the bytes up to the first NUL or the length, then one
//                    NUL: a CTF `string`.
//   RelLocString     __rel_loc: the same, but the offset counts from the
//                    end of the u32 itself.
//   DataLocSequence  a __data_loc array of `elementSize`-byte elements:
//                    writes u32 element count (length / elementSize), then
//                    the elements' bytes: a CTF sequence whose length field
//                    comes first (named `_<field>_length` in the TSDL, as
//                    lttng-modules names them).
//   RelLocSequence   the same with a __rel_loc.
//   UserString       the u64 at `offset` is a system call argument that
//                    points to a string in user memory (a
//                    syscalls:sys_enter_<name> record: int nr at offset 8,
//                    argument i at offset 16 + 8 i). Writes the string the
//                    system-call string program copied at that call (the
//                    consumer's UserStringSource, matched by thread, nr,
//                    argument and pointer), then one NUL: a CTF `string`.
//                    Without a copy (lost, unreadable pointer, no program):
//                    an empty string.
// A location that falls outside the record writes an empty string or a
// zero-length sequence: a hostile or torn record never makes the consumer
// read outside it.
//
// Steps that turn ftrace's form of a value into lttng-modules 2.13's
// (include/instrumentation/events/<file>.h names the field; the daemon's
// src/daemon/kernel/lttng_kernel_layout.hpp says which field gets which).
// A source reaching past the record reads as zeros (a tid of 0, an empty
// text):
//   RwbsFlags        `size` bytes at `offset` are ftrace's rwbs text (the
//                    kernel's blk_fill_rwbs: an optional 'F' for
//                    REQ_PREFLUSH, the operation, then F A S M U for FUA,
//                    RAHEAD, SYNC, META, ATOMIC). Writes a u32 of
//                    lttng-modules' block.h RWBS_FLAG_* bits (kRwbs*), as its
//                    blk_rwbs_ctf_integer computes them from the request.
//   PrioFromKernel   the i32 at `offset` is a task's p->prio (ftrace's
//                    prio fields): writes the i32 p->prio - MAX_RT_PRIO
//                    (100), lttng-modules' sched.h prio fields.
//   Tgid             the i32 at `offset` is a tid: writes the i32 thread
//                    group id of that thread (ProcessInfo lookup(tid).pid;
//                    the tid itself when the builder has no ProcessInfo).
//   PidNsInum        the i32 at `offset` is a tid: writes the u32 inode
//                    number of its active pid namespace (ProcessDetails
//                    pidNsInum; 0 when unknown, as lttng-modules writes
//                    when it finds none).
//   Vtids            the i32 at `offset` is a tid: writes a u8 count, then
//                    that many i32, the thread's id in each pid namespace
//                    from the initial one inwards (lttng-modules'
//                    sched_process_fork `vtids`, whose length field is a
//                    u8); [tid] for a thread of the initial namespace or one
//                    the ProcessInfo does not know.
//   DataLocFixedText the u32 at `offset` is a __data_loc char[]: writes
//                    exactly `elementSize` bytes, the string (up to its
//                    first NUL or its length) cut to elementSize - 1 bytes
//                    and NUL padded: lttng-modules' ctf_array_text of a
//                    comm (char[TASK_COMM_LEN]) where ftrace keeps a string.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tracectl::kernel_records {

inline constexpr std::uint32_t kPacketMagic = 0xC1FC1FC1;
inline constexpr std::size_t kPacketHeaderSize = 4 + 16 + 4 + 8;                           // 32
inline constexpr std::size_t kPacketContextSize = 8 * 6 + 4;                               // 52
inline constexpr std::size_t kPacketPreambleSize = kPacketHeaderSize + kPacketContextSize; // 84
inline constexpr std::size_t kEventHeaderSize = 2 + 8;                                     // 10
/// Bytes of the ftrace common fields (struct trace_entry).
inline constexpr std::size_t kFtraceCommonSize = 8;
/// stream_instance_id of a channel's `ip` provider stream (`<channel>_ip`):
/// one stream for every CPU (the BPF ring buffer is shared), so no CPU's.
inline constexpr std::uint64_t kIpProbesInstance = 0xFFFFFFFE;

/// The statedump (lttng-modules 2.13 lttng-statedump-impl.c and
/// instrumentation/events/lttng-statedump.h): written by the consumer from
/// /proc at the session's first start, at the head of the first CPU's
/// stream of the session's first kernel channel (as lttng-modules records
/// it into the buffer of the CPU it runs on, so that every stream spans the
/// session: LTTng's analyses intersect the streams' time ranges), whose
/// stream class declares these
/// events with these fixed ids (the ftrace events get ids from
/// kFirstFtraceCtfId on):
///   lttng_statedump_start, lttng_statedump_end: no fields;
///   lttng_statedump_process_state: i32 tid, vtid, pid, vpid, ppid, vppid,
///     u8 name[16] (text), i32 type (0 user thread, 1 kernel thread), i32
///     mode (enum lttng_execution_mode: 0 user mode .. 5 unknown), i32
///     submode (0 none), i32 status (enum lttng_process_status: 0 unnamed,
///     1 wait_fork, 2 wait_cpu, 3 exit, 4 zombie, 5 wait, 6 run, 7 dead;
///     /proc's R is wait_cpu, S and D wait, Z zombie, X dead), i32 cpu;
///   lttng_statedump_file_descriptor: i32 pid, i32 fd, u32 flags, u32
///     fmode, string filename (the processes the owner may read only).
inline constexpr std::uint16_t kStatedumpStartId = 0;
inline constexpr std::uint16_t kStatedumpProcessStateId = 1;
inline constexpr std::uint16_t kStatedumpFileDescriptorId = 2;
inline constexpr std::uint16_t kStatedumpEndId = 3;
/// The statedump's system-wide events (lttng-statedump.h), at the top of
/// the id range so the ftrace ids below them keep their values:
///   lttng_statedump_block_device: u32 dev (the kernel's dev_t, major << 20
///     | minor), string diskname;
///   lttng_statedump_interrupt: u32 irq, string name (the irq chip's),
///     string action (a handler's name), i32 tid (its thread; 0);
///   lttng_statedump_network_interface: string name, u32 address_ipv4 (in
///     network byte order, as lttng-modules' ctf_integer_network_hex);
///   lttng_statedump_cpu_topology: string architecture ("x86"), u16 cpu_id,
///     string vendor, u8 family, u8 model, string model_name, u16
///     physical_id, u16 core_id, u16 cores.
inline constexpr std::uint16_t kStatedumpBlockDeviceId = 65530;
inline constexpr std::uint16_t kStatedumpInterruptId = 65531;
inline constexpr std::uint16_t kStatedumpNetworkInterfaceId = 65532;
inline constexpr std::uint16_t kStatedumpCpuTopologyId = 65533;
/// tracectl_kernel_symbol (ours; lttng-modules leaves naming call stack
/// addresses to the reader), declared in the stream class of each channel
/// with callstack-kernel: u64 address, u64 end (base 16: the symbol's
/// [address, end), up to the next kallsyms symbol), string name, string
/// module ("" for vmlinux). The consumer writes one into a stream, with
/// the time and context of the event, right before the first event of
/// the stream (in each trace chunk) whose kernel stack has an address in
/// it; the symbols come from /proc/kallsyms at record time.
inline constexpr std::uint16_t kKernelSymbolId = 65529;
/// tracectl_vm_map (ours; lttng-modules records no mappings for its user
/// stacks), declared in the stream class of each channel with
/// callstack-user: u64 start, u64 end, u64 pgoff (base 16: the virtual
/// range [start, end) maps the file `path` from byte offset pgoff on), i32
/// pid (the process, a tgid), string path. The consumer writes a process's
/// executable file mappings, read from /proc/PID/maps then, into a stream,
/// with the time and context of the event, right before the first event
/// of the stream (in each trace chunk) with a user stack of that process;
/// again (the new ones) once per chunk if a stack has an address none
/// holds (ftrace_stream.hpp).
inline constexpr std::uint16_t kVmMapId = 65528;
/// tracectl_thread (ours), declared beside tracectl_vm_map: i32 tid, i32
/// pid: thread `tid` is of process `pid` (its tgid, from ftrace's
/// user_stack entry), so that a reader finds the tracectl_vm_map events of
/// a thread's process without a pid context. The consumer writes one into
/// a stream, with the time and context of the event, right before the
/// first event of the stream (in each trace chunk) with a user stack of a
/// thread other than its process's main one (tid != tgid), and again when
/// a later stack of that tid is another process's (the tid reused); none
/// for a main thread whose tid the stream never gave another process
/// (ftrace_stream.hpp).
inline constexpr std::uint16_t kThreadId = 65527;
/// The highest id an ftrace (or ip provider) event may have.
inline constexpr std::uint16_t kLastFtraceCtfId = 65526;
inline constexpr std::uint16_t kFirstFtraceCtfId = 4;

/// Stream event context fields (bits of a channel's context mask), in the
/// order they are written. Sources: `tid` is ftrace's common_pid (the
/// thread); `pid`, `procname` and `prio` are looked up in /proc/<tid> by the
/// consumer (ftrace records no more than common_pid); `cpu_id` is the
/// stream's CPU. lttng-modules names: lttng-context-*.c (`_tid`, ...).
enum ContextField : std::uint32_t {
    ContextTid = 1u << 0,
    ContextPid = 1u << 1,
    ContextProcname = 1u << 2,
    ContextPrio = 1u << 3,
    ContextCpuId = 1u << 4,
    /// lttng-modules' `callstack-kernel`: the kernel call stack, from the
    /// instance's `options/stacktrace` (ftrace's kernel_stack entries).
    ContextCallstackKernel = 1u << 5,
    /// lttng-modules' `callstack-user`: the user call stack, from the
    /// instance's `options/userstacktrace` (ftrace's user_stack entries:
    /// at most kMaxUserStackFrames, walked by frame pointers).
    ContextCallstackUser = 1u << 6,
};
inline constexpr std::uint32_t kAllContexts = 0x7F;
inline constexpr std::uint32_t kCallstackContexts = ContextCallstackKernel | ContextCallstackUser;
/// Frames ftrace's user_stack entry holds (FTRACE_STACK_ENTRIES, the
/// kernel's kernel/trace/trace.h; its format file's `caller[8]`).
inline constexpr std::size_t kMaxUserStackFrames = 8;
/// Frames of a kernel stack the consumer keeps (lttng-modules' MAX_ENTRIES
/// is 128 too; ftrace records at most a page of them).
inline constexpr std::size_t kMaxKernelStackFrames = 128;
/// Bytes the event context takes for `mask` when its call stacks (if
/// enabled) are empty: each stack then adds 8 bytes per frame.
constexpr std::size_t contextSize(std::uint32_t mask) noexcept {
    return ((mask & ContextTid) ? 4 : 0) + ((mask & ContextPid) ? 4 : 0) +
           ((mask & ContextProcname) ? 16 : 0) + ((mask & ContextPrio) ? 4 : 0) +
           ((mask & ContextCpuId) ? 4 : 0) + ((mask & ContextCallstackKernel) ? 4 : 0) +
           ((mask & ContextCallstackUser) ? 4 : 0);
}

enum class StepKind : std::uint8_t {
    Copy = 0,
    DataLocString = 1,
    RelLocString = 2,
    DataLocSequence = 3,
    RelLocSequence = 4,
    RwbsFlags = 5,
    PrioFromKernel = 6,
    Tgid = 7,
    PidNsInum = 8,
    Vtids = 9,
    DataLocFixedText = 10,
    // 11..15: free.
    UserString = 16,
};
/// The largest kind decode() accepts.
inline constexpr StepKind kLastStepKind = StepKind::DataLocFixedText;

/// lttng-modules 2.13 block.h RWBS_FLAG_* (the rwbs field's bits).
enum RwbsFlag : std::uint32_t {
    RwbsWrite = 1u << 0,
    RwbsDiscard = 1u << 1,
    RwbsRead = 1u << 2,
    RwbsRahead = 1u << 3,
    RwbsBarrier = 1u << 4,
    RwbsSync = 1u << 5,
    RwbsMeta = 1u << 6,
    RwbsSecure = 1u << 7,
    RwbsFlush = 1u << 8,
    RwbsFua = 1u << 9,
    RwbsPreflush = 1u << 10,
};

/// lttng-modules' rwbs bits for ftrace's rwbs text `text` (up to its first
/// NUL or its end): the operation (W write, D discard, DE secure erase,
/// F flush, R read; N, WZ write-zeroes and the Z* zone operations have no
/// lttng-modules bit), a leading 'F' before the operation (REQ_PREFLUSH),
/// and the flags after it (F FUA, A RAHEAD, S SYNC, M META; U/a ATOMIC has
/// no bit). Unknown letters are skipped. Source: the kernel's blk_fill_rwbs
/// (kernel/trace/blktrace.c) and lttng-modules 2.13 block.h.
std::uint32_t rwbsFlags(std::string_view text) noexcept;

/// lttng-modules' MAX_RT_PRIO: its prio fields are p->prio - 100.
inline constexpr std::int32_t kMaxRtPrio = 100;
/// Pid namespace levels a Vtids step writes at most (lttng-modules writes
/// up to 32; deeper threads keep the outermost kMaxPidNsLevels).
inline constexpr std::size_t kMaxPidNsLevels = 8;
/// Bytes a DataLocFixedText step may write.
inline constexpr std::uint16_t kMaxFixedText = 1024;

struct Step {
    StepKind kind = StepKind::Copy;
    std::uint16_t offset = 0; ///< bytes from the record's start (common_type)
    /// Copy, RwbsFlags: bytes; the loc and tid kinds: 4; UserString: 8
    std::uint16_t size = 0;
    /// The sequence kinds: bytes per element (1, 2, 4, 8); DataLocFixedText:
    /// bytes written (1..kMaxFixedText); others: 1.
    std::uint16_t elementSize = 1;
    bool operator==(const Step&) const = default;
};

/// What an event tells the consumer about the thread running on its CPU,
/// so that the `procname` and `prio` contexts are the thread's at event
/// time (as lttng-modules reads them from `current`), not what /proc says
/// when the consumer gets to the page. Offsets in TaskFields::at, bytes from
/// the record's start:
///   SchedSwitch (sched:sched_switch): at[0] prev_pid, at[1] next_pid,
///     at[2] next_comm (char[16]), at[3] next_prio (i32, the kernel's
///     p->prio: 120 is nice 0); the next thread runs from this event on;
///   ProcessExec (sched:sched_process_exec): at[0] pid, at[1] filename
///     (a __data_loc char[] location); the thread's name becomes the file
///     name's last component, cut to 15 bytes, as exec sets it
///     (fs/exec.c begin_new_exec: __set_task_comm(kbasename(filename)));
///     the exec event itself has the new name, as with lttng-modules;
///   TaskRename (task:task_rename, prctl(PR_SET_NAME) and
///     /proc/<tid>/comm): at[0] pid, at[1] newcomm (char[16]); the new
///     name from the next event on.
enum class TaskRole : std::uint8_t {
    None = 0,
    SchedSwitch = 1,
    ProcessExec = 2,
    TaskRename = 3,
};

struct TaskFields {
    TaskRole role = TaskRole::None;
    std::array<std::uint16_t, 4> at{};
    bool operator==(const TaskFields&) const = default;
};

/// How one enabled ftrace event becomes a CTF event record.
struct EventConversion {
    std::uint16_t ftraceId = 0; ///< `ID:` of its format file (common_type)
    std::uint16_t ctfId = 0;    ///< its CTF event id in the channel's stream class
    /// The smallest record that holds every fixed field (largest offset +
    /// size of the format's fields): shorter records are counted as
    /// malformed and skipped.
    std::uint16_t minSize = kFtraceCommonSize;
    std::vector<Step> steps;
    /// What the consumer learns from it about the running thread.
    TaskFields task;
    bool operator==(const EventConversion&) const = default;
};

/// Malformed encoded conversions.
class DecodeError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Most conversions in one channel, and steps in one conversion.
inline constexpr std::size_t kMaxConversions = 65535;
inline constexpr std::size_t kMaxSteps = 256;

/// Wire form (little-endian): u32 count, then per conversion u16 ftraceId,
/// u16 ctfId, u16 minSize, u16 stepCount, then per step u8 kind, u16
/// offset, u16 size, u16 elementSize; then u8 task role and, unless it is
/// None, its 4 u16 offsets.
std::string encode(const std::vector<EventConversion>& conversions);
/// Throws DecodeError: truncated or trailing bytes, unknown kinds or task
/// roles, task fields reaching past minSize, sizes of 0, location, prio and
/// tid steps whose size is not 4, UserString steps whose size is not 8 or
/// whose offset is not an argument's (16 + 8 i, i < 6), element sizes other
/// than 1/2/4/8 (RwbsFlags..Vtids: other than 1; DataLocFixedText: outside
/// 1..kMaxFixedText), steps reaching past 65535, more than kMaxConversions
/// or kMaxSteps.
std::vector<EventConversion> decode(std::string_view bytes);

} // namespace tracectl::kernel_records
