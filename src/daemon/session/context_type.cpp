#include "session/context_type.hpp"

#include "common/kernel_records.hpp"

#include <array>
#include <lttng/ust-abi.h>
#include <utility>

namespace tracectl {

namespace {

constexpr std::array<std::pair<std::string_view, int>, 20> kContexts{{
    {"vpid", LTTNG_UST_ABI_CONTEXT_VPID},
    {"vtid", LTTNG_UST_ABI_CONTEXT_VTID},
    {"procname", LTTNG_UST_ABI_CONTEXT_PROCNAME},
    {"pthread_id", LTTNG_UST_ABI_CONTEXT_PTHREAD_ID},
    {"ip", LTTNG_UST_ABI_CONTEXT_IP},
    {"cpu_id", LTTNG_UST_ABI_CONTEXT_CPU_ID},
    {"vuid", LTTNG_UST_ABI_CONTEXT_VUID},
    {"veuid", LTTNG_UST_ABI_CONTEXT_VEUID},
    {"vsuid", LTTNG_UST_ABI_CONTEXT_VSUID},
    {"vgid", LTTNG_UST_ABI_CONTEXT_VGID},
    {"vegid", LTTNG_UST_ABI_CONTEXT_VEGID},
    {"vsgid", LTTNG_UST_ABI_CONTEXT_VSGID},
    {"cgroup_ns", LTTNG_UST_ABI_CONTEXT_CGROUP_NS},
    {"ipc_ns", LTTNG_UST_ABI_CONTEXT_IPC_NS},
    {"mnt_ns", LTTNG_UST_ABI_CONTEXT_MNT_NS},
    {"net_ns", LTTNG_UST_ABI_CONTEXT_NET_NS},
    {"pid_ns", LTTNG_UST_ABI_CONTEXT_PID_NS},
    {"time_ns", LTTNG_UST_ABI_CONTEXT_TIME_NS},
    {"user_ns", LTTNG_UST_ABI_CONTEXT_USER_NS},
    {"uts_ns", LTTNG_UST_ABI_CONTEXT_UTS_NS},
}};

} // namespace

std::optional<int> ustContextType(std::string_view name) {
    for (const auto& [n, type] : kContexts)
        if (n == name)
            return type;
    return std::nullopt;
}

const std::vector<std::string_view>& contextTypeNames() {
    static const std::vector<std::string_view> names = [] {
        std::vector<std::string_view> v;
        for (const auto& [n, type] : kContexts)
            v.push_back(n);
        return v;
    }();
    return names;
}

unsigned kernelContextBit(std::string_view name) {
    using namespace kernel_records;
    if (name == "tid")
        return ContextTid;
    if (name == "pid")
        return ContextPid;
    if (name == "procname")
        return ContextProcname;
    if (name == "prio")
        return ContextPrio;
    if (name == "cpu_id")
        return ContextCpuId;
    if (name == "callstack-kernel")
        return ContextCallstackKernel;
    if (name == "callstack-user")
        return ContextCallstackUser;
    return 0;
}

bool isCallstackContext(std::string_view name) {
    return name == "callstack-kernel" || name == "callstack-user";
}

const std::vector<std::string_view>& kernelContextTypeNames() {
    static const std::vector<std::string_view> names{
        "tid", "pid", "procname", "prio", "cpu_id", "callstack-kernel", "callstack-user"};
    return names;
}

} // namespace tracectl
