// The consumer's side of the `ip` provider: reads the records
// (struct tracectl_ip_record, src/common/ip_probe_abi.h) that the BPF
// program (src/bpf/ip_probes.bpf.c) writes into its BPF ring buffer, and its
// drop counter, from the map fds the daemon passes.
#pragma once

#include "ip_probe_abi.h"
#include "unique_fd.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <linux/types.h>
#include <memory>

namespace tracectl::consumer::kernel {

/// Reads one `events` ring buffer (BPF_MAP_TYPE_RINGBUF) through libbpf's
/// ring_buffer (mmap'ed consumer/producer pages; no BPF syscall per read),
/// and maps the `counters` map (BPF_F_MMAPABLE ARRAY) read-only. Works
/// without any capability in a process that holds the fds (kernel >= 6.5:
/// BPF_OBJ_GET_INFO_BY_FD needs no CAP_BPF; checked by
/// tests/unit/ip_probes_live_test.cpp as uid nobody). Move-only; a
/// moved-from reader has pollFd() == -1 and consumes nothing. One thread.
class IpRingReader {
public:
    /// `ring`: the `events` ring buffer map fd, `counters`: the counters map
    /// fd, both passed by the daemon (this object owns them). Throws
    /// std::system_error (the errno of the failing libbpf call or mmap).
    IpRingReader(UniqueFd ring, UniqueFd counters);
    ~IpRingReader();
    IpRingReader(IpRingReader&&) noexcept;
    IpRingReader& operator=(IpRingReader&&) noexcept;
    IpRingReader(const IpRingReader&) = delete;
    IpRingReader& operator=(const IpRingReader&) = delete;

    /// An epoll fd (libbpf's ring_buffer__epoll_fd) that becomes readable
    /// (EPOLLIN) when the program forces a wake-up (ring more than half full,
    /// BPF_RB_FORCE_WAKEUP); records written with BPF_RB_NO_WAKEUP do not
    /// wake it, so read on a timer too. -1 when moved from.
    int pollFd() const noexcept;

    /// Calls `sink` for each record available now, in ring (reservation)
    /// order, at most `limit` records; returns how many. Samples shorter than
    /// the struct are skipped and counted in malformed(). If `sink` throws,
    /// the record it threw on counts as consumed and the exception
    /// propagates. Throws std::system_error on a ring error.
    std::size_t consume(const std::function<void(const tracectl_ip_record&)>& sink,
                        std::size_t limit = SIZE_MAX);

    /// The program's running count of records it could not reserve (ring
    /// full): an atomic read of the mmap'ed counters, no syscall. 0 when moved from.
    std::uint64_t dropped() const noexcept;
    /// Samples skipped because they were shorter than tracectl_ip_record.
    std::uint64_t malformed() const noexcept;

private:
    struct State;
    std::unique_ptr<State> state_;
};

} // namespace tracectl::consumer::kernel
