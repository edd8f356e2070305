#include "event_loop.hpp"

#include "log.hpp"

#include <cerrno>
#include <string>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <system_error>
#include <unistd.h>

namespace tracectl {

namespace {

void check(int r, const char* what) {
    if (r < 0)
        throw std::system_error(-r, std::generic_category(), what);
}

} // namespace

EventLoop::EventLoop() : poster_(std::make_shared<LoopPoster>()) {
    poster_->loop_ = this;
    sd_event* e = nullptr;
    check(sd_event_new(&e), "sd_event_new");
    event_.reset(e);

    sd_event_source* s = nullptr;
    check(sd_event_add_defer(event_.get(), &s, &EventLoop::onDeferred, this), "sd_event_add_defer");
    deferSource_.reset(s);
    // Deferred work (freeing objects) runs before the next message is read.
    check(sd_event_source_set_priority(s, SD_EVENT_PRIORITY_IMPORTANT), "set_priority");
    check(sd_event_source_set_enabled(s, SD_EVENT_OFF), "set_enabled");

    postFd_.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!postFd_)
        throw std::system_error(errno, std::generic_category(), "eventfd");
    check(sd_event_add_io(event_.get(), &s, postFd_.get(), EPOLLIN, &EventLoop::onPosted, this),
          "sd_event_add_io");
    postSource_.reset(s);
}

EventLoop::~EventLoop() {
    {
        std::lock_guard lock(poster_->mutex_);
        poster_->loop_ = nullptr;
    }
    // Sources must go before the loop they are attached to.
    postSource_.reset();
    deferSource_.reset();
    signalSources_.clear();
}

int EventLoop::run() {
    const int r = sd_event_loop(event_.get());
    check(r, "sd_event_loop");
    return r;
}

void EventLoop::exit(int code) noexcept {
    sd_event_exit(event_.get(), code);
}

void EventLoop::onSignals(std::initializer_list<int> signals, std::function<void(int)> handler) {
    signalHandler_ = std::move(handler);
    for (int sig : signals) {
        sd_event_source* s = nullptr;
        check(sd_event_add_signal(event_.get(), &s, sig | SD_EVENT_SIGNAL_PROCMASK,
                                  &EventLoop::onSignal, this),
              "sd_event_add_signal");
        signalSources_.emplace_back(s);
    }
}

void EventLoop::defer(std::function<void()> work) {
    deferred_.push_back(std::move(work));
    sd_event_source_set_enabled(deferSource_.get(), SD_EVENT_ONESHOT);
}

EventSourcePtr EventLoop::addTimer(std::chrono::microseconds after, std::function<void()> fire) {
    // The source owns its callback: freed by the destroy callback.
    auto owned = std::make_unique<std::function<void()>>(std::move(fire));
    sd_event_source* s = nullptr;
    check(sd_event_add_time_relative(
              event_.get(), &s, CLOCK_MONOTONIC, static_cast<uint64_t>(after.count()), 0,
              [](sd_event_source*, uint64_t, void* userdata) {
                  (*static_cast<std::function<void()>*>(userdata))();
                  return 0;
              },
              owned.get()),
          "sd_event_add_time_relative");
    EventSourcePtr source(s);
    check(
        sd_event_source_set_destroy_callback(s,
                                             [](void* userdata) {
                                                 std::unique_ptr<std::function<void()>>(
                                                     static_cast<std::function<void()>*>(userdata));
                                             }),
        "sd_event_source_set_destroy_callback");
    owned.release(); // the source has it now
    return source;
}

void LoopPoster::post(std::function<void()> work) {
    std::lock_guard lock(mutex_);
    if (loop_ != nullptr)
        loop_->post(std::move(work));
}

void EventLoop::post(std::function<void()> work) {
    {
        std::lock_guard lock(postMutex_);
        posted_.push_back(std::move(work));
    }
    const uint64_t one = 1;
    // EAGAIN means the counter is already non-zero: the loop wakes anyway.
    [[maybe_unused]] const auto n = write(postFd_.get(), &one, sizeof one);
}

int EventLoop::onPosted(sd_event_source*, int fd, uint32_t, void* userdata) {
    auto* self = static_cast<EventLoop*>(userdata);
    uint64_t count = 0;
    [[maybe_unused]] const auto n = read(fd, &count, sizeof count);
    std::vector<std::function<void()>> batch;
    {
        std::lock_guard lock(self->postMutex_);
        batch.swap(self->posted_);
    }
    for (auto& work : batch) {
        try {
            work();
        } catch (const std::exception& e) {
            log::error(std::string("posted work failed: ") + e.what());
        }
    }
    return 0;
}

int EventLoop::onSignal(sd_event_source*, const struct signalfd_siginfo* si, void* userdata) {
    auto* self = static_cast<EventLoop*>(userdata);
    if (self->signalHandler_)
        self->signalHandler_(static_cast<int>(si->ssi_signo));
    return 0;
}

int EventLoop::onDeferred(sd_event_source*, void* userdata) {
    auto* self = static_cast<EventLoop*>(userdata);
    // Work may defer more work: take the batch first.
    std::vector<std::function<void()>> batch;
    batch.swap(self->deferred_);
    for (auto& work : batch) {
        try {
            work();
        } catch (const std::exception& e) {
            log::error(std::string("deferred work failed: ") + e.what());
        }
    }
    if (!self->deferred_.empty())
        sd_event_source_set_enabled(self->deferSource_.get(), SD_EVENT_ONESHOT);
    return 0;
}

} // namespace tracectl
