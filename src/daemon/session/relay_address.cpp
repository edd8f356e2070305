#include "session/relay_address.hpp"

#include "common/error.hpp"
#include "session/session_name.hpp"

#include <arpa/inet.h>
#include <charconv>
#include <vector>

namespace tracectl {

namespace {

/// Longest host name (RFC 1035's 253 characters of a full name).
constexpr std::size_t kMaxHostLength = 253;

[[noreturn]] void bad(std::string_view url, const std::string& why) {
    throw Error(ErrorCode::InvalidArgument,
                "invalid relay URL " + quoteForMessage(std::string(url)) + ": " + why);
}

bool isIpv6Literal(const std::string& host) {
    in6_addr a{};
    return inet_pton(AF_INET6, host.c_str(), &a) == 1;
}

bool isHostName(std::string_view host) {
    if (host.empty() || host.size() > kMaxHostLength || host.front() == '-' || host.front() == '.')
        return false;
    for (const char c : host) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
        if (!ok)
            return false;
    }
    return true;
}

std::uint16_t parsePort(std::string_view url, std::string_view text) {
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value == 0 ||
        value > 65535)
        bad(url, "port " + quoteForMessage(std::string(text)) + " is not a number from 1 to 65535");
    return static_cast<std::uint16_t>(value);
}

/// What follows "scheme://": the host, and the ports after it.
struct Authority {
    RelayEndpoint host; ///< port not set
    std::vector<std::uint16_t> ports;
};

Authority parseAuthority(std::string_view url, std::string_view rest, bool wantIpv6) {
    Authority a;
    if (const auto slash = rest.find('/'); slash != std::string_view::npos)
        bad(url, "a trace path after the host is not supported; the relay decides where the "
                 "trace goes (lttng-relayd -o)");
    std::string_view after;
    if (!rest.empty() && rest.front() == '[') {
        const auto close = rest.find(']');
        if (close == std::string_view::npos)
            bad(url, "'[' without its ']' around the IPv6 address");
        a.host.host = std::string(rest.substr(1, close - 1));
        if (!isIpv6Literal(a.host.host))
            bad(url, quoteForMessage(a.host.host) + " is not an IPv6 address");
        a.host.ipv6 = true;
        after = rest.substr(close + 1);
    } else {
        if (isIpv6Literal(std::string(rest)))
            bad(url, "an IPv6 address goes in brackets: net://[::1]:5342:5343");
        const auto colon = rest.find(':');
        a.host.host = std::string(rest.substr(0, colon));
        after = colon == std::string_view::npos ? std::string_view() : rest.substr(colon);
        if (a.host.host.empty())
            bad(url, "no host");
        if (!isHostName(a.host.host))
            bad(url, quoteForMessage(a.host.host) +
                         " is not a host name or an IPv4 address (put an IPv6 address in "
                         "brackets: net://[::1])");
        if (wantIpv6)
            bad(url, "net6:// and tcp6:// take an IPv6 address in brackets");
    }
    while (!after.empty()) {
        if (after.front() != ':')
            bad(url, "unexpected " + quoteForMessage(std::string(after)) + " after the host");
        after.remove_prefix(1);
        const auto next = after.find(':');
        a.ports.push_back(parsePort(url, after.substr(0, next)));
        after = next == std::string_view::npos ? std::string_view() : after.substr(next);
    }
    return a;
}

/// The part after `scheme://` if `url` starts with one of `schemes`;
/// `matched` gets which.
std::optional<std::string_view> afterScheme(std::string_view url,
                                            std::initializer_list<std::string_view> schemes,
                                            std::string_view& matched) {
    for (const auto scheme : schemes) {
        if (url.size() > scheme.size() + 3 && url.substr(0, scheme.size()) == scheme &&
            url.substr(scheme.size(), 3) == "://") {
            matched = scheme;
            return url.substr(scheme.size() + 3);
        }
    }
    return std::nullopt;
}

} // namespace

std::string RelayEndpoint::urlHost() const {
    return ipv6 ? "[" + host + "]" : host;
}

std::string RelayEndpoint::text() const {
    return urlHost() + ":" + std::to_string(port);
}

std::string RelayAddress::url() const {
    if (control.host == data.host && control.ipv6 == data.ipv6)
        return "net://" + control.urlHost() + ":" + std::to_string(control.port) + ":" +
               std::to_string(data.port);
    return "tcp://" + control.text() + " tcp://" + data.text();
}

RelayAddress parseNetUrl(std::string_view url) {
    std::string_view scheme;
    const auto rest = afterScheme(url, {"net", "net6"}, scheme);
    if (!rest)
        bad(url, "a relay URL is net://HOST[:CTRL_PORT[:DATA_PORT]] or net6://[ADDRESS]...");
    const Authority a = parseAuthority(url, *rest, scheme == "net6");
    if (a.ports.size() > 2)
        bad(url, "at most two ports (control, data)");
    RelayAddress out;
    out.control = out.data = a.host;
    out.control.port = a.ports.empty() ? kDefaultRelayControlPort : a.ports[0];
    out.data.port = a.ports.size() < 2 ? kDefaultRelayDataPort : a.ports[1];
    if (out.control.port == out.data.port)
        bad(url, "the control and data ports must differ");
    return out;
}

RelayEndpoint parseEndpointUrl(std::string_view url, std::uint16_t defaultPort) {
    std::string_view scheme;
    const auto rest = afterScheme(url, {"tcp", "tcp6", "net", "net6"}, scheme);
    if (!rest)
        bad(url, "expected tcp://HOST:PORT (or tcp6://[ADDRESS]:PORT, net://HOST[:PORT])");
    const bool tcp = scheme == "tcp" || scheme == "tcp6";
    const Authority a = parseAuthority(url, *rest, scheme == "tcp6" || scheme == "net6");
    if (a.ports.size() > 1)
        bad(url, "one port only");
    if (tcp && a.ports.empty())
        bad(url, "tcp:// needs a port");
    RelayEndpoint out = a.host;
    out.port = a.ports.empty() ? defaultPort : a.ports[0];
    return out;
}

std::optional<RelayAddress> relayAddressOf(const std::optional<std::string>& url,
                                           const std::optional<std::string>& controlUrl,
                                           const std::optional<std::string>& dataUrl) {
    if (url && (controlUrl || dataUrl))
        throw Error(ErrorCode::InvalidArgument,
                    "give either url or control-url and data-url, not both");
    if (controlUrl.has_value() != dataUrl.has_value())
        throw Error(ErrorCode::InvalidArgument,
                    "control-url and data-url go together: give both, or url instead");
    if (url) {
        if (filePathOfUrl(*url))
            return std::nullopt;
        return parseNetUrl(*url);
    }
    if (!controlUrl)
        return std::nullopt;
    RelayAddress out;
    out.control = parseEndpointUrl(*controlUrl, kDefaultRelayControlPort);
    out.data = parseEndpointUrl(*dataUrl, kDefaultRelayDataPort);
    if (out.control == out.data)
        throw Error(ErrorCode::InvalidArgument,
                    "control-url and data-url name the same endpoint " + out.control.text());
    return out;
}

std::optional<std::string> filePathOfUrl(std::string_view url) {
    constexpr std::string_view kFile = "file://";
    if (url.substr(0, kFile.size()) != kFile)
        return std::nullopt;
    const std::string_view path = url.substr(kFile.size());
    if (path.empty() || path.front() != '/')
        throw Error(ErrorCode::InvalidArgument,
                    "invalid URL " + quoteForMessage(std::string(url)) +
                        ": file:// takes an absolute path (file:///home/me/traces)");
    return std::string(path);
}

} // namespace tracectl
