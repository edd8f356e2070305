// Where the kernel consumer gets the executable file mappings of the processes in user
// stacks (symbols/proc_maps.hpp), so that it writes into the trace the ones a
// callstack-user stack needs: kernel_records' tracectl_vm_map events. A reader names a
// user address by the mapping that holds it (file, offset in the file) and the file's ELF
// symbols. lttng-modules records no mappings for its user stacks; LTTng-UST apps have
// lttng_ust_statedump:bin_info.
#pragma once

#include "symbols/proc_maps.hpp"

#include <cstdint>
#include <vector>

namespace tracectl::consumer::kernel {

using UserMapping = symbols::ProcMapping;

/// Where the consumer gets a process's mappings: /proc in the consumer, a table in tests.
class UserMapsSource {
public:
    virtual ~UserMapsSource() = default;
    /// The executable file mappings of process `pid` (a tgid), now; empty when the
    /// process is gone or its maps cannot be read.
    virtual std::vector<UserMapping> read(std::int32_t pid) = 0;
};

/// UserMapsSource over /proc/PID/maps (the consumer runs as root: every process's maps
/// are readable while it lives; a process that has exited has none).
class ProcUserMaps final : public UserMapsSource {
public:
    std::vector<UserMapping> read(std::int32_t pid) override { return symbols::readProcMaps(pid); }
};

} // namespace tracectl::consumer::kernel
