#include "lttng_kernel_layout.hpp"

#include "lttng_kernel_names.hpp"

#include <array>

namespace tracectl::kernel {

namespace {

using K = LayoutKind;

// sched.h (kernels >= 5.18): sched_switch.
constexpr LayoutField kSchedSwitch[] = {
    {"prev_comm", "prev_comm", K::Same}, {"prev_tid", "prev_pid", K::Same},
    {"prev_prio", "prev_prio", K::Prio}, {"prev_state", "prev_state", K::Same},
    {"next_comm", "next_comm", K::Same}, {"next_tid", "next_pid", K::Same},
    {"next_prio", "next_prio", K::Prio},
};
// sched.h sched_wakeup_template (sched_waking, sched_wakeup,
// sched_wakeup_new): target_cpu is task_cpu(p), as ftrace's.
constexpr LayoutField kSchedWakeup[] = {
    {"comm", "comm", K::Same},
    {"tid", "pid", K::Same},
    {"prio", "prio", K::Prio},
    {"target_cpu", "target_cpu", K::Same},
};
constexpr LayoutField kSchedMigrateTask[] = {
    {"comm", "comm", K::CommText},     {"tid", "pid", K::Same},           {"prio", "prio", K::Prio},
    {"orig_cpu", "orig_cpu", K::Same}, {"dest_cpu", "dest_cpu", K::Same},
};
// sched.h (kernels >= 6.16): sched_process_exit has group_dead.
constexpr LayoutField kSchedProcessExit[] = {
    {"comm", "comm", K::Same},
    {"tid", "pid", K::Same},
    {"prio", "prio", K::Prio},
    {"group_dead", "group_dead", K::Same},
};
// sched.h sched_process_template (sched_process_free, sched_wait_task)
// and sched_process_wait, whose comm this kernel's ftrace keeps as a string.
constexpr LayoutField kSchedProcessTemplate[] = {
    {"comm", "comm", K::CommText},
    {"tid", "pid", K::Same},
    {"prio", "prio", K::Prio},
};
// sched.h (kernels >= 4.12) sched_pi_setprio. ftrace's newprio is
// min(normal_prio, the donor's prio) where lttng-modules takes the donor's
// prio: the same but when the donor's is the larger.
constexpr LayoutField kSchedPiSetprio[] = {
    {"comm", "comm", K::CommText},
    {"tid", "pid", K::Same},
    {"oldprio", "oldprio", K::Prio},
    {"newprio", "newprio", K::Prio},
};
// sched.h sched_process_fork: the tgids, namespace inodes and vtids are
// computed by the consumer from the tids ftrace records.
constexpr LayoutField kSchedProcessFork[] = {
    {"parent_comm", "parent_comm", K::CommText},
    {"parent_tid", "parent_pid", K::Same},
    {"parent_pid", "parent_pid", K::Tgid},
    {"parent_ns_inum", "parent_pid", K::PidNsInum},
    {"child_comm", "child_comm", K::CommText},
    {"child_tid", "child_pid", K::Same},
    {"vtids", "child_pid", K::Vtids},
    {"child_pid", "child_pid", K::Tgid},
    {"child_ns_inum", "child_pid", K::PidNsInum},
};
constexpr LayoutField kSchedProcessExec[] = {
    {"filename", "filename", K::Same},
    {"tid", "pid", K::Same},
    {"old_tid", "old_pid", K::Same},
};
// block.h (kernels >= 5.17): dev is the kernel's dev_t (major << 20 |
// minor) in both tracers.
constexpr LayoutField kBlockRqComplete[] = {
    {"dev", "dev", K::Same},     {"sector", "sector", K::Same}, {"nr_sector", "nr_sector", K::Same},
    {"error", "error", K::Same}, {"rwbs", "rwbs", K::Rwbs},
};
constexpr LayoutField kBlockRq[] = {
    {"dev", "dev", K::Same},
    {"sector", "sector", K::Same},
    {"nr_sector", "nr_sector", K::Same},
    {"bytes", "bytes", K::Same},
    {"tid", "common_pid", K::Same},
    {"rwbs", "rwbs", K::Rwbs},
    {"comm", "comm", K::Same},
};
constexpr LayoutField kBlockBio[] = {
    {"dev", "dev", K::Same},   {"sector", "sector", K::Same},  {"nr_sector", "nr_sector", K::Same},
    {"rwbs", "rwbs", K::Rwbs}, {"tid", "common_pid", K::Same}, {"comm", "comm", K::Same},
};
constexpr LayoutField kBlockBioRemap[] = {
    {"dev", "dev", K::Same},
    {"sector", "sector", K::Same},
    {"nr_sector", "nr_sector", K::Same},
    {"rwbs", "rwbs", K::Rwbs},
    {"old_dev", "old_dev", K::Same},
    {"old_sector", "old_sector", K::Same},
};
constexpr LayoutField kBlockBuffer[] = {
    {"dev", "dev", K::Same},
    {"sector", "sector", K::Same},
    {"size", "size", K::Same},
};
// net.h
constexpr LayoutField kNetDevXmit[] = {
    {"skbaddr", "skbaddr", K::Same},
    {"rc", "rc", K::Same},
    {"len", "len", K::Same},
    {"name", "name", K::Same},
};
constexpr LayoutField kNetDevTemplate[] = {
    {"skbaddr", "skbaddr", K::Same},
    {"len", "len", K::Same},
    {"name", "name", K::Same},
};
// irq.h
constexpr LayoutField kIrqHandlerEntry[] = {{"irq", "irq", K::Same}, {"name", "name", K::Same}};
constexpr LayoutField kIrqHandlerExit[] = {{"irq", "irq", K::Same}, {"ret", "ret", K::Same}};
constexpr LayoutField kSoftirq[] = {{"vec", "vec", K::Same}};
// kmem.h
constexpr LayoutField kMmPageFree[] = {{"pfn", "pfn", K::Same}, {"order", "order", K::Same}};
constexpr LayoutField kMmPageAlloc[] = {
    {"pfn", "pfn", K::Same},
    {"order", "order", K::Same},
    {"gfp_flags", "gfp_flags", K::LowU32},
    {"migratetype", "migratetype", K::Same},
};
// mm_vmscan.h (kernels >= 4.8)
constexpr LayoutField kWakeupKswapd[] = {
    {"nid", "nid", K::Same},
    {"zid", "zid", K::Same},
    {"order", "order", K::Same},
    {"gfp_flags", "gfp_flags", K::LowU32},
};

constexpr std::string_view kNoNetworkHeader =
    "network_header_type and the network_header variant (the packet's IPv4/IPv6 and "
    "transport headers: ftrace records no packet bytes; the ip provider, tracectl-ip(7), "
    "has them)";
constexpr std::string_view kNoPage =
    "page (the struct page address: ftrace records only pfn, and the address depends on "
    "the kernel's vmemmap base)";
constexpr std::string_view kBlockRqExtras =
    "ioprio (the request's I/O priority), cmd (the SCSI command of a passthrough request, "
    "as a string)";

constexpr LttngLayout kLayouts[] = {
    {"sched", "sched_switch", "sched.h", kSchedSwitch, "", ""},
    {"sched", "sched_wakeup", "sched.h", kSchedWakeup, "", ""},
    {"sched", "sched_waking", "sched.h", kSchedWakeup, "", ""},
    {"sched", "sched_wakeup_new", "sched.h", kSchedWakeup, "", ""},
    {"sched", "sched_migrate_task", "sched.h", kSchedMigrateTask, "", ""},
    {"sched", "sched_process_fork", "sched.h", kSchedProcessFork, "", ""},
    {"sched", "sched_process_exec", "sched.h", kSchedProcessExec, "", ""},
    {"sched", "sched_process_exit", "sched.h", kSchedProcessExit, "", ""},
    {"sched", "sched_process_free", "sched.h", kSchedProcessTemplate, "", ""},
    {"sched", "sched_wait_task", "sched.h", kSchedProcessTemplate, "", ""},
    {"sched", "sched_process_wait", "sched.h", kSchedProcessTemplate, "", ""},
    {"sched", "sched_pi_setprio", "sched.h", kSchedPiSetprio, "", ""},
    {"block", "block_rq_complete", "block.h", kBlockRqComplete, "", kBlockRqExtras},
    {"block", "block_rq_issue", "block.h", kBlockRq, "", kBlockRqExtras},
    {"block", "block_rq_insert", "block.h", kBlockRq, "", kBlockRqExtras},
    {"block", "block_bio_remap", "block.h", kBlockBioRemap, "", ""},
    {"block", "block_bio_backmerge", "block.h", kBlockBio, "", ""},
    {"block", "block_bio_frontmerge", "block.h", kBlockBio, "", ""},
    {"block", "block_bio_queue", "block.h", kBlockBio, "", ""},
    {"block", "block_dirty_buffer", "block.h", kBlockBuffer, "", ""},
    {"block", "block_touch_buffer", "block.h", kBlockBuffer, "", ""},
    {"net", "netif_receive_skb", "net.h", kNetDevTemplate, kNoNetworkHeader, ""},
    {"net", "net_dev_queue", "net.h", kNetDevTemplate, kNoNetworkHeader, ""},
    {"net", "netif_rx", "net.h", kNetDevTemplate, kNoNetworkHeader, ""},
    {"net", "net_dev_xmit", "net.h", kNetDevXmit, "", ""},
    {"irq", "irq_handler_entry", "irq.h", kIrqHandlerEntry, "", ""},
    {"irq", "irq_handler_exit", "irq.h", kIrqHandlerExit, "", ""},
    {"irq", "softirq_entry", "irq.h", kSoftirq, "", ""},
    {"irq", "softirq_exit", "irq.h", kSoftirq, "", ""},
    {"irq", "softirq_raise", "irq.h", kSoftirq, "", ""},
    {"kmem", "mm_page_alloc", "kmem.h", kMmPageAlloc, kNoPage, ""},
    {"kmem", "mm_page_free", "kmem.h", kMmPageFree, kNoPage, ""},
    {"vmscan", "mm_vmscan_wakeup_kswapd", "mm_vmscan.h", kWakeupKswapd, "", ""},
};

std::string_view kindText(LayoutKind k) {
    switch (k) {
    case K::Same:
        return "";
    case K::Rwbs:
        return "rwbs text -> RWBS_FLAG_* bits";
    case K::Prio:
        return "prio - 100";
    case K::Tgid:
        return "tgid of";
    case K::PidNsInum:
        return "pid ns inode of";
    case K::Vtids:
        return "ids in each pid ns of";
    case K::CommText:
        return "as char[16]";
    case K::LowU32:
        return "u64 -> u32";
    }
    return "";
}

} // namespace

const LttngLayout* lttngLayout(std::string_view system, std::string_view event) {
    for (const LttngLayout& l : kLayouts)
        if (l.system == system && l.event == event)
            return &l;
    return nullptr;
}

std::span<const LttngLayout> lttngLayouts() {
    return kLayouts;
}

std::string lttngLayoutTable() {
    std::string out = "| ftrace event | trace event (lttng-modules file) | lttng-modules fields: "
                      "= as ftrace has it, ~ converted (from) | missing | ftrace's extras |\n"
                      "|---|---|---|---|---|\n";
    for (const LttngLayout& l : kLayouts) {
        out += "| " + std::string(l.system) + ":" + std::string(l.event) + " | " +
               lttngNaming(l.system, l.event).eventName + " (" + std::string(l.source) + ") | ";
        bool first = true;
        for (const LayoutField& f : l.fields) {
            out += first ? "" : ", ";
            first = false;
            const bool same = f.kind == K::Same;
            if (same) {
                out += "=" + std::string(f.name);
                if (f.source != f.name)
                    out += " (" + std::string(f.source) + ")";
            } else {
                out += "~" + std::string(f.name) + " (" + std::string(kindText(f.kind)) + " " +
                       std::string(f.source) + ")";
            }
        }
        out += " | " + std::string(l.missing.empty() ? "-" : l.missing) + " | " +
               std::string(l.extras.empty() ? "-" : l.extras) + " |\n";
    }
    return out;
}

} // namespace tracectl::kernel
