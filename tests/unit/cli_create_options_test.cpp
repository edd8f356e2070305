// Unit tests of how tracectl builds Manager.CreateSession options.
#include "cli/create_options.hpp"

#include <cstdlib>
#include <ctime>
#include <gtest/gtest.h>
#include <string>
#include <variant>

using namespace tracectl::cli;

TEST(CliCreateOptions, RelativeOutputIsMadeAbsoluteAgainstCwd) {
    EXPECT_EQ(absoluteOutputPath("traces/web", "/home/alice"), "/home/alice/traces/web");
    EXPECT_EQ(absoluteOutputPath("./traces/", "/home/alice"), "/home/alice/traces");
    EXPECT_EQ(absoluteOutputPath("../bob/t", "/home/alice"), "/home/bob/t");
    EXPECT_EQ(absoluteOutputPath(".", "/home/alice"), "/home/alice");
}

TEST(CliCreateOptions, AbsoluteOutputIsNormalized) {
    EXPECT_EQ(absoluteOutputPath("/var/traces", "/home/alice"), "/var/traces");
    EXPECT_EQ(absoluteOutputPath("/var//traces/./x/../", "/home/alice"), "/var/traces");
    EXPECT_EQ(absoluteOutputPath("/", "/home/alice"), "/");
}

TEST(CliCreateOptions, EmptyOutputStaysEmpty) {
    EXPECT_EQ(absoluteOutputPath("", "/home/alice"), "");
}

TEST(CliCreateOptions, OnlyGivenOptionsAreSent) {
    EXPECT_TRUE(createSessionOptions(std::nullopt, false).empty());
    const auto both = createSessionOptions(std::string{"/t"}, true);
    EXPECT_EQ(both, (CreateOptions{{"output-path", std::string{"/t"}},
                                   {"mode", std::string{"snapshot"}}}));
    const auto outputOnly = createSessionOptions(std::string{"/t"}, false);
    EXPECT_EQ(outputOnly, (CreateOptions{{"output-path", std::string{"/t"}}}));
    EXPECT_EQ(createSessionOptions(std::nullopt, false, std::string{"per-pid"}),
              (CreateOptions{{"buffer-ownership", std::string{"per-pid"}}}));
}

TEST(CliCreateOptions, SetUrlIsSentAsTypedAsUrl) {
    NetworkOutput network;
    network.url = "net://[::1]:6000";
    EXPECT_EQ(createSessionOptions(std::nullopt, false, std::nullopt, network),
              (CreateOptions{{"url", std::string{"net://[::1]:6000"}}}));
    network.url = "file:///var/traces/web"; // the daemon takes it as output-path
    EXPECT_EQ(createSessionOptions(std::nullopt, false, std::nullopt, network),
              (CreateOptions{{"url", std::string{"file:///var/traces/web"}}}));
}

TEST(CliCreateOptions, ControlAndDataUrlsAreSentApart) {
    NetworkOutput network;
    network.ctrlUrl = "tcp://10.0.0.5:5342";
    network.dataUrl = "tcp6://[fd00::5]:5343";
    EXPECT_EQ(createSessionOptions(std::nullopt, false, std::string{"per-uid"}, network),
              (CreateOptions{{"control-url", std::string{"tcp://10.0.0.5:5342"}},
                             {"data-url", std::string{"tcp6://[fd00::5]:5343"}},
                             {"buffer-ownership", std::string{"per-uid"}}}));
}

TEST(CliCreateOptions, LiveIsModeLiveWithTheTimerAsAnUnsigned64) {
    NetworkOutput network;
    network.liveTimerUs = 250000;
    const CreateOptions live = createSessionOptions(std::nullopt, false, std::nullopt, network);
    EXPECT_EQ(live, (CreateOptions{{"mode", std::string{"live"}},
                                   {"live-timer", std::uint64_t{250000}}}));
    // D-Bus "t", not a string: the daemon reads live-timer as uint64.
    ASSERT_TRUE(std::holds_alternative<std::uint64_t>(live.at("live-timer")));
    network.url = "net://relay";
    EXPECT_EQ(createSessionOptions(std::nullopt, false, std::nullopt, network),
              (CreateOptions{{"mode", std::string{"live"}},
                             {"live-timer", std::uint64_t{250000}},
                             {"url", std::string{"net://relay"}}}));
}

TEST(CliCreateOptions, StreamsWhenAUrlOrLiveIsGiven) {
    EXPECT_FALSE(NetworkOutput{}.streams());
    NetworkOutput url;
    url.url = "net://relay";
    EXPECT_TRUE(url.streams());
    NetworkOutput apart;
    apart.ctrlUrl = "tcp://a:1";
    apart.dataUrl = "tcp://a:2";
    EXPECT_TRUE(apart.streams());
    NetworkOutput live;
    live.liveTimerUs = kDefaultLiveTimerUs;
    EXPECT_TRUE(live.streams()); // to net://127.0.0.1, the daemon's default
}

