// UST channels and event rules of a session, free of D-Bus types:
// what Session.AddChannel and Session.EnableEvents accept, validated.
// Semantics follow lttng-enable-channel(1) and lttng-enable-event(1).
#pragma once

#include "userspace_probe_location.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tracectl {

namespace kernel {
struct UserspaceProbeTarget;
} // namespace kernel

/// A session's tracing domains (the D-Bus `domain` arguments): LTTng-UST
/// apps, and the kernel through tracefs.
enum class TracingDomain { Ust, Kernel };
/// "ust", "kernel".
std::string_view toString(TracingDomain d) noexcept;
/// The domain named `name` ("ust", "kernel"), or nullopt.
std::optional<TracingDomain> domainFromName(std::string_view name) noexcept;

/// A UST or kernel channel (lttng-enable-channel(1)). Sizes in bytes, timers in
/// microseconds (0 = off).
struct ChannelConfig {
    std::string name;
    /// Power of two, >= the page size. The defaults are LTTng 2.13's for a
    /// per-UID UST channel (lttng-tools configure.ac:
    /// CONFIG_DEFAULT_UST_UID_CHANNEL_SUBBUF_SIZE 524288, _SUBBUF_NUM 4).
    uint64_t subbufSize = 512 * 1024;
    uint64_t subbufCount = 4; ///< power of two, >= 2
    bool overwrite = false;   ///< false: discard new events when full
    /// Periods of the consumer's timers, µs: 0 (off) or at least
    /// kMinTimerUs.
    uint32_t switchTimerUs = 0;
    uint32_t readTimerUs = 0;
    /// Context fields recorded with every event (context_type.hpp names),
    /// in the order they were added.
    std::vector<std::string> contexts;
    /// False once Session.DisableChannel turned it off (it records nothing
    /// until re-enabled: lttng-disable-channel(1)); not one of its
    /// attributes (sameChannelAttributes()).
    bool enabled = true;
};

/// True if `a` and `b` have the same buffer attributes (sizes, count, mode,
/// timers): what AddChannel of an existing, disabled channel must give to
/// re-enable it (lttng-enable-channel(1) on an existing channel). The
/// name, contexts and `enabled` are not compared.
bool sameChannelAttributes(const ChannelConfig& a, const ChannelConfig& b);

/// lttng-enable-event(1)'s --loglevel / --loglevel-only.
enum class LoglevelMatch { All, AtLeastAsSevere, Exactly };

/// One Session.EnableEvents call: which events of one channel to record.
struct EventRule {
    TracingDomain domain = TracingDomain::Ust;
    std::string channel;
    /// Kernel domain: `pattern` names system calls (a name, or "*" for every
    /// one) rather than tracepoints (lttng-enable-event(1) --syscall).
    bool syscall = false;
    /// UST: an exact name or a trailing '*' wildcard ("prov:*", "*");
    /// kernel: "system:event" with '*' anywhere ("sched:*", "*"), or a
    /// system call's name with `syscall`.
    std::string pattern;
    LoglevelMatch loglevelMatch = LoglevelMatch::All;
    int32_t loglevel = -1;               ///< lttng-ust level, 0 (TRACE_EMERG) .. 14 (TRACE_DEBUG)
    std::vector<std::string> exclusions; ///< event names (wildcards allowed) left out
    /// LTTng filter expression as given (--filter), "" for none.
    std::string filter;
    /// Its compiled form (filter/filter_compiler.hpp), as
    /// `struct lttng_ust_abi_filter_bytecode` bytes (48-byte header, then the
    /// code and reloc table): what lttng_ust_ctl_set_filter sends. Empty
    /// when `filter` is.
    std::vector<uint8_t> filterBytecode;
    /// False once Session.DisableEvents turned it off (lttng-disable-event(1));
    /// an EnableEvents of the same rule (sameEventRule()) turns it on again.
    /// Not compared by sameEventRule().
    bool enabled = true;
    /// Kernel domain: a userspace probe (lttng-enable-event(1)
    /// --userspace-probe) named `pattern` (the event's name in the trace:
    /// kUserspaceProbeNameRule), instead of tracepoints.
    std::optional<UserspaceProbeLocation> userspaceProbe;
    /// The file and offset it resolved to for its caller
    /// (kernel/userspace_probe_target.hpp): set by Session.EnableEvents,
    /// shared (read only) by every copy of the rule; null for a rule read
    /// back from a state document (a restarted daemon cannot open the
    /// caller's file again). Not compared by sameEventRule().
    std::shared_ptr<const kernel::UserspaceProbeTarget> probeTarget;
};

