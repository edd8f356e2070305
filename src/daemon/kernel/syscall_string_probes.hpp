// The daemon's loader of the system-call string program
// (src/bpf/syscall_strings.bpf.c, via its bpftool skeleton): string
// arguments of system calls copied from user memory at sys_enter, for the
// consumer to put into ftrace's syscall_entry_<name> records
// (kernel_records StepKind::UserString).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

struct syscall_strings_bpf;
struct bpf_link;

namespace tracectl::kernel {

/// A failure of libbpf or of the kernel: what() says what failed, with the
/// errno text and libbpf's last lines.
class SyscallStringProbeError : public std::runtime_error {
    using runtime_error::runtime_error;
};

/// One loaded copy of the program, for one kernel channel of one session,
/// attached to the sys_enter_<name> tracepoints attach() names. RAII: the
/// destructor detaches and closes everything (the program, the maps
/// `strings`, `counters`, `scratch`). Move-only; a moved-from object holds
/// nothing (ringFd() == -1). Not thread-safe (the daemon calls it on the
/// kernel domain's executor).
class SyscallStringProbes {
public:
    /// Loads with a ring buffer of at least `ringBytes` (rounded up to a
    /// power of two, at least one page), attached nowhere, disabled.
    /// Throws SyscallStringProbeError.
    explicit SyscallStringProbes(std::size_t ringBytes);
    ~SyscallStringProbes();
    SyscallStringProbes(SyscallStringProbes&&) noexcept;
    SyscallStringProbes& operator=(SyscallStringProbes&&) noexcept;
    SyscallStringProbes(const SyscallStringProbes&) = delete;
    SyscallStringProbes& operator=(const SyscallStringProbes&) = delete;

    /// The ring buffer's size in bytes (a power of two).
    std::size_t ringBytes() const noexcept { return ringBytes_; }
    /// The `strings` ring buffer map fd (the caller dups). -1 when empty.
    int ringFd() const noexcept;
    /// The `counters` map fd (mmapable, struct
    /// tracectl_syscall_string_counters). -1 when empty.
    int countersFd() const noexcept;

    /// Attaches the program to tracepoint syscalls:`event` (a
    /// "sys_enter_<name>") with `argMask` (bit i: argument i is a user
    /// string; bits 0..5). Nothing if attached there already. Throws
    /// SyscallStringProbeError (no such tracepoint, the kernel refused).
    void attach(const std::string& event, std::uint64_t argMask);
    /// Detaches it from syscalls:`event` (nothing if not attached).
    void detach(const std::string& event) noexcept;
    /// The events it is attached to.
    std::size_t attachedCount() const noexcept { return links_.size(); }
    bool isAttached(const std::string& event) const { return links_.count(event) != 0; }

    /// Records strings (on) or nothing (off): the program's `enabled`
    /// word, written through the skeleton's mmap'ed .bss.
    void setEnabled(bool on) noexcept;

private:
    struct LinkDeleter {
        void operator()(bpf_link* link) const noexcept;
    };
    void destroy() noexcept;

    syscall_strings_bpf* skel_ = nullptr;
    std::size_t ringBytes_ = 0;
    std::map<std::string, std::unique_ptr<bpf_link, LinkDeleter>> links_;
};

} // namespace tracectl::kernel
