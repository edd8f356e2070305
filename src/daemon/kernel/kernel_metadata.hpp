// The kernel trace's CTF 1.8 metadata (TSDL) and the conversion of each
// enabled ftrace event into its CTF event (kernel_records::EventConversion):
// both from one description, so that what the TSDL declares is what the
// consumer writes. The byte layout is src/common/kernel_records.hpp's; the
// text's form and the env follow lttng-modules 2.13
// (src/lttng-events.c _lttng_session_metadata_statedump,
// _lttng_stream_packet_context_declare, _lttng_event_header_declare).
//
// Field types, from each `format` field (format_file.hpp), in the trace
// every integer `align = 8`, little-endian (the trace's byte order):
//   integers of size 1/2/4/8    integer of that size, signed as `signed:`;
//                               base 16 for pointers (a '*' in the type)
//                               and `unsigned long` (addresses); `bool`
//                               is an unsigned 8-bit integer
//   char NAME[N]                text array: N x `integer { size = 8;
//                               align = 8; signed = 1; encoding = UTF8; }`
//   T NAME[N], N elements of    array of N integers of size/N bytes (1, 2,
//     1/2/4/8 bytes             4 or 8), signed as `signed:`
//   __data_loc/__rel_loc char[] string (DataLocString / RelLocString)
//   a sys_enter_<name> argument string, copied from user memory
//     that is a user string       (UserString; syscall_string_args.hpp)
//   other __data_loc/__rel_loc  `uint32 _<name>_length` then a sequence of
//                               the element integer (u8 when the element
//                               type's size is unknown, e.g. cpumask_t)
//   anything else (odd sizes,   an array of `size` u8 (hex): the bytes are
//     arrays with a length that kept, never dropped
//     is not a number)
// Fields of size 0 (`x[0]`) have no bytes and are left out. The common_*
// fields and the fields lttng_kernel_names.hpp drops are left out; renamed
// fields get their lttng-modules names.
//
// Events with an lttng_kernel_layout.hpp layout (those LTTng's analyses
// read) get lttng-modules 2.13's fields, order and types: fields ftrace
// records in another form are converted by the consumer (rwbs bits, prio
// - 100, comm strings as char[16], gfp_t as u32, sched_process_fork's
// tgids, pid namespace inodes and vtids), then ftrace's extra fields
// follow. What neither has stays absent (net events' network_header
// variants, kmem's page address): the layout table says which.
// Other events: names follow lttng-modules (lttng_kernel_names.hpp),
// contents and field order follow ftrace.
//
// Channels with the `ip` provider (ipProbes) declare its two events, named
// "ip:send" and "ip:receive" (DTrace's probe names), with the payload of
// src/common/ip_event_fields.hpp, at the ids given (ftrace events' id
// range: they are enabled among them).
//
// Channels with withStatedump also declare kernel_records.hpp's statedump
// events (ids 0..3: lttng_statedump_start, _process_state,
// _file_descriptor, _end; their enum fields as plain i32).
#pragma once

#include "format_file.hpp"
#include "kernel_records.hpp"
#include "lttng_kernel_layout.hpp"
#include "lttng_kernel_names.hpp"
#include "metadata/trace_info.hpp"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tracectl::kernel {

/// A description the metadata cannot be made from (duplicate ids, ...).
class KernelMetadataError : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

/// One enabled ftrace event of a channel.
struct KernelEventDescription {
    std::string system; ///< ftrace system, e.g. "sched" (for names)
    /// The CTF event id in the channel's stream class: >= kFirstFtraceCtfId
    /// (ids 0..3 are the statedump's), < 65535, unique in the channel.
    std::uint16_t ctfId = kernel_records::kFirstFtraceCtfId;
    EventFormat format; ///< its parsed `format` file
};

/// The CTF ids of a channel's `ip` provider events.
struct IpProbeIds {
    std::uint16_t sendId = 0;    ///< ip:send
    std::uint16_t receiveId = 0; ///< ip:receive
    bool operator==(const IpProbeIds&) const = default;
};

/// The trace's names of the ip provider's events.
inline constexpr const char* kIpSendEventName = "ip:send";
inline constexpr const char* kIpReceiveEventName = "ip:receive";

struct KernelChannelDescription {
    std::string name;           ///< channel name (TSDL comment only)
    std::uint32_t streamId = 0; ///< stream class id, unique in the trace
    /// kernel_records::ContextField bits: the stream event context.
    std::uint32_t contextMask = kernel_records::ContextTid;
    /// Declare the statedump events (ids 0..3) in this stream class.
    bool withStatedump = false;
    std::vector<KernelEventDescription> events;
    /// The ip provider's events, when the channel has them (ids in the
    /// events' range and unique among them).
    std::optional<IpProbeIds> ipProbes;
};

struct KernelTraceDescription {
    metadata::Uuid uuid{}; ///< trace uuid (also in every packet header)
    std::string hostname;
    std::string sysname;           ///< uname -s
    std::string kernelRelease;     ///< uname -r
    std::string kernelVersion;     ///< uname -v
    std::string sessionName;       ///< env trace_name
    std::int64_t creationTime = 0; ///< session creation, seconds since the Epoch
    /// env tracer_major/minor/patchlevel: lttng-modules 2.13.0, whose
    /// layout and names the trace follows.
    metadata::TracerVersion tracer{2, 13, 0};
    /// The clock, exactly as the UST traces describe it
    /// (metadata::defaultClock(): "monotonic", boot id uuid, 1 GHz, offset
    /// measured the same way), so babeltrace2 merges the domains.
    metadata::ClockInfo clock;
    std::vector<KernelChannelDescription> channels;
};

/// One CTF event as the metadata declares it.
struct KernelEventInfo {
    std::string system, ftraceName; ///< ftrace's names
    std::string ctfName;            ///< the trace's (lttng-modules) name
    kernel_records::EventConversion conversion;
};

struct KernelChannelMetadata {
    std::string name;
    std::uint32_t streamId = 0;
    std::vector<KernelEventInfo> events; ///< same order as the description's
    /// The conversions alone (what the consumer is sent).
    std::vector<kernel_records::EventConversion> conversions() const;
};

struct KernelMetadata {
    std::string tsdl;                            ///< the whole metadata text, "/* CTF 1.8 */" first
    std::vector<KernelChannelMetadata> channels; ///< same order as the description's
};

/// The conversion of one event: the steps in field order (Copy steps of
/// fields that follow each other without a gap merged into one), minSize =
/// the largest offset + size of all its fields. `naming` decides which
/// fields are dropped; `layout` (lttngLayout()'s, or none) the order and
/// the conversions, unless the format does not fit it. Throws
/// KernelMetadataError for more than
/// kernel_records::kMaxSteps steps, or a field reaching past 65535 bytes
/// or a location field whose size is not 4 (parseFormat never gives one).
kernel_records::EventConversion computeConversion(const EventFormat& format, std::uint16_t ctfId,
                                                  const LttngNaming& naming,
                                                  const LttngLayout* layout = nullptr);

/// Everything for `trace`. Throws KernelMetadataError: no channel, stream
/// ids not unique, ctf ids outside kFirstFtraceCtfId..65534 or not unique
/// in a channel, a clock name that is not an identifier, clock frequency 0,
/// unknown context bits, or what computeConversion throws for.
KernelMetadata generateKernelMetadata(const KernelTraceDescription& trace);

} // namespace tracectl::kernel
