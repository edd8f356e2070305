// The relay URLs lttng-create(1) takes (lttng-tools 2.13 src/common/uri.c),
// and what a session request with one becomes.
#include "common/error.hpp"
#include "session/relay_address.hpp"
#include "session/session_registry.hpp"

#include <gtest/gtest.h>

using namespace tracectl;

namespace {

/// The InvalidArgument message of parsing `url`, or "" if it parsed.
std::string refusalOf(const std::string& url) {
    try {
        parseNetUrl(url);
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << url;
        return e.what();
    }
    return "";
}

SessionRegistry makeRegistry() {
    return SessionRegistry(
        [](uid_t uid) -> std::optional<std::string> { return "/home/u" + std::to_string(uid); });
}

/// The error code plan() gives `request`, or nullopt if it is accepted.
std::optional<ErrorCode> planFailure(const SessionRequest& request) {
    try {
        makeRegistry().plan(request, 1000);
    } catch (const Error& e) {
        return e.code();
    }
    return std::nullopt;
}

} // namespace

TEST(RelayAddress, NetUrlWithDefaultPorts) {
    const RelayAddress a = parseNetUrl("net://relay.example");
    EXPECT_EQ(a.control, (RelayEndpoint{"relay.example", false, 5342}));
    EXPECT_EQ(a.data, (RelayEndpoint{"relay.example", false, 5343}));
    EXPECT_EQ(a.url(), "net://relay.example:5342:5343");
}

TEST(RelayAddress, NetUrlWithPorts) {
    EXPECT_EQ(parseNetUrl("net://127.0.0.1:6000").url(), "net://127.0.0.1:6000:5343");
    const RelayAddress a = parseNetUrl("net://127.0.0.1:6000:6001");
    EXPECT_EQ(a.control.port, 6000);
    EXPECT_EQ(a.data.port, 6001);
    EXPECT_EQ(a.control.text(), "127.0.0.1:6000");
}

TEST(RelayAddress, Ipv6LiteralsInBrackets) {
    const RelayAddress a = parseNetUrl("net://[::1]:7000:7001");
    EXPECT_TRUE(a.control.ipv6);
    EXPECT_EQ(a.control.host, "::1");
    EXPECT_EQ(a.data.text(), "[::1]:7001");
    EXPECT_EQ(a.url(), "net://[::1]:7000:7001");
    EXPECT_EQ(parseNetUrl("net6://[fe80::1]").url(), "net://[fe80::1]:5342:5343");
}

TEST(RelayAddress, RefusesWhatIsNotARelayUrl) {
    EXPECT_NE(refusalOf("tcp://127.0.0.1:5342").find("net://HOST"), std::string::npos);
    EXPECT_NE(refusalOf("net://").find("invalid relay URL"), std::string::npos);
    EXPECT_NE(refusalOf("net://:5342").find("no host"), std::string::npos);
    EXPECT_NE(refusalOf("net://h:0").find("1 to 65535"), std::string::npos);
    EXPECT_NE(refusalOf("net://h:65536").find("1 to 65535"), std::string::npos);
    EXPECT_NE(refusalOf("net://h:12x").find("1 to 65535"), std::string::npos);
    EXPECT_NE(refusalOf("net://h:1:2:3").find("at most two ports"), std::string::npos);
    EXPECT_NE(refusalOf("net://h:5342:5342").find("must differ"), std::string::npos);
    EXPECT_NE(refusalOf("net://h/some/path").find("trace path"), std::string::npos);
    EXPECT_NE(refusalOf("net://[::1").find("']'"), std::string::npos);
    EXPECT_NE(refusalOf("net://[nothex]").find("not an IPv6 address"), std::string::npos);
    EXPECT_NE(refusalOf("net://::1").find("brackets"), std::string::npos);
    EXPECT_NE(refusalOf("net6://127.0.0.1").find("IPv6"), std::string::npos);
    EXPECT_NE(refusalOf("net://a b").find("host name"), std::string::npos);
    EXPECT_NE(refusalOf("net://-h").find("host name"), std::string::npos);
    EXPECT_NE(refusalOf("net://" + std::string(300, 'a')).find("host name"), std::string::npos);
}

