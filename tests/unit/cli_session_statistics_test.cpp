// Unit tests of how tracectl reads the Statistics and ChannelStatistics properties (issue 14),
// from sdbus values through variant_json, and of the loss warning.
#include "cli/session_statistics.hpp"
#include "cli/variant_json.hpp"

#include <gtest/gtest.h>
#include <sdbus-c++/Types.h>

using namespace tracectl::cli;
using nlohmann::json;

namespace {

using Dictionary = std::map<std::string, sdbus::Variant>;
using ChannelEntry = sdbus::Struct<std::string, std::string, Dictionary>;

Dictionary figures(std::uint64_t recorded, std::uint64_t discarded, std::uint64_t lost,
                   std::uint64_t written) {
    return {{"events-recorded", sdbus::Variant(recorded)},
            {"events-discarded", sdbus::Variant(discarded)},
            {"packets-lost", sdbus::Variant(lost)},
            {"bytes-written", sdbus::Variant(written)},
            {"chunk-bytes", sdbus::Variant(written / 2)}};
}

/// The two properties as the daemon sends them, converted as BusClient does.
PropertyMap busProperties() {
    Dictionary totals = figures(300, 12, 2, 4096);
    totals.emplace("sampled-at", sdbus::Variant(std::uint64_t{5'000'000}));
    totals.emplace("some-future-key", sdbus::Variant(std::string("ignored")));
    const std::vector<ChannelEntry> channels{
        ChannelEntry{std::string("ust"), std::string("channel0"), figures(200, 12, 2, 3072)},
        ChannelEntry{std::string("kernel"), std::string("k"), figures(100, 0, 0, 1024)},
    };
    return toPropertyMap({{"Name", sdbus::Variant(std::string("web"))},
                          {"Statistics", sdbus::Variant(totals)},
                          {"ChannelStatistics", sdbus::Variant(channels)}});
}

} // namespace

TEST(CliSessionStatistics, ReadsBothPropertiesFromTheBusTypes) {
    const auto statistics = statisticsFromProperties(busProperties());
    ASSERT_TRUE(statistics);
    EXPECT_EQ(statistics->totals, (Counters{300, 12, 2, 4096, 2048}));
    EXPECT_EQ(statistics->sampledAtUs, 5'000'000u);
    ASSERT_EQ(statistics->channels.size(), 2u);
    EXPECT_EQ(statistics->channels[0],
              (ChannelCounters{"ust", "channel0", {200, 12, 2, 3072, 1536}}));
    EXPECT_EQ(statistics->channels[1].domain, "kernel");
}

TEST(CliSessionStatistics, VariantJsonGivesChannelStatisticsAsArraysThatAreMadeReadable) {
    const PropertyMap properties = busProperties();
    const json& raw = properties.at("ChannelStatistics");
    ASSERT_TRUE(raw.is_array());
    EXPECT_EQ(raw[0][0], "ust"); // a(ssa{sv}) is [[domain, channel, {...}], ...] by default
    const json readable = channelStatisticsReadable(raw);
    EXPECT_EQ(readable[0], (json{{"domain", "ust"},
                                 {"channel", "channel0"},
                                 {"events-recorded", 200},
                                 {"events-discarded", 12},
                                 {"packets-lost", 2},
                                 {"bytes-written", 3072},
                                 {"chunk-bytes", 1536}}));
    // The readable form reads back the same.
    EXPECT_EQ(channelsFromJson(readable), channelsFromJson(raw));
}

TEST(CliSessionStatistics, MissingKeysReadAsZeroAndWrongTypesAreIgnored) {
    const PropertyMap properties{
        {"Statistics", json{{"events-recorded", 5}, {"packets-lost", "three"}}},
        {"ChannelStatistics", json::array({json::array({"ust", "c", json::object()}),
                                           json("garbage"), json::array({1, 2, 3})})}};
    const auto statistics = statisticsFromProperties(properties);
    ASSERT_TRUE(statistics);
    EXPECT_EQ(statistics->totals, (Counters{5, 0, 0, 0, 0}));
    EXPECT_EQ(statistics->sampledAtUs, 0u);
    ASSERT_EQ(statistics->channels.size(), 1u);
    EXPECT_EQ(statistics->channels[0].counters, Counters{});
    EXPECT_EQ(countersFromJson(json("not a dictionary")), Counters{});
}

TEST(CliSessionStatistics, NoStatisticsPropertyMeansAnOlderDaemon) {
    EXPECT_FALSE(statisticsFromProperties({{"Name", json("web")}}));
    // ChannelStatistics alone is not enough either: the totals are what list shows.
    EXPECT_FALSE(statisticsFromProperties({{"ChannelStatistics", json::array()}}));
}

TEST(CliSessionStatistics, LossWarning) {
    EXPECT_EQ(lossWarning("web", {}, false), std::nullopt);
    EXPECT_EQ(lossWarning("web", {.eventsRecorded = 10}, false), std::nullopt);
    const std::string advice = "; use bigger sub-buffers (tracectl enable-channel --subbuf-size) "
                               "or more of them (--num-subbuf)";
    EXPECT_EQ(lossWarning("foo", {.eventsDiscarded = 120, .packetsLost = 3}, false),
              "warning: session foo discarded 120 events and lost 3 packets" + advice);
    EXPECT_EQ(lossWarning("foo", {.eventsDiscarded = 1}, false),
              "warning: session foo discarded 1 event" + advice);
    EXPECT_EQ(lossWarning("foo", {.packetsLost = 1}, false),
              "warning: session foo lost 1 packet" + advice);
}

TEST(CliSessionStatistics, ASnapshotSessionIsWarnedOnlyOfWhatItsSnapshotsLost) {
    // Its channels overwrite by design: a kernel channel's overwritten events are no drop.
    EXPECT_EQ(lossWarning("snap", {.eventsDiscarded = 5000}, true), std::nullopt);
    const std::string advice = "; use bigger sub-buffers (tracectl enable-channel --subbuf-size) "
                               "or more of them (--num-subbuf)";
    EXPECT_EQ(lossWarning("snap", {.eventsDiscarded = 5000, .packetsLost = 2}, true),
              "warning: session snap lost 2 packets: sub-buffers the tracer overwrote before a "
              "snapshot could copy them" +
                  advice);
}
