// ftrace event and field names -> lttng-modules 2.13 names, so that LTTng's
// kernel analyses (lttng-analyses, Trace Compass) read our kernel traces.
// One table, each row with the lttng-modules 2.13 file it comes from
// (include/instrumentation/events/<file>.h; syscalls: the syscall
// instrumentation's syscall_entry_/syscall_exit_ naming in
// src/lttng-syscalls.c).
//
// Outside the table an event keeps its ftrace name (without the system) and
// its fields keep ftrace's names. System calls are ruled, not listed:
// syscalls:sys_enter_X -> syscall_entry_X, syscalls:sys_exit_X ->
// syscall_exit_X (both without ftrace's __syscall_nr field).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tracectl::kernel {

/// How one ftrace event is named in the trace.
struct LttngNaming {
    std::string eventName; ///< the CTF event name, e.g. "sched_switch"
    /// ftrace field name -> trace field name, e.g. {"prev_pid", "prev_tid"}.
    std::vector<std::pair<std::string, std::string>> fieldRenames;
    /// ftrace fields left out of the trace (e.g. "__syscall_nr").
    std::vector<std::string> droppedFields;
    /// The lttng-modules source of the row ("sched.h"), empty when the
    /// event is not in the table (ftrace's names kept).
    std::string source;

    /// The trace's name of ftrace field `field` (itself when not renamed).
    std::string fieldName(std::string_view field) const;
    bool isDropped(std::string_view field) const;
};

/// The naming of ftrace event `system`:`event`. Never throws for any input.
LttngNaming lttngNaming(std::string_view system, std::string_view event);

/// The CTF event names of `events` ({system, event} pairs, in enabling
/// order) within one stream class: lttngNaming's names, except that an
/// event whose name an earlier one (or one of `reserved`, e.g. the
/// statedump events) already has is named "<system>_<name>" (and, should
/// that be taken too, gets "_2", "_3"... appended). Same order as `events`.
std::vector<std::string>
assignEventNames(const std::vector<std::pair<std::string, std::string>>& events,
                 const std::vector<std::string>& reserved = {});

/// The table for documentation: one line per row, "system:event -> name"
/// followed by " (from -> to, ...)" renames and " [drops x]", then the
/// rules for syscalls and for events outside the table. Plain text, '\n'
/// separated.
std::string lttngNamesTable();

} // namespace tracectl::kernel
