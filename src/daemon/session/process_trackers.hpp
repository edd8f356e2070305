// A session's process attribute trackers (lttng-track(1), lttng-untrack(1)
// of LTTng 2.13): per (domain, attribute), a policy that admits every
// process, or an inclusion set of values; a process is recorded only if
// every tracker of its domain admits it. Free of D-Bus types; owned by the
// Session (main loop), copied into the SessionSnapshot its backends get.
//
// Semantics from lttng-tools 2.13 `src/bin/lttng-sessiond/tracker.c`
// (process_attr_tracker_inclusion_set_add_value: "exists" if present;
// _remove_value: "missing" if absent, and invalid while the policy is
// "all") and `cmd.c` cmd_process_attr_tracker_*; the client side
// (`src/bin/lttng/commands/track-untrack.c`) turns "track from all" into
// an inclusion set first, and `untrack --all` into an empty inclusion set.
#pragma once

#include "session/channel_config.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace tracectl {

/// The attributes LTTng 2.13 tracks: UST apps by their virtual (namespace)
/// ids, the kernel by the real ones. Values are integers (a pid, uid, gid).
enum class ProcessAttribute { Vpid, Vuid, Vgid, Pid, Uid, Gid };

/// "vpid", "vuid", "vgid", "pid", "uid", "gid".
std::string_view toString(ProcessAttribute a) noexcept;
/// The attribute named `name`, or nullopt.
std::optional<ProcessAttribute> processAttributeFromName(std::string_view name) noexcept;
/// The domain whose processes `a` describes: Vpid/Vuid/Vgid are "ust",
/// Pid/Uid/Gid "kernel" (as lttng-track(1): `-u --vpid`, `-k --pid`).
TracingDomain domainOf(ProcessAttribute a) noexcept;

/// Values one tracker holds at most (a Track past it: LimitExceeded).
inline constexpr std::size_t kMaxTrackedValues = 4096;

/// One tracker's state: every process, or only those in `values`.
struct ProcessTracker {
    ProcessAttribute attribute = ProcessAttribute::Vpid;
    bool all = true;           ///< the default: every process is tracked
    std::set<uint32_t> values; ///< the inclusion set, when !all (sorted)
    bool admits(uint32_t value) const noexcept { return all || values.count(value) != 0; }
    bool operator==(const ProcessTracker&) const = default;
};

/// The six trackers of a session.
class ProcessTrackers {
public:
    ProcessTrackers();

    /// Adds `values` to the tracker of `a` (from "all", the tracker becomes
    /// the inclusion set of `values`); `values` empty with `all`: back to
    /// "all". Throws Error(InvalidArgument) for no value (without `all`),
    /// values with `all`, a value given twice or tracked already (LTTng:
    /// LTTNG_ERR_PROCESS_ATTR_EXISTS); Error(LimitExceeded) past
    /// kMaxTrackedValues. Nothing changes when it throws. Returns true if
    /// the tracker changed.
    bool track(ProcessAttribute a, const std::vector<uint32_t>& values, bool all);
    /// Removes `values` from the tracker of `a`; with `all` (and no value)
    /// the tracker becomes the empty inclusion set (nothing is tracked).
    /// Throws Error(InvalidArgument) for no value (without `all`), values
    /// with `all`, a value given twice or not tracked (LTTng:
    /// LTTNG_ERR_PROCESS_ATTR_MISSING), or any value while the tracker
    /// tracks every process (LTTng: LTTNG_ERR_PROCESS_ATTR_TRACKER_INVALID_
    /// TRACKING_POLICY). Nothing changes when it throws. Returns true if
    /// the tracker changed.
    bool untrack(ProcessAttribute a, const std::vector<uint32_t>& values, bool all);

    const ProcessTracker& of(ProcessAttribute a) const noexcept {
        return trackers_[static_cast<std::size_t>(a)];
    }
    /// The six trackers, in ProcessAttribute order.
    const std::array<ProcessTracker, 6>& all() const noexcept { return trackers_; }

    /// UST: may an app of (vpid, vuid, vgid) be recorded? Every UST
    /// tracker must admit it (lttng-tools `ust-app.c`
    /// ust_app_global_update: trace_ust_id_tracker_lookup for each).
    bool admitsUst(uint32_t vpid, uint32_t vuid, uint32_t vgid) const noexcept {
        return of(ProcessAttribute::Vpid).admits(vpid) && of(ProcessAttribute::Vuid).admits(vuid) &&
               of(ProcessAttribute::Vgid).admits(vgid);
    }
    bool operator==(const ProcessTrackers&) const = default;

private:
    std::array<ProcessTracker, 6> trackers_;
};

} // namespace tracectl