TEST(CliLiveTimer, NoValueIsLttngsDefault) {
    EXPECT_EQ(parseLiveTimer(""), std::optional<std::uint64_t>{1000000});
    EXPECT_EQ(kDefaultLiveTimerUs, 1000000U);
}

TEST(CliLiveTimer, DecimalMicrosecondsFromOneTo32Bits) {
    EXPECT_EQ(parseLiveTimer("1"), std::optional<std::uint64_t>{1});
    EXPECT_EQ(parseLiveTimer("250000"), std::optional<std::uint64_t>{250000});
    EXPECT_EQ(parseLiveTimer("4294967295"), std::optional<std::uint64_t>{4294967295});
}

TEST(CliLiveTimer, AnythingElseIsRefused) {
    for (const char* text : {"0", "-1", "+5", " 5", "5 ", "1s", "1e6", "0x10", "s1", "4294967296",
                             "99999999999999999999999"}) {
        EXPECT_EQ(parseLiveTimer(text), std::nullopt) << text;
    }
}

namespace {

/// check_create_output()'s verdict as "OPTION: MESSAGE", "" when accepted.
std::string verdict(const CreateOutputFlags& given) {
    const auto problem = checkCreateOutput(given);
    return problem ? problem->option + ": " + problem->message : "";
}

} // namespace

TEST(CliCreateOutputCheck, LttngsCombinationsAreAccepted) {
    EXPECT_EQ(verdict({}), "");
    EXPECT_EQ(verdict({.output = true}), "");
    EXPECT_EQ(verdict({.output = true, .snapshot = true}), "");
    EXPECT_EQ(verdict({.url = true}), "");
    EXPECT_EQ(verdict({.ctrlUrl = true, .dataUrl = true}), "");
    EXPECT_EQ(verdict({.live = true}), "");
    EXPECT_EQ(verdict({.url = true, .live = true}), "");
    EXPECT_EQ(verdict({.ctrlUrl = true, .dataUrl = true, .live = true}), "");
    // A snapshot session with a relay output: the daemon's to accept or refuse.
    EXPECT_EQ(verdict({.url = true, .snapshot = true}), "");
}

TEST(CliCreateOutputCheck, ControlAndDataUrlsGoTogether) {
    EXPECT_EQ(verdict({.ctrlUrl = true}),
              "--ctrl-url: needs --data-url too (lttng-relayd's control and data connections "
              "go together)");
    EXPECT_EQ(verdict({.dataUrl = true}),
              "--data-url: needs --ctrl-url too (lttng-relayd's control and data connections "
              "go together)");
    EXPECT_EQ(checkCreateOutput({.dataUrl = true, .live = true})->option, "--data-url");
}

TEST(CliCreateOutputCheck, SetUrlExcludesControlAndDataUrls) {
    EXPECT_EQ(verdict({.url = true, .ctrlUrl = true, .dataUrl = true}),
              "--set-url: give either --set-url or --ctrl-url with --data-url, not both");
    // One of the pair alone is named for the missing other first.
    EXPECT_EQ(checkCreateOutput({.url = true, .ctrlUrl = true})->option, "--ctrl-url");
}

TEST(CliCreateOutputCheck, OutputExcludesEveryUrl) {
    EXPECT_EQ(verdict({.output = true, .url = true}),
              "--output: give either --output DIR or --set-url URL, not both (--set-url "
              "file:///DIR is --output /DIR)");
    EXPECT_EQ(verdict({.output = true, .ctrlUrl = true, .dataUrl = true}),
              "--output: a session writes to a folder (--output) or streams to a relay "
              "(--ctrl-url, --data-url), not both");
}

TEST(CliCreateOutputCheck, LiveIsNeitherSnapshotNorLocal) {
    EXPECT_EQ(verdict({.live = true, .snapshot = true}),
              "--live: a session is either live or a snapshot session, not both");
    EXPECT_EQ(verdict({.url = true, .live = true, .snapshot = true}),
              "--live: a session is either live or a snapshot session, not both");
    EXPECT_EQ(verdict({.output = true, .live = true}),
              "--live: a live session streams to lttng-relayd, not to a folder: give --set-url "
              "net://HOST instead of --output");
}

TEST(AutoSession, NameIsAutoAndTheLocalTimeAsLttngCreateGivesIt) {
    ::setenv("TZ", "UTC", 1);
    ::tzset();
    EXPECT_EQ(autoSessionName(std::time_t{1796172245}), "auto-20261202-004405");
    EXPECT_EQ(autoSessionName(std::time_t{0}), "auto-19700101-000000");
}

TEST(AutoSession, OutputIsTheNameAloneUnderLttngTraces) {
    EXPECT_EQ(autoSessionOutput("/home/alice", "auto-20261202-010405"),
              "/home/alice/lttng-traces/auto-20261202-010405");
    EXPECT_EQ(autoSessionOutput("/root/", "auto-1"), "/root/lttng-traces/auto-1");
}
