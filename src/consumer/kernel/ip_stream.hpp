// A kernel channel's `ip` provider stream (`<channel>_ip`): the records the
// BPF program wrote into its ring buffer (src/common/ip_probe_abi.h) in,
// CTF packets of the channel's stream class out, with the ip:send and
// ip:receive events' payload as src/common/ip_event_fields.hpp lays it out.
#pragma once

#include "ip_probe_abi.h"
#include "packet_builder.hpp"
#include "process_info.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tracectl::consumer::kernel {

struct IpStreamConfig {
    Uuid uuid{};                    ///< the trace's UUID
    std::uint32_t streamId = 0;     ///< the channel's stream class id
    std::size_t maxPacketBytes = 0; ///< the channel's sub-buffer size (>= 84)
    std::uint32_t contextMask = 0;  ///< kernel_records ContextField bits
    std::uint16_t sendId = 0;       ///< CTF event id of ip:send
    std::uint16_t receiveId = 0;    ///< CTF event id of ip:receive
    /// When the stream begins (ns): its first packet's timestamp_begin (as
    /// FtraceStreamConfig::beginTimestamp; 0: at the first event or flush).
    std::uint64_t beginTimestamp = 0;
};

/// What a stream did so far.
struct IpStreamCounters {
    std::uint64_t eventsWritten = 0;   ///< events in packets (closed or not)
    std::uint64_t eventsDiscarded = 0; ///< the events_discarded running count
    std::uint64_t unknownProbes = 0;   ///< records of a probe number it does not know
    std::uint64_t packets = 0;         ///< packets handed to the sink
};

/// Converts the ring buffer's records. Not thread-safe; `processes` (may
/// be null: pid = tid, procname empty, prio 0) and the sink outlive it.
///
/// Packets: stream_instance_id kernel_records::kIpProbesInstance, cpu_id 0
/// (one stream for all CPUs); the `cpu_id` context, when the channel has
/// it, is the CPU the probe ran on.
///
/// Timestamps: the program takes each after its ring-buffer reservation, so
/// records come in order almost always; one that is earlier than the
/// stream's last (an interrupt between another CPU's reservation and its
/// clock read) is clamped to it, so the stream never goes backward.
class IpStream {
public:
    IpStream(const IpStreamConfig& config, ProcessInfo* processes, PacketSink sink);

    /// Appends one record's event; a full packet is closed, handed to the
    /// sink and the next opened.
    void consume(const tracectl_ip_record& record);

    /// The program's running count of records it could not reserve (ring
    /// buffer full): what it grew by since the last call is added to
    /// events_discarded, so the trace's discarded count is exactly it.
    void setDropped(std::uint64_t total);

    /// Closes the current packet, even an empty one, with timestamp_end =
    /// max(now, last event's timestamp) and hands it to the sink.
    void flush(std::uint64_t now);

    const IpStreamCounters& counters() const noexcept { return counters_; }

private:
    void emit(std::uint64_t end);

    IpStreamConfig config_;
    ProcessInfo* processes_;
    PacketSink sink_;
    PacketBuilder builder_;
    bool needsProcess_;
    std::vector<std::byte> fields_; ///< one event's payload, reused
    std::uint64_t last_ = 0;
    std::uint64_t dropped_ = 0;
    IpStreamCounters counters_;
};

} // namespace tracectl::consumer::kernel
