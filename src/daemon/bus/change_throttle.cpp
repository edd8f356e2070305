#include "bus/change_throttle.hpp"

#include <system_error>
#include <time.h>

namespace tracectl::bus {

ChangeThrottle::ChangeThrottle(sd_event* event, std::chrono::microseconds period,
                               std::function<void()> tell)
    : event_(event), period_(period), tell_(std::move(tell)) {}

void ChangeThrottle::changed() {
    if (pending_)
        return; // told when the period ends, with the values of then
    const auto now = std::chrono::steady_clock::now();
    if (!everTold_ || now - lastTold_ >= period_) {
        tellNow();
        return;
    }
    const auto wait =
        std::chrono::duration_cast<std::chrono::microseconds>(lastTold_ + period_ - now);
    sd_event_source* s = nullptr;
    const int r =
        sd_event_add_time_relative(event_, &s, CLOCK_MONOTONIC, static_cast<uint64_t>(wait.count()),
                                   0, &ChangeThrottle::onTimer, this);
    if (r < 0)
        throw std::system_error(-r, std::generic_category(), "sd_event_add_time_relative");
    timer_.reset(s);
    pending_ = true;
}

void ChangeThrottle::cancel() noexcept {
    pending_ = false;
    timer_.reset();
}

int ChangeThrottle::onTimer(sd_event_source*, uint64_t, void* userdata) {
    auto* self = static_cast<ChangeThrottle*>(userdata);
    self->pending_ = false;
    self->tellNow();
    return 0;
}

void ChangeThrottle::tellNow() {
    everTold_ = true;
    lastTold_ = std::chrono::steady_clock::now();
    tell_();
}

} // namespace tracectl::bus
