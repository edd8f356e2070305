// What tracectld's D-Bus objects use of the bus: the connection, who calls,
// where signals go, and polkit. One per daemon, made in main().
#pragma once

#include "auth/peer_directory.hpp"
#include "auth/polkit_authority.hpp"
#include "auth/signal_sender.hpp"

namespace tracectl {
class KernelSupport;
}

namespace tracectl::bus {

struct BusServices {
    sd_bus* bus;
    PeerDirectory& peers;
    SignalSender& signals;
    auth::PolkitAuthority& authority;
    /// The kernel domain's discovery (nullptr: no kernel domain here).
    KernelSupport* kernel = nullptr;
};

} // namespace tracectl::bus
