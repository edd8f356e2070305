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
enum class Domain { Ust, Kernel };

/// "ust" or "kernel", as Session.AddChannel/EnableEvents/AddContext take it.
const char* domainName(Domain domain) noexcept;

/// "UST" or "Kernel", for messages.
const char* domainLabel(Domain domain) noexcept;

/// The -u,--userspace and -k,--kernel flags of one subcommand.
struct DomainFlags {
    bool userspace = false;
    bool kernel = false;
    CLI::Option* userspaceOption = nullptr;
    CLI::Option* kernelOption = nullptr;
};

/// Adds -u,--userspace and -k,--kernel to `command`, each excluding the other
/// (CLI11 reports "--userspace excludes --kernel").
void addDomainFlags(CLI::App& command, DomainFlags& flags);

/// The domain chosen, once `command` was parsed; throws CLI::ValidationError
/// (a usage error) when neither flag was given.
Domain chosenDomain(const DomainFlags& flags);

/// "a,b,,c" -> {"a", "b", "c"}: empty items are dropped.
std::vector<std::string> splitCommas(std::string_view text);

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
std::vector<KernelEventCall> kernelEventCalls(const std::string& patterns, bool patternGiven,
                                              bool all, bool syscall);

/// `enable-event -k --userspace-probe=LOC NAME`'s LOC
/// (common/userspace_probe_location.hpp) with its PATH made absolute as
/// lttng(1) does: a PATH without '/' is looked up in `search_path` ($PATH:
/// the first regular file of that name), a relative one is taken from
/// `cwd`. Throws CLI::ValidationError for a location that does not parse
/// or a name not found in $PATH.
std::string resolveUserspaceProbe(const std::string& location, const std::string& searchPath,
                                  const std::string& cwd);

/// What selects the events of `enable-event`: the domain flags, PATTERN,
/// -a,--all and --syscall, as CLI11 fills them (add_event_selection()).
struct EventSelectionFlags {
    DomainFlags domain;
    std::string pattern;
    bool all = false;
    bool syscall = false;
    CLI::Option* patternOption = nullptr;
};

/// Adds -u, -k, PATTERN, -a,--all and --syscall to `command`.
void addEventSelection(CLI::App& command, EventSelectionFlags& flags);

/// The events `enable-event` was asked for, once parsed.
struct EventSelection {
    Domain domain = Domain::Ust;
    std::string ustPattern;                   ///< -u: the pattern ("*" for -a)
    std::vector<KernelEventCall> kernelCalls; ///< -k: kernel_event_calls()
};

/// Checks and resolves `flags` (throwing CLI::ValidationError, a usage
/// error): one domain; -k refuses every option of `ust_only` that was given
/// (--loglevel, --loglevel-only, --exclude); -u refuses --syscall; a PATTERN
/// or -a, not both.
EventSelection resolveEventSelection(const EventSelectionFlags& flags,
                                     const std::vector<const CLI::Option*>& ustOnly);

/// Makes each of `calls` through `enable` (which throws sdbus::Error when the
/// daemon refuses), printing "Kernel event|syscall NAME enabled in channel
/// CHANNEL." on `out` for each success and "tracectl: NAME: ERROR: message"
/// on `err` for each failure; goes on after a failure unless the daemon is
/// unreachable. Returns the exit status of the first failure, or success.
ExitStatus enableKernelEventCalls(const std::vector<KernelEventCall>& calls,
                                  const std::string& channel,
                                  const std::function<void(const KernelEventCall&)>& enable,
                                  std::ostream& out, std::ostream& err);

/// The context types of lttng-add-context(1) the daemon offers, per domain
/// (for --help and the man page).
inline constexpr std::string_view kUstContextTypes =
    "vpid, vtid, procname, pthread_id, ip, cpu_id, vuid, veuid, vsuid, vgid, vegid, vsgid, "
    "cgroup_ns, ipc_ns, mnt_ns, net_ns, pid_ns, time_ns, user_ns, uts_ns";
inline constexpr std::string_view kKernelContextTypes =
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
std::optional<std::string> lttngEventName(const KernelTracepoint& tracepoint);

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
std::vector<Domain> liveProbeDomains(std::string_view pattern,
                                     const std::vector<KernelTracepoint>& kernel);

/// `list-tracepoints -k`: one "system:event" line per tracepoint, sorted by
/// system then event, followed by " (LTTNG_NAME)" when lttng_event_name()
/// differs from the event's name ("irq:softirq_entry (irq_softirq_entry)");
/// with `fields`, each field below it as "    TYPE NAME".
/// "No kernel tracepoints.\n" when there are none.
std::string formatKernelTracepoints(std::vector<KernelTracepoint> tracepoints, bool fields);

/// `list-tracepoints -k --json`: an array of {"system", "event",
/// "lttng_name" (lttng_event_name(); left out for the ip provider's
/// probes), "fields": [{"name", "type"}]}, sorted as the text;
/// pretty-printed, ends with a newline.
std::string formatKernelTracepointsJson(std::vector<KernelTracepoint> tracepoints);

/// KernelChannels, KernelEvents and KernelContexts: the properties `show`
/// lists in the "Kernel domain" section rather than as "Key: value" lines.
bool isKernelDomainProperty(std::string_view key) noexcept;

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
std::string formatKernelSection(const PropertyMap& properties);

} // namespace tracectl::cli
