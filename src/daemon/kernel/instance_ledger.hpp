// The tracefs instances this daemon made, written down in its run
// directory (`<run dir>/kernel-instances`, e.g. /run/lttng), so that a
// daemon started after a crash removes the instances its predecessor left,
// and only those: tracefs instances are kernel-wide, and other tracectld
// instances on the machine (sandboxes, a second system) have theirs too.
// tmpfs run directories and tracefs both start empty at boot.
//
// A session's userspace probes (uprobe_events group "tracectl_<id>") go
// with its instances: the kernel domain removes the group of each name it
// removes (KernelDomain::removeLeftOver()), and crosses the name out only
// once both are gone.
//
// Format: one instance base name per line ("tracectl-<session id hex>";
// a session's further instances, "tracectl-<id>-<n>", share it). Lines that
// are not such a name are ignored.
//
// Threads: used by the kernel domain's executor only.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace tracectl::kernel {

class InstanceLedger {
public:
    /// The ledger at `path` (need not exist; empty path: a ledger that
    /// keeps nothing, for daemons without a run directory).
    explicit InstanceLedger(std::filesystem::path path) : path_(std::move(path)) {}

    /// The names written down, in order, each once.
    std::vector<std::string> read() const;
    /// Writes `name` down (if it is not already). Throws std::system_error.
    void add(const std::string& name);
    /// Crosses `name` out. Throws std::system_error.
    void remove(const std::string& name);

    /// True for "tracectl-" followed by 1-64 characters of [A-Za-z0-9_-].
    static bool isInstanceName(const std::string& name);

private:
    /// Replaces the file with `names` (a new file renamed over the old).
    void write(const std::vector<std::string>& names) const;

    std::filesystem::path path_;
};

} // namespace tracectl::kernel
