#include "lttng_kernel_names.hpp"

#include <algorithm>
#include <array>
#include <set>

namespace tracectl::kernel {

namespace {

struct Rename {
    std::string_view from, to;
};

// One row: ftrace system:event, lttng-modules 2.13 name, field renames, the
// lttng-modules file (include/instrumentation/events/) it is read from.
struct Row {
    std::string_view system, event, lttngName;
    std::array<Rename, 2> renames;
    std::string_view source;
};

constexpr Rename kNone{};
constexpr Rename kPidTid{"pid", "tid"};

// clang-format off
constexpr Row kTable[] = {
    // sched.h: ftrace's *_pid are thread ids, lttng-modules calls them *_tid.
    {"sched", "sched_switch", "sched_switch", {{{"prev_pid", "prev_tid"}, {"next_pid", "next_tid"}}}, "sched.h"},
    {"sched", "sched_wakeup", "sched_wakeup", {{kPidTid, kNone}}, "sched.h"},
    {"sched", "sched_waking", "sched_waking", {{kPidTid, kNone}}, "sched.h"},
    {"sched", "sched_wakeup_new", "sched_wakeup_new", {{kPidTid, kNone}}, "sched.h"},
    {"sched", "sched_migrate_task", "sched_migrate_task", {{kPidTid, kNone}}, "sched.h"},
    {"sched", "sched_process_fork", "sched_process_fork", {{{"parent_pid", "parent_tid"}, {"child_pid", "child_tid"}}}, "sched.h"},
    {"sched", "sched_process_exit", "sched_process_exit", {{kPidTid, kNone}}, "sched.h"},
    {"sched", "sched_process_free", "sched_process_free", {{kPidTid, kNone}}, "sched.h"},
    {"sched", "sched_process_wait", "sched_process_wait", {{kPidTid, kNone}}, "sched.h"},
    {"sched", "sched_wait_task", "sched_wait_task", {{kPidTid, kNone}}, "sched.h"},
    {"sched", "sched_process_exec", "sched_process_exec", {{kPidTid, {"old_pid", "old_tid"}}}, "sched.h"},
    {"sched", "sched_kthread_stop", "sched_kthread_stop", {{kPidTid, kNone}}, "sched.h"},
    {"sched", "sched_kthread_stop_ret", "sched_kthread_stop_ret", {{kNone, kNone}}, "sched.h"},
    {"sched", "sched_stat_wait", "sched_stat_wait", {{kPidTid, kNone}}, "sched.h"},
    {"sched", "sched_stat_sleep", "sched_stat_sleep", {{kPidTid, kNone}}, "sched.h"},
    {"sched", "sched_stat_iowait", "sched_stat_iowait", {{kPidTid, kNone}}, "sched.h"},
    {"sched", "sched_stat_blocked", "sched_stat_blocked", {{kPidTid, kNone}}, "sched.h"},
    {"sched", "sched_stat_runtime", "sched_stat_runtime", {{kPidTid, kNone}}, "sched.h"},
    {"sched", "sched_pi_setprio", "sched_pi_setprio", {{kPidTid, kNone}}, "sched.h"},
    // irq.h: the softirq events are mapped to irq_softirq_* there.
    {"irq", "irq_handler_entry", "irq_handler_entry", {{kNone, kNone}}, "irq.h"},
    {"irq", "irq_handler_exit", "irq_handler_exit", {{kNone, kNone}}, "irq.h"},
    {"irq", "softirq_entry", "irq_softirq_entry", {{kNone, kNone}}, "irq.h"},
    {"irq", "softirq_exit", "irq_softirq_exit", {{kNone, kNone}}, "irq.h"},
    {"irq", "softirq_raise", "irq_softirq_raise", {{kNone, kNone}}, "irq.h"},
    // net.h
    {"net", "net_dev_queue", "net_dev_queue", {{kNone, kNone}}, "net.h"},
    {"net", "net_dev_xmit", "net_dev_xmit", {{kNone, kNone}}, "net.h"},
    {"net", "netif_receive_skb", "net_if_receive_skb", {{kNone, kNone}}, "net.h"},
    {"net", "netif_rx", "net_if_rx", {{kNone, kNone}}, "net.h"},
    // timer.h: the hrtimer and itimer events get a timer_ prefix there.
    {"timer", "timer_init", "timer_init", {{kNone, kNone}}, "timer.h"},
    {"timer", "timer_start", "timer_start", {{kNone, kNone}}, "timer.h"},
    {"timer", "timer_expire_entry", "timer_expire_entry", {{kNone, kNone}}, "timer.h"},
    {"timer", "timer_expire_exit", "timer_expire_exit", {{kNone, kNone}}, "timer.h"},
    {"timer", "timer_cancel", "timer_cancel", {{kNone, kNone}}, "timer.h"},
    {"timer", "hrtimer_init", "timer_hrtimer_init", {{kNone, kNone}}, "timer.h"},
    {"timer", "hrtimer_start", "timer_hrtimer_start", {{kNone, kNone}}, "timer.h"},
    {"timer", "hrtimer_expire_entry", "timer_hrtimer_expire_entry", {{kNone, kNone}}, "timer.h"},
    {"timer", "hrtimer_expire_exit", "timer_hrtimer_expire_exit", {{kNone, kNone}}, "timer.h"},
    {"timer", "hrtimer_cancel", "timer_hrtimer_cancel", {{kNone, kNone}}, "timer.h"},
    {"timer", "itimer_state", "timer_itimer_state", {{kNone, kNone}}, "timer.h"},
    {"timer", "itimer_expire", "timer_itimer_expire", {{kNone, kNone}}, "timer.h"},
    // mm_vmscan.h: same name.
    {"vmscan", "mm_vmscan_wakeup_kswapd", "mm_vmscan_wakeup_kswapd", {{kNone, kNone}}, "mm_vmscan.h"},
    // block.h: same names. lttng-modules' `tid` (current->pid) and the rwbs
    // bits of the events LTTng's analyses read: lttng_kernel_layout.hpp.
    {"block", "block_rq_issue", "block_rq_issue", {{kNone, kNone}}, "block.h"},
    {"block", "block_rq_insert", "block_rq_insert", {{kNone, kNone}}, "block.h"},
    {"block", "block_rq_complete", "block_rq_complete", {{kNone, kNone}}, "block.h"},
    {"block", "block_rq_requeue", "block_rq_requeue", {{kNone, kNone}}, "block.h"},
    {"block", "block_rq_merge", "block_rq_merge", {{kNone, kNone}}, "block.h"},
    {"block", "block_bio_queue", "block_bio_queue", {{kNone, kNone}}, "block.h"},
    {"block", "block_bio_complete", "block_bio_complete", {{kNone, kNone}}, "block.h"},
    {"block", "block_bio_backmerge", "block_bio_backmerge", {{kNone, kNone}}, "block.h"},
    {"block", "block_bio_frontmerge", "block_bio_frontmerge", {{kNone, kNone}}, "block.h"},
    {"block", "block_bio_bounce", "block_bio_bounce", {{kNone, kNone}}, "block.h"},
    {"block", "block_getrq", "block_getrq", {{kNone, kNone}}, "block.h"},
    {"block", "block_plug", "block_plug", {{kNone, kNone}}, "block.h"},
    {"block", "block_unplug", "block_unplug", {{kNone, kNone}}, "block.h"},
    {"block", "block_split", "block_split", {{kNone, kNone}}, "block.h"},
    {"block", "block_bio_remap", "block_bio_remap", {{kNone, kNone}}, "block.h"},
    {"block", "block_rq_remap", "block_rq_remap", {{kNone, kNone}}, "block.h"},
    {"block", "block_dirty_buffer", "block_dirty_buffer", {{kNone, kNone}}, "block.h"},
    {"block", "block_touch_buffer", "block_touch_buffer", {{kNone, kNone}}, "block.h"},
    // kmem.h: the kmalloc/kfree and page events get a kmem_ prefix there
    // (kmem_cache_* keep their names).
    {"kmem", "kmalloc", "kmem_kmalloc", {{kNone, kNone}}, "kmem.h"},
    {"kmem", "kmalloc_node", "kmem_kmalloc_node", {{kNone, kNone}}, "kmem.h"},
    {"kmem", "kfree", "kmem_kfree", {{kNone, kNone}}, "kmem.h"},
    {"kmem", "mm_page_free", "kmem_mm_page_free", {{kNone, kNone}}, "kmem.h"},
    {"kmem", "mm_page_free_batched", "kmem_mm_page_free_batched", {{kNone, kNone}}, "kmem.h"},
    {"kmem", "mm_page_alloc", "kmem_mm_page_alloc", {{kNone, kNone}}, "kmem.h"},
    {"kmem", "mm_page_alloc_zone_locked", "kmem_mm_page_alloc_zone_locked", {{kNone, kNone}}, "kmem.h"},
    {"kmem", "mm_page_pcpu_drain", "kmem_mm_page_pcpu_drain", {{kNone, kNone}}, "kmem.h"},
    {"kmem", "mm_page_alloc_extfrag", "kmem_mm_page_alloc_extfrag", {{kNone, kNone}}, "kmem.h"},
};
// clang-format on

constexpr std::string_view kSyscallSource = "lttng-syscalls.c";

} // namespace

std::string LttngNaming::fieldName(std::string_view field) const {
    for (const auto& [from, to] : fieldRenames)
        if (from == field)
            return to;
    return std::string(field);
}

bool LttngNaming::isDropped(std::string_view field) const {
    return std::find(droppedFields.begin(), droppedFields.end(), field) != droppedFields.end();
}

LttngNaming lttngNaming(std::string_view system, std::string_view event) {
    LttngNaming out;
    for (const Row& row : kTable) {
        if (row.system != system || row.event != event)
            continue;
        out.eventName = std::string(row.lttngName);
        for (const Rename& r : row.renames)
            if (!r.from.empty())
                out.fieldRenames.emplace_back(std::string(r.from), std::string(r.to));
        out.source = std::string(row.source);
        return out;
    }
    if (system == "syscalls") {
        for (const auto& [prefix, lttng] :
             {std::pair<std::string_view, std::string_view>{"sys_enter_", "syscall_entry_"},
              {"sys_exit_", "syscall_exit_"}}) {
            if (event.size() > prefix.size() && event.substr(0, prefix.size()) == prefix) {
                out.eventName = std::string(lttng) + std::string(event.substr(prefix.size()));
                out.droppedFields.emplace_back("__syscall_nr");
                out.source = std::string(kSyscallSource);
                return out;
            }
        }
    }
    if (system.rfind("tracectl_", 0) == 0) {
        // A session's userspace probe (uprobe_events, group tracectl_<id>):
        // lttng-modules' uprobe event (src/probes/lttng-uprobes.c) is the
        // name given with one field, `ip` (unsigned long, hex); a return
        // probe (ours; lttng-modules' kretprobe exit event has these two)
        // names the function `ip` and where it returns to `parent_ip`.
        out.eventName = std::string(event);
        out.fieldRenames = {
            {"__probe_ip", "ip"}, {"__probe_func", "ip"}, {"__probe_ret_ip", "parent_ip"}};
        out.source = "lttng-uprobes.c";
        return out;
    }
    if (system == "raw_syscalls" && (event == "sys_enter" || event == "sys_exit")) {
        out.eventName = event == "sys_enter" ? "syscall_entry_unknown" : "syscall_exit_unknown";
        out.source = std::string(kSyscallSource);
        return out;
    }
    out.eventName = std::string(event);
    return out;
}

std::vector<std::string>
assignEventNames(const std::vector<std::pair<std::string, std::string>>& events,
                 const std::vector<std::string>& reserved) {
    std::set<std::string> taken(reserved.begin(), reserved.end());
    std::vector<std::string> out;
    out.reserve(events.size());
    for (const auto& [system, event] : events) {
        std::string name = lttngNaming(system, event).eventName;
        if (taken.count(name)) {
            const std::string prefixed = system + "_" + name;
            name = prefixed;
            for (unsigned i = 2; taken.count(name); ++i)
                name = prefixed + "_" + std::to_string(i);
        }
        taken.insert(name);
        out.push_back(std::move(name));
    }
    return out;
}

std::string lttngNamesTable() {
    std::string out;
    for (const Row& row : kTable) {
        out += std::string(row.system) + ":" + std::string(row.event) + " -> " +
               std::string(row.lttngName);
        bool first = true;
        for (const Rename& r : row.renames) {
            if (r.from.empty())
                continue;
            out += first ? " (" : ", ";
            out += std::string(r.from) + " -> " + std::string(r.to);
            first = false;
        }
        if (!first)
            out += ")";
        out += "  [lttng-modules " + std::string(row.source) + "]\n";
    }
    out += "syscalls:sys_enter_<name> -> syscall_entry_<name> [drops __syscall_nr]  "
           "[lttng-modules lttng-syscalls.c]\n"
           "syscalls:sys_exit_<name> -> syscall_exit_<name> [drops __syscall_nr]  "
           "[lttng-modules lttng-syscalls.c]\n"
           "raw_syscalls:sys_enter -> syscall_entry_unknown  [lttng-modules lttng-syscalls.c]\n"
           "raw_syscalls:sys_exit -> syscall_exit_unknown  [lttng-modules lttng-syscalls.c]\n"
           "any other system:event -> event (ftrace's field names); a name already taken "
           "in the channel -> system_event\n";
    return out;
}

} // namespace tracectl::kernel
