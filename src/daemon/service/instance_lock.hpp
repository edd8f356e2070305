// One tracectld per run directory: an flock(2) on a lock file in it.
#pragma once

#include "common/unique_fd.hpp"

#include <optional>
#include <string>
#include <sys/types.h>

namespace tracectl {

/// Holds an exclusive flock(2) on a lock file for as long as it lives.
///
/// flock locks belong to the open file description, not the process: the
/// kernel drops the lock when the last descriptor of it closes, which is at
/// once when the holder dies (even by SIGKILL), so a restart right after a
/// kill finds the lock free, and two daemons can never both hold it. The
/// descriptor is close-on-exec, so programs the daemon execs never keep it.
/// The file holds the holder's pid (text, one line), for messages only.
class InstanceLock {
public:
    /// Outcome of tryAcquire(): either a lock, or who holds it.
    struct Busy {
        std::string path;
        std::optional<pid_t> holder; ///< pid read from the file, if any
    };

    /// Opens (creating, mode 0644, its folder 0755 if missing) `path` and
    /// takes LOCK_EX|LOCK_NB. Returns the lock, or Busy when another open
    /// file description holds it. Throws std::system_error when the file
    /// cannot be opened or locked for another reason.
    static std::optional<InstanceLock> tryAcquire(const std::string& path, Busy& busy);

    /// The lock file of an instance: `runDir`/tracectld.lock.
    static std::string pathIn(const std::string& runDir);

    const std::string& path() const noexcept { return path_; }

private:
    InstanceLock(std::string path, UniqueFd fd) : path_(std::move(path)), fd_(std::move(fd)) {}
    std::string path_;
    UniqueFd fd_;
};

} // namespace tracectl
