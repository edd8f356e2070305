// A userspace probe's location (session/channel_config.hpp's
// EventRule::userspaceProbe) resolved for the D-Bus caller who asked for
// it: the file opened through the caller's mount namespace
// (/proc/PID/root/PATH, PID the caller's, as the bus daemon knows it) and
// refused unless the caller may read it, then the ELF offset(s) and the
// fetch arguments that uprobe_events takes (kernel/elf_probe_points.hpp,
// kernel/sdt_arguments.hpp).
//
// The daemon keeps the file open for the rule's life: the probe is defined
// in uprobe_events as /proc/self/fd/N (the kernel resolves the path when
// the probe is defined, in the daemon's own context), so that a session
// started later, or a probe defined again, finds the same file whatever the
// caller did since.
#pragma once

#include "common/unique_fd.hpp"
#include "userspace_probe_location.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <sys/types.h>

namespace tracectl::kernel {

struct UserspaceProbeTarget {
    UserspaceProbeLocation location;
    UniqueFd file;            ///< the ELF file, read only
    std::uint64_t offset = 0; ///< the probe's file offset
    /// uprobe_events fetch arguments ("arg0=%di:s32 ..."; a return probe's
    /// "ret=$retval:s64"), "" for none.
    std::string fetchArguments;

    /// The line that defines it in uprobe_events as `group`/`event`
    /// ("p:GROUP/EVENT /proc/self/fd/N:0xOFFSET ARGS", "r:" for a return).
    std::string definition(const std::string& group, const std::string& event) const;
};

/// Opens and resolves `location` for the caller `pid` (its mount namespace)
/// with uid `uid`. Throws Error(InvalidArgument) with a sentence for the
/// caller: a relative path, a path that does not exist there, one the
/// caller may not read (owner, group and other mode bits against the
/// caller's uid, gid and groups from /proc/PID/status; root may read
/// anything), not a regular file, not an ELF file of this machine, no such
/// function or SDT probe, an SDT probe guarded by a semaphore (LTTng 2.13
/// refuses those too), an SDT probe with several sites, arguments
/// uprobe_events cannot fetch.
std::shared_ptr<const UserspaceProbeTarget>
openUserspaceProbeTarget(const UserspaceProbeLocation& location, pid_t pid, uid_t uid);

} // namespace tracectl::kernel
