// Per-app strands over an executor: the round trips to LTTng-UST apps
// (app_commands.hpp) run on executor threads that own nothing. An app's
// command socket is a request/response stream, so the jobs of one app run
// one at a time and in the order given; jobs of different apps run in
// parallel, on up to `threads` threads. A job that blocks (a hung app, up to
// kAppSocketTimeout) holds one thread and delays only the jobs of its own
// app; another app's job finding every thread held starts one more, up to
// the maximum, past which it waits for a free one.
//
// A step may also be asynchronous (submitStep): the app's strand stays
// busy until the step says it is finished, from whichever thread. The
// tracer could use this to run a call on its loop itself
// without another job of the app running meanwhile.
//
// Threads: submit() from any thread. Jobs run on the strands' own threads.
// No lock is held while a job runs. Destruction drops the jobs not started
// yet (their captures are destroyed) and waits for those running.
#pragma once

#include "common/executor.hpp"

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <sys/types.h>

namespace tracectl {

class AppStrands {
public:
    /// Called exactly once by a step when it is over, from any thread.
    using Finished = std::function<void()>;
    /// An asynchronous step: started on an executor thread with its Finished.
    using Step = std::function<void(Finished)>;

    /// `threads` (>= 1) executor threads named `name` (at most 15 bytes),
    /// growing up to `maxThreads` while every thread is held by a job
    /// (Executor).
    AppStrands(std::size_t threads, std::string name, std::size_t maxThreads = 0);
    ~AppStrands();
    AppStrands(const AppStrands&) = delete;
    AppStrands& operator=(const AppStrands&) = delete;

    /// Queues `job` on app `pid`'s strand: it runs after every job queued
    /// for `pid` before it has finished, on an executor thread.
    /// Exceptions it lets out are logged.
    void submit(pid_t pid, std::function<void()> job);
    /// As submit(), but the strand of `pid` stays busy until `step` calls
    /// its Finished (which it must, exactly once).
    void submitStep(pid_t pid, Step step);
    /// Jobs queued or running for `pid` (for tests and logs).
    std::size_t pending(pid_t pid) const;

private:
    struct Strand {
        std::deque<Step> steps; ///< the first one runs (or is about to)
    };
    /// Hands the first step of `pid`'s strand to the executor.
    void schedule(pid_t pid);
    void finished(pid_t pid);

    mutable std::mutex mutex_;        // guards strands_ and stopping_
    std::map<pid_t, Strand> strands_; // only strands with steps
    bool stopping_ = false;
    Executor executor_; // last: joined before the strands go
};

} // namespace tracectl
