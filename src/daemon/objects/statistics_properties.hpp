// The Session properties `Statistics` (a{sv}) and `ChannelStatistics`
// (a(ssa{sv})) as sd-bus message content; meanings in
// dbus/org.tracectl.Tracing1.Session.xml.
#pragma once

#include "session/session_statistics.hpp"

#include <systemd/sd-bus.h>

namespace tracectl {

/// Appends `Statistics`: the totals, as {"events-recorded": t (only if
/// s.eventsCounted), "events-discarded": t, "packets-lost": t,
/// "bytes-written": t, "chunk-bytes": t, "bytes-produced": t, "sampled-at":
/// t}. Throws
/// std::system_error (sd-bus).
void appendStatistics(sd_bus_message* m, const DomainStatistics& s);
/// Appends `ChannelStatistics`: (domain, channel, the same keys but
/// "sampled-at") per channel. Throws std::system_error (sd-bus).
void appendChannelStatistics(sd_bus_message* m, const DomainStatistics& s);

} // namespace tracectl
