// LTTng's session configuration files (`lttng save`, `lttng load`, the
// auto-load folders), as plain data: one SessionDescription per <session>
// element of the `sessions` schema lttng-tools 2.13 ships
// (/usr/share/xml/lttng/session.xsd, "session_type" and below). Nothing
// here knows tracectl's sessions: the daemon's save_load/ folder maps these to
// its own and says what one side has that the other lacks.
//
// Units are the schema's: sizes in bytes, timers in microseconds. Strings
// are UTF-8 (session_xml.hpp's reader trims the whitespace around each
// value, so a value's own leading or trailing whitespace does not survive a
// write and a read). Every type compares member by member.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tracectl::session_file {

/// `domain_type_type`: lttng_domain_type.
enum class DomainType { Kernel, Ust, Jul, Log4j, Python };
/// `domain_buffer_type`: lttng_buffer_type.
enum class BufferType { PerPid, PerUid, Global };
/// `loglevel_type`: lttng_loglevel_type.
enum class LoglevelType { All, Range, Single };

/// "KERNEL", "UST", "JUL", "LOG4J", "PYTHON".
const char* toString(DomainType d) noexcept;
/// "PER_PID", "PER_UID", "GLOBAL".
const char* toString(BufferType b) noexcept;
/// "ALL", "RANGE", "SINGLE".
const char* toString(LoglevelType l) noexcept;

/// `event_type`.
struct Event {
    std::string name; ///< a pattern ("prov:*"); may be empty; at most 255 bytes
    bool enabled = true;
    /// `event_type_type` as written: "TRACEPOINT", "SYSCALL", "PROBE",
    /// "FUNCTION", "USERSPACE_PROBE", "ALL", ...
    std::string type = "TRACEPOINT";
    LoglevelType loglevelType = LoglevelType::All;
    /// The tracer's level; written only when loglevelType is not All (as
    /// save.c), so it reads back as -1 then.
    int32_t loglevel = -1;
    std::optional<std::string> filter; ///< an LTTng filter expression
    std::vector<std::string> exclusions;
    /// The event had an <attributes> element (kprobe, function or
    /// userspace probe attributes): kept only as a fact, for warnings. A
    /// reading fact only: the attributes themselves are not kept, so
    /// writeSessionFile() cannot write them and ignores this flag.
    bool hasProbeAttributes = false;

    bool operator==(const Event&) const = default;
};

/// `event_perf_context_type`.
struct PerfContext {
    uint32_t type = 0;   ///< perf_event_attr.type
    uint64_t config = 0; ///< perf_event_attr.config
    std::string name;    ///< at most 255 bytes

    bool operator==(const PerfContext&) const = default;
};

/// `event_app_context_type` ($app.PROVIDER:NAME).
struct AppContext {
    std::string providerName;
    std::string contextName;

    bool operator==(const AppContext&) const = default;
};

/// `event_context_type`: exactly one of the three is set (the reader
/// guarantees it; the writer throws otherwise).
struct Context {
    /// `event_context_type_type`, upper case as written: "VPID", "PROCNAME", ...
    std::optional<std::string> type;
    std::optional<PerfContext> perf;
    std::optional<AppContext> app;

    bool operator==(const Context&) const = default;
};

/// `channel_type` (struct lttng_channel).
struct Channel {
    std::string name; ///< at most 255 bytes
    bool enabled = true;
    bool overwrite = false;             ///< overwrite_mode OVERWRITE (else DISCARD)
    std::optional<uint64_t> subbufSize; ///< bytes; nullopt: the domain's default
    uint64_t subbufCount = 4;
    uint32_t switchTimerUs = 0;
    uint32_t readTimerUs = 0;
    int64_t blockingTimeoutUs = 0;   ///< -1: block forever; at most 2147483648000
    std::string outputType = "MMAP"; ///< "MMAP" or "SPLICE"
    uint64_t tracefileSize = 0;      ///< bytes; 0: unlimited
    uint64_t tracefileCount = 0;     ///< 0: unlimited
    uint32_t liveTimerUs = 0;
    uint64_t monitorTimerUs = 0;
    std::vector<Event> events;
    std::vector<Context> contexts;

