// The consumer's side of the system-call string program
// (src/bpf/syscall_strings.bpf.c): reads its BPF ring buffer's records
// (src/common/syscall_string_abi.h) into a UserStringTable, and its drop
// counter, from the map fds the daemon passes (AttachSyscallStrings).
#pragma once

#include "unique_fd.hpp"
#include "user_string_table.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace tracectl::consumer::kernel {

/// One `strings` ring buffer (BPF_MAP_TYPE_RINGBUF, read through libbpf's
/// mmap'ed ring_buffer: no system call per read) and its `counters` map
/// (BPF_F_MMAPABLE ARRAY, mapped read-only). Move-only; a moved-from reader
/// has pollFd() == -1 and reads nothing. One thread.
class SyscallStringRing {
public:
    /// Owns `ring` and `counters`. Throws std::system_error (the errno of
    /// the failing libbpf call, bpf(2) or mmap).
    SyscallStringRing(UniqueFd ring, UniqueFd counters);
    ~SyscallStringRing();
    SyscallStringRing(SyscallStringRing&&) noexcept;
    SyscallStringRing& operator=(SyscallStringRing&&) noexcept;
    SyscallStringRing(const SyscallStringRing&) = delete;
    SyscallStringRing& operator=(const SyscallStringRing&) = delete;

    /// The ring buffer's size in bytes (the map's max_entries).
    std::size_t ringBytes() const noexcept;
    /// An epoll fd that becomes readable when the program forces a wake-up
    /// (the ring more than half full); -1 when moved from.
    int pollFd() const noexcept;
    /// Adds every record the ring holds now to `table` (its addSample());
    /// returns how many. Throws std::system_error on a ring error.
    std::size_t drainInto(UserStringTable& table);
    /// The program's count of strings the ring had no room for (an atomic
    /// read of the mapped counters). 0 when moved from.
    std::uint64_t dropped() const noexcept;

private:
    struct State;
    std::unique_ptr<State> state_;
};

} // namespace tracectl::consumer::kernel
