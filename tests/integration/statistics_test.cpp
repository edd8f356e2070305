// Session statistics, for real: the Statistics and ChannelStatistics
// properties of sessions traced by the bundled LTTng-UST app through
// tracectld and its consumer unit, held against what babeltrace2 reads in
// the trace (count_events.py, python3-bt2) and against the files on disk;
// and how often PropertiesChanged announces them (SignalRecorder).
#include "child_process.hpp"
#include "eventually.hpp"
#include "sandbox.hpp"
#include "sandbox_suite.hpp"
#include "signal_recorder.hpp"
#include "trace_counts.hpp"
#include "tracectl_clients.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <gtest/gtest.h>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

using namespace tracectl::test;
namespace fs = std::filesystem;
using Options = std::map<std::string, sdbus::Variant>;

namespace {

/// One entry of ChannelStatistics or the Statistics totals, as numbers.
using Figures = std::map<std::string, std::uint64_t>;

Figures figuresOf(const std::map<std::string, sdbus::Variant>& dict) {
    Figures out;
    for (const auto& [key, value] : dict)
        out[key] = value.get<std::uint64_t>();
    return out;
}

/// Bytes of the files below `dir` that the consumer writes as stream files
/// (data streams and metadata), index files left out.
std::uint64_t streamFileBytes(const std::string& dir) {
    std::uint64_t bytes = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file() && e.path().parent_path().filename() != "index")
            bytes += e.file_size();
    return bytes;
}

class Statistics : public SandboxSuite {
protected:
    /// A started session `name` that counts events, with two channels
    /// recording tracectl_demo:tick: "small" (two 4 KiB sub-buffers, which a
    /// flood overflows) and "roomy".
    std::unique_ptr<SessionClient> startTwoChannelSession(const std::string& name, bool perPid) {
        Options options{{"output-path", sdbus::Variant(output(name))},
                        {"count-events", sdbus::Variant(true)}};
        if (perPid)
            options["buffer-ownership"] = sdbus::Variant(std::string("per-pid"));
        auto s = std::make_unique<SessionClient>(*bus_, manager_->CreateSession(name, options));
        s->AddChannel("ust", "small",
                      {{"subbuf-size", sdbus::Variant(std::uint64_t{4096})},
                       {"subbuf-count", sdbus::Variant(std::uint64_t{2})}});
        s->AddChannel("ust", "roomy",
                      {{"subbuf-size", sdbus::Variant(std::uint64_t{1} << 20)},
                       {"subbuf-count", sdbus::Variant(std::uint64_t{8})}});
        s->EnableEvents("ust", "small", "tracectl_demo:tick", {});
        s->EnableEvents("ust", "roomy", "tracectl_demo:tick", {});
        s->Start({});
        return s;
    }

    void flood(std::uint64_t ticks) {
        ChildProcess app({demoApp(), std::to_string(ticks), "0"}, {},
                         sandbox_->dir() + "/log/apps.log");
        ASSERT_EQ(app.wait(120000), 0);
    }

    /// The session's figures (read after a Stop: final) equal what
    /// babeltrace2 counts in its whole output folder, per channel, and the
    /// bytes equal the stream files' sizes.
    void expectFiguresMatchTheTrace(SessionClient& s, const std::string& dir) {
        const auto counts = countEvents(dir, {"--per-channel"});
        ASSERT_TRUE(counts.contains("per_channel")) << counts.dump();
        std::uint64_t recorded = 0, discarded = 0;
        for (const auto& entry : s.ChannelStatistics()) {
            const std::string domain = entry.get<0>();
            const std::string channel = entry.get<1>();
            const Figures f = figuresOf(entry.get<2>());
            EXPECT_EQ(domain, "ust");
            const auto& c = counts["per_channel"][channel];
            EXPECT_EQ(f.at("events-recorded"), c["events"].get<std::uint64_t>()) << channel;
            EXPECT_EQ(f.at("events-discarded"), c["discarded"].get<std::uint64_t>()) << channel;
            EXPECT_EQ(f.at("packets-lost"), 0u) << channel; // discard mode
            recorded += f.at("events-recorded");
            discarded += f.at("events-discarded");
        }
        const Figures total = figuresOf(s.Statistics());
        EXPECT_EQ(total.at("events-recorded"), recorded);
        EXPECT_EQ(total.at("events-discarded"), discarded);
        EXPECT_EQ(recorded, counts["total"].get<std::uint64_t>());
        EXPECT_EQ(discarded, counts["discarded"].get<std::uint64_t>());
        EXPECT_EQ(total.at("bytes-written"), streamFileBytes(dir));
        EXPECT_GT(total.at("sampled-at"), 0u);
    }

