// Makes reads wait for polkit. Property getters, GetManagedObjects and
// Introspect are answered by sd-bus synchronously, from what the daemon
// knows at that moment; whether a caller may see other users' objects is
// polkit's answer, which takes a round trip. So a read that could show
// other users' objects, from a caller whose grant is not known yet, is held
// back: polkitd is asked (without interaction), and once it answers the call
// is put back on the bus's read queue (sd_bus_enqueue_for_read(3), as
// systemd's bus-polkit does) and dispatched again, now with the answer
// cached (PolkitAuthority::cachedForReading()).
#pragma once

#include "auth/polkit_authority.hpp"
#include "bus/peer_directory.hpp"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tracectl::bus {

class ReadGate {
public:
    /// The actions whose grant decides what `caller` sees at `path`
    /// (nothing when everything there is the caller's own).
    using GrantsNeeded = std::function<std::vector<auth::Action>(const auth::Caller& caller,
                                                                 const std::string& path)>;

    /// Adds the filter to `bus`; gates the org.freedesktop.DBus.Properties,
    /// ObjectManager and Introspectable calls to paths at or under
    /// `root`. All references must outlive this object.
    ReadGate(sd_bus* bus, std::string root, PeerDirectory& peers, auth::PolkitAuthority& authority,
             GrantsNeeded needed);
    ReadGate(const ReadGate&) = delete;
    ReadGate& operator=(const ReadGate&) = delete;

    /// Calls held back now (for tests and the journal).
    std::size_t waiting() const noexcept { return waiting_; }

private:
    static int onMessage(sd_bus_message* m, void* userdata, sd_bus_error* error);
    /// 1 if `m` was held back, 0 to let it through.
    int gate(sd_bus_message* m);
    /// Puts `m` back on the read queue, to pass this filter next time.
    void release(MessagePtr m);

    sd_bus* bus_;
    std::string root_;
    PeerDirectory& peers_;
    auth::PolkitAuthority& authority_;
    GrantsNeeded needed_;
    SlotPtr filter_;
    /// Calls put back on the read queue: they pass once, then are dropped here.
    std::map<sd_bus_message*, MessagePtr> released_;
    std::size_t waiting_ = 0;
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

} // namespace tracectl::bus
