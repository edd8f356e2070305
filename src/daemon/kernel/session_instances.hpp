// One session's tracefs side of the kernel domain: a tracefs instance per
// kernel channel (the first `instances/tracectl-<id>`, the next ones
// `tracectl-<id>-<n>`), its clock, buffer and mode, the ftrace events its
// rules name (with their filters), the per-CPU fds for the consumer, and
// the kernel trace's metadata and conversions that follow from the events.
// A channel whose rules name the `ip` provider's probes (`ip:send`,
// `ip:receive`; a pattern must name the provider: `ip:*`, never `*` alone)
// also has its own loaded copy of the provider's BPF program
// (ip/ip_probes.hpp), enabled while tracing is on, with the rules' filters
// compiled for it (ip/ip_filter.hpp).
//
// Threads: every method blocks on tracefs (mkdir of an instance allocates
// its buffers; writes to its files) and runs on the kernel domain's
// executor ("tc-tracefs"), one job at a time; nothing else touches an
// object of this class. The results are plain values the main loop takes.
#pragma once

#include "common/unique_fd.hpp"
#include "ip/ip_probes.hpp"
#include "kernel/kernel_metadata.hpp"
#include "kernel/syscall_string_probes.hpp"
#include "kernel/tracefs.hpp"
#include "kernel/tracepoint_catalog.hpp"
#include "session/session_snapshot.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tracectl::kernel {

/// What the consumer needs to read a channel's ip provider stream.
struct IpAttachment {
    IpProbeIds ids;
    UniqueFd ring;     ///< the ring buffer map (a dup)
    UniqueFd counters; ///< the counters map (a dup)
};

/// What the consumer needs to read a channel's system call strings.
struct StringsAttachment {
    UniqueFd ring;     ///< the ring buffer map (a dup)
    UniqueFd counters; ///< the counters map (a dup)
};

/// What the consumer needs to read one kernel channel.
struct PreparedChannel {
    std::string name;
    std::uint32_t streamId = 0;
    std::uint32_t contextMask = 0;
    /// ftrace's kernel_stack / user_stack common_type, when the mask has
    /// callstack-kernel / callstack-user (0: not)
    std::uint16_t kernelStackType = 0;
    std::uint16_t userStackType = 0;
    bool statedump = false;
    std::uint64_t packetSize = 0; ///< the channel's sub-buffer size
    /// Each CPU's ring buffer: the sub-buffer size times their count, bytes.
    std::uint64_t bufferBytes = 0;
    /// The channel's read timer (µs, `--read-timer`); 0: the consumer's
    /// default (CreateKernelChannel's, 100 ms).
    std::uint32_t readTimerUs = 0;
    PageFormat page;
    std::vector<std::uint32_t> cpus;
    /// trace_pipe_raw, one per cpu, then per_cpu/cpuN/stats, one per cpu,
    /// then /proc/kallsyms when kernelStackType is set (opened by the
    /// daemon, so that the consumer reads the addresses)
    std::vector<UniqueFd> fds;
    std::string conversions;        ///< kernel_records::encode() of its events
    std::optional<IpAttachment> ip; ///< when its rules name the ip provider
    /// When it records system calls with string arguments.
    std::optional<StringsAttachment> strings;
};

/// The whole kernel trace as prepared at the first start.
struct PreparedTrace {
    std::string tsdl;
    std::vector<PreparedChannel> channels;
};

/// Events a rule added while the session existed: the new metadata and,
/// per channel that gained events, their conversions.
struct AddedEvents {
    std::string tsdl;                                             ///< the whole metadata now
    std::vector<std::pair<std::size_t, std::string>> conversions; ///< (channel index, encoded)
    /// (channel index, its ip stream) for channels that gained the ip provider
    std::vector<std::pair<std::size_t, IpAttachment>> ipAttached;
    /// (channel index, its strings) for channels that gained the
    /// system-call string program
    std::vector<std::pair<std::size_t, StringsAttachment>> stringsAttached;
    bool any() const noexcept {
        return !conversions.empty() || !ipAttached.empty() || !stringsAttached.empty();
    }
};