    /// Rotate() and wait for its RotationCompleted; returns the archive.
    static std::string rotateAndWait(SessionClient& s, SignalRecorder& signals) {
        const std::string archive = s.Rotate({});
        const std::string wanted = "RotationCompleted " + s.getObjectPath() + " " + archive;
        EXPECT_TRUE(signals.waitUntil(
            [&](const std::vector<std::string>& lines) {
                return std::find(lines.begin(), lines.end(), wanted) != lines.end();
            },
            std::chrono::seconds(20)))
            << "no " << wanted;
        return archive;
    }

    void statisticsMatchTheTrace(const std::string& name, bool perPid) {
        SignalRecorder signals;
        const std::string dir = output(name);
        auto s = startTwoChannelSession(name, perPid);
        flood(100000);
        s->Stop({});
        {
            SCOPED_TRACE("after a Stop");
            expectFiguresMatchTheTrace(*s, dir);
        }
        // Every tick is in each channel, recorded or counted as discarded;
        // the small channel overflowed (a flood through 8 KiB), so the
        // discarded figures were exercised.
        const auto channels = s->ChannelStatistics();
        ASSERT_EQ(channels.size(), 2u);
        for (const auto& c : channels) {
            const Figures f = figuresOf(c.get<2>());
            EXPECT_EQ(f.at("events-recorded") + f.at("events-discarded"), 100000u) << c.get<1>();
        }
        EXPECT_GT(figuresOf(channels[0].get<2>()).at("events-discarded"), 0u);

        s->Start({});
        flood(50000);
        const std::string archive = rotateAndWait(*s, signals);
        flood(20000);
        s->Stop({});
        {
            SCOPED_TRACE("after a rotation and a Stop");
            expectFiguresMatchTheTrace(*s, dir);
        }
        const Figures total = figuresOf(s->Statistics());
        for (const auto& c : s->ChannelStatistics()) {
            const Figures f = figuresOf(c.get<2>());
            EXPECT_EQ(f.at("events-recorded") + f.at("events-discarded"), 170000u) << c.get<1>();
        }
        // One rotation: the output holds its archive and the current chunk,
        // which holds only what was written after it.
        EXPECT_GT(total.at("chunk-bytes"), 0u);
        EXPECT_EQ(total.at("chunk-bytes"), total.at("bytes-written") - streamFileBytes(archive));
        s->Destroy({});
    }

    /// Four apps writing flat out into one per-UID channel of 8 sub-buffers of
    /// 4 KiB, with `channel` options added; then the trace's discarded count
    /// (babeltrace2) must be the statistics', and known for every packet.
    void discardsAgreeUnderLoad(const std::string& name,
                                std::map<std::string, sdbus::Variant> channel) {
        const std::string dir = output(name);
        channel.emplace("subbuf-size", sdbus::Variant(std::uint64_t{4096}));
        channel.emplace("subbuf-count", sdbus::Variant(std::uint64_t{8}));
        auto s = startTickSession(name, {}, false, channel);
        {
            std::vector<std::unique_ptr<ChildProcess>> apps;
            for (int i = 0; i < 4; ++i)
                apps.push_back(std::make_unique<ChildProcess>(
                    std::vector<std::string>{demoApp(), "100000", "0"}, std::vector<std::string>{},
                    sandbox_->dir() + "/log/apps.log"));
            for (auto& app : apps)
                ASSERT_EQ(app->wait(120000), 0);
        }
        s->Stop({});
        const auto counts = countEvents(dir);
        const Figures total = figuresOf(s->Statistics());
        std::cout << name << ": " << total.at("events-discarded") << " events discarded, "
                  << total.at("packets-lost") << " packets lost; the trace: " << counts["discarded"]
                  << " discarded, " << counts["discarded_unknown"] << " without a count\n";
        EXPECT_EQ(counts["discarded_unknown"].get<std::uint64_t>(), 0u);
        EXPECT_EQ(total.at("events-discarded"), counts["discarded"].get<std::uint64_t>());
        s->Destroy({});
    }
};

} // namespace

