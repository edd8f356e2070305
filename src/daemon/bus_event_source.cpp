#include "bus_event_source.hpp"

#include "common/log.hpp"

#include <cstdint>
#include <string>
#include <system_error>
#include <time.h>

namespace tracectl {

namespace {

void check(int r, const char* what) {
    if (r < 0)
        throw std::system_error(-r, std::generic_category(), what);
}

} // namespace

BusEventSource::BusEventSource(EventLoop& loop, sdbus::IConnection& bus) : loop_(loop), bus_(bus) {
    const auto poll = bus_.getEventLoopPollData();
    sd_event_source* s = nullptr;
    check(sd_event_add_io(loop_.get(), &s, poll.fd, static_cast<uint32_t>(poll.events),
                          &BusEventSource::onIo, this),
          "sd_event_add_io");
    io_.reset(s);
    check(sd_event_source_set_prepare(s, &BusEventSource::onPrepare), "set_prepare");
    check(sd_event_source_set_description(s, "bus-io"), "set_description");

    check(sd_event_add_time(loop_.get(), &s, CLOCK_MONOTONIC, UINT64_MAX, 0,
                            &BusEventSource::onTime, this),
          "sd_event_add_time");
    timer_.reset(s);
    check(sd_event_source_set_enabled(s, SD_EVENT_OFF), "set_enabled");
    check(sd_event_source_set_description(s, "bus-timeout"), "set_description");
}

void BusEventSource::updateWatch() {
    const auto poll = bus_.getEventLoopPollData();
    check(sd_event_source_set_io_events(io_.get(), static_cast<uint32_t>(poll.events)),
          "set_io_events");
    if (poll.timeout_usec == UINT64_MAX) {
        check(sd_event_source_set_enabled(timer_.get(), SD_EVENT_OFF), "set_enabled");
    } else {
        check(sd_event_source_set_time(timer_.get(), poll.timeout_usec), "set_time");
        check(sd_event_source_set_enabled(timer_.get(), SD_EVENT_ONESHOT), "set_enabled");
    }
}

void BusEventSource::dispatch() {
    try {
        bus_.processPendingRequest();
        if (after_)
            after_();
    } catch (const std::exception& e) {
        log::error(std::string("the bus connection failed: ") + e.what());
        loop_.exit(1);
    }
}

int BusEventSource::onPrepare(sd_event_source*, void* userdata) {
    auto* self = static_cast<BusEventSource*>(userdata);
    try {
        self->updateWatch();
    } catch (const std::exception& e) {
        log::error(std::string("watching the bus connection failed: ") + e.what());
        self->loop_.exit(1);
    }
    return 0;
}

int BusEventSource::onIo(sd_event_source*, int, uint32_t, void* userdata) {
    static_cast<BusEventSource*>(userdata)->dispatch();
    return 0;
}

int BusEventSource::onTime(sd_event_source*, uint64_t, void* userdata) {
    static_cast<BusEventSource*>(userdata)->dispatch();
    return 0;
}

} // namespace tracectl
