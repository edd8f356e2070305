// Building and reading back sd-bus messages without a bus daemon, for the
// unit tests of src/daemon/bus.
#pragma once

#include "bus/sd_bus_handles.hpp"

#include <cerrno>
#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <sys/socket.h>
#include <system_error>
#include <systemd/sd-bus.h>
#include <vector>

namespace tracectl::bus::test {

/// Releases a bus without flushing it (BusPtr's sd_bus_flush_close_unref
/// would wait forever for a bus that never connected to finish opening).
struct BusUnref {
    void operator()(sd_bus* b) const noexcept { sd_bus_unref(b); }
};
using UnconnectedBusPtr = std::unique_ptr<sd_bus, BusUnref>;

/// A bus that never connects, on which messages can be built: sd_bus_new(3)
/// then sd_bus_start(3), which fails for want of an address (-EINVAL) but
/// leaves the bus in the opening state that sd_bus_message_new(3) requires
/// (sdbus-c++ makes its "pseudo" bus the same way).
inline UnconnectedBusPtr unconnectedBus() {
    sd_bus* raw = nullptr;
    check(sd_bus_new(&raw), "sd_bus_new");
    UnconnectedBusPtr bus(raw);
    const int r = sd_bus_start(bus.get());
    EXPECT_EQ(r, -EINVAL) << "sd_bus_start without an address";
    return bus;
}

/// Two sd-bus connections talking directly, with no bus daemon: `server`
/// (sd_bus_set_server(3)) and `client`, on the two ends of a socketpair,
/// both started.
struct ConnectedPeers {
    UnconnectedBusPtr server;
    UnconnectedBusPtr client;
};

inline ConnectedPeers connectedPeers() {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0)
        throw std::system_error(errno, std::generic_category(), "socketpair");
    auto peerOn = [](int fd) {
        sd_bus* raw = nullptr;
        check(sd_bus_new(&raw), "sd_bus_new");
        UnconnectedBusPtr bus(raw);
        check(sd_bus_set_fd(bus.get(), fd, fd), "sd_bus_set_fd");
        return bus;
    };
    ConnectedPeers p{peerOn(fds[0]), peerOn(fds[1])};
    sd_id128_t id;
    check(sd_id128_randomize(&id), "sd_id128_randomize");
    check(sd_bus_set_server(p.server.get(), 1, id), "sd_bus_set_server");
    check(sd_bus_start(p.server.get()), "sd_bus_start(server)");
    check(sd_bus_start(p.client.get()), "sd_bus_start(client)");
    return p;
}

/// An empty method call message on `bus`, to append to.
inline MessagePtr newMessage(sd_bus* bus) {
    sd_bus_message* raw = nullptr;
    check(sd_bus_message_new_method_call(bus, &raw, nullptr, "/org/example/Test",
                                         "org.example.Test", "Test"),
          "sd_bus_message_new_method_call");
    return MessagePtr(raw);
}

/// Seals `m` (sd_bus_message_seal(3)) and moves its read position to the
/// first argument, so what was appended can be read back.
inline void sealForReading(sd_bus_message* m) {
    check(sd_bus_message_seal(m, 1, 0), "sd_bus_message_seal");
    check(sd_bus_message_rewind(m, 1), "sd_bus_message_rewind");
}

/// The signature of the arguments of `m`.
inline std::string signatureOf(sd_bus_message* m) {
    const char* s = sd_bus_message_get_signature(m, 1);
    return s != nullptr ? s : "";
}

/// Reads an `as` at the read position.
inline std::vector<std::string> readStrings(sd_bus_message* m) {
    std::vector<std::string> out;
    check(sd_bus_message_enter_container(m, 'a', "s"), "as");
    const char* s = nullptr;
    while (check(sd_bus_message_read_basic(m, 's', &s), "s") > 0)
        out.emplace_back(s);
    check(sd_bus_message_exit_container(m), "as");
    return out;
}

} // namespace tracectl::bus::test
