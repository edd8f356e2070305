// Sends tracectld's signals unicast, to each peer connection that may see
// the object concerned, instead of broadcasting them: a broadcast reaches
// every connection with a match rule, and would tell any local user the
// names, paths and states of other users' sessions. A peer is a connection
// that has called the daemon at least once (auth/peer_directory.hpp); a
// client that only subscribes receives nothing until it calls (say,
// GetManagedObjects, or org.freedesktop.DBus.Peer.Ping).
#pragma once

#include "auth/caller.hpp"
#include "auth/peer_directory.hpp"

#include <functional>
#include <string>

namespace tracectl::bus {

class SignalSender {
public:
    /// May this peer receive a signal about the object?
    using Audience = std::function<bool(const auth::Caller&)>;
    /// Appends the signal's arguments (sd_bus_message_append(3)).
    using Body = std::function<void(sd_bus_message*)>;

    /// `bus` and `peers` must outlive this object.
    SignalSender(sd_bus* bus, PeerDirectory& peers) : bus_(bus), peers_(peers) {}

    /// Sends `interface`.`member` from `path`, with the arguments `body`
    /// appends, to each peer `audience` admits. Failures are logged, never
    /// thrown (a signal is never worth a failed call).
    void send(const std::string& path, const char* interface, const char* member,
              const Audience& audience, const Body& body) const;

private:
    sd_bus* bus_;
    PeerDirectory& peers_;
};

} // namespace tracectl::bus
