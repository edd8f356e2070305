// The daemon's loader of the `ip` provider's BPF program
// (src/bpf/ip_probes.bpf.c, via its bpftool skeleton).
#pragma once

#include "ip/ip_filter.hpp"

#include <cstddef>
#include <stdexcept>

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
/// at tp_btf/netif_receive_skb, the maps `events`, `counters`, `config`).
/// Move-only; a moved-from object holds nothing (ringFd() == -1). Not
/// thread-safe (the daemon calls it on one executor thread).
class IpProbes {
public:
    /// Loads with a ring buffer of at least `ringBytes` bytes (rounded up to
    /// a power of two, at least one page), attaches both programs; disabled,
    /// with a filter that passes nothing. Throws IpProbeError.
    explicit IpProbes(std::size_t ringBytes);
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
    /// Switches recording on or off (the control slot's `enabled`). Throws IpProbeError.
    void setEnabled(bool on);

private:
    void destroy() noexcept;
    void writeControl();

    ip_probes_bpf* skel_ = nullptr;
    std::size_t ringBytes_ = 0;
    unsigned active_ = 0;
    bool enabled_ = false;
};

} // namespace tracectl::ip
