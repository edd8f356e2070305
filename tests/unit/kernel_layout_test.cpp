// lttng-modules 2.13's layout of the events LTTng's analyses read
// (src/daemon/kernel/lttng_kernel_layout.hpp): the TSDL declarations and the
// conversion steps generateKernelMetadata() makes of this kernel's real
// format files (tests/unit/data/kernel), the fallback when a format does not
// fit, and the table's agreement with the names table.
#include "kernel/kernel_metadata.hpp"
#include "kernel/lttng_kernel_layout.hpp"
#include "kernel_fixtures.hpp"

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <set>
#include <sstream>

using namespace tracectl::kernel;
namespace kr = tracectl::kernel_records;
using kr::Step;
using kr::StepKind;

namespace {

std::string integer(int bits, bool isSigned, int base = 10) {
    return "integer { size = " + std::to_string(bits) +
           "; align = 8; signed = " + (isSigned ? "1" : "0") +
           "; encoding = none; base = " + std::to_string(base) + "; }";
}
const std::string i32 = integer(32, true);
const std::string u32 = integer(32, false);
const std::string text = "integer { size = 8; align = 8; signed = 1; encoding = UTF8; base = 10; }";

KernelMetadata metadataOf(const std::vector<KernelEventDescription>& events) {
    KernelTraceDescription t;
    t.hostname = "host";
    t.clock.offset = 0;
    KernelChannelDescription ch;
    ch.name = "channel0";
    ch.events = events;
    t.channels.push_back(ch);
    return generateKernelMetadata(t);
}

// The `fields := struct { ... }` body of event `name`, one "TYPE NAME" per line.
std::string fieldsOf(const std::string& tsdl, const std::string& name) {
    const std::size_t at = tsdl.find("\tname = \"" + name + "\";");
    if (at == std::string::npos)
        return "<no event " + name + ">";
    const std::size_t begin = tsdl.find("fields := struct {\n", at) + 19;
    const std::size_t end = tsdl.find("\t};\n};", begin);
    std::string out;
    for (std::size_t p = begin; p < end;) {
        const std::size_t eol = tsdl.find('\n', p);
        out += tsdl.substr(p + 2, eol - p - 2) + "\n"; // without the two tabs
        p = eol + 1;
    }
    return out;
}

KernelEventDescription event(const char* system, const char* name, std::uint16_t id = 4) {
    return {system, id, ktest::format(name)};
}

} // namespace

TEST(KernelLayout, SchedProcessForkAsLttngModules) {
    const KernelMetadata m = metadataOf({event("sched", "sched_process_fork")});
    EXPECT_EQ(fieldsOf(m.tsdl, "sched_process_fork"),
              text + " _parent_comm[16];\n" + i32 + " _parent_tid;\n" + i32 + " _parent_pid;\n" +
                  u32 + " _parent_ns_inum;\n" + text + " _child_comm[16];\n" + i32 +
                  " _child_tid;\n" + integer(8, false) + " __vtids_length;\n" + i32 +
                  " _vtids[ __vtids_length ];\n" + i32 + " _child_pid;\n" + u32 +
                  " _child_ns_inum;\n");
    // ftrace: parent_comm (__data_loc) 8, parent_pid 12, child_comm 16, child_pid 20.
    EXPECT_EQ(m.channels[0].events[0].conversion.steps,
              (std::vector<Step>{{StepKind::DataLocFixedText, 8, 4, 16},
                                 {StepKind::Copy, 12, 4, 1},
                                 {StepKind::Tgid, 12, 4, 1},
                                 {StepKind::PidNsInum, 12, 4, 1},
                                 {StepKind::DataLocFixedText, 16, 4, 16},
                                 {StepKind::Copy, 20, 4, 1},
                                 {StepKind::Vtids, 20, 4, 1},
                                 {StepKind::Tgid, 20, 4, 1},
                                 {StepKind::PidNsInum, 20, 4, 1}}));
    EXPECT_EQ(m.channels[0].events[0].conversion.minSize, 24u);
}

