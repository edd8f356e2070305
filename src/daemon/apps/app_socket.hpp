// Where LTTng-UST applications find the daemon: the listening Unix socket
// (lttng-ust-sock-8) and the wake-up shared memory page (lttng-ust-wait-8)
// that apps started before the daemon wait on (LTTNG-NOTES.md, lttng-ust
// src/lib/lttng-ust/lttng-ust-comm.c).
#pragma once

#include "common/unique_fd.hpp"

#include <string>
#include <sys/types.h>

namespace tracectl {

/// Default paths for the system instance (a root daemon) and for a
/// per-user instance, as liblttng-ust computes them.
struct AppEndpoints {
    std::string socketPath; ///< e.g. /run/lttng/lttng-ust-sock-8
    std::string waitShm;    ///< shm_open(3) name, e.g. /lttng-ust-wait-8

    /// /run/lttng/lttng-ust-sock-8 and /lttng-ust-wait-8.
    static AppEndpoints system();
    /// $LTTNG_HOME (else $HOME)/.lttng/lttng-ust-sock-8 and
    /// /lttng-ust-wait-8-<euid>.
    static AppEndpoints user(const std::string& lttngHome, uid_t euid);
};

/// Binds a listening SOCK_STREAM socket at `path` (mode 0666 so every app
/// can connect, its folder created 0755 if missing; a stale socket file is
/// replaced). Non-blocking, close-on-exec. Throws std::system_error.
UniqueFd listenForApps(const std::string& path);

/// Owns the wake-up page: on construction writes 1 and FUTEX_WAKEs every
/// app waiting on it; on destruction writes 0 (apps then wait again).
/// Opened without O_CREAT first (fs.protected_regular). Failures are
/// logged, never thrown: apps started later connect anyway.
class WaitShm {
public:
    explicit WaitShm(const std::string& name);
    ~WaitShm();
    WaitShm(const WaitShm&) = delete;
    WaitShm& operator=(const WaitShm&) = delete;

private:
    std::string name_;
    void* page_ = nullptr;
    std::size_t size_ = 0;
};

} // namespace tracectl
