// What the systemd launcher needs of sd-bus (libsystemd): the names it
// calls, and the StartTransientUnit message of a consumer.
#pragma once

#include "bus/sd_bus_handles.hpp"
#include "consumer_launcher.hpp"

#include <memory>
#include <string>
#include <systemd/sd-bus.h>

namespace tracectl {

// The daemon's sd-bus owners (bus/sd_bus_handles.hpp); unref'ing a slot
// cancels its call, match or filter: no callback after.
using SdBusPtr = bus::BusPtr;
using SdBusMessagePtr = bus::MessagePtr;
using SdBusSlotPtr = bus::SlotPtr;

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
