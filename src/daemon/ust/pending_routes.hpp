// The routes (handle_routes.hpp) of one app's set-up in one session while
// that set-up runs on an executor thread: the job adds each route as soon as
// the app names the handle (before any call after which the app may send a
// notify message naming it), and the main loop may cancel it all at any
// moment (the app left, the session is being freed).
//
// Order that makes it safe: set() and cancel() take the same mutex (held
// for in-memory work only, never across a round trip); after cancel() no
// set() adds a route, and every route added before is erased. So once the
// main loop has called cancel() and then HandleRoutes::synchronize(), no
// notify handler can reach the session or trace through these routes, and
// they may be freed while the job still runs.
#pragma once

#include "handle_routes.hpp"

#include <mutex>
#include <utility>
#include <vector>

namespace tracectl {

class PendingRoutes {
public:
    /// Routes of app `pid` in `routes` (which must outlive this).
    PendingRoutes(HandleRoutes& routes, pid_t pid) : routes_(routes), pid_(pid) {}
    PendingRoutes(const PendingRoutes&) = delete;
    PendingRoutes& operator=(const PendingRoutes&) = delete;

    /// Any thread: adds the route of `handle`, unless cancelled (then
    /// false, nothing added).
    bool set(int handle, Route route) {
        std::lock_guard lock(mutex_);
        if (cancelled_)
            return false;
        routes_.set(pid_, handle, route);
        handles_.push_back(handle);
        return true;
    }
    /// Any thread: erases every route added and refuses later ones. Idempotent.
    void cancel() {
        std::lock_guard lock(mutex_);
        cancelled_ = true;
        for (const int h : std::exchange(handles_, {}))
            routes_.erase(pid_, h);
    }
    /// The set-up succeeded: the routes added stay, and belong to whoever
    /// keeps the app in the session from now on (no cancel() erases them).
    /// False if cancelled before (then nothing stays).
    bool keep() {
        std::lock_guard lock(mutex_);
        if (cancelled_)
            return false;
        cancelled_ = true; // later set() calls add nothing
        handles_.clear();
        return true;
    }
    bool cancelled() const {
        std::lock_guard lock(mutex_);
        return cancelled_;
    }

private:
    HandleRoutes& routes_;
    pid_t pid_;
    mutable std::mutex mutex_;
    bool cancelled_ = false;   // guarded by mutex_
    std::vector<int> handles_; // guarded by mutex_
};

} // namespace tracectl
