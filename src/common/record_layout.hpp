// Record layouts: how to step over one CTF 1.8 field list (an event's
// `fields`, a stream's `event.context`) without decoding its values, as a
// flat "skip program". The daemon compiles them from its metadata model
// (src/daemon/metadata/record_layout_compiler.hpp) and sends them to the
// consumer, whose RecordCounter (src/consumer/record_counter.hpp) walks the
// records of each packet it writes to count them (issue 14: lttng-ust's
// packet context has no event count, and its ring buffer's own record
// counting, LTTNG_RING_BUFFER_COUNT_EVENTS, is compiled out).
//
// A program steps exactly as a CTF reader following our TSDL does
// (babeltrace2's ctf plugin: its bfcr reader; set_alignments() for the
// alignments), and as lttng-ust writes (record_header_size() in
// src/common/ringbuffer-clients/template.h): positions and sizes in bits;
// every field is first aligned on its alignment; a struct's
// alignment is the largest of its own `align()` and its members'; an
// array's or sequence's is its element's; a string's is 8; a variant's is 1
// (its selected choice then aligns itself); an empty aligned struct is how
// padding is written.
//
// Ops (Op::kind):
//   Skip     align on `alignment` bits, then skip `bits` bits. A run of
//            fixed-size fields whose size does not depend on where the run
//            starts is one Skip (Skip{A, 0} is a bare alignment).
//   Integer  align on `alignment`, read `bits` (1..64) bits as an integer
//            in the trace's byte order (the opposite one with kReverse),
//            sign-extended with kSigned, into register `reg`. Only emitted
//            for integers and enums that a later sequence length or variant
//            tag refers to; every other integer is part of a Skip.
//   String   align on 8, skip the bytes up to and including the first NUL.
//   Sequence align on `alignment` (the element's), skip register `reg`
//            elements of `bits` bits each (element i + 1 starts at the
//            alignment following element i's end).
//   Variant  choose a choice by the value in register `reg` (compared as
//            signed with kSigned): the first of `ranges[rangeBegin() ..
//            rangeBegin() + rangeCount())` holding it gives the choice
//            index. `alignment` holds the choice count n; the n ops that
//            follow are Choice ops; then come the n choice bodies, one after
//            the other; the op after the last body is the variant's
//            continuation.
//   Choice   `alignment` = the body's op count, `bits` = the op index where
//            the body starts (absolute in Program::ops).
//
// Values a walker must trust a program for are checked by decode() (and
// validate()): alignments are powers of two 1..64, integer sizes 1..64,
// registers below Program::registers, choice bodies contiguous and inside
// their enclosing body, ranges inside Program::ranges with choice indices
// below the choice count, variants nested at most kMaxNesting deep.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tracectl::record_layout {

/// Anything malformed in an encoded layout or a program; the message says
/// what.
class LayoutError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Limits of one program, checked by validate() and decode(). With them an
/// encoded program takes at most 10 + 16 * kMaxOps + 20 * kMaxRanges bytes
/// (851,978: under 832 KiB), so one event with the largest program still
/// fits one 1 MiB protocol frame with its message header (10 bytes) and id
/// (4). A realistic event takes well under 1 KiB: a fixed-size one 30 bytes
/// with its id, a dynamic-typed app context 450. compileFields refuses a
/// field list past them (the registry answers the app E2BIG).
inline constexpr std::size_t kMaxOps = 32768;
inline constexpr std::size_t kMaxRanges = 16384;
inline constexpr std::size_t kMaxRegisters = 1024;
/// Variants inside variant choices, the outermost one being depth 1.
inline constexpr std::size_t kMaxNesting = 16;
/// Largest Skip, in bits (a bound no real field list reaches; keeps every
/// position sum far from overflowing).
inline constexpr std::uint64_t kMaxSkipBits = std::uint64_t{1} << 40;
/// Event layouts in one encoded ChannelLayouts.
inline constexpr std::size_t kMaxEventsPerMessage = 1u << 20;

enum class OpKind : std::uint8_t {
    Skip = 0,
    Integer = 1,
    String = 2,
    Sequence = 3,
    Variant = 4,
    Choice = 5
};

/// Op::flags bits.
inline constexpr std::uint8_t kSigned = 1;  ///< Integer: sign-extend; Variant: signed compare
inline constexpr std::uint8_t kReverse = 2; ///< Integer: opposite of the trace's byte order

/// One op: 16 bytes. Field meanings per kind: see the file comment.
struct Op {
    OpKind kind = OpKind::Skip;
    std::uint8_t flags = 0;
    std::uint16_t reg = 0;
    std::uint32_t alignment = 1; ///< bits (Variant: choice count; Choice: body op count)
    std::uint64_t bits = 0;      ///< bits (Variant: ranges; Choice: body start)