class SessionInstances {
public:
    /// The longest filter written to an event's `filter` file: tracefs takes
    /// one write of at most a page (4096 bytes).
    static constexpr std::size_t kMaxFilterBytes = 4000;
    /// Makes nothing yet; `uuid` is the kernel trace's, `clockOffset` (ns)
    /// that of the session's UST traces (Recordings::clockOffsetOf()).
    SessionInstances(std::string idHex, const metadata::Uuid& uuid, std::string sessionName,
                     std::int64_t creationTime, std::int64_t clockOffset);
    /// Removes whatever instance is left (logged, never throws).
    ~SessionInstances();
    SessionInstances(const SessionInstances&) = delete;
    SessionInstances& operator=(const SessionInstances&) = delete;

    /// The first start: one instance per channel of `s.kernelChannels`, each
    /// with trace_clock "mono", buffer_size_kb = sub-buffer size x count /
    /// 1024, overwrite as the channel says, tracing off; the events of
    /// `s.kernelRules` enabled (with their filters, in ftrace's syntax); the
    /// metadata; the per-CPU fds. Throws Error (InvalidArgument: a rule
    /// that names no tracepoint, a filter the kernel refuses; Failed:
    /// tracefs) after removing what it made.
    /// `takeOver`: a restarted daemon takes the session over
    /// (KernelDomain::resume()): a channel's instance an earlier daemon
    /// made is used as it is (its clock, buffers and what they hold kept,
    /// tracing as it was); one that is missing is made.
    PreparedTrace prepare(const Tracefs& tracefs, TracepointCatalog& catalog,
                          const SessionSnapshot& s, bool takeOver = false);

    /// The events `rule` adds to its channel, described (metadata and
    /// conversions computed) but not enabled yet: enableAdded() does that,
    /// once the consumer knows them. Throws Error (InvalidArgument) with
    /// nothing changed.
    AddedEvents describe(TracepointCatalog& catalog, const EventRule& rule);
    /// Enables the events describe() added (and sets their filters). Throws
    /// Error (InvalidArgument: a filter the kernel refused; Failed).
    void enableAdded(TracepointCatalog& catalog, const EventRule& rule);

    /// A userspace probe rule (EventRule::userspaceProbe) is checked when
    /// its target is opened (userspace_probe_target.hpp): nothing more here.
    /// Throws Error(InvalidArgument) unless `rule` names tracepoints and its
    /// filter translates for each of them (fields named as the trace names
    /// them, each existing in the event), or names only lttng-modules
    /// statedump events (statedump_events.hpp) without a filter.
    static void checkRule(TracepointCatalog& catalog, const EventRule& rule);

    /// The kernel channels of `s` that write the statedump (prepare()): those
    /// with an enabled rule naming statedump events (`lttng_statedump_*`,
    /// `*`, `lttng_statedump:*`); when no rule names any, the first kernel
    /// channel alone, so that analyses name the threads that already ran.
    /// Empty only without kernel channels.
    static std::set<std::string> statedumpChannels(const SessionSnapshot& s);

    /// tracing_on of every instance (of a disabled channel: off). Throws
    /// Error(Failed).
    void setTracing(bool on);

