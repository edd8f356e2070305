// A gate test threads wait at until the test opens it, shared by the unit
// tests of the app strands and of the tracer.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace tracectl::testing {

/// Waiters block until open() (or until `within` passes, so that a broken
/// test ends instead of hanging).
class Gate {
public:
    void open() {
        std::lock_guard lock(mutex_);
        open_ = true;
        changed_.notify_all();
    }
    /// True if it opened within `within`.
    bool wait(std::chrono::milliseconds within = std::chrono::seconds(10)) {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, within, [this] { return open_; });
    }

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    bool open_ = false;
};

} // namespace tracectl::testing
