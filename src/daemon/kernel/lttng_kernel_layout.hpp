// lttng-modules 2.13's field layout of the kernel events LTTng's analyses
// read (lttng-analyses-record's list, plus sched_process_exit,
// sched_wakeup_new and sched_migrate_task): for each, lttng-modules' fields
// in its order (include/instrumentation/events/<source>, the branch for
// kernels >= 6.x) and the ftrace field each is made from, with the
// conversion when ftrace records the value in another form.
//
// kernel_metadata.cpp lays such an event out in this order; the ftrace
// fields no layout field reads follow, in ftrace's order and with ftrace's
// names (each listed in `extras` with what it is). An event whose format
// lacks a source field, or has it in a shape the conversion does not take,
// keeps the generic layout (ftrace's fields renamed by
// lttng_kernel_names.hpp).
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace tracectl::kernel {

/// How one lttng-modules field is made from its ftrace source field.
enum class LayoutKind {
    /// The ftrace field as it is (its type lowered as kernel_metadata.hpp
    /// says), under lttng-modules' name. A source of `common_pid` is the
    /// thread that hit the tracepoint (lttng-modules' current->pid).
    Same,
    /// char[N] rwbs text -> u32 RWBS_FLAG_* bits (StepKind::RwbsFlags).
    Rwbs,
    /// i32 p->prio -> i32 p->prio - MAX_RT_PRIO (StepKind::PrioFromKernel).
    Prio,
    /// i32 tid -> i32 its thread group id (StepKind::Tgid).
    Tgid,
    /// i32 tid -> u32 inode of its pid namespace (StepKind::PidNsInum).
    PidNsInum,
    /// i32 tid -> u8 `_vtids_length`, i32 vtids[] (StepKind::Vtids).
    Vtids,
    /// __data_loc char[] -> char[16] text (StepKind::DataLocFixedText); a
    /// source that is already a char array is kept as it is.
    CommText,
    /// 8-byte `unsigned long` -> u32 (its low half, a Copy): lttng-modules'
    /// gfp_t, which the kernel declares as unsigned int.
    LowU32,
};

struct LayoutField {
    std::string_view name;   ///< lttng-modules' field name
    std::string_view source; ///< the ftrace field it is made from
    LayoutKind kind = LayoutKind::Same;
};

/// One event's layout.
struct LttngLayout {
    std::string_view system, event; ///< ftrace's names
    std::string_view source;        ///< lttng-modules file, e.g. "sched.h"
    std::span<const LayoutField> fields;
    /// lttng-modules fields the trace does not have, and why ("" if none).
    std::string_view missing;
    /// ftrace fields kept after lttng-modules' ones ("" if none).
    std::string_view extras;
};

/// The layout of ftrace event `system`:`event`, or nullptr when it has
/// none (it keeps the generic layout). Never throws.
const LttngLayout* lttngLayout(std::string_view system, std::string_view event);

/// Every layout, in the table's order.
std::span<const LttngLayout> lttngLayouts();

/// The documentation table (Markdown): one row per event with a layout:
/// ftrace's name, the trace's name, lttng-modules' fields marked as they
/// are made (= as ftrace has it, a conversion, or missing), and ftrace's
/// extras. '\n' separated, ending with '\n'.
std::string lttngLayoutTable();

} // namespace tracectl::kernel
