// Who is reading properties right now. sdbus-c++ 1.2 hands property getters
// no message (IObject::getCurrentlyProcessedMessage() is set in method
// handlers only), but sd-bus runs match callbacks before it dispatches a
// message to the objects: a match on the Properties and ObjectManager calls
// sent to the daemon records the caller just before the getters run, and the
// bus loop forgets it once that message is handled (BusEventSource).
#pragma once

#include "auth/polkit_authority.hpp"

#include <optional>
#include <sdbus-c++/sdbus-c++.h>

namespace tracectl::auth {

class ReadCallTracker {
public:
    /// Adds the matches to `bus` (which must outlive this object).
    explicit ReadCallTracker(sdbus::IConnection& bus);
    ReadCallTracker(const ReadCallTracker&) = delete;
    ReadCallTracker& operator=(const ReadCallTracker&) = delete;

    /// The caller of the org.freedesktop.DBus.Properties or
    /// org.freedesktop.DBus.ObjectManager call being dispatched; nullopt
    /// otherwise (getters then run for the daemon's own announcements).
    const std::optional<Caller>& reader() const noexcept { return reader_; }
    /// Call once the current message is handled.
    void forget() noexcept { reader_.reset(); }

private:
    void record(sdbus::Message& msg);

    std::optional<Caller> reader_;
    sdbus::Slot properties_;
    sdbus::Slot objectManager_;
};

} // namespace tracectl::auth
