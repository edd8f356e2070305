// The lttng-modules statedump, from /proc: the threads (and their open
// files) that existed when the session started, so analyses can name them.
// Events and fields as kernel_records.hpp specifies (kStatedump*Id),
// written to the statedump stream (stream_instance_id kStatedumpInstance).
#pragma once

#include "packet_builder.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>

namespace tracectl::consumer::kernel {

/// What one statedump wrote.
struct StatedumpCounts {
    std::uint64_t processes = 0; ///< /proc/<pid> directories walked
    std::uint64_t threads = 0;   ///< process_state events
    std::uint64_t files = 0;     ///< file_descriptor events
    std::uint64_t dropped = 0;   ///< events no empty packet could hold
    std::uint64_t packets = 0;   ///< packets handed to the sink
};

/// Clock of the statedump's events: ns of CLOCK_MONOTONIC (the `mono`
/// trace clock the kernel streams use).
std::uint64_t monotonicNowNs() noexcept;

class Statedump {
public:
    using Clock = std::function<std::uint64_t()>;

    /// `procRoot`: the /proc to read (tests give a fake tree). The packets
    /// carry `uuid`, `streamId` (the first kernel channel's stream class),
    /// stream_instance_id kStatedumpInstance and cpu_id 0, at most
    /// `maxPacketBytes` each, with the channel's `contextMask`.
    Statedump(std::filesystem::path procRoot, const Uuid& uuid, std::uint32_t streamId,
              std::size_t maxPacketBytes, std::uint32_t contextMask, Clock clock = monotonicNowNs);

    /// Writes lttng_statedump_start; per process in <procRoot> (numeric
    /// names, ascending; one whose status says another Tgid is a thread's
    /// directory and is skipped) one lttng_statedump_process_state per thread in
    /// <pid>/task (ascending), then one lttng_statedump_file_descriptor per
    /// <pid>/fd entry the owner may read (readlink; EACCES and vanished
    /// entries are skipped silently); then lttng_statedump_end. Every event
    /// has `context` as its event context and a timestamp from the clock
    /// (never going backward). Each packet is handed to `sink` as it fills,
    /// the last one at the end. Processes that vanish midway are skipped.
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
    StatedumpCounts run(const ContextValues& context, const PacketSink& sink);

private:
    void event(std::uint16_t ctfId, std::span<const std::byte> fields, const ContextValues& context,
               const PacketSink& sink, StatedumpCounts& counts);
    void dumpProcess(std::int32_t pid, const ContextValues& context, const PacketSink& sink,
                     StatedumpCounts& counts);
    void dumpFiles(std::int32_t pid, const ContextValues& context, const PacketSink& sink,
                   StatedumpCounts& counts);

    std::filesystem::path root_;
    PacketBuilder builder_;
    Clock clock_;
    std::uint64_t last_ = 0;
};

} // namespace tracectl::consumer::kernel
