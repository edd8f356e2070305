#include "relay/relay_session_opener.hpp"

#include "common/relayd/relayd_control.hpp"

#include <fcntl.h>
#include <random>
#include <unistd.h>

namespace tracectl {

namespace {

[[noreturn]] void unavailable(const RelayAddress& address, const std::string& why) {
    throw Error(ErrorCode::RelayUnavailable,
                "cannot stream to the relay at " + address.url() + ": " + why);
}

/// Runs `body`, turning the relay codec's errors into RelayUnavailable.
template <class F>
auto talking(const RelayAddress& address, F body) {
    try {
        return body();
    } catch (const relayd::RelaydRefused& e) {
        unavailable(address, e.what());
    } catch (const relayd::RelaydProtocolError& e) {
        unavailable(address, std::string("the peer does not speak lttng-relayd's protocol (") +
                                 e.what() + ")");
    } catch (const relayd::RelaydIoError& e) {
        unavailable(address, e.what());
    }
}

relayd::RelaydSocket connectTo(const RelayEndpoint& endpoint, std::chrono::milliseconds timeout) {
    return relayd::RelaydSocket::connect(endpoint.host, endpoint.port, timeout);
}

} // namespace

OpenedRelaySession openRelaySession(const RelaySessionParams& params,
                                    std::chrono::milliseconds timeout) {
    return talking(params.address, [&] {
        relayd::RelaydControl control(connectTo(params.address.control, timeout), timeout);
        const relayd::Version used = control.version();
        control.getConfiguration();
        relayd::CreateSessionRequest request;
        request.sessionName = params.sessionName;
        request.hostname = params.hostname;
        request.liveTimerUs = params.liveTimerUs;
        request.snapshot = params.snapshot;
        request.sessiondUuid = params.daemonUuid;
        request.sessionId = params.sessionId;
        request.creationTime = params.creationTime;
        const relayd::CreatedSession created = control.createSession(request);
        relayd::RelaydSocket data = connectTo(params.address.data, timeout);
        OpenedRelaySession out;
        out.relaySessionId = created.relaySessionId;
        out.outputPath = created.outputPath;
        out.minor = used.minor;
        out.data = data.release();
        out.control = std::move(control).releaseSocket().release();
        return out;
    });
}

void probeRelay(const RelayAddress& address, std::chrono::milliseconds timeout) {
    talking(address, [&] {
        relayd::RelaydControl control(connectTo(address.control, timeout), timeout);
        control.version();
        connectTo(address.data, timeout);
        return 0;
    });
}

std::string relayHostname() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) < 0 || name[0] == '\0')
        return "localhost";
    return name;
}

const std::array<uint8_t, 16>& daemonRelayUuid() {
    static const std::array<uint8_t, 16> uuid = [] {
        std::array<uint8_t, 16> u{};
        std::random_device device;
        for (auto& b : u)
            b = static_cast<uint8_t>(device());
        u[6] = static_cast<uint8_t>((u[6] & 0x0F) | 0x40); // version 4
        u[8] = static_cast<uint8_t>((u[8] & 0x3F) | 0x80); // RFC 4122 variant
        return u;
    }();
    return uuid;
}

} // namespace tracectl
