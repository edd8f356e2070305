// `tracectl top` as a person runs it: in a terminal (a pty from the test), against the real
// daemon in the sandbox, while the bundled app traces. The screen is read back through a small
// terminal emulator (terminal_emulator.hpp), so what is checked is what a person would see.
#include "child_process.hpp"
#include "eventually.hpp"
#include "pty_process.hpp"
#include "sandbox.hpp"
#include "sandbox_suite.hpp"
#include "terminal_emulator.hpp"
#include "tracectl_clients.hpp"

#include <cstdlib>
#include <gtest/gtest.h>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <termios.h>
#include <vector>

using namespace tracectl::test;

namespace {

constexpr int kRows = 40;
constexpr int kColumns = 140;

std::string tracectlBinary() {
    const char* p = std::getenv("TRACECTL");
    return p != nullptr ? p : "tracectl";
}

std::vector<std::string> words(const std::string& line) {
    std::istringstream in(line);
    std::vector<std::string> out;
    for (std::string w; in >> w;)
        out.push_back(w);
    return out;
}

class Top : public SandboxSuite {
protected:
    /// `tracectl top` on a pty of kRows x kColumns, TERM=xterm.
    static std::unique_ptr<PtyProcess> startTop() {
        return std::make_unique<PtyProcess>(std::vector<std::string>{tracectlBinary(), "top"},
                                            std::vector<std::string>{"TERM=xterm"}, kRows,
                                            kColumns);
    }

    /// The screen as top left it so far.
    static std::vector<std::string> screen(PtyProcess& top) {
        top.readAvailable();
        return renderScreen(top.output(), kRows, kColumns);
    }

    static std::string dump(const std::vector<std::string>& lines) {
        std::string out = "screen:\n";
        for (const std::string& line : lines)
            out += "|" + line + "\n";
        return out;
    }

    /// The end of `out`, control characters escaped.
    static std::string tail(const std::string& out) {
        std::string shown;
        for (char c : out.substr(out.size() > 400 ? out.size() - 400 : 0)) {
            if (static_cast<unsigned char>(c) < 0x20)
                shown += "^" + std::string(1, static_cast<char>(c + 64));
            else
                shown += c;
        }
        return shown;
    }

    /// The words of the session row of `name` (SESSION STATE EVENTS/S MB/S DISCARDED LOST).
    static std::optional<std::vector<std::string>> sessionRow(const std::vector<std::string>& lines,
                                                              const std::string& name) {
        for (const std::string& line : lines) {
            auto w = words(line);
            if (w.size() == 6 && w[0] == name && line.rfind(name, 0) == 0)
                return w;
        }
        return std::nullopt;
    }

    /// Quits with `key` and checks the exit status and that the terminal is as it was.
    static void quitAndCheckRestored(PtyProcess& top, const std::string& key) {
        top.type(key);
        EXPECT_EQ(top.wait(10000), 0) << dump(screen(top)) << "last output: " << tail(top.output());
        const termios before = top.settingsAtStart();
        const termios after = top.settingsNow();
        const auto modes = static_cast<tcflag_t>(ICANON | ECHO | ISIG);
        EXPECT_EQ(after.c_lflag & modes, before.c_lflag & modes)
            << "line editing and echo are not back";
        // xterm's rmcup: back from the alternate screen, after the last time it was entered.
        const std::string& out = top.output();
        const auto entered = out.rfind("\x1b[?1049h");
        ASSERT_NE(entered, std::string::npos);
        EXPECT_NE(out.find("\x1b[?1049l", entered), std::string::npos)
            << "the alternate screen was not left";
    }
};

} // namespace

