// The executable file mappings of a process, as /proc/PID/maps shows them (fs/proc/
// task_mmu.c show_map_vma): what names a user address (the file, and the offset in it).
// Read by the kernel consumer for its tracectl_vm_map events (common/kernel_records.hpp)
// and by tracectl dtrace for its target.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tracectl::symbols {

/// One line of /proc/PID/maps: the virtual range [start, end) maps the file `path` from
/// byte `pgoff` on.
struct ProcMapping {
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    std::uint64_t pgoff = 0; ///< the file offset of `start`, in bytes
    std::string path;        ///< absolute; " (deleted)" kept as /proc shows it
    bool operator==(const ProcMapping&) const = default;
};

/// The executable (`x`), file-backed (a path beginning with '/') mappings of
/// /proc/PID/maps' `text`, in its order. Malformed lines are skipped.
std::vector<ProcMapping> parseProcMaps(std::string_view text);

/// parseProcMaps of /proc/`pid`/maps now; empty when the process is gone (or a zombie:
/// its memory is released at exit) or its maps cannot be read (ptrace access mode).
std::vector<ProcMapping> readProcMaps(std::int32_t pid);

} // namespace tracectl::symbols