/// What the name of a userspace probe's event may be: ftrace's event names
/// (the event is defined in uprobe_events under it): a letter or '_', then
/// letters, digits and '_', at most 64 bytes.
bool isUserspaceProbeName(std::string_view name) noexcept;

/// LTTng 2.13's kernel channel defaults (lttng-tools configure.ac:
/// CONFIG_DEFAULT_KERNEL_CHANNEL_SUBBUF_SIZE 1048576, _SUBBUF_NUM 4).
inline constexpr uint64_t kKernelDefaultSubbufSize = 1024 * 1024;
inline constexpr uint64_t kKernelDefaultSubbufCount = 4;
/// A kernel channel with LTTng's defaults, recording `tid` (every kernel
/// event then names its thread).
ChannelConfig defaultKernelChannel(std::string name);

/// The shortest switch or read timer period, µs (1 ms): shorter ones have
/// the consumer wake more often than it has work (at 1 µs it took a whole
/// core), for nothing a reader could see. LTTng 2.13 sets no floor.
inline constexpr uint32_t kMinTimerUs = 1000;

/// The name LTTng gives the channel it creates on first enable: "channel0".
inline constexpr std::string_view kDefaultChannelName = "channel0";
/// Most channels and event rules per session.
inline constexpr std::size_t kMaxChannels = 64;
inline constexpr std::size_t kMaxEventRules = 1024;
/// Most context fields per channel (there are 20 kinds).
inline constexpr std::size_t kMaxContexts = 32;

/// Whether `exclusion` excludes every event `pattern` matches (`p:*` on
/// `p:*`, `p:a*` on `p:ab*`): the rule would record nothing, which
/// checkNewEventRule() refuses, as lttng-enable-event(1) does (lttng-tools
/// 2.13, check_exclusion_subsets). Patterns and exclusions as LTTng writes
/// them: '*' a wildcard at the end, '\\' escaping the next character.
bool excludesWholePattern(std::string_view pattern, std::string_view exclusion);

/// Throws Error(InvalidName) unless `name` is a valid channel name: 1-200
/// bytes, no '/', no leading '.', printable ASCII (it names stream files).
void checkChannelName(std::string_view name);
/// Throws Error(InvalidArgument) unless the sizes and counts fit what the
/// ring buffer accepts: what any channel of a session must be, also one a
/// restarted daemon reads back from its state document.
void checkChannelConfig(const ChannelConfig& c);
/// checkChannelConfig(), then what a channel asked for now must also be:
/// switch and read timers 0 (off) or at least kMinTimerUs. Not applied to
/// a channel an earlier daemon accepted (restart/session_record.cpp): its
/// consumer runs it already, and a restart must not drop the session.
void checkNewChannel(const ChannelConfig& c);
/// Throws Error(InvalidArgument) for an empty or over-long pattern, a '*'
/// anywhere but at the end, or an exclusion that does not fit.
void checkEventRule(const EventRule& r);
/// checkEventRule(), then what a rule asked for now must also be: no
/// exclusion that excludes every event the pattern matches
/// (excludesWholePattern()). As for checkNewChannel(), a rule an earlier
/// daemon accepted is read back as it was; a session file's is left out
/// with a warning (load_plan.cpp), as lttng-sessiond loads it (the refusal
/// is lttng-enable-event(1)'s).
void checkNewEventRule(const EventRule& r);

/// True if `a` and `b` select the same events of the same channel, the way
/// LTTng tells one event rule from another (LTTNG_ERR_UST_EVENT_ENABLED):
/// same channel and pattern, same log level match (and level, unless the
/// match is All), the same exclusions in any order, and the same filter
/// expression (as lttng-sessiond compares them: the text). Channel names are
/// compared as given: resolve "" to kDefaultChannelName first.
bool sameEventRule(const EventRule& a, const EventRule& b);
/// `r` for a message: "'PATTERN' in channel 'CHANNEL'", then its log level
/// and exclusions if it has any.
std::string describeEventRule(const EventRule& r);

/// lttng-ust's log level number for a name as lttng-enable-event(1) spells
/// it ("TRACE_INFO", "info", "TRACE_DEBUG_LINE", ...; case-insensitive) or
/// for the number itself ("0" to "14"), or nullopt.
std::optional<int32_t> loglevelFromName(std::string_view name);

/// True if `eventName` ("provider:event") matches `pattern` (exact, or a
/// prefix followed by a final '*').
bool patternMatches(std::string_view pattern, std::string_view eventName);

} // namespace tracectl