TEST(KernelLayout, BlockRqIssueHasRwbsBitsAndTid) {
    const KernelMetadata m = metadataOf({event("block", "block_rq_issue")});
    EXPECT_EQ(fieldsOf(m.tsdl, "block_rq_issue"),
              u32 + " _dev;\n" + integer(64, false) + " _sector;\n" + u32 + " _nr_sector;\n" + u32 +
                  " _bytes;\n" + i32 + " _tid;\n" + u32 + " _rwbs;\n" + text + " _comm[16];\n" +
                  integer(16, false) + " _ioprio;\n" + "string _cmd;\n");
    // ftrace: dev 8, sector 16, nr_sector 24, bytes 28, ioprio 32, rwbs[10]
    // 34, comm[16] 44, cmd (__data_loc) 60; common_pid 4.
    EXPECT_EQ(m.channels[0].events[0].conversion.steps,
              (std::vector<Step>{{StepKind::Copy, 8, 4, 1},
                                 {StepKind::Copy, 16, 16, 1},
                                 {StepKind::Copy, 4, 4, 1},
                                 {StepKind::RwbsFlags, 34, 10, 1},
                                 {StepKind::Copy, 44, 16, 1},
                                 {StepKind::Copy, 32, 2, 1},
                                 {StepKind::DataLocString, 60, 4, 1}}));
}

TEST(KernelLayout, BlockRqCompleteSchedAndKmem) {
    const KernelMetadata m = metadataOf(
        {event("block", "block_rq_complete", 4), event("sched", "sched_switch", 5),
         event("sched", "sched_wakeup", 6), event("sched", "sched_migrate_task", 7),
         event("kmem", "mm_page_alloc", 8), event("vmscan", "mm_vmscan_wakeup_kswapd", 9),
         event("sched", "sched_process_exec", 10)});
    EXPECT_EQ(fieldsOf(m.tsdl, "block_rq_complete"),
              u32 + " _dev;\n" + integer(64, false) + " _sector;\n" + u32 + " _nr_sector;\n" + i32 +
                  " _error;\n" + u32 + " _rwbs;\n" + integer(16, false) + " _ioprio;\n" +
                  "string _cmd;\n");
    EXPECT_EQ(fieldsOf(m.tsdl, "sched_switch"),
              text + " _prev_comm[16];\n" + i32 + " _prev_tid;\n" + i32 + " _prev_prio;\n" +
                  integer(64, true) + " _prev_state;\n" + text + " _next_comm[16];\n" + i32 +
                  " _next_tid;\n" + i32 + " _next_prio;\n");
    EXPECT_EQ(m.channels[0].events[1].conversion.steps,
              (std::vector<Step>{{StepKind::Copy, 8, 20, 1},
                                 {StepKind::PrioFromKernel, 28, 4, 1},
                                 {StepKind::Copy, 32, 28, 1},
                                 {StepKind::PrioFromKernel, 60, 4, 1}}));
    EXPECT_EQ(fieldsOf(m.tsdl, "sched_wakeup"), text + " _comm[16];\n" + i32 + " _tid;\n" + i32 +
                                                    " _prio;\n" + i32 + " _target_cpu;\n");
    EXPECT_EQ(fieldsOf(m.tsdl, "sched_migrate_task"), text + " _comm[16];\n" + i32 + " _tid;\n" +
                                                          i32 + " _prio;\n" + i32 +
                                                          " _orig_cpu;\n" + i32 + " _dest_cpu;\n");
    // gfp_t is 32 bits in lttng-modules: ftrace's unsigned long's low half.
    EXPECT_EQ(fieldsOf(m.tsdl, "kmem_mm_page_alloc"), integer(64, false, 16) + " _pfn;\n" + u32 +
                                                          " _order;\n" + u32 + " _gfp_flags;\n" +
                                                          i32 + " _migratetype;\n");
    EXPECT_EQ(m.channels[0].events[4].conversion.steps,
              (std::vector<Step>{{StepKind::Copy, 8, 12, 1},
                                 {StepKind::Copy, 24, 4, 1},
                                 {StepKind::Copy, 32, 4, 1}}));
    EXPECT_EQ(fieldsOf(m.tsdl, "mm_vmscan_wakeup_kswapd"),
              i32 + " _nid;\n" + i32 + " _zid;\n" + i32 + " _order;\n" + u32 + " _gfp_flags;\n");
    EXPECT_EQ(fieldsOf(m.tsdl, "sched_process_exec"),
              "string _filename;\n" + i32 + " _tid;\n" + i32 + " _old_tid;\n");
}

