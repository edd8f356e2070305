// An event loop of a tracectl thread: an sd-event loop (sd-event(3)) owned
// through RAII, with signal handling, a queue of work deferred to the next
// iteration, and work posted to it from other threads. tracectld runs
// several (the main loop, the notify thread's, the tests'), each
// owned by its thread.
#pragma once

#include "unique_fd.hpp"

#include <chrono>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <systemd/sd-event.h>
#include <vector>

namespace tracectl {

/// Releases an sd_event reference.
struct SdEventUnref {
    void operator()(sd_event* e) const noexcept { sd_event_unref(e); }
};
/// Disables and releases an event source (sd_event_source_disable_unref(3)).
struct SdEventSourceUnref {
    void operator()(sd_event_source* s) const noexcept { sd_event_source_disable_unref(s); }
};
using EventPtr = std::unique_ptr<sd_event, SdEventUnref>;
using EventSourcePtr = std::unique_ptr<sd_event_source, SdEventSourceUnref>;

class EventLoop;

/// Posts work to a loop that may be gone by the time a worker is done:
/// post() after the loop was destroyed does nothing. Thread-safe.
class LoopPoster {
public:
    /// As EventLoop::post(), or nothing once the loop is gone.
    void post(std::function<void()> work);

private:
    friend class EventLoop;
    std::mutex mutex_; // guards loop_
    EventLoop* loop_ = nullptr;
};

/// A single-threaded event loop. Not copyable or movable (sources keep a
/// pointer to it). Every callback runs on the thread that calls run().
class EventLoop {
public:
    /// Creates a new sd_event loop. Throws std::system_error on failure.
    EventLoop();
    ~EventLoop();
    EventLoop(const EventLoop&) = delete;
    EventLoop& operator=(const EventLoop&) = delete;

    /// The underlying loop, for attaching sources. Never null.
    sd_event* get() const noexcept { return event_.get(); }

    /// Runs until exit() is called; returns the code given to exit().
    /// Throws std::system_error if sd-event fails.
    int run();

    /// Asks run() to return `code` after the current iteration.
    void exit(int code) noexcept;

    /// Calls `handler(signo)` from the loop when one of `signals` arrives.
    /// The signals are blocked for the process (SD_EVENT_SIGNAL_PROCMASK).
    void onSignals(std::initializer_list<int> signals, std::function<void(int)> handler);

    /// Runs `work` at the start of the next loop iteration, before any I/O
    /// source is dispatched; used to free objects outside their own callbacks.
    void defer(std::function<void()> work);

    /// Thread-safe: runs `work` on the loop's thread soon (an eventfd wakes
    /// the loop). Used by worker threads to hand results back. Work posted
    /// after the loop stopped running is dropped with the loop.
    void post(std::function<void()> work);
    /// Calls `fire` once, on the loop, `after` from now (CLOCK_MONOTONIC),
    /// unless the returned source is freed first. Throws std::system_error.
    EventSourcePtr addTimer(std::chrono::microseconds after, std::function<void()> fire);

    /// A poster for workers that may outlive the loop (see LoopPoster).
    std::shared_ptr<LoopPoster> poster() const { return poster_; }

private:
    static int onSignal(sd_event_source* s, const struct signalfd_siginfo* si, void* userdata);
    static int onDeferred(sd_event_source* s, void* userdata);
    static int onPosted(sd_event_source* s, int fd, uint32_t revents, void* userdata);

    EventPtr event_;
    std::vector<EventSourcePtr> signalSources_;
    std::function<void(int)> signalHandler_;
    EventSourcePtr deferSource_;
    std::vector<std::function<void()>> deferred_;
    UniqueFd postFd_; // eventfd that wakes the loop for post()
    EventSourcePtr postSource_;
    std::mutex postMutex_;
    std::vector<std::function<void()>> posted_; // guarded by postMutex_
    std::shared_ptr<LoopPoster> poster_;
};

} // namespace tracectl
