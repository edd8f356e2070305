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
//                        u64 stream_instance_id (the CPU; kStatedumpInstance
//                        for the statedump stream)
//   stream.packet.context
//                        u64 timestamp_begin, u64 timestamp_end (clock
//                        `monotonic`, ns), u64 content_size, u64 packet_size
//                        (bits), u64 packet_seq_num (0, 1, ... per stream),
//                        u64 events_discarded (running count per stream: the
//                        events ftrace reported missed so far), u32 cpu_id
//   stream.event.header  u16 id, u64 timestamp (clock `monotonic`, ns)
//   stream.event.context the channel's contexts, in ContextField order,
//                        each only if enabled: i32 _tid, i32 _pid,
//                        u8 _procname[16] (text), i32 _prio, i32 _cpu_id
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
#pragma once

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
/// stream_instance_id of the statedump stream (`kernel/<channel>_statedump`).
inline constexpr std::uint64_t kStatedumpInstance = 0xFFFFFFFF;
/// stream_instance_id of a channel's `ip` provider stream (`<channel>_ip`):
/// one stream for every CPU (the BPF ring buffer is shared), so no CPU's.
inline constexpr std::uint64_t kIpProbesInstance = 0xFFFFFFFE;

/// The statedump (lttng-modules 2.13 lttng-statedump-impl.c and
/// instrumentation/events/lttng-statedump.h): written by the consumer from
/// /proc at the session's first start into `kernel/<channel>_statedump` of
/// the session's first kernel channel, whose stream class declares these
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
inline constexpr std::uint16_t kFirstFtraceCtfId = 4;

/// Stream event context fields (bits of a channel's context mask), in the
/// order they are written. Sources: `tid` is ftrace's common_pid (the
/// thread); `pid`, `procname` and `prio` are looked up in /proc/<tid> by the
/// consumer (ftrace records no more than common_pid); `cpu_id` is the
/// stream's CPU. lttng-modules names: lttng-context-*.c (`_tid`, ...).
enum ContextField : std::uint32_t {
    kContextTid = 1u << 0,
    kContextPid = 1u << 1,
    kContextProcname = 1u << 2,
    kContextPrio = 1u << 3,
    kContextCpuId = 1u << 4,
};
inline constexpr std::uint32_t kAllContexts = 0x1F;
/// Bytes the event context takes for `mask`.
constexpr std::size_t contextSize(std::uint32_t mask) noexcept {
    return ((mask & kContextTid) ? 4 : 0) + ((mask & kContextPid) ? 4 : 0) +
           ((mask & kContextProcname) ? 16 : 0) + ((mask & kContextPrio) ? 4 : 0) +
           ((mask & kContextCpuId) ? 4 : 0);
}

enum class StepKind : std::uint8_t {
    Copy = 0,
    DataLocString = 1,
    RelLocString = 2,
    DataLocSequence = 3,
    RelLocSequence = 4,
    // 5..15: other helpers' kinds.
    UserString = 16,
};

struct Step {
    StepKind kind = StepKind::Copy;
    std::uint16_t offset = 0;      ///< bytes from the record's start (common_type)
    std::uint16_t size = 0;        ///< Copy: bytes; the loc kinds: 4; UserString: 8
    std::uint16_t elementSize = 1; ///< the sequence kinds: bytes per element (1, 2, 4, 8)
    bool operator==(const Step&) const = default;
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
/// offset, u16 size, u16 elementSize.
std::string encode(const std::vector<EventConversion>& conversions);
/// Throws DecodeError: truncated or trailing bytes, unknown kinds, sizes of
/// 0, location steps whose size is not 4, UserString steps whose size is
/// not 8 or whose offset is not an argument's (16 + 8 i, i < 6), element sizes other than 1/2/4/8
/// (on every kind), steps reaching past 65535, more than kMaxConversions or
/// kMaxSteps.
std::vector<EventConversion> decode(std::string_view bytes);

} // namespace tracectl::kernel_records
