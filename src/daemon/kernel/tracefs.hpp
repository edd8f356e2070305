// The daemon's access to tracefs (ftrace's file system): finding or
// mounting it, reading and writing its control files with errors that say
// what the kernel said, and one tracefs instance per kernel session
// (instances/tracectl-<id>), whose per-CPU `trace_pipe_raw` fds go to the
// consumer. Sources: the kernel's Documentation/trace/ftrace.rst
// ("Instances", trace_pipe_raw, buffer_size_kb, buffer_subbuf_size_kb,
// trace_clock, options/overwrite, per_cpu/cpuN/stats) and
// Documentation/trace/events.rst (enable, filter, error_log).
//
// Needs root (or CAP_SYS_ADMIN for mounting, write access to tracefs for
// the rest). The top-level instance (tracefs' root) is never modified:
// every write here goes to an instance made by TracefsInstance.
#pragma once

#include "format_file.hpp"
#include "unique_fd.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tracectl::kernel {

/// A tracefs operation failed. what(): the operation, the path, the
/// kernel's strerror and, for filters, the kernel's explanation.
class TracefsError : public std::runtime_error {
public:
    TracefsError(int error, std::filesystem::path path, const std::string& message);
    /// The errno of the failing call (0 when the failure is not a call's,
    /// e.g. a parse error of a file's content).
    int error() const noexcept { return error_; }
    const std::filesystem::path& path() const noexcept { return path_; }

private:
    int error_;
    std::filesystem::path path_;
};

/// Where /proc/self/mounts text `mounts` has a tracefs mounted (the first
/// one of type "tracefs"; octal escapes such as \040 decoded), or nullopt.
std::optional<std::filesystem::path> findTracefsMount(std::string_view mounts);

/// The whole content of a tracefs file. Throws TracefsError (open/read errno).
std::string readTracefsFile(const std::filesystem::path& path);

/// Writes `value` with one write(2) (tracefs parses each write as a whole;
/// O_WRONLY|O_TRUNC, or O_APPEND when `append`). Throws TracefsError with
/// the errno of open(2) or write(2) (EINVAL: the kernel refused the value).
void writeTracefsFile(const std::filesystem::path& path, std::string_view value,
                      bool append = false);

/// Ring-buffer statistics of one CPU (per_cpu/cpuN/stats).
struct CpuStats {
    std::uint64_t entries = 0;       ///< events in the buffer now
    std::uint64_t overrun = 0;       ///< events overwritten (overwrite mode)
    std::uint64_t commitOverrun = 0; ///< events lost while committing
    std::uint64_t bytes = 0;         ///< bytes in the buffer (unread)
    std::uint64_t oldestEventNs = 0; ///< "oldest event ts", ns of the trace clock
    std::uint64_t nowNs = 0;         ///< "now ts", ns of the trace clock
    std::uint64_t droppedEvents = 0; ///< events lost with the buffer full (no overwrite)
    std::uint64_t readEvents = 0;    ///< events read so far
};

/// Parses a stats file ("key: value" lines; timestamps "S.UUUUUU" seconds
/// or plain counts; unknown keys ignored). Throws TracefsError(0) when a
/// known key's value is not a number.
CpuStats parseCpuStats(std::string_view text);

/// A mounted tracefs.
class Tracefs {
public:
    /// tracefs at `root` (assumed mounted there).
    explicit Tracefs(std::filesystem::path root);

    /// The tracefs mounted per /proc/self/mounts; when there is none,
    /// mounts one at /sys/kernel/tracing (mount(2) "nodev", type tracefs).
    /// Throws TracefsError saying why not (e.g. EPERM: not root; ENODEV: no
    /// tracefs in this kernel).
    static Tracefs locate();

    const std::filesystem::path& root() const noexcept { return root_; }

    /// True if instances can be made here (instances/ exists and is
    /// writable by this process).
    bool writable() const noexcept;

    /// Content of `relative` (e.g. "trace_clock"). Throws TracefsError.
    std::string read(std::string_view relative) const;

    /// The sub-buffer layout (events/header_page). Throws TracefsError
    /// (read) or FormatError (content).
    PageFormat headerPage() const;
    /// The `ID:` (common_type) of ftrace's own kernel_stack (`user` false)
    /// or user_stack entries, from events/ftrace/<name>/format. Throws
    /// TracefsError (unreadable, or no ID line).
    std::uint16_t stackEntryType(bool user) const;

