// Makes a connection's first call wait until polkit has said which other
// users' objects that connection may see. What a caller sees (property
// reads, GetManagedObjects, Introspect, `busctl tree`, and which signals it
// receives) is decided synchronously, from grants cached per connection
// (PolkitAuthority::cachedForReading()); polkit's answer takes a round trip.
// So the first call of a connection that is not root is held back, polkitd
// is asked (without interaction) about manage-all-sessions and
// trace-all-users, and once it answered the call is put back on the bus's
// read queue (sd_bus_enqueue_for_read(3), as systemd's bus-polkit does) and
// dispatched again, now with the answers cached. If polkitd cannot answer,
// the call goes on and the caller sees only its own objects.
#pragma once

#include "auth/peer_directory.hpp"
#include "auth/polkit_authority.hpp"
#include "common/lifetime.hpp"

#include <map>

namespace tracectl::bus {

class VisibilityGate {
public:
    /// The grants that decide what a caller sees of other users.
    static constexpr auth::Action kGrants[] = {auth::Action::ManageAllSessions,
                                               auth::Action::TraceAllUsers};

    /// Adds the filter to `bus`. All references must outlive this object.
    VisibilityGate(sd_bus* bus, PeerDirectory& peers, auth::PolkitAuthority& authority);
    VisibilityGate(const VisibilityGate&) = delete;
    VisibilityGate& operator=(const VisibilityGate&) = delete;

    /// Calls held back now (for tests and the journal).
    std::size_t waiting() const noexcept { return waiting_; }

private:
    static int onMessage(sd_bus_message* m, void* userdata, sd_bus_error* error);
    /// 1 if `m` was held back, 0 to let it through.
    int gate(sd_bus_message* m);
    /// Puts `m` back on the read queue, to pass this filter next time.
    void release(MessagePtr m);

    sd_bus* bus_;
    PeerDirectory& peers_;
    auth::PolkitAuthority& authority_;
    SlotPtr filter_;
    /// Calls put back on the read queue: they pass once, then are dropped here.
    std::map<sd_bus_message*, MessagePtr> released_;
    std::size_t waiting_ = 0;
    /// Last (gone first): polkit's answers coming once the gate is gone do nothing.
    Lifetime lifetime_;
};

} // namespace tracectl::bus
