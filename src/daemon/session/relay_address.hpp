// Where a network session streams: an lttng-relayd's control and data
// endpoints, read from the URLs lttng-create(1) takes (LTTng 2.13,
// lttng-tools src/common/uri.c): `net://HOST[:CTRL_PORT[:DATA_PORT]]`,
// `net6://...`, or a pair `tcp://HOST:PORT` / `tcp6://HOST:PORT` given as
// the control and data URLs. HOST is a name, an IPv4 literal or a
// bracketed IPv6 literal (`net://[::1]:5342:5343`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tracectl {

/// lttng-relayd's default ports (lttng-tools include/lttng/constant.h:
/// DEFAULT_NETWORK_CONTROL_PORT, DEFAULT_NETWORK_DATA_PORT,
/// DEFAULT_NETWORK_VIEWER_PORT).
inline constexpr std::uint16_t kDefaultRelayControlPort = 5342;
inline constexpr std::uint16_t kDefaultRelayDataPort = 5343;
inline constexpr std::uint16_t kDefaultRelayViewerPort = 5344;
/// Where `lttng create --live` streams when given no URL.
inline constexpr std::string_view kDefaultLiveUrl = "net://127.0.0.1";

/// One TCP endpoint of a relay.
struct RelayEndpoint {
    std::string host;  ///< a name, or an IP literal without brackets
    bool ipv6 = false; ///< `host` is an IPv6 literal (printed in brackets)
    std::uint16_t port = 0;

    /// "127.0.0.1:5342", "[::1]:5342", "relay.example:5342".
    std::string text() const;
    /// host as it stands in a URL: bracketed when IPv6.
    std::string urlHost() const;
    bool operator==(const RelayEndpoint&) const = default;
};

/// Both endpoints of a relay.
struct RelayAddress {
    RelayEndpoint control;
    RelayEndpoint data;

    /// The normalized URL (the session's `OutputUrl`): `net://HOST:CTRL:DATA`
    /// when both endpoints share a host, else "tcp://HOST:CTRL tcp://HOST:DATA"
    /// (control, one space, data).
    std::string url() const;
    bool operator==(const RelayAddress&) const = default;
};

/// Reads `net://HOST[:CTRL[:DATA]]` or `net6://...` (missing ports: the
/// defaults). Throws tracectl::Error(InvalidArgument) naming the URL and
/// what is wrong: another scheme, an empty or malformed host, a port that
/// is not 1..65535, the same port twice, a trace path (`/PATH`: not
/// supported), net6 with a host that is not an IPv6 literal or name.
RelayAddress parseNetUrl(std::string_view url);

/// Reads one endpoint URL, `tcp://HOST:PORT`, `tcp6://HOST:PORT`, or
/// `net://HOST[:PORT]` (`defaultPort` when absent). Throws as parseNetUrl().
RelayEndpoint parseEndpointUrl(std::string_view url, std::uint16_t defaultPort);

/// The relay a session request names: `url` alone (a `file://` URL is not
/// a relay: nullopt), or `controlUrl` and `dataUrl` together. Throws
/// tracectl::Error(InvalidArgument) for one of the pair without the other,
/// `url` with either, or a bad URL.
std::optional<RelayAddress> relayAddressOf(const std::optional<std::string>& url,
                                           const std::optional<std::string>& controlUrl,
                                           const std::optional<std::string>& dataUrl);

/// The local path of a `file:///ABS/PATH` URL, or nullopt for another
/// scheme. Throws tracectl::Error(InvalidArgument) for `file://` with a
/// relative or empty path.
std::optional<std::string> filePathOfUrl(std::string_view url);

} // namespace tracectl
