#include "kernel/statedump_events.hpp"

#include "kernel/tracepoint_catalog.hpp"

namespace tracectl::kernel {

const std::vector<StatedumpEventInfo>& statedumpEventInfos() {
    // lttng-modules 2.13 include/instrumentation/events/lttng-statedump.h.
    static const std::vector<StatedumpEventInfo> events = {
        {"lttng_statedump_start", {}, true},
        {"lttng_statedump_end", {}, true},
        {"lttng_statedump_process_state",
         {{"tid", "pid_t"},
          {"pid", "pid_t"},
          {"ppid", "pid_t"},
          {"name", "char[16]"},
          {"type", "int"},
          {"mode", "int"},
          {"submode", "int"},
          {"status", "int"},
          {"cpu", "unsigned int"},
          {"file_table_address", "struct files_struct *"}},
         true},
        {"lttng_statedump_process_cgroup_ns", {{"tid", "pid_t"}, {"ns_inum", "unsigned int"}}},
        {"lttng_statedump_process_ipc_ns", {{"tid", "pid_t"}, {"ns_inum", "unsigned int"}}},
        {"lttng_statedump_process_mnt_ns", {{"tid", "pid_t"}, {"ns_inum", "unsigned int"}}},
        {"lttng_statedump_process_net_ns", {{"tid", "pid_t"}, {"ns_inum", "unsigned int"}}},
        {"lttng_statedump_process_pid_ns",
         {{"tid", "pid_t"},
          {"vtid", "pid_t"},
          {"vpid", "pid_t"},
          {"vppid", "pid_t"},
          {"ns_level", "int"},
          {"ns_inum", "unsigned int"}}},
        {"lttng_statedump_process_user_ns",
         {{"tid", "pid_t"},
          {"vuid", "uid_t"},
          {"vgid", "gid_t"},
          {"ns_level", "int"},
          {"ns_inum", "unsigned int"}}},
        {"lttng_statedump_process_uts_ns", {{"tid", "pid_t"}, {"ns_inum", "unsigned int"}}},
        {"lttng_statedump_process_time_ns", {{"tid", "pid_t"}, {"ns_inum", "unsigned int"}}},
        {"lttng_statedump_file_descriptor",
         {{"file_table_address", "struct files_struct *"},
          {"fd", "int"},
          {"flags", "unsigned int"},
          {"fmode", "fmode_t"},
          {"filename", "string"}},
         true},
        {"lttng_statedump_vm_map",
         {{"pid", "pid_t"},
          {"start", "unsigned long"},
          {"end", "unsigned long"},
          {"flags", "unsigned long"},
          {"inode", "unsigned long"},
          {"pgoff", "unsigned long"}}},
        {"lttng_statedump_network_interface",
         {{"name", "string"}, {"address_ipv4", "uint32_t"}},
         true},
        {"lttng_statedump_block_device", {{"dev", "dev_t"}, {"diskname", "string"}}, true},
        {"lttng_statedump_interrupt",
         {{"irq", "unsigned int"}, {"name", "string"}, {"action", "string"}, {"tid", "pid_t"}},
         true},
        {"lttng_statedump_cpu_topology",
         {{"architecture", "string"},
          {"cpu_id", "uint16_t"},
          {"vendor", "string"},
          {"family", "uint8_t"},
          {"model", "uint8_t"},
          {"model_name", "string"},
          {"physical_id", "uint16_t"},
          {"core_id", "uint16_t"},
          {"cores", "uint16_t"}},
         true},
    };
    return events;
}

std::vector<std::string_view> matchStatedumpEvents(std::string_view pattern) {
    const bool full = pattern.find(':') != std::string_view::npos;
    std::vector<std::string_view> out;
    for (const StatedumpEventInfo& e : statedumpEventInfos()) {
        const bool hit =
            full ? globMatch(pattern, std::string(kStatedumpSystem) + ":" + std::string(e.name))
                 : globMatch(pattern, e.name);
        if (hit)
            out.push_back(e.name);
    }
    return out;
}

} // namespace tracectl::kernel
