// The UST context fields a channel can record with every event, by the
// names lttng-add-context(1) gives them, and their lttng-ust ABI numbers
// (enum lttng_ust_abi_context_type, lttng/ust-abi.h of lttng-ust 2.13).
// Perf counters and application contexts ($app.*) are not offered.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace tracectl {

/// The lttng-ust ABI context type for `name` ("vpid", "vtid", "procname",
/// "pthread_id", "ip", "cpu_id", "vuid", "veuid", "vsuid", "vgid", "vegid",
/// "vsgid", "cgroup_ns", "ipc_ns", "mnt_ns", "net_ns", "pid_ns", "time_ns",
/// "user_ns", "uts_ns"; exact, lowercase), or nullopt.
std::optional<int> ustContextType(std::string_view name);

/// Every name ustContextType() accepts, in a stable order.
const std::vector<std::string_view>& contextTypeNames();

/// The kernel domain's context types (what ftrace can supply:
/// common/kernel_records.hpp ContextField): "tid", "pid", "procname",
/// "prio", "cpu_id", "callstack-kernel", "callstack-user" → their
/// ContextField bit, anything else 0.
unsigned kernelContextBit(std::string_view name);
/// "tid", "pid", "procname", "prio", "cpu_id", "callstack-kernel",
/// "callstack-user".
const std::vector<std::string_view>& kernelContextTypeNames();

/// True for "callstack-kernel" and "callstack-user": lttng-modules'
/// contexts, which lttng-ust 2.13 does not have (its enum
/// lttng_ust_abi_context_type has no call stack), so the UST domain refuses
/// them.
bool isCallstackContext(std::string_view name);

} // namespace tracectl