    /// Removes every instances/<prefix>* (left by an earlier daemon that
    /// died; the daemon calls it at start with the default prefix
    /// "tracectl-"), each after turning tracing off and disabling its
    /// events; logs each one removed, and each that could not be (e.g.
    /// EBUSY, after 1 s of retries: a process still has one of its files
    /// open; `quiet`: at debug level only, for a caller that tries again and
    /// said so the first time). Returns the names removed. A prefix that
    /// does not begin with "tracectl-" removes nothing: other tools'
    /// instances and the top level are never touched. Never throws.
    std::vector<std::string> removeStaleInstances(std::string_view prefix = "tracectl-",
                                                  bool quiet = false) const noexcept;

    /// The group of the userspace probes of session `idHex`:
    /// "tracectl_<idHex>" (ftrace's group names take no '-').
    static std::string uprobeGroup(std::string_view idHex) {
        return "tracectl_" + std::string(idHex);
    }
    /// Appends `definition` ("p:GROUP/EVENT PATH:OFFSET ARGS") to
    /// uprobe_events (never truncating it: other tools' probes stay).
    /// Throws TracefsError, its message with the kernel's error_log line.
    void defineUprobe(std::string_view definition) const;
    /// The events of `group` uprobe_events defines, in its order.
    std::vector<std::string> uprobeEvents(std::string_view group) const;
    /// Removes `group`/`event` from uprobe_events ("-:GROUP/EVENT"): it
    /// must be disabled in every instance (EBUSY otherwise). Throws
    /// TracefsError.
    void removeUprobe(std::string_view group, std::string_view event) const;
    /// Removes every event of `group` (which must begin with "tracectl_":
    /// others' probes are never touched); logs each failure (`quiet`: at
    /// debug level). True once none is left. Never throws.
    bool removeUprobeGroup(std::string_view group, bool quiet = false) const noexcept;

private:
    std::filesystem::path root_;
};

/// One tracefs instance (instances/tracectl-<id>): its own ring buffers,
/// events, clock and options. Move-only; removed by remove() or on
/// destruction.
class TracefsInstance {
public:
    /// The prefix of every instance this daemon makes.
    static constexpr std::string_view kPrefix = "tracectl-";

    /// mkdir instances/tracectl-<id>, then tracing_on 0 (the kernel makes
    /// an instance with tracing on, so that enabled events would record at
    /// once; here nothing records before setTracingOn(true)). `id` must be
    /// non-empty [A-Za-z0-9_-] (std::invalid_argument otherwise). Throws
    /// TracefsError (EEXIST: an instance of that name already exists).
    static TracefsInstance create(const Tracefs& tracefs, std::string_view id);
    /// Takes over instances/tracectl-<id> as it is, made by an earlier
    /// daemon whose session is being taken over (KernelDomain::resume()):
    /// nothing in it changes. `id` as for create(). Throws TracefsError
    /// (ENOENT: there is no such instance).
    static TracefsInstance open(const Tracefs& tracefs, std::string_view id);
    /// Whether instances/tracectl-<id> exists (a directory). `id` as for
    /// create().
    static bool exists(const Tracefs& tracefs, std::string_view id);

    TracefsInstance(TracefsInstance&& other) noexcept;
    TracefsInstance& operator=(TracefsInstance&& other) noexcept;
    TracefsInstance(const TracefsInstance&) = delete;
    TracefsInstance& operator=(const TracefsInstance&) = delete;
    /// remove() (blocking up to 1 s on EBUSY), with a failure logged
    /// instead of thrown.
    ~TracefsInstance();

    const std::string& name() const noexcept { return name_; } ///< "tracectl-<id>"
    const std::filesystem::path& path() const noexcept { return path_; }
    /// False after remove(), release() or a move.
    bool valid() const noexcept { return !path_.empty(); }
    /// Lets the instance go without removing it (nor waiting for it): it
    /// stays for a later removal of what was left (the ledger's, at the
    /// next start).
    void release() noexcept { path_.clear(); }