TEST(KernelLayout, SchedPiSetprioHasLttngPriorities) {
    // lttng-analyses reads newprio and tid; both priorities are p->prio - 100.
    const KernelMetadata m = metadataOf({event("sched", "sched_pi_setprio")});
    EXPECT_EQ(fieldsOf(m.tsdl, "sched_pi_setprio"), text + " _comm[16];\n" + i32 + " _tid;\n" +
                                                        i32 + " _oldprio;\n" + i32 +
                                                        " _newprio;\n");
    EXPECT_EQ(m.channels[0].events[0].conversion.steps,
              (std::vector<Step>{{StepKind::DataLocFixedText, 8, 4, 16},
                                 {StepKind::Copy, 12, 4, 1},
                                 {StepKind::PrioFromKernel, 16, 4, 1},
                                 {StepKind::PrioFromKernel, 20, 4, 1}}));
}

TEST(KernelLayout, FormatThatDoesNotFitKeepsTheGenericLayout) {
    // A kernel whose sched_process_fork has no child_pid: no lttng-modules
    // fields can be made, so ftrace's own (renamed) layout stays.
    EventFormat f = ktest::format("sched_process_fork");
    std::erase_if(f.fields, [](const FormatField& x) { return x.name == "child_pid"; });
    KernelMetadata m = metadataOf({{"sched", 4, f}});
    EXPECT_EQ(fieldsOf(m.tsdl, "sched_process_fork"),
              "string _parent_comm;\n" + i32 + " _parent_tid;\nstring _child_comm;\n");
    // An rwbs that is no char array is not converted either.
    f = ktest::format("block_rq_issue");
    for (FormatField& x : f.fields)
        if (x.name == "rwbs")
            x = parseFieldLine("\tfield:unsigned int rwbs;\toffset:36;\tsize:4;\tsigned:0;");
    m = metadataOf({{"block", 4, f}});
    EXPECT_EQ(fieldsOf(m.tsdl, "block_rq_issue").find(" _tid;"), std::string::npos);
    for (const Step& s : m.channels[0].events[0].conversion.steps)
        EXPECT_NE(s.kind, StepKind::RwbsFlags);
}

TEST(KernelLayout, CommArraysAreKeptWhereFtraceHasThem) {
    // An older kernel's sched_process_fork with char[16] comms: copied as they are.
    EventFormat f = ktest::format("sched_process_fork");
    f.fields.clear();
    for (const char* line : {"\tfield:char parent_comm[16];\toffset:8;\tsize:16;\tsigned:0;",
                             "\tfield:pid_t parent_pid;\toffset:24;\tsize:4;\tsigned:1;",
                             "\tfield:char child_comm[16];\toffset:28;\tsize:16;\tsigned:0;",
                             "\tfield:pid_t child_pid;\toffset:44;\tsize:4;\tsigned:1;"})
        f.fields.push_back(parseFieldLine(line));
    const KernelMetadata m = metadataOf({{"sched", 4, f}});
    EXPECT_EQ(m.channels[0].events[0].conversion.steps.front(), (Step{StepKind::Copy, 8, 20, 1}));
    EXPECT_NE(fieldsOf(m.tsdl, "sched_process_fork").find(text + " _parent_comm[16];\n"),
              std::string::npos);
}

