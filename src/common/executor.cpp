#include "executor.hpp"

#include "log.hpp"

#include <algorithm>
#include <pthread.h>
#include <stdexcept>

namespace tracectl {

Executor::Executor(std::size_t threads, std::string name, std::size_t maxThreads)
    : name_(std::move(name)), maxThreads_(std::max(threads, maxThreads)) {
    if (threads == 0)
        throw std::invalid_argument("an executor needs at least one thread");
    if (name_.size() > 15)
        name_.resize(15);
    threads_.reserve(maxThreads_); // never reallocated while a thread starts
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < threads; ++i)
        startThread();
}

Executor::~Executor() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true; // no thread starts after this
    }
    wake_.notify_all();
    threads_.clear(); // joins
}

void Executor::startThread() {
    threads_.emplace_back([this] { work(); });
    pthread_setname_np(threads_.back().native_handle(), name_.c_str());
}

void Executor::submit(std::function<void()> job) {
    {
        std::lock_guard lock(mutex_);
        jobs_.push_back(std::move(job));
        // Every waiting thread is already owed a job: one more starts.
        if (jobs_.size() > idle_ && threads_.size() < maxThreads_ && !stopping_)
            startThread();
    }
    wake_.notify_one();
}

void Executor::work() {
    for (;;) {
        std::function<void()> job;
        {
            std::unique_lock lock(mutex_);
            ++idle_;
            wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
            --idle_;
            if (jobs_.empty())
                return; // stopping, and nothing left
            job = std::move(jobs_.front());
            jobs_.pop_front();
        }
        try {
            job();
        } catch (const std::exception& e) {
            log::warning(name_ + ": a job failed: " + e.what());
        } catch (...) {
            log::warning(name_ + ": a job failed");
        }
    }
}

} // namespace tracectl
