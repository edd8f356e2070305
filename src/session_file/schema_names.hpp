// Private to the session_file library: the enumerations of lttng-tools
// 2.13's session.xsd that the data model keeps as strings, shared by the
// reader (which refuses other values) and the writer (which refuses to
// write a document the reader would refuse).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace tracectl::session_file::schema {

/// `name_type`: xs:string, maxLength 255 (counted in bytes here).
inline constexpr std::size_t kMaxNameBytes = 255;

/// `blocking_timeout_type`.
inline constexpr long long kMinBlockingTimeoutUs = -1;
inline constexpr long long kMaxBlockingTimeoutUs = 2147483648000LL;

/// `event_output_type`.
inline constexpr std::array<std::string_view, 2> kOutputTypes{"SPLICE", "MMAP"};

/// `event_type_type`.
inline constexpr std::array<std::string_view, 10> kEventTypes{
    "ALL",  "TRACEPOINT", "PROBE",  "USERSPACE_PROBE", "FUNCTION", "FUNCTION_ENTRY",
    "NOOP", "SYSCALL",    "KPROBE", "KRETPROBE"};

/// `event_context_type_type`.
inline constexpr std::array<std::string_view, 19> kContextTypes{"PID",
                                                                "PROCNAME",
                                                                "PRIO",
                                                                "NICE",
                                                                "VPID",
                                                                "TID",
                                                                "VTID",
                                                                "PPID",
                                                                "VPPID",
                                                                "PTHREAD_ID",
                                                                "HOSTNAME",
                                                                "IP",
                                                                "APP",
                                                                "INTERRUPTIBLE",
                                                                "PREEMPTIBLE",
                                                                "NEED_RESCHEDULE",
                                                                "MIGRATABLE",
                                                                "CALLSTACK_USER",
                                                                "CALLSTACK_KERNEL"};

/// The `*_process_attr_tracker` elements, in save.c's order.
inline constexpr std::array<std::string_view, 6> kTrackerAttributes{"pid",  "vpid", "uid",
                                                                    "vuid", "gid",  "vgid"};

/// Whether a tracker of `attribute` may hold names (`*_value_type` has a
/// <name> choice): uid, vuid, gid, vgid.
inline bool trackerTakesNames(std::string_view attribute) {
    return attribute != "pid" && attribute != "vpid";
}

template <std::size_t N>
bool isOneOf(std::string_view value, const std::array<std::string_view, N>& names) {
    return std::find(names.begin(), names.end(), value) != names.end();
}

/// "A, B or C", for messages.
template <std::size_t N>
std::string listOf(const std::array<std::string_view, N>& names) {
    std::string out;
    for (std::size_t i = 0; i < N; ++i) {
        if (i > 0)
            out += i + 1 == N ? " or " : ", ";
        out += names[i];
    }
    return out;
}

} // namespace tracectl::session_file::schema
