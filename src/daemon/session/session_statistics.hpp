// What a session's consumers wrote, as the `Statistics` and
// `ChannelStatistics` properties show it (org.tracectl.Tracing1.Session.xml).
// The figures come from the consumer (consumer_protocol::Statistics), which
// reads them from the packets it writes: LTTng's packet context carries
// events_discarded and packet_seq_num (gaps are lost packets, overwrite
// mode), and the consumer counts the event records of each packet.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tracectl {

/// Figures of one channel or of a whole session, since it was created.
struct TraceFigures {
    uint64_t eventsRecorded = 0;
    uint64_t eventsDiscarded = 0;
    uint64_t packetsLost = 0;
    uint64_t bytesWritten = 0; ///< stream file bytes (packets, data and metadata), every chunk
    uint64_t chunkBytes = 0;   ///< the same, in the current trace chunk
    /// bytesWritten plus what the apps wrote into the ring buffers that is
    /// not read yet, sampled without consuming
    /// (consumer_protocol::ChannelFigures::bytesProduced)
    uint64_t bytesProduced = 0;
    TraceFigures& operator+=(const TraceFigures& o) noexcept {
        eventsRecorded += o.eventsRecorded;
        eventsDiscarded += o.eventsDiscarded;
        packetsLost += o.packetsLost;
        bytesWritten += o.bytesWritten;
        chunkBytes += o.chunkBytes;
        bytesProduced += o.bytesProduced;
        return *this;
    }
    bool operator==(const TraceFigures&) const = default;
};

/// One channel's figures, summed over its buffers (every uid and bitness,
/// or every pid, of the session).
struct ChannelStatistics {
    std::string domain;  ///< "ust"
    std::string channel; ///< its name
    TraceFigures figures;
    /// Whether figures.eventsRecorded was counted: kernel channels always
    /// (each record is converted), UST ones with count-events.
    bool eventsCounted = false;
    bool operator==(const ChannelStatistics&) const = default;
};

/// One domain's figures in one session.
struct DomainStatistics {
    /// When the consumer sampled them: CLOCK_MONOTONIC, microseconds; 0 =
    /// never.
    uint64_t sampledAtUsec = 0;
    /// Whether eventsRecorded was counted (SessionConfig::countEvents); if
    /// not, it is 0 and the property leaves it out.
    bool eventsCounted = false;
    /// Every channel's, and the metadata's bytes.
    TraceFigures total;
    /// Apps refused because the consumer had no resources for their
    /// buffers (out of fds): they run untraced, the session goes on.
    uint64_t appsRefused = 0;
    std::vector<ChannelStatistics> channels;
    bool operator==(const DomainStatistics&) const = default;
};

} // namespace tracectl