TEST_F(Statistics, PerUidFiguresMatchTheTraceBeforeAndAfterARotation) {
    statisticsMatchTheTrace("stats-uid", false);
}

TEST_F(Statistics, PerPidFiguresMatchTheTraceBeforeAndAfterARotation) {
    statisticsMatchTheTrace("stats-pid", true);
}

TEST_F(Statistics, PropertiesChangedComesAboutOnceASecondWhileTracingAndNeverWhenIdle) {
    SignalRecorder signals;
    const std::string dir = output("stats-rate");
    // Small sub-buffers, so that a steady 2000 ticks a second fill several
    // packets every second without overflowing them.
    auto s = startTickSession("stats-rate", {}, false,
                              {{"subbuf-size", sdbus::Variant(std::uint64_t{4096})},
                               {"subbuf-count", sdbus::Variant(std::uint64_t{16})}});
    const std::string line = "PropertiesChanged " + s->getObjectPath() + " Statistics=<a{sv}>";
    const auto countLines = [&] {
        const auto lines = signals.waitFor(0, std::chrono::milliseconds(0));
        return std::count(lines.begin(), lines.end(), line);
    };
    const std::string log = sandbox_->dir() + "/log/apps.log";
    {
        ChildProcess app({demoApp(), "28000", "500"}, {}, log); // 14 s of ticks
        ASSERT_TRUE(waitTracing(app.pid(), log));
        // The first figures are in: tracing is steady from here.
        ASSERT_TRUE(eventually([&] { return countLines() >= 1; }, std::chrono::seconds(10)));
        const auto before = countLines();
        std::this_thread::sleep_for(std::chrono::seconds(10)); // the window measured, on purpose
        const auto during = countLines() - before;
        EXPECT_GE(during, 8) << "PropertiesChanged for Statistics in 10 s of steady tracing";
        EXPECT_LE(during, 12) << "PropertiesChanged for Statistics in 10 s of steady tracing";
        ASSERT_EQ(app.wait(60000), 0);
    }
    // The app is gone; the session stays active and idle. What the last
    // packets brought is told within a period or two; then nothing.
    ASSERT_TRUE(eventually(
        [&] {
            const auto a = countLines();
            std::this_thread::sleep_for(std::chrono::milliseconds(2500)); // Pacing, on purpose
            return countLines() == a;
        },
        std::chrono::seconds(20)));
    const auto idleFrom = countLines();
    std::this_thread::sleep_for(std::chrono::seconds(5)); // an idle window, on purpose
    EXPECT_EQ(countLines(), idleFrom) << "PropertiesChanged for Statistics while idle";
    s->Stop({});
    s->Destroy({});
}

