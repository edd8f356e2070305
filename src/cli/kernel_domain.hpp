// The kernel domain on the command line: the -u/-k domain flags, how
// `enable-event -k` turns its arguments into EnableEvents calls, and the
// rendering of kernel tracepoints (list-tracepoints) and of a session's
// kernel channels, event rules and contexts (show). Pure: no bus, no I/O.
#pragma once

#include "cli11_fwd.hpp"
#include "exit_status.hpp"
#include "property_map.hpp"

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tracectl::cli {

/// The tracing domain of a command; its D-Bus name is domain_name().
enum class Domain { ust, kernel };

/// "ust" or "kernel", as Session.AddChannel/EnableEvents/AddContext take it.
const char* domain_name(Domain domain) noexcept;

/// "UST" or "Kernel", for messages.
const char* domain_label(Domain domain) noexcept;

/// The -u,--userspace and -k,--kernel flags of one subcommand.
struct DomainFlags {
    bool userspace = false;
    bool kernel = false;
    CLI::Option* userspace_option = nullptr;
    CLI::Option* kernel_option = nullptr;
};

/// Adds -u,--userspace and -k,--kernel to `command`, each excluding the other
/// (CLI11 reports "--userspace excludes --kernel").
void add_domain_flags(CLI::App& command, DomainFlags& flags);

/// The domain chosen, once `command` was parsed; throws CLI::ValidationError
/// (a usage error) when neither flag was given.
Domain chosen_domain(const DomainFlags& flags);

/// "a,b,,c" -> {"a", "b", "c"}: empty items are dropped.
std::vector<std::string> split_commas(std::string_view text);

/// One Session.EnableEvents call of `enable-event -k`.
struct KernelEventCall {
    std::string pattern;
    bool syscall = false;
    bool operator==(const KernelEventCall&) const = default;
};

/// What `enable-event -k [PATTERN[,PATTERN...]] [-a] [--syscall]` asks for:
/// one call per comma-separated item; -a alone means pattern "*" (every
/// tracepoint), --syscall -a (or --syscall '*') every system call. Throws
/// CLI::ValidationError when neither a pattern nor -a is given, when both
/// are, or when the list holds no name.
std::vector<KernelEventCall> kernel_event_calls(const std::string& patterns, bool pattern_given,
                                                bool all, bool syscall);

/// `enable-event -k --userspace-probe=LOC NAME`'s LOC
/// (common/userspace_probe_location.hpp) with its PATH made absolute as
/// lttng(1) does: a PATH without '/' is looked up in `search_path` ($PATH:
/// the first regular file of that name), a relative one is taken from
/// `cwd`. Throws CLI::ValidationError for a location that does not parse
/// or a name not found in $PATH.
std::string resolve_userspace_probe(const std::string& location, const std::string& search_path,
                                    const std::string& cwd);

/// What selects the events of `enable-event`: the domain flags, PATTERN,
/// -a,--all and --syscall, as CLI11 fills them (add_event_selection()).
struct EventSelectionFlags {
    DomainFlags domain;
    std::string pattern;
    bool all = false;
    bool syscall = false;
    CLI::Option* pattern_option = nullptr;
};

/// Adds -u, -k, PATTERN, -a,--all and --syscall to `command`.
void add_event_selection(CLI::App& command, EventSelectionFlags& flags);

/// The events `enable-event` was asked for, once parsed.
struct EventSelection {
    Domain domain = Domain::ust;
    std::string ust_pattern;                   ///< -u: the pattern ("*" for -a)
    std::vector<KernelEventCall> kernel_calls; ///< -k: kernel_event_calls()
};

/// Checks and resolves `flags` (throwing CLI::ValidationError, a usage
/// error): one domain; -k refuses every option of `ust_only` that was given
/// (--loglevel, --loglevel-only, --exclude); -u refuses --syscall; a PATTERN
/// or -a, not both.
EventSelection resolve_event_selection(const EventSelectionFlags& flags,
                                       const std::vector<const CLI::Option*>& ust_only);

/// Makes each of `calls` through `enable` (which throws sdbus::Error when the
/// daemon refuses), printing "Kernel event|syscall NAME enabled in channel
/// CHANNEL." on `out` for each success and "tracectl: NAME: ERROR: message"
/// on `err` for each failure; goes on after a failure unless the daemon is
/// unreachable. Returns the exit status of the first failure, or success.
ExitStatus enable_kernel_event_calls(const std::vector<KernelEventCall>& calls,
                                     const std::string& channel,
                                     const std::function<void(const KernelEventCall&)>& enable,
                                     std::ostream& out, std::ostream& err);

/// The context types of lttng-add-context(1) the daemon offers, per domain
/// (for --help and the man page).
inline constexpr std::string_view ust_context_types =
    "vpid, vtid, procname, pthread_id, ip, cpu_id, vuid, veuid, vsuid, vgid, vegid, vsgid, "
    "cgroup_ns, ipc_ns, mnt_ns, net_ns, pid_ns, time_ns, user_ns, uts_ns";
inline constexpr std::string_view kernel_context_types =
    "tid, pid, procname, prio, cpu_id, callstack-kernel, callstack-user";

/// One kernel tracepoint of Manager.ListTracepoints("kernel").
struct KernelTracepoint {
    std::string system;
    std::string event;
    std::vector<std::pair<std::string, std::string>> fields; ///< (name, C type)
};

/// The name lttng-modules gives `tracepoint` in a trace, which is also the
/// event's name in tracectl's kernel traces and a name enable-event -k takes
/// (src/daemon/kernel/lttng_kernel_names.hpp: "irq_softirq_entry" for
/// irq:softirq_entry, "sched_switch" for sched:sched_switch,
/// "lttng_statedump_start" for lttng_statedump:lttng_statedump_start);
/// nullopt for the ip provider's probes (system "ip"), which are no
/// lttng-modules events.
std::optional<std::string> lttng_event_name(const KernelTracepoint& tracepoint);

/// The domains a live `tracectl dtrace` enables its probe description's event pattern
/// `pattern` (fnmatch(3) wildcards; ProbeDescription::pattern) in, given the kernel's
/// tracepoints (`kernel`, Manager.ListTracepoints("kernel"); none when the caller has no
/// kernel domain):
/// - `ip:...`: the kernel (the ip provider);
/// - "provider:event": the kernel if it matches some tracepoint's "system:event"; none
///   (the pattern names no probe) if `provider` is a tracepoint system without such an
///   event (`syscalls:sys_enter_nosuchcall`); else UST;
/// - a name without ':': the kernel if it matches the name lttng-modules gives some
///   tracepoint in a trace (lttng_event_name(): sched_switch, irq_softirq_entry,
///   syscall_entry_write, lttng_statedump_process_state), the name the program's clauses
///   then match; with a wildcard UST as well, as it may match apps' provider:event names
///   too; otherwise UST only.
/// The kernel first when both.
std::vector<Domain> live_probe_domains(std::string_view pattern,
                                       const std::vector<KernelTracepoint>& kernel);

/// `list-tracepoints -k`: one "system:event" line per tracepoint, sorted by
/// system then event, followed by " (LTTNG_NAME)" when lttng_event_name()
/// differs from the event's name ("irq:softirq_entry (irq_softirq_entry)");
/// with `fields`, each field below it as "    TYPE NAME".
/// "No kernel tracepoints.\n" when there are none.
std::string format_kernel_tracepoints(std::vector<KernelTracepoint> tracepoints, bool fields);

/// `list-tracepoints -k --json`: an array of {"system", "event",
/// "lttng_name" (lttng_event_name(); left out for the ip provider's
/// probes), "fields": [{"name", "type"}]}, sorted as the text;
/// pretty-printed, ends with a newline.
std::string format_kernel_tracepoints_json(std::vector<KernelTracepoint> tracepoints);

/// KernelChannels, KernelEvents and KernelContexts: the properties `show`
/// lists in the "Kernel domain" section rather than as "Key: value" lines.
bool is_kernel_domain_property(std::string_view key) noexcept;

/// The "Kernel domain" section of `show`, "" when the session has no kernel
/// channel, event rule or context:
///   Kernel domain:
///     Channels:
///       NAME  subbuf SIZE x COUNT  discard|overwrite  switch-timer US  read-timer US
///         [disabled] (after DisableChannel, as lttng-list(1) says it)
///     Event rules:
///       CHANNEL  PATTERN | syscall NAME  [filter: EXPR] [disabled]
///     Contexts:
///       CHANNEL  TYPE
/// (a subsection is left out when empty; entries that do not have the D-Bus
/// types of the XML are skipped).
std::string format_kernel_section(const PropertyMap& properties);

} // namespace tracectl::cli