    /// buffer_size_kb: each CPU's ring buffer, in KiB (the kernel rounds up
    /// to whole sub-buffers of data, so reading it back may give a little
    /// more: 258 for 256 with 4 KiB sub-buffers).
    void setBufferSizeKb(std::uint32_t kb);
    /// buffer_subbuf_size_kb (Linux 6.8+): the sub-buffer size, in KiB (the
    /// kernel rounds up to a power-of-two number of pages). Returns false,
    /// changing nothing, when the kernel has no such file or refuses the
    /// change with EPERM (seen on Linux 6.18 for a new instance: the size
    /// is then fixed at the page size). Throws TracefsError otherwise.
    bool setSubbufferSizeKb(std::uint32_t kb);
    /// buffer_percent (Linux 5.1+): how full each CPU's ring buffer must be
    /// before a reader blocked or polling on its trace_pipe_raw is woken
    /// (the kernel's default: 50). Returns false, changing nothing, when the
    /// kernel has no such file. Throws TracefsError otherwise.
    bool setBufferPercent(unsigned percent);
    /// trace_clock, e.g. "mono" (CLOCK_MONOTONIC: the UST clock). Throws
    /// TracefsError(EINVAL) for a clock the kernel does not offer.
    void setClock(std::string_view clock);
    /// The selected trace_clock (the one shown in brackets).
    std::string clock() const;
    /// options/overwrite: true = flight recorder (old events overwritten),
    /// false = new events dropped when the buffer is full.
    void setOverwrite(bool overwrite);
    /// options/stacktrace and options/userstacktrace: ftrace then writes a
    /// kernel_stack / user_stack entry after each event of the instance
    /// (the kernel's Documentation/trace/ftrace.rst). Throws TracefsError.
    void setStackTraces(bool kernel, bool user);
    /// events/<system>/<event>/enable. Throws TracefsError (ENOENT: no such
    /// event).
    void enableEvent(std::string_view system, std::string_view event);
    void disableEvent(std::string_view system, std::string_view event);
    /// events/<system>/<event>/filter = `expression` (ftrace's filter
    /// syntax, Documentation/trace/events.rst section 5; empty = no filter,
    /// as clearFilter; a newline is refused). Throws TracefsError
    /// whose message has the kernel's reason: the filter file's content
    /// after the failed write and the instance's error_log lines.
    void setFilter(std::string_view system, std::string_view event, std::string_view expression);
    /// Removes the event's filter ("0" written to its filter file).
    void clearFilter(std::string_view system, std::string_view event);
    /// tracing_on.
    void setTracingOn(bool on);
    /// The CPUs with a ring buffer (per_cpu/cpuN), ascending.
    std::vector<unsigned> cpus() const;
    /// per_cpu/cpu<cpu>/trace_pipe_raw, O_RDONLY|O_NONBLOCK|O_CLOEXEC: one
    /// sub-buffer (headerPage().pageSize bytes) per read(2). Throws
    /// TracefsError.
    UniqueFd openRaw(unsigned cpu) const;
    /// per_cpu/cpu<cpu>/stats. Throws TracefsError.
    CpuStats stats(unsigned cpu) const;
    /// This instance's events/header_page (its sub-buffer size).
    PageFormat headerPage() const;
    /// Content of a file of the instance (e.g. "trace_clock").
    std::string read(std::string_view relative) const;

    /// Turns tracing off, disables every event, then rmdir. rmdir fails
    /// with EBUSY while any process holds one of the instance's files open
    /// (the consumer's trace_pipe_raw fds): it is retried every 50 ms for
    /// `patience` (0: one attempt; the default blocks the caller up to 1 s,
    /// so an event loop should pass 0 and retry from a timer), then remove()
    /// throws TracefsError(EBUSY) and the instance stays, tracing off and
    /// events disabled (recording nothing, its buffers still allocated),
    /// until a later remove() or Tracefs::removeStaleInstances() at the next
    /// daemon start. A no-op once removed (or when the directory is already
    /// gone).
    void remove(std::chrono::milliseconds patience = std::chrono::milliseconds(1000));

private:
    /// instances/tracectl-<id> below `tracefs`; std::invalid_argument for
    /// an `id` that is not [A-Za-z0-9_-]+.
    static std::filesystem::path pathOf(const Tracefs& tracefs, std::string_view id);
    TracefsInstance(std::filesystem::path path, std::string name);
    std::filesystem::path eventPath(std::string_view system, std::string_view event,
                                    std::string_view file) const;

    std::filesystem::path path_;
    std::string name_;
};

} // namespace tracectl::kernel
