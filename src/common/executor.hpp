// Threads for blocking library calls (liblttng-ust-ctl reads of an fd, ...)
// that own nothing: a job is a function given everything it needs (fds,
// copies), runs to its own deadline, and hands its result back to the
// thread that owns the state (typically with EventLoop::post). Jobs run in
// the order given, on the first free thread; a slow job delays only the
// jobs queued behind it while every thread is busy.
//
// Threads: submit() from any thread; the jobs run on the executor's own
// threads. No lock is held while a job runs.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tracectl {

class Executor {
public:
    /// Starts `threads` (>= 1) worker threads named `name` (for logs and
    /// /proc/<pid>/task/*/comm, at most 15 bytes). With `maxThreads` above
    /// `threads`, a job that finds every thread busy starts one more, up to
    /// `maxThreads` (they stay until the executor goes): for jobs that
    /// mostly wait on a peer, so that a burst of slow peers does not hold
    /// up the jobs of the others. Throws std::invalid_argument.
    Executor(std::size_t threads, std::string name, std::size_t maxThreads = 0);
    /// Runs the jobs already queued, then joins every thread. A job that
    /// blocks delays this until its own deadline.
    ~Executor();
    Executor(const Executor&) = delete;
    Executor& operator=(const Executor&) = delete;

    /// Queues `job`. Exceptions a job lets out are caught and logged.
    void submit(std::function<void()> job);

private:
    void work();
    void startThread(); // with mutex_ held

    std::mutex mutex_; // guards jobs_, stopping_, idle_ and threads_
    std::condition_variable wake_;
    std::deque<std::function<void()>> jobs_;
    bool stopping_ = false;
    std::string name_;
    std::size_t maxThreads_;
    std::size_t idle_ = 0;              // threads waiting for a job; guarded by mutex_
    std::vector<std::jthread> threads_; // last: joined before the rest goes
};

} // namespace tracectl