    /// Turns the rules among those prepare() and enableAdded() took that
    /// `rules` name (sameEventRule()) off or on, then recomputes what each
    /// channel they are in enables from its rules still enabled: an event
    /// two rules name stays enabled while one of them is, with the filters
    /// of the enabled ones joined; an event none wants is disabled in
    /// tracefs; the ip provider's program gets the filters of its enabled
    /// rules (none: it passes nothing). Throws Error (Failed: tracefs).
    void setRulesEnabled(TracepointCatalog& catalog, const std::vector<EventRule>& rules,
                         bool enabled);
    /// Channel `name` off (its instance's tracing_on 0, its ip program
    /// disabled: it writes nothing) or back on (as the session's tracing
    /// is). Throws Error (InvalidArgument: no such channel; Failed).
    void setChannelEnabled(const std::string& name, bool enabled);
    /// Tracing off, every instance removed (each waits up to 1 s for the
    /// consumer's fds to close). Returns the names it could not remove,
    /// each logged as a warning, or (`quiet`: an attempt after the first)
    /// at debug level only.
    /// The session's userspace probes (uprobe_events group
    /// Tracefs::uprobeGroup(id)) are disabled in every instance and removed
    /// first; a group that cannot be removed is among the names returned.
    std::vector<std::string> remove(bool quiet = false) noexcept;
    /// Instances still there.
    bool empty() const noexcept { return channels_.empty(); }
    /// Lets every instance left go without removing it (TracefsInstance::
    /// release()): given up on, they stay for the next start's removal,
    /// and the destructor then neither waits nor warns again.
    void leaveInPlace() noexcept;
    /// Says once per name in `left` (instances remove() could not remove)
    /// that it is left in place, and why ("still held open at exit"...),
    /// then leaveInPlace(). Nothing if `left` is empty.
    void giveUp(const std::vector<std::string>& left, const std::string& why) noexcept;
    /// "tracectl-<id>": the first instance's name, the others' prefix.
    std::string baseName() const { return std::string(TracefsInstance::kPrefix) + idHex_; }

