// What a kernel stream's event context needs beyond ftrace's common_pid:
// the thread's process id, name and priority, looked up in /proc by tid.
#pragma once

#include "kernel_records.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <unordered_map>

namespace tracectl::consumer::kernel {

/// One thread, as the `_pid`, `_procname` and `_prio` contexts show it.
struct ProcessDetails {
    std::int32_t pid = 0;            ///< the thread group id (Tgid)
    std::array<char, 16> procname{}; ///< comm, NUL padded (at most 15 chars)
    std::int32_t prio = 0;           ///< task_prio(): /proc/<tid>/stat field 18
    /// Inode number of the thread's active pid namespace (the inode of
    /// /proc/<tid>/ns/pid, what lttng-modules' `*_ns_inum` fields hold);
    /// 0 when unknown.
    std::uint32_t pidNsInum = 0;
    /// The thread's id in each pid namespace, from the initial one inwards
    /// (/proc/<tid>/status `NSpid:`), at most kernel_records::kMaxPidNsLevels;
    /// nsLevels of them are set. 0 when unknown (then the tid is all there is).
    std::uint8_t nsLevels = 0;
    std::array<std::int32_t, kernel_records::kMaxPidNsLevels> nsTids{};
    bool operator==(const ProcessDetails&) const = default;
};

/// The lookup FtraceStream consults when its context mask has pid,
/// procname or prio (tests give their own).
class ProcessInfo {
public:
    virtual ~ProcessInfo() = default;
    /// The details of thread `tid`. Never fails: see the implementation for
    /// what an unknown thread gives.
    virtual ProcessDetails lookup(std::int32_t tid) = 0;
    /// Thread `tid` is now named `procname` (16 bytes, NUL padded): an exec
    /// or a rename seen in the trace. Later lookups give that name.
    virtual void renamed(std::int32_t /*tid*/, const std::array<char, 16>& /*procname*/) {}
};

/// ProcessInfo from <procRoot>/<tid>/stat (comm, priority),
/// <procRoot>/<tid>/status (Tgid, NSpid) and the inode of
/// <procRoot>/<tid>/ns/pid (pidNsInum), cached by tid.
///
/// Cache policy: clear-when-full. Once `capacity` tids are cached the whole
/// cache is dropped and refilled on demand (O(1) per lookup, no LRU list;
/// a trace touches far fewer threads than the default 65536 between
/// clears). A cached entry is not refreshed: a thread that execs (new comm)
/// or a reused tid keeps the old details until forget(tid) or a clear.
///
/// Unknown threads: tid 0 (the idle task, no /proc entry) gives pid 0,
/// "swapper", prio 20 (what lttng-modules shows for it, nice 0 of a
/// non-RT task). A thread that vanished before it was looked up (or whose
/// files cannot be read or parsed) gives pid = tid, an empty procname and
/// prio 0: a thread is its own process as far as the reader can tell. That
/// answer is cached too, so a dead tid costs one failed open. Either has
/// pidNsInum 0 and nsLevels 0; a kernel without `NSpid:` (before 4.1)
/// gives nsLevels 0 for every thread.
class ProcfsProcessInfo final : public ProcessInfo {
public:
    explicit ProcfsProcessInfo(std::filesystem::path procRoot = "/proc",
                               std::size_t capacity = 65536);

    ProcessDetails lookup(std::int32_t tid) override;
    /// Renames the thread, looking it up first if it is not cached (its
    /// process id then stays known after it exits).
    void renamed(std::int32_t tid, const std::array<char, 16>& procname) override;

    /// Drops `tid`'s cached details (after an exec or exit).
    void forget(std::int32_t tid) { cache_.erase(tid); }

    std::size_t cached() const noexcept { return cache_.size(); }
    /// Lookups that read /proc (cache misses), and those that found no thread.
    std::uint64_t reads() const noexcept { return reads_; }
    std::uint64_t vanished() const noexcept { return vanished_; }

private:
    ProcessDetails read(std::int32_t tid);

    std::string root_;
    std::size_t capacity_;
    std::unordered_map<std::int32_t, ProcessDetails> cache_;
    std::uint64_t reads_ = 0;
    std::uint64_t vanished_ = 0;
};

} // namespace tracectl::consumer::kernel