TEST(RelayAddress, ControlAndDataUrls) {
    const auto a = relayAddressOf(std::nullopt, std::string("tcp://10.0.0.5:6000"),
                                  std::string("tcp://10.0.0.5:6001"));
    ASSERT_TRUE(a);
    EXPECT_EQ(a->url(), "net://10.0.0.5:6000:6001");
    const auto split = relayAddressOf(std::nullopt, std::string("tcp://10.0.0.5:6000"),
                                      std::string("tcp6://[::1]:6001"));
    ASSERT_TRUE(split);
    EXPECT_EQ(split->url(), "tcp://10.0.0.5:6000 tcp://[::1]:6001");
    // net:// stands for one endpoint too, with the default port.
    EXPECT_EQ(parseEndpointUrl("net://h", 5343).port, 5343);
    EXPECT_THROW(parseEndpointUrl("tcp://h", 5343), Error); // tcp:// needs its port
    EXPECT_THROW(parseEndpointUrl("tcp://h:1:2", 5343), Error);
    EXPECT_THROW(relayAddressOf(std::nullopt, std::string("tcp://h:1"), std::nullopt), Error);
    EXPECT_THROW(
        relayAddressOf(std::string("net://h"), std::string("tcp://h:1"), std::string("tcp://h:2")),
        Error);
    EXPECT_THROW(relayAddressOf(std::nullopt, std::string("tcp://h:1"), std::string("tcp://h:1")),
                 Error);
}

TEST(RelayAddress, FileUrlIsALocalPath) {
    EXPECT_FALSE(relayAddressOf(std::string("file:///tmp/t"), std::nullopt, std::nullopt));
    EXPECT_EQ(filePathOfUrl("file:///tmp/t"), "/tmp/t");
    EXPECT_EQ(filePathOfUrl("net://h"), std::nullopt);
    EXPECT_THROW(filePathOfUrl("file://relative"), Error);
    EXPECT_THROW(filePathOfUrl("file://"), Error);
}

TEST(NetworkSessionRequest, UrlMakesANetworkSessionWithoutLocalPath) {
    SessionRequest r;
    r.name = "net";
    r.url = "net://127.0.0.1:6000:6001";
    const auto plan = makeRegistry().plan(r, 1000);
    ASSERT_TRUE(plan.config.relay);
    EXPECT_EQ(plan.config.relay->url(), "net://127.0.0.1:6000:6001");
    EXPECT_EQ(plan.config.outputPath, "");
    EXPECT_EQ(plan.config.mode, SessionMode::Normal);
    EXPECT_EQ(plan.config.liveTimerUs, 0u);
}

TEST(NetworkSessionRequest, FileUrlIsTheOutputPath) {
    SessionRequest r;
    r.name = "local";
    r.url = "file:///srv/traces/x";
    const auto plan = makeRegistry().plan(r, 1000);
    EXPECT_FALSE(plan.config.relay);
    EXPECT_EQ(plan.config.outputPath, "/srv/traces/x");
    r.outputPath = "/srv/other";
    EXPECT_EQ(planFailure(r), ErrorCode::InvalidArgument);
}

TEST(NetworkSessionRequest, LiveDefaultsToLoopbackAndOneSecond) {
    SessionRequest r;
    r.name = "live";
    r.mode = "live";
    const auto plan = makeRegistry().plan(r, 1000);
    EXPECT_EQ(plan.config.mode, SessionMode::Live);
    ASSERT_TRUE(plan.config.relay);
    EXPECT_EQ(plan.config.relay->url(), "net://127.0.0.1:5342:5343");
    EXPECT_EQ(plan.config.liveTimerUs, kDefaultLiveTimerUs);
    EXPECT_EQ(toString(plan.config.mode), "live");
    r.liveTimerUs = 100'000;
    EXPECT_EQ(makeRegistry().plan(r, 1000).config.liveTimerUs, 100'000u);
}

TEST(NetworkSessionRequest, RefusesConflicts) {
    SessionRequest r;
    r.name = "x";
    r.url = "net://h";
    r.outputPath = "/tmp/x"; // a network session writes nothing locally
    EXPECT_EQ(planFailure(r), ErrorCode::InvalidArgument);
    r.outputPath.reset();
    r.mode = "snapshot"; // snapshots go to the relay too
    EXPECT_EQ(planFailure(r), std::nullopt);
    r.liveTimerUs = 1000; // live-timer without live
    EXPECT_EQ(planFailure(r), ErrorCode::InvalidArgument);
    r.mode.reset();
    EXPECT_EQ(planFailure(r), ErrorCode::InvalidArgument);
    r.mode = "live";
    r.liveTimerUs = 0;
    EXPECT_EQ(planFailure(r), ErrorCode::InvalidArgument);
    r.liveTimerUs = kMaxLiveTimerUs + 1;
    EXPECT_EQ(planFailure(r), ErrorCode::InvalidArgument);
    r.liveTimerUs.reset();
    r.url = "file:///tmp/live"; // live needs a relay
    EXPECT_EQ(planFailure(r), ErrorCode::InvalidArgument);
    r.url = "net://h:1:1";
    EXPECT_EQ(planFailure(r), ErrorCode::InvalidArgument);
}
