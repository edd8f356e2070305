// Starts a session's consumer (tracectl-consumerd) with one end of a
// socketpair as its stdin: as a systemd transient service through
// org.freedesktop.systemd1.Manager.StartTransientUnit (systemd.exec(5),
// org.freedesktop.systemd1(5)), or, where no systemd manager answers, as a
// direct fork/exec child.
//
// Threads and ownership: a launcher is attached to one EventLoop (the app
// thread's) and belongs to it. Every method is called on that loop's
// thread, and every callback is called there, from the loop, never from
// inside the call that was given it. Nothing blocks: the systemd launcher
// speaks to the manager over one sd-bus connection attached to the loop,
// the direct one watches its children's pidfds on the loop. Destroying a
// launcher cancels whatever is under way without calling its callbacks
// (and does not stop the consumers: their connection closing does); it must
// not be destroyed from inside one of its own callbacks.
#pragma once

#include "common/error.hpp"
#include "common/event_loop.hpp"
#include "common/unique_fd.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace tracectl {

/// What to run and as whom.
struct ConsumerSpec {
    std::string unitName;          ///< e.g. "tracectl-consumer-<32 hex>.service"
    std::string binary;            ///< absolute path of tracectl-consumerd
    std::vector<std::string> args; ///< arguments after argv[0]
    uid_t uid = 0;                 ///< User= / setuid: the session owner
    gid_t gid = 0;                 ///< Group= / setgid
    std::string outputDir;         ///< ReadWritePaths=; must exist ("": none, nothing writable)
    uint64_t memoryMax = 0;        ///< MemoryMax= in bytes (0: none; systemd only)
};

/// The bounds of a launcher's waits.
struct LauncherTimeouts {
    /// One method call to the manager (sd-bus reply timeout).
    std::chrono::milliseconds call{10000};
    /// From a job's creation to its JobRemoved (start or stop), or, direct:
    /// from SIGTERM to SIGKILL.
    std::chrono::milliseconds job{10000};
};

/// Starts and stops consumers; see the file comment for threads.
class ConsumerLauncher {
public:
    /// Told once a call completed: nothing, or Error(Failed) saying why.
    using Done = std::function<void(std::optional<Error>)>;
    /// Told how a consumer ended (see whenEnded()), or nullopt if it still
    /// ran at the deadline (it was stopped then).
    using Ended = std::function<void(std::optional<std::string>)>;

    virtual ~ConsumerLauncher() = default;
    /// Starts the consumer with `stdinSocket` as its standard input; `done`
    /// once it runs (Type=exec: its execve() succeeded), or Error(Failed)
    /// with the manager's reason (e.g. "<unit> did not start (ActiveState
    /// failed, Result exit-code)"), a timeout, or a lost manager.
    virtual void start(const ConsumerSpec& spec, UniqueFd stdinSocket, Done done) = 0;
    /// Stops it (StopUnit, or SIGTERM then SIGKILL after a bounded wait);
    /// `done` (may be empty) once it is down, and a failed unit let go
    /// (ResetFailedUnit). Harmless on a consumer that is gone already.
    virtual void stop(const ConsumerSpec& spec, Done done) = 0;
    /// Once its socket hung up: waits, up to `timeout`, until the consumer
    /// is down (a process that closed its socket is still "active" until
    /// its manager saw it exit), then tells how it ended, for the session's
    /// ErrorReason: "ActiveState failed, Result oom-kill", "ActiveState
    /// failed, Result exit-code, status 3", "exited with status 3", "killed
    /// by signal Killed"; "its unit is gone" when it was collected already.
    /// A failed unit is let go once read (CollectMode=inactive, then
    /// ResetFailedUnit). Still running at the deadline: it is stopped and
    /// `ended` gets nullopt.
    virtual void whenEnded(const ConsumerSpec& spec, std::chrono::milliseconds timeout,
                           Ended ended) = 0;
    /// "systemd" or "direct", for logs.
    virtual const char* kind() const noexcept = 0;
};

/// Launcher through a systemd manager at `address` (a D-Bus address; a
/// manager's private socket "unix:path=.../systemd/private" is spoken to
/// directly), or on the system bus when `address` is empty, over one
/// connection attached to `loop`. Connects at once; if the connection is
/// lost later, calls under way fail and the next start() connects again.
/// Throws Error(Failed) if the manager cannot be reached.
std::unique_ptr<ConsumerLauncher> makeSystemdLauncher(EventLoop& loop, const std::string& address,
                                                      LauncherTimeouts timeouts = {});
/// Launcher by fork/exec (the same protocol, no sandboxing), watching its
/// children on `loop`. Its destructor kills and reaps the children left.
std::unique_ptr<ConsumerLauncher> makeDirectLauncher(EventLoop& loop,
                                                     LauncherTimeouts timeouts = {});

} // namespace tracectl
