#include "objects/statistics_properties.hpp"

#include "bus/sd_bus_handles.hpp"

#include <cstdint>
#include <initializer_list>
#include <utility>

namespace tracectl {

namespace {

void appendFigures(sd_bus_message* m, const TraceFigures& f, bool eventsCounted,
                   std::initializer_list<std::pair<const char*, uint64_t>> extra) {
    const std::pair<const char*, uint64_t> figures[] = {
        {"events-discarded", f.eventsDiscarded},
        {"packets-lost", f.packetsLost},
        {"bytes-written", f.bytesWritten},
        {"chunk-bytes", f.chunkBytes},
        {"bytes-produced", f.bytesProduced},
    };
    bus::check(sd_bus_message_open_container(m, 'a', "{sv}"), "a{sv}");
    const auto entry = [m](const char* key, uint64_t value) {
        bus::check(sd_bus_message_append(m, "{sv}", key, "t", value), "{sv}");
    };
    if (eventsCounted) // else unknown, not 0
        entry("events-recorded", f.eventsRecorded);
    for (const auto& [key, value] : figures)
        entry(key, value);
    for (const auto& [key, value] : extra)
        entry(key, value);
    bus::check(sd_bus_message_close_container(m), "a{sv}");
}

} // namespace

void appendStatistics(sd_bus_message* m, const DomainStatistics& s) {
    appendFigures(m, s.total, s.eventsCounted,
                  {{"sampled-at", s.sampledAtUsec}, {"apps-refused", s.appsRefused}});
}

void appendChannelStatistics(sd_bus_message* m, const DomainStatistics& s) {
    bus::check(sd_bus_message_open_container(m, 'a', "(ssa{sv})"), "a(ssa{sv})");
    for (const ChannelStatistics& c : s.channels) {
        bus::check(sd_bus_message_open_container(m, 'r', "ssa{sv}"), "(ssa{sv})");
        bus::check(sd_bus_message_append(m, "ss", c.domain.c_str(), c.channel.c_str()), "ss");
        appendFigures(m, c.figures, c.eventsCounted, {});
        bus::check(sd_bus_message_close_container(m), "(ssa{sv})");
    }
    bus::check(sd_bus_message_close_container(m), "a(ssa{sv})");
}

} // namespace tracectl
