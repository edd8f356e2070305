// Announces a change at most once per period: the first change after a
// quiet period is told at once, later ones at the end of the period, in
// one call that reads the values of that moment. For properties that
// change all the time while a session writes (Statistics), so that a
// subscriber gets about one PropertiesChanged a second, and none while
// nothing changes. Main loop only.
#pragma once

#include "common/event_loop.hpp"

#include <chrono>
#include <functional>
#include <systemd/sd-event.h>

namespace tracectl::bus {

class ChangeThrottle {
public:
    /// `tell` is called on `event`'s loop (CLOCK_MONOTONIC timers); it may
    /// throw nothing.
    ChangeThrottle(sd_event* event, std::chrono::microseconds period, std::function<void()> tell);
    ChangeThrottle(const ChangeThrottle&) = delete;
    ChangeThrottle& operator=(const ChangeThrottle&) = delete;

    /// Something changed: tells now if the last telling is a period ago or
    /// more, else once when that period ends. Throws std::system_error if
    /// the timer cannot be armed.
    void changed();
    /// Forgets a pending telling (the object goes away).
    void cancel() noexcept;

private:
    static int onTimer(sd_event_source* s, uint64_t usec, void* userdata);
    void tellNow();

    sd_event* event_;
    std::chrono::microseconds period_;
    std::function<void()> tell_;
    EventSourcePtr timer_;
    bool pending_ = false;
    bool everTold_ = false;
    std::chrono::steady_clock::time_point lastTold_{};
};

} // namespace tracectl::bus
