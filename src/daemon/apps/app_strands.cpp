#include "app_strands.hpp"

#include "common/log.hpp"

#include <memory>

namespace tracectl {

AppStrands::AppStrands(std::size_t threads, std::string name, std::size_t maxThreads)
    : executor_(threads, std::move(name), maxThreads) {}

AppStrands::~AppStrands() {
    std::lock_guard lock(mutex_);
    // Steps not started are dropped (schedule()); a running one finishes
    // on its own: the executor is joined right after this body, while
    // strands_ still exists.
    stopping_ = true;
    for (auto& [pid, strand] : strands_)
        while (strand.steps.size() > 1)
            strand.steps.pop_back();
}

void AppStrands::submit(pid_t pid, std::function<void()> job) {
    submitStep(pid, [job = std::move(job)](const Finished& done) {
        // Finished even if the job throws: the strand goes on.
        struct Finish {
            const Finished& done;
            ~Finish() { done(); }
        } finish{done};
        job();
    });
}

void AppStrands::submitStep(pid_t pid, Step step) {
    bool first = false;
    {
        std::lock_guard lock(mutex_);
        if (stopping_)
            return;
        auto& strand = strands_[pid];
        strand.steps.push_back(std::move(step));
        first = strand.steps.size() == 1;
    }
    if (first)
        schedule(pid);
}

void AppStrands::schedule(pid_t pid) {
    executor_.submit([this, pid] {
        Step step;
        {
            std::lock_guard lock(mutex_);
            const auto it = strands_.find(pid);
            if (it == strands_.end() || it->second.steps.empty())
                return;
            if (stopping_) { // being destroyed: not started, dropped
                strands_.erase(it);
                return;
            }
            step = it->second.steps.front(); // stays queued: the strand is busy
        }
        // `once` guards against a step calling Finished twice.
        auto once = std::make_shared<std::once_flag>();
        auto done = [this, pid, once] { std::call_once(*once, [&] { finished(pid); }); };
        try {
            step(done);
        } catch (const std::exception& e) {
            log::warning("app " + std::to_string(pid) + ": a command job failed: " + e.what());
            done();
        }
    });
}

void AppStrands::finished(pid_t pid) {
    bool more = false;
    {
        std::lock_guard lock(mutex_);
        const auto it = strands_.find(pid);
        if (it == strands_.end())
            return;
        it->second.steps.pop_front();
        if (it->second.steps.empty() || stopping_)
            strands_.erase(it);
        else
            more = true;
    }
    // Behind the jobs of other apps already waiting: one app cannot hold a
    // thread for a whole burst of its own jobs.
    if (more)
        schedule(pid);
}

std::size_t AppStrands::pending(pid_t pid) const {
    std::lock_guard lock(mutex_);
    const auto it = strands_.find(pid);
    return it == strands_.end() ? 0 : it->second.steps.size();
}

} // namespace tracectl