TEST_F(Statistics, WithoutCountEventsTheRecordsGoUncountedAndTheRestIsThere) {
    const std::string dir = output("stats-nocount");
    auto s = startTickSession("stats-nocount", {}, false,
                              {{"subbuf-size", sdbus::Variant(std::uint64_t{4096})},
                               {"subbuf-count", sdbus::Variant(std::uint64_t{2})}});
    {
        ChildProcess app({demoApp(), "50000", "0"}, {}, sandbox_->dir() + "/log/apps.log");
        ASSERT_EQ(app.wait(120000), 0);
    }
    s->Stop({});
    const auto counts = countEvents(dir);
    const Figures total = figuresOf(s->Statistics());
    // Unknown, not 0: the key is left out, here and per channel.
    EXPECT_EQ(total.count("events-recorded"), 0u);
    EXPECT_EQ(total.at("events-discarded"), counts["discarded"].get<std::uint64_t>());
    EXPECT_EQ(total.at("bytes-written"), streamFileBytes(dir));
    for (const auto& c : s->ChannelStatistics())
        EXPECT_EQ(figuresOf(c.get<2>()).count("events-recorded"), 0u);
    s->Destroy({});
}

TEST_F(Statistics, CountEventsIsRefusedForASnapshotSessionAndMustBeABoolean) {
    const auto create = [&](const std::string& name, Options options) {
        return errorNameOf([&] { manager_->CreateSession(name, options); });
    };
    EXPECT_EQ(create("stats-snap", {{"mode", sdbus::Variant(std::string("snapshot"))},
                                    {"count-events", sdbus::Variant(true)}}),
              "org.tracectl.Tracing1.Error.InvalidArgument");
    EXPECT_EQ(create("stats-type", {{"count-events", sdbus::Variant(std::string("yes"))}}),
              "org.tracectl.Tracing1.Error.InvalidArgument");
}

// Found by a fresh-user pass: a snapshot session's figures only moved at
// Stop, and a snapshot taken while stopped never counted.
TEST_F(Statistics, ASnapshotSessionCountsWhatEachSnapshotWrites) {
    auto s = startTickSession("stats-snap", {{"mode", sdbus::Variant(std::string("snapshot"))}},
                              false, {});
    {
        ChildProcess app({demoApp(), "2000", "0"}, {}, sandbox_->dir() + "/log/apps.log");
        ASSERT_EQ(app.wait(60000), 0);
    }
    const std::string first = s->RecordSnapshot({});
    // Told before RecordSnapshot answers: no wait needed.
    EXPECT_EQ(figuresOf(s->Statistics()).at("bytes-written"), streamFileBytes(first));
    s->Stop({});
    const std::string second = s->RecordSnapshot({});
    EXPECT_EQ(figuresOf(s->Statistics()).at("bytes-written"),
              streamFileBytes(first) + streamFileBytes(second));
    s->Destroy({});
}

// Issue 40, A.5: in overwrite mode under load, the first packet of each
// stream the consumer read already carried discards (the packet each stream
// opens at its start had been overwritten before it was read), which
// babeltrace2 can only report as "may have discarded", without a count: the
// trace showed thousands fewer losses than the figures. Each stream's first
// packet, events_discarded 0 at its start, is now in the trace, so both
// count the same losses.
TEST_F(Statistics, AnOverwriteChannelUnderLoadHasTheTraceAndTheFiguresAgreeOnDiscards) {
    discardsAgreeUnderLoad("stats-overwrite", {{"overwrite", sdbus::Variant(true)}});
}

// The switch timer flushes every stream while the apps write: lttng-ust
// 2.13 then ends some packets with a stale events_discarded, lower than an
// earlier packet's (discarded_count_floor.hpp), which babeltrace2 reads as
// a loss of about 2^64 events. Each mode, at the timer's floor (1 ms), four
// times: one session in three showed it without the floor.
TEST_F(Statistics, ASwitchTimerUnderLoadKeepsEachStreamsDiscardedCountGoingUp) {
    for (int round = 0; round < 4; ++round)
        for (const bool overwrite : {false, true}) {
            const std::string name = std::string("stats-timer-") +
                                     (overwrite ? "overwrite-" : "discard-") +
                                     std::to_string(round);
            SCOPED_TRACE(name);
            discardsAgreeUnderLoad(name, {{"overwrite", sdbus::Variant(overwrite)},
                                          {"switch-timer", sdbus::Variant(std::uint32_t{1000})}});
        }
}
