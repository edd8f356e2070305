// The client connections that have called tracectld, with their uids, for
// as long as they stay on the bus. Their uids answer "who is calling"
// (asked of the bus once per connection); their list is where signals go:
// tracectld sends every signal unicast to each peer that may see the
// object concerned (auth/signal_sender.hpp), never broadcast.
#pragma once

#include "auth/caller.hpp"
#include "bus/sd_bus_handles.hpp"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tracectl::bus {

class PeerDirectory {
public:
    /// Adds a filter recording the sender of every method call `bus`
    /// receives, and follows NameOwnerChanged to forget peers that leave.
    /// `bus` must outlive this object.
    explicit PeerDirectory(sd_bus* bus);
    PeerDirectory(const PeerDirectory&) = delete;
    PeerDirectory& operator=(const PeerDirectory&) = delete;

    /// The sender of method call `m` and its uid: the uid the bus daemon
    /// took from the connection's SO_PEERCRED (GetConnectionCredentials),
    /// never from the message body. Throws sdbus::Error(AccessDenied) if
    /// the bus does not tell (the sender left already).
    auth::Caller callerOf(sd_bus_message* m);
    /// The caller of the message being dispatched now
    /// (sd_bus_get_current_message(3)); nullopt outside a dispatch, when the
    /// daemon acts on its own (its signals, a scheduled rotation).
    std::optional<auth::Caller> currentCaller();
    /// The process id of connection `sender`, as the bus daemon took it
    /// from SO_PEERCRED (GetConnectionCredentials), never from a message;
    /// nullopt if the bus does not tell (the sender left). A bus round trip.
    std::optional<pid_t> pidOf(const std::string& sender);

    /// Every connection that has called the daemon and not left: unique
    /// name -> uid.
    const std::map<std::string, uid_t>& peers() const noexcept { return peers_; }
    /// `hook(name)` runs when the unique name `name` leaves the bus.
    void onPeerGone(std::function<void(const std::string&)> hook) {
        goneHooks_.push_back(std::move(hook));
    }

private:
    static int onMessage(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onNameOwnerChanged(sd_bus_message* m, void* userdata, sd_bus_error* error);
    /// The uid of `sender`, from peers_ or asked of the bus (then recorded).
    std::optional<uid_t> uidOf(const std::string& sender);

    sd_bus* bus_;
    SlotPtr filter_;
    SlotPtr nameOwnerChanged_;
    std::map<std::string, uid_t> peers_;
    std::vector<std::function<void(const std::string&)>> goneHooks_;
};

} // namespace tracectl::bus