// Needs the daemon side of issue 14 (Statistics, ChannelStatistics, PropertiesChanged).
TEST_F(Top, ShowsATracingSessionWithARateAboveZeroAndQuitsOnQ) {
    // Small sub-buffers, so that a steady thousand ticks a second fill packets every second
    // (with the default 512 KiB ones, the first packet would take many seconds).
    auto s = startTickSession("top-watch", {{"count-events", sdbus::Variant(true)}}, false,
                              {{"subbuf-size", sdbus::Variant(std::uint64_t{4096})},
                               {"subbuf-count", sdbus::Variant(std::uint64_t{16})}});
    const std::string log = sandbox_->dir() + "/log/apps.log";
    ChildProcess app({demoApp(), "100000000", "1000"}, {}, log); // about 1000 ticks a second
    ASSERT_TRUE(waitTracing(app.pid(), log));

    auto top = startTop();
    std::vector<std::string> lines;
    double rate = 0;
    const bool seen = eventually(
        [&] {
            lines = screen(*top);
            const auto row = sessionRow(lines, "top-watch");
            if (!row || (*row)[1] != "active")
                return false;
            // EVENTS/S ("-" until two samples, which reads as 0); MB/S known too (its two
            // decimals may round a slow trickle down to 0.00).
            rate = std::strtod((*row)[2].c_str(), nullptr);
            return rate > 0 && (*row)[3] != "-";
        },
        std::chrono::seconds(30), std::chrono::milliseconds(100));
    EXPECT_TRUE(seen) << dump(lines)
                      << "tracectl show: " << run({tracectlBinary(), "show", "top-watch"}).out;
    EXPECT_GT(rate, 0);
    // Its channel is listed under it.
    bool channelRow = false;
    for (const std::string& line : lines)
        channelRow = channelRow || line.rfind("  ust/channel0", 0) == 0;
    EXPECT_TRUE(channelRow) << dump(lines);

    quitAndCheckRestored(*top, "q");
    app.kill(SIGKILL);
    s->Destroy({});
}

// Issue 40 E1: live rates by default. An app at ~1,000 events/s into 4 MiB sub-buffers completes
// none during the test, so nothing is read but the buffers' first, empty packets; MB/s must
// still be above zero within a few seconds, from the produced positions the consumer samples
// without consuming. Without count-events, events/s is "-".
TEST_F(Top, ShowsALiveByteRateBeforeAnySubBufferIsComplete) {
    constexpr std::uint64_t kSubbuf = std::uint64_t{4} << 20;
    auto s = startTickSession("top-live", {}, false,
                              {{"subbuf-size", sdbus::Variant(kSubbuf)},
                               {"subbuf-count", sdbus::Variant(std::uint64_t{2})}});
    const auto written = [&] {
        const auto figures = s->Statistics();
        const auto it = figures.find("bytes-written");
        return it == figures.end() ? 0 : it->second.get<std::uint64_t>();
    };
    auto top = startTop();
    const std::string log = sandbox_->dir() + "/log/apps.log";
    ChildProcess app({demoApp(), "100000000", "1000"}, {}, log); // about 1000 ticks a second
    ASSERT_TRUE(waitTracing(app.pid(), log));
    const auto tracing = std::chrono::steady_clock::now();

    std::vector<std::string> lines;
    std::optional<std::vector<std::string>> row;
    const bool seen = eventually(
        [&] {
            lines = screen(*top);
            row = sessionRow(lines, "top-live");
            return row && (*row)[3] != "-" && std::strtod((*row)[3].c_str(), nullptr) > 0;
        },
        std::chrono::seconds(6), std::chrono::milliseconds(100));
    const auto after = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - tracing);
    EXPECT_TRUE(seen) << dump(lines) << "Statistics bytes-written " << written();
    if (seen) {
        EXPECT_EQ((*row)[2], "-") << "events/s without count-events: " << dump(lines);
        std::cout << "MB/s " << (*row)[3] << " shown " << after.count()
                  << " ms after the app traced\n";
    }
    // Nothing but the buffers' first, empty packets (a page per stream, read when the app's
    // buffers were made) was read: no sub-buffer was complete.
    const std::uint64_t writtenNow = written();
    EXPECT_LT(writtenNow, kSubbuf);
    const auto figures = s->Statistics();
    ASSERT_EQ(figures.count("bytes-produced"), 1U);
    EXPECT_GT(figures.at("bytes-produced").get<std::uint64_t>(), writtenNow);

    quitAndCheckRestored(*top, "q");
    app.kill(SIGKILL);
    s->Destroy({});
}