TEST(KernelLayout, AgreesWithTheNamesTable) {
    // Every layout is of an event the names table lists (its trace name and
    // lttng-modules file), once; renamed fields keep the table's names.
    std::set<std::pair<std::string_view, std::string_view>> seen;
    for (const LttngLayout& l : lttngLayouts()) {
        SCOPED_TRACE(std::string(l.system) + ":" + std::string(l.event));
        EXPECT_TRUE(seen.insert({l.system, l.event}).second);
        const LttngNaming n = lttngNaming(l.system, l.event);
        EXPECT_EQ(n.source, l.source);
        EXPECT_FALSE(l.fields.empty());
        for (const LayoutField& f : l.fields) {
            if (f.kind == LayoutKind::Same && f.source != "common_pid") {
                EXPECT_EQ(n.fieldName(f.source), f.name) << f.source;
            }
        }
        EXPECT_EQ(lttngLayout(l.system, l.event), &l);
    }
    EXPECT_EQ(lttngLayout("sched", "sched_stat_runtime"), nullptr);
    EXPECT_EQ(lttngLayout("syscalls", "sys_enter_write"), nullptr);
}

TEST(KernelLayout, EveryAnalysesRecordEventHasALayout) {
    // lttng-analyses-record's kernel events (ftrace's names), plus
    // sched_process_exit, sched_wakeup_new and sched_migrate_task.
    for (const auto& [system, event] : std::vector<std::pair<const char*, const char*>>{
             {"sched", "sched_switch"},        {"sched", "sched_wakeup"},
             {"sched", "sched_waking"},        {"block", "block_rq_complete"},
             {"block", "block_rq_issue"},      {"block", "block_bio_remap"},
             {"block", "block_bio_backmerge"}, {"net", "netif_receive_skb"},
             {"net", "net_dev_xmit"},          {"sched", "sched_process_fork"},
             {"sched", "sched_process_exec"},  {"vmscan", "mm_vmscan_wakeup_kswapd"},
             {"kmem", "mm_page_free"},         {"kmem", "mm_page_alloc"},
             {"block", "block_dirty_buffer"},  {"irq", "irq_handler_entry"},
             {"irq", "irq_handler_exit"},      {"irq", "softirq_entry"},
             {"irq", "softirq_exit"},          {"irq", "softirq_raise"},
             {"sched", "sched_process_exit"},  {"sched", "sched_wakeup_new"},
             {"sched", "sched_migrate_task"}})
        EXPECT_NE(lttngLayout(system, event), nullptr) << system << ":" << event;
}

TEST(KernelLayout, TableHasARowPerLayout) {
    const std::string table = lttngLayoutTable();
    EXPECT_EQ(static_cast<std::size_t>(std::count(table.begin(), table.end(), '\n')),
              lttngLayouts().size() + 2);
    EXPECT_NE(table.find("| sched:sched_process_fork | sched_process_fork (sched.h) | "
                         "~parent_comm (as char[16] parent_comm), =parent_tid (parent_pid), "
                         "~parent_pid (tgid of parent_pid)"),
              std::string::npos)
        << table;
    EXPECT_NE(table.find("~rwbs (rwbs text -> RWBS_FLAG_* bits rwbs)"), std::string::npos);
    EXPECT_NE(table.find("| kmem:mm_page_alloc | kmem_mm_page_alloc (kmem.h) |"),
              std::string::npos);
}

TEST(KernelLayout, TheManPageHasARowPerEvent) {
    // man/tracectl-kernel.7's table: every layout's ftrace event and trace
    // name, on consecutive lines of its event column.
    const char* dir = std::getenv("MAN_DIR");
    if (dir == nullptr)
        GTEST_SKIP() << "MAN_DIR is set under meson test";
    std::ifstream in(std::string(dir) + "/tracectl-kernel.7");
    ASSERT_TRUE(in) << dir;
    std::stringstream text;
    text << in.rdbuf();
    const std::string page = text.str();
    for (const LttngLayout& l : lttngLayouts()) {
        const std::string row = std::string(l.system) + ":" + std::string(l.event) +
                                " \\(->\n.br\n" + lttngNaming(l.system, l.event).eventName + " (" +
                                std::string(l.source) + ")";
        const bool listed = page.find(row) != std::string::npos;
        // Or named among those that share a row's layout (.B or .BR NAME).
        const std::string name = lttngNaming(l.system, l.event).eventName;
        const bool named = page.find(".B " + name + "\n") != std::string::npos ||
                           page.find(".BR " + name + " ") != std::string::npos;
        EXPECT_TRUE(listed || named) << row;
    }
}
