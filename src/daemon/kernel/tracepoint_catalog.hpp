// The kernel's tracepoints as tracefs lists them (events/<system>/<event>/
// with a `format` and an `enable` file: the same set as `available_events`,
// without ftrace's own record types of events/ftrace/), their formats
// read on demand, and the event patterns of EnableEvents resolved against
// them.
#pragma once

#include "format_file.hpp"

#include <compare>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tracectl::kernel {

class Tracefs;

/// One tracepoint, "system:event".
struct TracepointId {
    std::string system;
    std::string event;
    std::string full() const { return system + ":" + event; }
    auto operator<=>(const TracepointId&) const = default;
};

/// True if `text` matches glob `pattern`, where `*` matches any run of
/// characters (also empty, also ':') and every other character itself.
bool globMatch(std::string_view pattern, std::string_view text) noexcept;

/// A pattern or system-call name that names no tracepoint.
class NoSuchTracepoint : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

class TracepointCatalog {
public:
    /// The events/ directory of a tracefs (its root's, or an instance's:
    /// every instance has the same events). Lists it at once; formats are
    /// read on first use. Throws TracefsError if `eventsDir` cannot be
    /// listed.
    explicit TracepointCatalog(std::filesystem::path eventsDir);
    /// `tracefs.root()/events`.
    static TracepointCatalog fromTracefs(const Tracefs& tracefs);

    /// Every tracepoint, sorted by system then event.
    const std::vector<TracepointId>& all() const noexcept { return events_; }
    bool contains(std::string_view system, std::string_view event) const;

    /// The parsed format of system:event, read and parsed on first call and
    /// cached (not thread-safe: one thread uses a catalog). Throws
    /// NoSuchTracepoint, TracefsError (reading) or FormatError (parsing).
    const EventFormat& format(std::string_view system, std::string_view event);

    /// The tracepoints `pattern` names, sorted, each once: a "system:event"
    /// glob (`sched:*`, `*`, `sched:sched_*`, `net:net_dev_xmit`,
    /// `*:*wakeup*`), or, without ':', a glob on either name of an event:
    /// ftrace's event name (`softirq_entry` matches irq:softirq_entry) or
    /// the name lttng-modules gives it in a trace, lttngNaming()'s
    /// (`irq_softirq_entry`, `irq_softirq_*`, `net_if_receive_skb`,
    /// `syscall_entry_write`). May be empty: the caller decides whether
    /// that is an error (an exact name matching nothing usually is).
    std::vector<TracepointId> match(std::string_view pattern) const;

    /// Userspace probes (session_instances.hpp): the catalog lists every
    /// tracepoint but no session's probes (the groups "tracectl_*" are
    /// left out when listing, and never matched by a pattern); a session
    /// adds its own once defined, so that their formats can be read, and
    /// forgets them once removed.
    void addUserspaceProbe(const TracepointId& id);
    void forgetUserspaceProbe(const TracepointId& id);
    /// True for a userspace probe's system ("tracectl_<session id>").
    static bool isUserspaceProbeSystem(std::string_view system) noexcept {
        return system.rfind("tracectl_", 0) == 0;
    }

    /// True when the kernel has per-system-call tracepoints (`syscalls:`;
    /// CONFIG_FTRACE_SYSCALLS).
    bool hasSyscallTracepoints() const;

    /// The entry and exit tracepoints of system calls `names` ("write",
    /// "openat"; "*" = every one): syscalls:sys_enter_<name> and
    /// syscalls:sys_exit_<name>, sorted, without duplicates. Throws
    /// NoSuchTracepoint("no system call 'NAME'") for a name with neither.
    /// Where the kernel has no `syscalls` system (!hasSyscallTracepoints()
    /// but raw_syscalls present), returns raw_syscalls:sys_enter and
    /// raw_syscalls:sys_exit whatever the names: every system call is
    /// then recorded (as syscall_entry_unknown / syscall_exit_unknown, with
    /// the number in `id`); the caller narrows it with a filter on `id` if
    /// it must. Throws NoSuchTracepoint when neither system exists.
    std::vector<TracepointId> syscalls(const std::vector<std::string>& names) const;

private:
    std::filesystem::path dir_;
    std::vector<TracepointId> events_;
    std::vector<std::string> lttngNames_; ///< lttngNaming()'s name of events_[i]
    std::map<TracepointId, EventFormat> formats_;
};

} // namespace tracectl::kernel
