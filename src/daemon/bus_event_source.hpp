// Drives an sdbus-c++ connection from the daemon's sd-event loop, so D-Bus
// calls, app sockets and timers share one thread (sdbus-c++ 1.2 cannot
// attach to an sd_event itself; it exposes poll data instead,
// IConnection::getEventLoopPollData()).
#pragma once

#include "common/event_loop.hpp"

#include <functional>
#include <sdbus-c++/sdbus-c++.h>

namespace tracectl {

class BusEventSource {
public:
    /// Watches `bus` from `loop`. If the bus connection fails, logs and asks
    /// the loop to exit with code 1. Both must outlive this object.
    BusEventSource(EventLoop& loop, sdbus::IConnection& bus);
    /// Runs `hook` after each message is handled.
    void afterEachMessage(std::function<void()> hook) { after_ = std::move(hook); }
    BusEventSource(const BusEventSource&) = delete;
    BusEventSource& operator=(const BusEventSource&) = delete;

private:
    static int onPrepare(sd_event_source* s, void* userdata);
    static int onIo(sd_event_source* s, int fd, uint32_t revents, void* userdata);
    static int onTime(sd_event_source* s, uint64_t usec, void* userdata);
    /// Handles one pending bus message (the next one waits for the next
    /// iteration, so deferred work runs in between).
    void dispatch();
    void updateWatch();

    EventLoop& loop_;
    sdbus::IConnection& bus_;
    EventSourcePtr io_;
    EventSourcePtr timer_;
    std::function<void()> after_;
};

} // namespace tracectl
