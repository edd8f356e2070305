// The daemon's loader of the `ip` provider's BPF program
// (src/bpf/ip_probes.bpf.c, via its bpftool skeleton).
#pragma once

#include "ip/ip_filter.hpp"
#include "ip_event_fields.hpp"
#include "ip_probe_abi.h"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

struct ip_probes_bpf;

namespace tracectl::ip {

/// A failure of libbpf or of the kernel: what() says what failed and
/// libbpf's errno text, plus the last lines libbpf logged.
class IpProbeError : public std::runtime_error {
    using runtime_error::runtime_error;
};

/// One loaded and attached copy of the program, for one kernel channel of
/// one session. RAII: the destructor detaches and closes everything (the
/// programs `tracectl_ip_snd` at tp_btf/net_dev_queue and `tracectl_ip_rcv`
/// at tp_btf/netif_receive_skb, the maps `events`, `counters`, `config`,
/// `aggregation` and the program's scratch `aggregation_key`).
/// Move-only; a moved-from object holds nothing (ringFd() == -1). Not
/// thread-safe (the daemon calls it on one executor thread).
class IpProbes {
public:
    /// Loads with a ring buffer of at least `ringBytes` bytes (rounded up to
    /// a power of two, at least one page) and an `aggregation` map of
    /// `aggregationKeys` keys (0: one, unused), attaches both programs;
    /// disabled, with a filter that passes nothing. Throws IpProbeError.
    explicit IpProbes(std::size_t ringBytes, std::size_t aggregationKeys = 0);
    ~IpProbes();
    IpProbes(IpProbes&& other) noexcept;
    IpProbes& operator=(IpProbes&& other) noexcept;
    IpProbes(const IpProbes&) = delete;
    IpProbes& operator=(const IpProbes&) = delete;

    /// The ring buffer's size in bytes (a power of two).
    std::size_t ringBytes() const noexcept;
    /// The `events` map fd (to pass to the consumer; the caller dups). -1 when empty.
    int ringFd() const noexcept;
    /// The `counters` map fd (mmapable, struct tracectl_ip_counters). -1 when empty.
    int countersFd() const noexcept;
    /// Installs `program` (double-buffered: the inactive slot, then the
    /// switch; ip_probe_abi.h). Throws IpProbeError.
    void setFilter(const IpFilterProgram& program);
    /// Installs `program` as setFilter() does, but its packets are counted
    /// in the `aggregation` map by their record ANDed with `keyMask` for
    /// the record's IP version (IpRecordMask's per-version bits, written as
    /// the config's key_mask[0] for IPv4 and key_mask[1] for IPv6;
    /// ip_probe_abi.h, "In-kernel aggregation"), not written to the ring.
    /// Throws IpProbeError (also when loaded with aggregationKeys 0).
    void setAggregatingFilter(const IpFilterProgram& program, const IpRecordMask& keyMask);
    /// The `aggregation` map fd (readIpAggregation; the caller dups). -1 when empty.
    int aggregationFd() const noexcept;
    /// Switches recording on or off (the control slot's `enabled`). Throws IpProbeError.
    void setEnabled(bool on);

private:
    void writeFilter(const tracectl_ip_config& value);
    void destroy() noexcept;
    void writeControl();

    ip_probes_bpf* skel_ = nullptr;
    std::size_t ringBytes_ = 0;
    std::size_t aggregationKeys_ = 0; // as asked: 0 = no aggregation (the map has 1)
    unsigned active_ = 0;
    bool enabled_ = false;
};

/// What the `aggregation` map holds: each key (a masked record) once, with
/// the packets counted on every CPU summed; and the packets whose new key
/// the full map refused (counters.aggregation_dropped).
struct IpAggregation {
    std::vector<std::pair<tracectl_ip_record, std::uint64_t>> rows;
    std::uint64_t dropped = 0;
};

/// Reads the `aggregation` map `aggregationFd` and the counters map
/// `countersFd` (both IpProbes' fds, or dups of them) without changing
/// them. Owns nothing: an executor may run it on dups. Throws IpProbeError.
IpAggregation readIpAggregation(int aggregationFd, int countersFd);

} // namespace tracectl::ip
