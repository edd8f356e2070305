// A kernel channel's system call string arguments: the table its streams'
// UserString steps take strings from (kernel/user_string_table.hpp), fed
// from the system-call string program's ring buffer once the daemon
// attached it (AttachSyscallStrings; kernel/syscall_string_ring.hpp).
//
// When: the channel drains the ring before it converts each page (a
// record's string was copied before the record could be read), when the
// program wakes it (the ring more than half full), and at its read timer,
// which also drops strings no record took (tick()).
//
// Threads: the consumer's loop only.
#pragma once

#include "common/event_loop.hpp"
#include "common/unique_fd.hpp"
#include "kernel/syscall_string_ring.hpp"
#include "kernel/user_string_table.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace tracectl::consumer::kernel {

class SyscallStrings {
public:
    /// `channel`: its name, for logs.
    explicit SyscallStrings(std::string channel) : channel_(std::move(channel)) {}
    SyscallStrings(const SyscallStrings&) = delete;
    SyscallStrings& operator=(const SyscallStrings&) = delete;

    /// What the channel's streams take strings from (lives as long as this).
    UserStringSource* source() noexcept { return &table_; }
    const UserStringTable& table() const noexcept { return table_; }

    /// Reads `ring` (its drop count in `counters`) from now on; `watch`:
    /// also when the program wakes it, on `loop`. The table is sized for
    /// the strings of every record `cpus` ftrace buffers of the ring's size
    /// can hold (the daemon sizes both alike: sub-buffer size x count):
    /// those wait there until their pages are read. Throws
    /// std::runtime_error (attached already, the maps cannot be used, the
    /// loop refuses).
    void attach(EventLoop& loop, UniqueFd ring, UniqueFd counters, bool watch, std::size_t cpus);
    bool attached() const noexcept { return ring_.has_value(); }

    /// Moves what the ring holds into the table. Never throws: a ring
    /// error is logged once.
    void drain() noexcept;
    /// The read timer's tick at `now` (CLOCK_MONOTONIC ns): drains, drops
    /// the strings older than `horizonNs` that no record took, and warns
    /// (once) if records went without their string.
    void tick(std::uint64_t now, std::uint64_t horizonNs) noexcept;
    /// Strings the program lost (the ring full): the channel's discarded
    /// events count them.
    std::uint64_t dropped() const noexcept { return ring_ ? ring_->dropped() : 0; }
    /// Stops watching and closes the maps.
    void close() noexcept;

private:
    static int onReadable(sd_event_source*, int, std::uint32_t, void* userdata);

    std::string channel_;
    UserStringTable table_;
    std::optional<SyscallStringRing> ring_;
    EventSourcePtr watch_;
    bool errorTold_ = false;
    bool unmatchedTold_ = false;
};

} // namespace tracectl::consumer::kernel
