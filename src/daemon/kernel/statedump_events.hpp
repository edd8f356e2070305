// lttng-modules' statedump events as names a user enables: the list of
// lttng-modules 2.13 include/instrumentation/events/lttng-statedump.h
// (TRACE_SYSTEM lttng_statedump), each with its fields as that file
// declares them and whether tracectl's consumer writes it
// (src/consumer/kernel/statedump.*; kernel_records.hpp's kStatedump*Id).
//
// They are no tracepoints: the consumer writes the statedump from /proc
// when the session first starts. A rule naming any of them (by name,
// `lttng_statedump_process_state`, or as `lttng_statedump:NAME`, globs
// included) asks for the statedump in the rule's channel.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tracectl::kernel {

/// The system name the statedump events are listed under
/// (lttng-modules' TRACE_SYSTEM).
inline constexpr std::string_view kStatedumpSystem = "lttng_statedump";

/// One lttng-modules statedump event.
struct StatedumpEventInfo {
    std::string_view name; ///< "lttng_statedump_process_state"
    /// (field, C type as lttng-modules declares it), e.g. {"tid", "pid_t"}.
    std::vector<std::pair<std::string_view, std::string_view>> fields;
    /// True when tracectl's statedump writes this event; false: accepted
    /// in a rule, not written yet.
    bool written = false;
};

/// Every lttng-modules 2.13 statedump event, in lttng-statedump.h's order
/// (x86's cpu_topology included). Never empty.
const std::vector<StatedumpEventInfo>& statedumpEventInfos();

/// The statedump events `pattern` names, in statedumpEventInfos()'s order:
/// with ':' a glob (globMatch's, `*` only) on "lttng_statedump:NAME", without
/// one a glob on NAME. Empty when it names none.
std::vector<std::string_view> matchStatedumpEvents(std::string_view pattern);

} // namespace tracectl::kernel
