// What the systemd launcher needs of sd-bus (libsystemd): owners of its
// objects, and the StartTransientUnit message of a consumer.
#pragma once

#include "consumer_launcher.hpp"

#include <memory>
#include <string>
#include <systemd/sd-bus.h>

namespace tracectl {

struct SdBusCloser {
    void operator()(sd_bus* b) const noexcept { sd_bus_flush_close_unref(b); }
};
struct SdBusMessageUnref {
    void operator()(sd_bus_message* m) const noexcept { sd_bus_message_unref(m); }
};
/// Unref'ing a slot cancels its call, match or filter: no callback after.
struct SdBusSlotUnref {
    void operator()(sd_bus_slot* s) const noexcept { sd_bus_slot_unref(s); }
};
using SdBusPtr = std::unique_ptr<sd_bus, SdBusCloser>;
using SdBusMessagePtr = std::unique_ptr<sd_bus_message, SdBusMessageUnref>;
using SdBusSlotPtr = std::unique_ptr<sd_bus_slot, SdBusSlotUnref>;

namespace systemd {
constexpr const char* kService = "org.freedesktop.systemd1";
constexpr const char* kPath = "/org/freedesktop/systemd1";
constexpr const char* kManager = "org.freedesktop.systemd1.Manager";
constexpr const char* kUnit = "org.freedesktop.systemd1.Unit";
constexpr const char* kServiceIface = "org.freedesktop.systemd1.Service";
} // namespace systemd

/// Manager.StartTransientUnit(name, "fail", properties, no aux units) for
/// `spec`, with `stdinSocket` (not taken: the message dups it) as the
/// service's stdin: User= by name where it has one, Type=exec,
/// CollectMode=inactive, SuccessExitStatus=3, LimitNOFILE=65536, sandboxing,
/// MemoryMax= if set. Throws Error(Failed) if the message cannot be built.
SdBusMessagePtr transientUnitCall(sd_bus* bus, const ConsumerSpec& spec, int stdinSocket);

} // namespace tracectl