// Works with or without the statistics: sessions come and go through the ObjectManager signals.
// Found by a fresh-user pass: a snapshot session's bytes-produced jumped by a whole
// sub-buffer per stream as an app began (2 MiB for a few KiB written), and top showed
// that as its rate. Its buffers' positions move by whole sub-buffers: it reports what it
// wrote, as kernel channels do.
TEST_F(Top, ASnapshotSessionReportsNoBytesItsAppsDidNotWrite) {
    auto s = std::make_unique<SessionClient>(
        *bus_,
        manager_->CreateSession("top-snap", {{"output-path", sdbus::Variant(output("top-snap"))},
                                             {"mode", sdbus::Variant(std::string("snapshot"))}}));
    s->AddChannel("ust", "big",
                  {{"subbuf-size", sdbus::Variant(std::uint64_t{1} << 20)},
                   {"subbuf-count", sdbus::Variant(std::uint64_t{4})}});
    s->EnableEvents("ust", "big", "tracectl_demo:tick", {});
    s->Start({});
    const auto figure = [&](const char* key) {
        const auto figures = s->Statistics();
        const auto it = figures.find(key);
        return it == figures.end() ? 0 : it->second.get<std::uint64_t>();
    };
    const std::string log = sandbox_->dir() + "/log/apps.log";
    ChildProcess app({demoApp(), "50", "1000"}, {}, log);
    ASSERT_EQ(app.wait(30000), 0);
    // A sample taken after the app's events: sampled-at moves past this instant.
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    const auto after = static_cast<std::uint64_t>(now.tv_sec) * 1000000 +
                       static_cast<std::uint64_t>(now.tv_nsec) / 1000;
    // The consumer sends figures only when they move: a snapshot moves them.
    s->RecordSnapshot({});
    EXPECT_TRUE(eventually([&] { return figure("sampled-at") > after; }, std::chrono::seconds(10)))
        << "no sample after the app";
    EXPECT_LT(figure("bytes-produced"), std::uint64_t{1} << 20)
        << "50 ticks are a few KiB, not a sub-buffer";
    EXPECT_EQ(figure("bytes-produced"), figure("bytes-written"));
    s->Destroy({});
}

TEST_F(Top, FollowsSessionsCreatedAndDestroyedAndQuitsOnCtrlC) {
    auto top = startTop();
    std::vector<std::string> lines;
    ASSERT_TRUE(eventually(
        [&] {
            lines = screen(*top);
            return !lines.empty() && lines[0].rfind("tracectl top:", 0) == 0;
        },
        std::chrono::seconds(10), std::chrono::milliseconds(50)))
        << dump(lines);

    SessionClient s(*bus_, manager_->CreateSession(
                               "top-newcomer", {{"output-path", sdbus::Variant(output("nc"))}}));
    EXPECT_TRUE(eventually(
        [&] {
            lines = screen(*top);
            const auto row = sessionRow(lines, "top-newcomer");
            return row && (*row)[1] == "created";
        },
        std::chrono::seconds(10), std::chrono::milliseconds(50)))
        << dump(lines);

    s.Destroy({});
    EXPECT_TRUE(eventually(
        [&] {
            lines = screen(*top);
            return !sessionRow(lines, "top-newcomer");
        },
        std::chrono::seconds(10), std::chrono::milliseconds(50)))
        << dump(lines);

    quitAndCheckRestored(*top, "\x03"); // Ctrl-C
}

TEST_F(Top, WithoutATerminalSaysSoAndFails) {
    const RunResult r = run({tracectlBinary(), "top"});
    EXPECT_EQ(r.exitCode, 2) << r.describe();
    EXPECT_NE(r.err.find("tracectl: top needs a terminal"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
}