    std::uint32_t rangeBegin() const noexcept { return static_cast<std::uint32_t>(bits); }
    std::uint32_t rangeCount() const noexcept { return static_cast<std::uint32_t>(bits >> 32); }
    friend bool operator==(const Op&, const Op&) = default;
};

/// One enum range of a variant: tag values lo..hi (inclusive; signed or
/// unsigned as the variant op says) select choice `choice`.
struct VariantRange {
    std::uint64_t lo = 0;
    std::uint64_t hi = 0;
    std::uint32_t choice = 0;
    friend bool operator==(const VariantRange&, const VariantRange&) = default;
};

/// How to step over one field list. An empty program steps over nothing
/// (a channel without context fields).
struct Program {
    std::vector<Op> ops;
    std::vector<VariantRange> ranges;
    std::uint16_t registers = 0; ///< registers the Integer ops write, 0..registers-1
    friend bool operator==(const Program&, const Program&) = default;
};

/// Throws LayoutError if `p` breaks a rule of the file comment.
void validate(const Program& p);

/// The layouts of one channel (one stream class): its `event.context`
/// program once known (an empty Program when it has no context fields) and
/// event programs by event id. Sent as increments: a message may carry only
/// new events, without the context.
struct ChannelLayouts {
    std::optional<Program> context;
    std::vector<std::pair<std::uint32_t, Program>> events;
    friend bool operator==(const ChannelLayouts&, const ChannelLayouts&) = default;
};

/// Binary form, every integer little-endian:
///   u32 magic "TLAY" (0x59414c54), u8 version 1, u8 has-context (0 or 1),
///   [program], u32 event count, count x (u32 event id, program);
///   program := u16 registers, u32 op count, u32 range count,
///              ops (u8 kind, u8 flags, u16 reg, u32 alignment, u64 bits),
///              ranges (u64 lo, u64 hi, u32 choice).
/// Throws LayoutError for a program that validate() refuses or more than
/// kMaxEventsPerMessage events.
std::string encode(const ChannelLayouts& layouts);

/// Encodes `layouts` as one or more messages of at most `maxBytes` bytes
/// each (the context in the first, events in order); none for layouts
/// holding nothing. Throws LayoutError if one program alone does not fit.
std::vector<std::string> encodeChunks(const ChannelLayouts& layouts, std::size_t maxBytes);

/// Strict inverse of encode(): throws LayoutError for a bad magic or
/// version, a truncated or over-long input (every byte must be consumed),
/// an unknown op kind or flag, a count past the limits, a program that
/// validate() refuses, or an event id given twice.
ChannelLayouts decode(std::string_view bytes);

/// What the consumer needs of the trace's ABI (the daemon's
/// metadata::Abi, from the apps' registration message): alignments in bits
/// and the byte order.
struct Abi {
    std::uint32_t bitsPerLong = 64;
    std::uint32_t uint8Alignment = 8;
    std::uint32_t uint16Alignment = 16;
    std::uint32_t uint32Alignment = 32;
    std::uint32_t uint64Alignment = 64;
    std::uint32_t longAlignment = 64;
    bool bigEndian = false;
    friend bool operator==(const Abi&, const Abi&) = default;
};

/// Where things are in a packet of a trace with ABI `abi`, as our TSDL
/// says (trace_environment.cpp): `trace.packet.header` (u32 magic,
/// u8 uuid[16], u32 stream_id, u64 stream_instance_id), then
/// `struct packet_context` (u64 timestamp_begin, timestamp_end,
/// content_size, packet_size, packet_seq_num, unsigned long
/// events_discarded, u32 cpu_id), then records, each on
/// `struct event_header_large` (enum : uint16_t id; compact id
/// 0..65534 -> u32 timestamp; 65535 -> struct { u32 id; u64 timestamp })
/// aligned on uint16Alignment. It is also what lttng-ust writes:
/// client_packet_header_size() and record_header_size() in lttng-ust's
/// src/common/ringbuffer-clients/template.h.
struct PacketFormat {
    Abi abi;
    std::uint64_t firstRecordBit = 0; ///< end of the packet context, in bits
    std::uint64_t contentSizeBit = 0; ///< where packet_context.content_size sits
    std::uint64_t packetSizeBit = 0;  ///< where packet_context.packet_size sits

    /// Throws LayoutError for bits per long other than 32/64 or an
    /// alignment that is not a power of two 1..64.
    static PacketFormat fromAbi(const Abi& abi);
};

} // namespace tracectl::record_layout
