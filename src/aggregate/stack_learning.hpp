// What a trace tells of the names of its call stacks' addresses, taken from its records
// as the reader meets them: tracectl_kernel_symbol, tracectl_vm_map and tracectl_thread
// events (common/kernel_records.hpp; the kernel consumer writes them before the first record of
// a stream, in each chunk, that needs them), into symbols::StackNames.
#pragma once

#include "symbols/stack_names.hpp"

#include <babeltrace2/babeltrace.h>
#include <string_view>

namespace tracectl::aggregate {

/// Whether records of the event class named `name` tell names (see above).
bool tellsStackNames(std::string_view name) noexcept;

/// Learns what `event` (of a class tellsStackNames() accepts) tells into `names`. A
/// record without the expected fields is ignored.
void learnStackNames(const bt_event* event, symbols::StackNames& names);

} // namespace tracectl::aggregate
