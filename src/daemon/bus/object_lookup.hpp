// How a find callback of a fallback vtable (sd_bus_add_fallback_vtable(3))
// answers for an object the current caller may not see: the object is left
// out of what lists objects (GetManagedObjects and Introspect of a parent,
// so `busctl tree` shows a user only what that user may see); a read of its
// properties is refused with AccessDenied; Introspect of the object itself
// answers (the interface description is the same for every object of the
// kind, and tools such as gdbus read it before they call); a call of the
// object's own interface reaches it, and authorizes itself with polkit (so
// it answers AccessDenied or InteractiveAuthorizationRequired, with what
// polkit said).
#pragma once

#include <systemd/sd-bus.h>

namespace tracectl::bus {

/// The find callback's return value for `object` at `path` (the path sd-bus
/// asks about): sets *found and returns 1 when `visible`, when no call is
/// being dispatched (the daemon itself reads), or for a call of
/// `ownInterface` or Introspect on `path`; returns 0 (not there) when the call being
/// dispatched is addressed to another path (a parent listing its
/// children); else sets AccessDenied with `deniedWhy` in `error`.
int answerLookup(sd_bus* bus, const char* path, void* object, bool visible,
                 const char* ownInterface, const char* deniedWhy, void** found,
                 sd_bus_error* error);

} // namespace tracectl::bus
