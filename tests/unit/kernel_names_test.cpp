// ftrace -> lttng-modules 2.13 names (src/daemon/kernel/lttng_kernel_names.hpp).
#include "kernel/lttng_kernel_names.hpp"
#include "kernel/statedump_events.hpp"

#include <gtest/gtest.h>

using namespace tracectl::kernel;

namespace {

using Renames = std::vector<std::pair<std::string, std::string>>;

TEST(KernelNames, Sched) {
    const LttngNaming s = lttngNaming("sched", "sched_switch");
    EXPECT_EQ(s.eventName, "sched_switch");
    EXPECT_EQ(s.fieldRenames, (Renames{{"prev_pid", "prev_tid"}, {"next_pid", "next_tid"}}));
    EXPECT_EQ(s.fieldName("prev_pid"), "prev_tid");
    EXPECT_EQ(s.fieldName("prev_comm"), "prev_comm");
    EXPECT_EQ(s.source, "sched.h");
    for (const char* e : {"sched_wakeup", "sched_waking", "sched_wakeup_new", "sched_process_exit",
                          "sched_process_free", "sched_process_wait", "sched_migrate_task",
                          "sched_stat_runtime", "sched_pi_setprio"})
        EXPECT_EQ(lttngNaming("sched", e).fieldName("pid"), "tid") << e;
    EXPECT_EQ(lttngNaming("sched", "sched_process_fork").fieldRenames,
              (Renames{{"parent_pid", "parent_tid"}, {"child_pid", "child_tid"}}));
    EXPECT_EQ(lttngNaming("sched", "sched_process_exec").fieldRenames,
              (Renames{{"pid", "tid"}, {"old_pid", "old_tid"}}));
}

TEST(KernelNames, IrqNetTimer) {
    EXPECT_EQ(lttngNaming("irq", "irq_handler_entry").eventName, "irq_handler_entry");
    // lttng-modules irq.h maps the softirq events to irq_softirq_*.
    EXPECT_EQ(lttngNaming("irq", "softirq_entry").eventName, "irq_softirq_entry");
    EXPECT_EQ(lttngNaming("irq", "softirq_raise").eventName, "irq_softirq_raise");
    EXPECT_EQ(lttngNaming("net", "netif_receive_skb").eventName, "net_if_receive_skb");
    EXPECT_EQ(lttngNaming("net", "netif_rx").eventName, "net_if_rx");
    EXPECT_EQ(lttngNaming("net", "net_dev_xmit").eventName, "net_dev_xmit");
    EXPECT_EQ(lttngNaming("timer", "hrtimer_start").eventName, "timer_hrtimer_start");
    EXPECT_EQ(lttngNaming("timer", "itimer_expire").eventName, "timer_itimer_expire");
    EXPECT_EQ(lttngNaming("timer", "timer_start").eventName, "timer_start");
    EXPECT_TRUE(lttngNaming("timer", "itimer_expire").fieldRenames.empty());
    EXPECT_EQ(lttngNaming("block", "block_rq_issue").eventName, "block_rq_issue");
}

TEST(KernelNames, Syscalls) {
    const LttngNaming in = lttngNaming("syscalls", "sys_enter_write");
    EXPECT_EQ(in.eventName, "syscall_entry_write");
    EXPECT_TRUE(in.isDropped("__syscall_nr"));
    EXPECT_FALSE(in.isDropped("fd"));
    const LttngNaming out = lttngNaming("syscalls", "sys_exit_openat");
    EXPECT_EQ(out.eventName, "syscall_exit_openat");
    EXPECT_TRUE(out.isDropped("__syscall_nr"));
    EXPECT_FALSE(out.isDropped("ret"));
    EXPECT_EQ(lttngNaming("raw_syscalls", "sys_enter").eventName, "syscall_entry_unknown");
    EXPECT_EQ(lttngNaming("raw_syscalls", "sys_exit").eventName, "syscall_exit_unknown");
    // Only the syscalls system follows the rule.
    EXPECT_EQ(lttngNaming("other", "sys_enter_write").eventName, "sys_enter_write");
    EXPECT_EQ(lttngNaming("syscalls", "sys_enter_").eventName, "sys_enter_");
}

TEST(KernelNames, Kmem) {
    // lttng-modules kmem.h prefixes the kmalloc/kfree and page events.
    EXPECT_EQ(lttngNaming("kmem", "mm_page_alloc").eventName, "kmem_mm_page_alloc");
    EXPECT_EQ(lttngNaming("kmem", "mm_page_free").eventName, "kmem_mm_page_free");
    EXPECT_EQ(lttngNaming("kmem", "kmalloc").eventName, "kmem_kmalloc");
    EXPECT_EQ(lttngNaming("kmem", "kfree").eventName, "kmem_kfree");
    EXPECT_EQ(lttngNaming("kmem", "mm_page_alloc").source, "kmem.h");
    EXPECT_EQ(lttngNaming("kmem", "kmem_cache_alloc").eventName, "kmem_cache_alloc");
}

TEST(KernelNames, OutsideTheTable) {
    const LttngNaming n = lttngNaming("kmem", "kmem_cache_alloc");
    EXPECT_EQ(n.eventName, "kmem_cache_alloc");
    EXPECT_TRUE(n.fieldRenames.empty());
    EXPECT_TRUE(n.droppedFields.empty());
    EXPECT_TRUE(n.source.empty());
}

TEST(KernelNames, CollisionsGetTheSystemPrefix) {
    const std::vector<std::string> names = assignEventNames({{"sched", "sched_switch"},
                                                             {"other", "sched_switch"},
                                                             {"a", "x"},
                                                             {"b", "x"},
                                                             {"b", "x"},
                                                             {"c", "lttng_statedump_start"}},
                                                            {"lttng_statedump_start"});
    EXPECT_EQ(names, (std::vector<std::string>{"sched_switch", "other_sched_switch", "x", "b_x",
                                               "b_x_2", "c_lttng_statedump_start"}));
}

TEST(KernelNames, TableText) {
    const std::string t = lttngNamesTable();
    EXPECT_NE(t.find("sched:sched_switch -> sched_switch (prev_pid -> prev_tid, next_pid -> "
                     "next_tid)  [lttng-modules sched.h]\n"),
              std::string::npos);
    EXPECT_NE(t.find("net:netif_receive_skb -> net_if_receive_skb  [lttng-modules net.h]\n"),
              std::string::npos);
    EXPECT_NE(t.find("syscalls:sys_enter_<name> -> syscall_entry_<name>"), std::string::npos);
}

// lttng-modules' statedump events (src/daemon/kernel/statedump_events.hpp).
std::vector<std::string> statedumpNames(std::string_view pattern) {
    const auto found = matchStatedumpEvents(pattern);
    return {found.begin(), found.end()};
}

TEST(KernelStatedumpEvents, AreLttngModulesListWithWhatIsWritten) {
    std::vector<std::string> all, written;
    for (const StatedumpEventInfo& e : statedumpEventInfos()) {
        all.emplace_back(e.name);
        if (e.written)
            written.emplace_back(e.name);
    }
    EXPECT_EQ(all.size(), 17u);
    EXPECT_EQ(written, (std::vector<std::string>{
                           "lttng_statedump_start", "lttng_statedump_end",
                           "lttng_statedump_process_state", "lttng_statedump_file_descriptor",
                           "lttng_statedump_network_interface", "lttng_statedump_block_device",
                           "lttng_statedump_interrupt", "lttng_statedump_cpu_topology"}));
    for (const StatedumpEventInfo& e : statedumpEventInfos()) {
        if (e.name == "lttng_statedump_block_device") {
            EXPECT_EQ(e.fields, (std::vector<std::pair<std::string_view, std::string_view>>{
                                    {"dev", "dev_t"}, {"diskname", "string"}}));
        }
    }
}

TEST(KernelStatedumpEvents, MatchByNameOrSystemWithGlobs) {
    EXPECT_EQ(statedumpNames("lttng_statedump_process_state"),
              (std::vector<std::string>{"lttng_statedump_process_state"}));
    EXPECT_EQ(statedumpNames("lttng_statedump_block_device"),
              (std::vector<std::string>{"lttng_statedump_block_device"}));
    EXPECT_EQ(statedumpNames("lttng_statedump_*").size(), 17u);
    EXPECT_EQ(statedumpNames("*").size(), 17u);
    EXPECT_EQ(statedumpNames("lttng_statedump:*").size(), 17u);
    EXPECT_EQ(statedumpNames("*:*").size(), 17u);
    EXPECT_EQ(statedumpNames("lttng_statedump:lttng_statedump_end"),
              (std::vector<std::string>{"lttng_statedump_end"}));
    EXPECT_EQ(statedumpNames("lttng_statedump_process_*_ns").size(), 8u);
    EXPECT_TRUE(statedumpNames("sched_switch").empty());
    EXPECT_TRUE(statedumpNames("sched:*").empty());
    EXPECT_TRUE(statedumpNames("lttng_statedump_nope").empty());
    EXPECT_TRUE(statedumpNames("statedump:lttng_statedump_end").empty());
}

} // namespace
