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
    /// /proc/<pid>/task/*/comm, at most 15 bytes).
    Executor(std::size_t threads, std::string name);
    /// Runs the jobs already queued, then joins every thread. A job that
    /// blocks delays this until its own deadline.
    ~Executor();
    Executor(const Executor&) = delete;
    Executor& operator=(const Executor&) = delete;

    /// Queues `job`. Exceptions a job lets out are caught and logged.
    void submit(std::function<void()> job);

private:
    void work();

    std::mutex mutex_; // guards jobs_ and stopping_
    std::condition_variable wake_;
    std::deque<std::function<void()>> jobs_;
    bool stopping_ = false;
    std::string name_;
    std::vector<std::jthread> threads_; // last: joined before the rest goes
};

} // namespace tracectl
