// RAII owners of the sd-bus objects tracectld holds (sd-bus(3)): every bus
// connection, message reference, slot and credentials object is released by
// one of these.
#pragma once

#include <memory>
#include <systemd/sd-bus.h>

namespace tracectl::bus {

struct BusClose {
    void operator()(sd_bus* b) const noexcept { sd_bus_flush_close_unref(b); }
};
struct MessageUnref {
    void operator()(sd_bus_message* m) const noexcept { sd_bus_message_unref(m); }
};
struct SlotUnref {
    void operator()(sd_bus_slot* s) const noexcept { sd_bus_slot_unref(s); }
};
struct CredsUnref {
    void operator()(sd_bus_creds* c) const noexcept { sd_bus_creds_unref(c); }
};

/// A bus connection: flushed, closed and released when it goes.
using BusPtr = std::unique_ptr<sd_bus, BusClose>;
/// One reference to a message.
using MessagePtr = std::unique_ptr<sd_bus_message, MessageUnref>;
/// A registration (vtable, match, filter, pending call): undone when it goes.
using SlotPtr = std::unique_ptr<sd_bus_slot, SlotUnref>;
using CredsPtr = std::unique_ptr<sd_bus_creds, CredsUnref>;

/// A new reference to `m` (which may be null).
inline MessagePtr retain(sd_bus_message* m) {
    return MessagePtr(sd_bus_message_ref(m));
}

/// Throws std::system_error(-r, `what`) when `r` (an sd-bus return value)
/// is negative; returns `r` otherwise.
int check(int r, const char* what);

} // namespace tracectl::bus
