// The lttng-modules statedump, from /proc: the threads (and their open
// files) that existed when the session started, so analyses can name them.
// Events and fields as kernel_records.hpp specifies (kStatedump*Id). They
// go into a per-CPU stream, as lttng-modules writes them (its statedump
// runs on some CPU and records into that CPU's buffer): a stream of their
// own would cover only the first instant, and LTTng's analyses, which first
// intersect every stream's time range, would find no intersection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>

namespace tracectl::consumer::kernel {

/// What one statedump wrote.
struct StatedumpCounts {
    std::uint64_t processes = 0;         ///< /proc/<pid> directories walked
    std::uint64_t threads = 0;           ///< process_state events
    std::uint64_t files = 0;             ///< file_descriptor events
    std::uint64_t blockDevices = 0;      ///< block_device events
    std::uint64_t interrupts = 0;        ///< interrupt events (one per action)
    std::uint64_t networkInterfaces = 0; ///< network_interface events
    std::uint64_t cpus = 0;              ///< cpu_topology events
    std::uint64_t dropped = 0;           ///< events the sink refused (no empty packet held them)
};

/// Where the statedump's events go: event id, timestamp (ns), the fields
/// laid out as kernel_records.hpp says. True when the event was recorded.
using StatedumpSink = std::function<bool(std::uint16_t ctfId, std::uint64_t timestamp,
                                         std::span<const std::byte> fields)>;

/// Clock of the statedump's events: ns of CLOCK_MONOTONIC (the `mono`
/// trace clock the kernel streams use).
std::uint64_t monotonicNowNs() noexcept;

/// What the statedump reads (tests give fake trees).
struct StatedumpSources {
    std::filesystem::path proc = "/proc";
    std::filesystem::path sys = "/sys";
    /// The running system's IPv4 interfaces, from getifaddrs(3) (nothing to
    /// fake: tests turn it off).
    bool networkInterfaces = true;
};

class Statedump {
public:
    using Clock = std::function<std::uint64_t()>;

    explicit Statedump(StatedumpSources sources, Clock clock = monotonicNowNs);

    /// Writes lttng_statedump_start; per process in <procRoot> (numeric
    /// names, ascending; one whose status says another Tgid is a thread's
    /// directory and is skipped) one lttng_statedump_process_state per thread in
    /// <pid>/task (ascending), then one lttng_statedump_file_descriptor per
    /// <pid>/fd entry the owner may read (readlink; EACCES and vanished
    /// entries are skipped silently); then the system's block devices,
    /// interrupts, network interfaces and CPUs (below); then
    /// lttng_statedump_end. Each event
    /// goes to `sink` with a timestamp from the clock (never going
    /// backward); the sink gives it its stream's event context. Processes
    /// that vanish midway are skipped.
    ///
    /// process_state fields: tid, vtid (= tid), pid (the directory's, the
    /// Tgid), vpid (= pid), ppid (stat field 4), vppid (= ppid): the
    /// consumer runs in the initial pid namespace; name (stat comm); type 1
    /// when PF_KTHREAD is in stat field 9, else 0; mode 5 (unknown, as
    /// lttng-modules writes it); submode 0; status from the state letter (R
    /// wait_cpu 2; S, D and I wait 5 (I is TASK_IDLE, an uninterruptible
    /// wait); Z zombie 4; X dead 7; others unnamed 0); cpu (stat field 39).
    /// file_descriptor fields: pid, fd, flags (fdinfo `flags:`, octal),
    /// fmode (FMODE_READ 1 / FMODE_WRITE 2 from those flags' access mode:
    /// /proc does not show f_mode), filename (the link's target).
    ///
    /// block_device: one per <sys>/class/block entry (disks and
    /// partitions, ascending by name): dev from its `dev` file
    /// ("major:minor", as the kernel's MKDEV: major << 20 | minor),
    /// diskname its name. interrupt: one per action of each
    /// <sys>/kernel/irq/N (ascending N): irq N, name its chip_name, action
    /// one of its comma-separated `actions`, tid 0 (threaded handlers'
    /// threads are not named there). network_interface: per interface with
    /// an IPv4 address, one per address, name and address (network byte
    /// order); lttng-modules also writes interfaces without one, with 0.
    /// cpu_topology: per `processor` of <proc>/cpuinfo, as lttng-modules'
    /// x86 one: vendor_id, cpu family, model, model name, physical id,
    /// core id, cpu cores (0 or empty where a line is missing).
    StatedumpCounts run(const StatedumpSink& sink);

private:
    void event(std::uint16_t ctfId, std::span<const std::byte> fields, const StatedumpSink& sink,
               StatedumpCounts& counts);
    void dumpProcess(std::int32_t pid, const StatedumpSink& sink, StatedumpCounts& counts);
    void dumpFiles(std::int32_t pid, const StatedumpSink& sink, StatedumpCounts& counts);
    // statedump_system.cpp
    void dumpBlockDevices(const StatedumpSink& sink, StatedumpCounts& counts);
    void dumpInterrupts(const StatedumpSink& sink, StatedumpCounts& counts);
    void dumpNetworkInterfaces(const StatedumpSink& sink, StatedumpCounts& counts);
    void dumpCpuTopology(const StatedumpSink& sink, StatedumpCounts& counts);

    StatedumpSources sources_;
    std::filesystem::path root_; ///< sources_.proc
    Clock clock_;
    std::uint64_t last_ = 0;
};

} // namespace tracectl::consumer::kernel