    /// Events lost so far, per channel index: the sum over CPUs of ftrace's
    /// per_cpu stats (overrun + dropped events). For tests and logs.
    std::vector<std::uint64_t> lostEvents() const;

private:
    struct Channel {
        ChannelConfig config;
        std::optional<TracefsInstance> instance;
        KernelChannelDescription description;
        /// Enabled tracepoints and the filters of the rules that name them
        /// ("" = a rule without filter: the event is not filtered).
        std::map<TracepointId, std::vector<std::string>> filters;
        /// Events the metadata declares (enabled or not: never twice).
        std::set<TracepointId> described;
        /// The ip provider's program, once a rule names it (filters: the
        /// rules' LTTng expressions, in `filters` under ip:send/ip:receive).
        std::unique_ptr<ip::IpProbes> ip;
        /// The system-call string program, once an enabled event has
        /// string arguments (syscall_string_args.hpp); attached to exactly
        /// the enabled sys_enter_<name> events that have some, each
        /// before ftrace's event is enabled.
        std::unique_ptr<SyscallStringProbes> strings;
        bool stringsRefused = false; ///< the program could not be loaded
    };
    /// The mask of `id`'s string arguments (0: none, or not a sys_enter).
    static std::uint64_t stringMask(TracepointCatalog& catalog, const TracepointId& id);
    /// Loads `c`'s string program if it has none (enabled as tracing is).
    /// False if it cannot be loaded (warned once; tried no more: the
    /// strings are recorded as "").
    bool ensureStrings(Channel& c) noexcept;
    /// A dup of `c`'s string program maps. Throws Error(Failed).
    static StringsAttachment stringsAttachment(const Channel& c);
    /// Attaches `c`'s string program to `id` (loading it first) if `id`
    /// has string arguments; a failure is warned about (its strings are
    /// recorded as ""). Throws Error(Failed) if `id`'s format cannot be read.
    void attachStrings(TracepointCatalog& catalog, Channel& c, const TracepointId& id);
    /// True for ip:send and ip:receive.
    static bool isIpProbe(const TracepointId& id) noexcept;
    /// Loads `c`'s ip program if its description has the provider and it
    /// has none yet (disabled, or enabled if tracing is on). Throws Error(Failed).
    void ensureIp(Channel& c);
    /// The program of `c`'s ip rules' filters (throws Error(InvalidArgument)
    /// if they do not compile together).
    static ip::IpFilterProgram ipProgram(const Channel& c);
    /// A dup of `c`'s ip maps for the consumer. Throws Error(Failed).
    static IpAttachment ipAttachment(const Channel& c);
    /// ensureIp(), then the program of `c`'s ip filters set. Throws Error.
    void applyIpFilter(Channel& c);
    /// The tracepoints `rule` names (sorted; TracepointCatalog::match()'s,
    /// plus the ip provider's probes); empty when it names only statedump
    /// events. Throws Error(InvalidArgument) when it names nothing.
    static std::vector<TracepointId> resolve(TracepointCatalog& catalog, const EventRule& rule);
    /// `expression` (LTTng syntax, the trace's field names) in ftrace's
    /// syntax for event `id`; "" for ""; nullopt if the event lacks a
    /// field it names (the rule never records that event, as LTTng's
    /// filters never match it). Throws Error(InvalidArgument): a type
    /// mismatch, what ftrace cannot evaluate, more than kMaxFilterBytes.
    static std::optional<std::string> translateFilter(TracepointCatalog& catalog,
                                                      const TracepointId& id,
                                                      const std::string& expression);
    /// The tracepoints `rule` records: those it names to which its filter
    /// applies (with their ftrace filters in `filters`, if given). Throws
    /// Error(InvalidArgument) if there is none, unless the rule names only
    /// statedump events and has no filter (then empty).
    static std::vector<TracepointId> namedBy(TracepointCatalog& catalog, const EventRule& rule,
                                             std::vector<std::string>* filters);
    Channel& channelNamed(const std::string& name);
    /// namedBy(), except for a userspace probe rule: its one event,
    /// {uprobeGroup, its name}, unfiltered.
    std::vector<TracepointId> ruleEvents(TracepointCatalog& catalog, const EventRule& rule,
                                         std::vector<std::string>* filters) const;
    /// Defines `rule`'s userspace probe in uprobe_events (as
    /// {uprobeGroup, rule.pattern}) unless the session has it already, and
    /// adds it to `catalog`. A rule read back after a restart has no
    /// target: the probe its earlier daemon defined is taken over if it is
    /// still there. True if it defined it now. Throws Error
    /// (InvalidArgument: another probe of the session has that name, or
    /// the kernel refused it; Failed).
    bool defineUserspaceProbe(TracepointCatalog& catalog, const EventRule& rule);
    /// Removes probe `name` (disabled in every instance first). Logged,
    /// never throws.
    void undefineUserspaceProbe(TracepointCatalog& catalog, const std::string& name) noexcept;
    std::string uprobeGroup() const { return Tracefs::uprobeGroup(idHex_); }
    /// Adds `rule`'s events to `c` (descriptions only); returns the ids new to it.
    std::vector<TracepointId> addToDescription(TracepointCatalog& catalog, Channel& c,
                                               const EventRule& rule);
    /// Writes each event's enable and filter (the rules' filters joined by ||).
    void applyEvents(TracepointCatalog& catalog, Channel& c, const std::vector<TracepointId>& ids);
    KernelMetadata metadata() const;
    /// The events and filters `c` wants from its enabled rules (rules_).
    std::map<TracepointId, std::vector<std::string>> wantedFilters(TracepointCatalog& catalog,
                                                                   const Channel& c) const;
    /// Writes what wantedFilters() says to `c`'s instance and ip program.
    void refilter(TracepointCatalog& catalog, Channel& c);

    std::string idHex_;
    /// The tracefs prepare() was given (a copy: a path), for the userspace
    /// probes' uprobe_events.
    std::optional<Tracefs> tracefs_;
    /// The userspace probes defined for the session: name -> location.
    std::map<std::string, UserspaceProbeLocation> uprobes_;
    KernelTraceDescription trace_;
    std::vector<Channel> channels_;
    std::uint16_t nextCtfId_ = kernel_records::kFirstFtraceCtfId;
    bool tracing_ = false; ///< setTracing()'s last value
    /// Every rule taken (prepare(), enableAdded()), with its enabled flag.
    std::vector<EventRule> rules_;
};

} // namespace tracectl::kernel
