// Starts a session's consumer (tracectl-consumerd) with one end of a
// socketpair as its stdin: as a systemd transient service through
// org.freedesktop.systemd1.Manager.StartTransientUnit (systemd.exec(5),
// org.freedesktop.systemd1(5)), or, where no systemd manager answers, as a
// direct fork/exec child. Blocking calls: run it on a worker thread.
#pragma once

#include "common/unique_fd.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <sys/types.h>
#include <thread>
#include <vector>

namespace tracectl {

/// What to run and as whom.
struct ConsumerSpec {
    std::string unitName;          ///< e.g. "tracectl-consumer-<32 hex>.service"
    std::string binary;            ///< absolute path of tracectl-consumerd
    std::vector<std::string> args; ///< arguments after argv[0]
    uid_t uid = 0;                 ///< User= / setuid: the session owner
    gid_t gid = 0;                 ///< Group= / setgid
    std::string outputDir;         ///< ReadWritePaths=; must exist
    uint64_t memoryMax = 0;        ///< MemoryMax= in bytes (0: none; systemd only)
};

/// A started consumer. Destroying it does not stop the process: the
/// protocol's Shutdown or stop() does.
class ConsumerLauncher {
public:
    virtual ~ConsumerLauncher() = default;
    /// Starts the consumer with `stdinSocket` as its standard input.
    /// Throws Error(Failed) with the manager's reason.
    virtual void start(const ConsumerSpec& spec, UniqueFd stdinSocket) = 0;
    /// Stops it (StopUnit, or SIGTERM then SIGKILL after a bounded wait),
    /// waits (bounded) until it is down, and lets a failed unit go
    /// (ResetFailedUnit). Harmless on a consumer that is gone already.
    virtual void stop(const ConsumerSpec& spec) = 0;
    /// True while it runs (ActiveState "active"/"activating"/"reloading",
    /// or the child not yet reaped).
    virtual bool running(const ConsumerSpec& spec) = 0;
    /// Waits up to `timeout` for running() to become false (a process that
    /// closed its socket is still "active" until its manager has seen it
    /// exit); returns whether it did.
    bool waitStopped(const ConsumerSpec& spec, std::chrono::milliseconds timeout) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (running(spec)) {
            if (std::chrono::steady_clock::now() >= deadline)
                return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        return true;
    }
    /// Once running() is false: how it ended, for the session's
    /// ErrorReason, e.g. "ActiveState failed, Result oom-kill" or "exited
    /// with status 3" (systemd keeps a failed unit until this has read it:
    /// CollectMode=inactive, then ResetFailedUnit); "its unit is gone" when
    /// it was collected already.
    virtual std::string stopReason(const ConsumerSpec& spec) = 0;
    /// "systemd" or "direct", for logs.
    virtual const char* kind() const noexcept = 0;
};

/// Launcher through a systemd manager at `address` (a D-Bus address; a
/// manager's private socket "unix:path=.../systemd/private" is spoken to
/// directly), or on the system bus when `address` is empty.
/// Throws Error(Failed) if the manager cannot be reached.
std::unique_ptr<ConsumerLauncher> makeSystemdLauncher(const std::string& address);
/// Launcher by fork/exec (the same protocol, no sandboxing).
std::unique_ptr<ConsumerLauncher> makeDirectLauncher();

} // namespace tracectl