    bool operator==(const Channel&) const = default;
};

/// One value of a process attribute tracker: exactly one of an id, or a
/// user or group name (uid/vuid/gid/vgid only; the schema has no names for
/// pid/vpid).
struct TrackerValue {
    std::optional<int64_t> id;
    std::optional<std::string> name;

    bool operator==(const TrackerValue&) const = default;
};

/// A `*_process_attr_tracker` element. Its presence means an inclusion
/// set (empty: nothing is tracked); an absent tracker tracks every process
/// (lttng-tools 2.13 save.c writes none for the "all" policy).
struct ProcessAttrTracker {
    std::string attribute; ///< "pid", "vpid", "uid", "vuid", "gid", "vgid"
    std::vector<TrackerValue> values;

    bool operator==(const ProcessAttrTracker&) const = default;
};

/// `domain_type`.
struct Domain {
    DomainType type = DomainType::Ust;
    BufferType bufferType = BufferType::PerUid;
    std::vector<Channel> channels;
    /// <process_attr_trackers>, in file order. The writer writes the
    /// element for kernel and UST domains even when empty (as save.c), for
    /// the agent domains only when not empty.
    std::vector<ProcessAttrTracker> trackers;
    /// The legacy <trackers><pid_tracker> form (before 2.12): its pids, in
    /// file order, when the file has one (an empty set tracks nothing; no
    /// pid tracker tracks everything). Written only when present. LTTng
    /// 2.12+ loads it as the VPID tracker of a UST domain, the PID tracker
    /// of a kernel one (lttng-tools config.c, process_legacy_pid_tracker_node).
    std::optional<std::vector<int64_t>> legacyPidTargets;

    bool operator==(const Domain&) const = default;
};

/// `consumer_output_type`: a local path or a relay's two URIs (the
/// schema's <destination> is one or the other: the reader sets path, or
/// both URIs; the writer writes a <net_output> when either URI is set,
/// else the path, empty when unset).
struct ConsumerOutput {
    bool enabled = true;
    std::optional<std::string> path;
    std::optional<std::string> controlUri; ///< with dataUri: a net_output
    std::optional<std::string> dataUri;

    bool operator==(const ConsumerOutput&) const = default;
};

/// `snapshot_output_type`.
struct SnapshotOutput {
    std::string name;     ///< at most 255 bytes
    uint64_t maxSize = 0; ///< bytes; 0: no bound
    ConsumerOutput output;

    bool operator==(const SnapshotOutput&) const = default;
};

/// `session_type`.
struct SessionDescription {
    std::string name; ///< not empty, at most 255 bytes
    std::optional<std::string> sharedMemoryPath;
    std::vector<Domain> domains;
    bool started = false;
    /// <attributes>: snapshot_mode, live_timer_interval, rotation_schedules.
    bool snapshotMode = false;
    uint32_t liveTimerUs = 0; ///< 0: not a live session
    /// <rotation_schedules>: each <periodic><time_us>, in file order.
    std::vector<uint64_t> periodicRotationsUs;
    /// <rotation_schedules>: each <size_threshold><bytes>, in file order.
    /// (The writer writes every periodic schedule, then every size one.)
    std::vector<uint64_t> sizeRotationsBytes;
    /// <output><consumer_output>; nullopt when the file has none. The
    /// schema's <output> holds one of the two: the writer writes this one
    /// only for a session that is not a snapshot session (snapshotMode
    /// false and no snapshotOutputs).
    std::optional<ConsumerOutput> output;
    /// <output><snapshot_outputs>, in file order.
    std::vector<SnapshotOutput> snapshotOutputs;

    bool operator==(const SessionDescription&) const = default;
};

} // namespace tracectl::session_file
