// The main job, for real: the bundled LTTng-UST app (Debian's liblttng-ust,
// nothing of tracectl) traced through tracectld, its consumer running as a
// systemd transient unit, and the CTF trace on disk read back with
// babeltrace2, every event and field value checked.
#include "child_process.hpp"
#include "eventually.hpp"
#include "sandbox.hpp"
#include "sandbox_suite.hpp"
#include "trace_counts.hpp"
#include "tracectl_clients.hpp"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace tracectl::test;
using Options = std::map<std::string, sdbus::Variant>;

namespace {

class Tracing : public SandboxSuite {
protected:
    /// Runs the demo app to completion: `count` ticks, no delay.
    void runApp(int count) {
        ChildProcess app({demoApp(), std::to_string(count), "0"}, {},
                         sandbox_->dir() + "/log/apps.log");
        ASSERT_EQ(app.wait(30000), 0);
    }

    /// The session's State once it is `wanted`, or the last seen after 5 s.
    static std::string stateWithin(SessionClient& s, const std::string& wanted) {
        std::string state;
        eventually([&] { return (state = s.State()) == wanted; }, std::chrono::seconds(5));
        return state;
    }

    static std::string appLog() { return sandbox_->dir() + "/log/apps.log"; }

    /// babeltrace2's text output of the trace, one event a line.
    std::vector<std::string> readTrace(const std::string& dir) {
        const RunResult r = run({"babeltrace2", dir});
        EXPECT_EQ(r.exitCode, 0) << r.describe();
        std::vector<std::string> lines;
        std::istringstream in(r.out);
        for (std::string line; std::getline(in, line);)
            lines.push_back(line);
        return lines;
    }

    /// babeltrace2's text output split into lines.
    static std::vector<std::string> readTraceText(const std::string& out) {
        std::vector<std::string> lines;
        std::istringstream in(out);
        for (std::string line; std::getline(in, line);)
            lines.push_back(line);
        return lines;
    }

    static std::size_t countOf(const std::vector<std::string>& lines, const std::string& what) {
        std::size_t n = 0;
        for (const auto& l : lines)
            n += l.find(what) != std::string::npos ? 1 : 0;
        return n;
    }
};

} // namespace

TEST_F(Tracing, EveryEventAndFieldOfAnAppIsOnDiskAndReadable) {
    const std::string dir = output("all");
    SessionClient s(*bus_, manager_->CreateSession("all", {{"output-path", sdbus::Variant(dir)}}));
    s.EnableEvents("ust", "", "tracectl_demo:*", {});
    s.Start({});
    EXPECT_EQ(s.State(), "active");
    runApp(200); // registers after the start: set up before register_done
    s.Stop({});
    EXPECT_EQ(s.State(), "stopped");

    const auto lines = readTrace(dir);
    EXPECT_EQ(countOf(lines, "tracectl_demo:tick:"), 200u);
    EXPECT_EQ(countOf(lines, "tracectl_demo:debug_note:"), 200u);
    EXPECT_EQ(countOf(lines, "tracectl_demo:done:"), 1u);
    // Every field of one event, as the app computed it from seq = 105. The
    // network-byte-order field (net16) is checked on its own below.
    const std::string head =
        "{ seq = 105, s8 = -5, s16 = -1105, u32 = 315, hex32 = 0xC0DE0069, net16 = ";
    const std::string tail =
        ", ratio = 26.25, ratio_f = 26.25, text = \"beta\", triple = [ [0] = 105, [1] = -105, "
        "[2] = 210 ], _bytes_length = 4, bytes = [ [0] = 1, [1] = 2, [2] = 3, [3] = 4 ], "
        "word = \"demo\", _seqtext_length = 4, seqtext = \"beta\", colour = ( \"blues\" : "
        "container = 5 ) }";
    std::string event;
    for (const auto& l : lines)
        if (l.find(head) != std::string::npos)
            event = l;
    ASSERT_FALSE(event.empty()) << "no event starting with " << head;
    EXPECT_NE(event.find(tail), std::string::npos) << event;

    // The layout LTTng writes: per-UID stream files, index files, metadata.
    const std::string uidDir = dir + "/ust/uid/" + std::to_string(getuid()) + "/" +
                               std::to_string(sizeof(long) * 8) + "-bit";
    EXPECT_EQ(run({"test", "-s", uidDir + "/metadata"}).exitCode, 0);
    EXPECT_EQ(run({"test", "-s", uidDir + "/index/channel0_0.idx"}).exitCode, 0);
    s.Destroy({});
}

// systemd expands $VAR, ${VAR} and $$ in a unit's command line: an output
// path holding them reaches the consumer as it is, and the trace is there.
TEST_F(Tracing, AnOutputPathWithDollarSignsIsWrittenAsItIs) {
    const std::string dir = output("cost ${HOME} $$ $USER");
    SessionClient s(*bus_,
                    manager_->CreateSession("dollars", {{"output-path", sdbus::Variant(dir)}}));
    s.EnableEvents("ust", "", "tracectl_demo:*", {});
    s.Start({});
    runApp(10);
    s.Stop({});
    EXPECT_EQ(countOf(readTrace(dir), "tracectl_demo:tick:"), 10u);
    s.Destroy({});
}

TEST_F(Tracing, AStartAfterTheOutputFolderWasRemovedIsRefusedNotLostSilently) {
    // The consumer keeps its files open in the folder it started on: events
    // recorded after the folder is removed (or replaced) would vanish.
    const std::string dir = output("removed");
    SessionClient s(*bus_,
                    manager_->CreateSession("removed", {{"output-path", sdbus::Variant(dir)}}));
    s.EnableEvents("ust", "", "tracectl_demo:*", {});
    s.Start({});
    s.Stop({});
    std::filesystem::remove_all(dir);
    const std::string error = errorNameOf([&] { s.Start({}); });
    EXPECT_EQ(error, "org.tracectl.Tracing1.Error.WrongState");
    EXPECT_EQ(s.State(), "stopped");
    std::filesystem::create_directories(dir); // a new folder of the same name: still refused
    EXPECT_EQ(errorNameOf([&] { s.Start({}); }), "org.tracectl.Tracing1.Error.WrongState");
    s.Destroy({});
}

TEST_F(Tracing, LogLevelsAndExclusionsSelectEvents) {
    const std::string dir = output("selected");
    SessionClient s(*bus_,
                    manager_->CreateSession("selected", {{"output-path", sdbus::Variant(dir)}}));
    // TRACE_INFO or more severe: tick (INFO) yes, debug_note (DEBUG) no;
    // done (DEBUG_LINE by default) is excluded anyway.
    s.EnableEvents(
        "ust", "", "tracectl_demo:*",
        {{"loglevel", sdbus::Variant(std::string("TRACE_INFO"))},
         {"exclusions", sdbus::Variant(std::vector<std::string>{"tracectl_demo:done"})}});
    s.Start({});
    runApp(50);
    s.Stop({});
    const auto lines = readTrace(dir);
    EXPECT_EQ(countOf(lines, "tracectl_demo:tick:"), 50u);
    EXPECT_EQ(countOf(lines, "tracectl_demo:debug_note:"), 0u);
    EXPECT_EQ(countOf(lines, "tracectl_demo:done:"), 0u);
    s.Destroy({});
}

TEST_F(Tracing, AFilterExpressionRecordsOnlyTheEventsItSelects) {
    const std::string dir = output("filtered");
    SessionClient s(*bus_,
                    manager_->CreateSession("filtered", {{"output-path", sdbus::Variant(dir)}}));
    // An expression LTTng 2.13 refuses ('%' is not in its bytecode) is
    // refused at EnableEvents, with the place.
    try {
        s.EnableEvents("ust", "", "tracectl_demo:tick",
                       {{"filter", sdbus::Variant(std::string("seq % 2 == 0"))}});
        ADD_FAILURE() << "a filter with '%' was accepted";
    } catch (const sdbus::Error& e) {
        EXPECT_EQ(e.getName(), "org.tracectl.Tracing1.Error.InvalidArgument");
        EXPECT_NE(e.getMessage().find("column 5: binary operation '%' not supported"),
                  std::string::npos)
            << e.getMessage();
    }
    // One lttng-tools accepts but every app's validator would refuse (a u64
    // and an s64 meet where || joins): refused here, before any app sees it.
    try {
        s.EnableEvents("ust", "", "tracectl_demo:tick",
                       {{"filter", sdbus::Variant(std::string("(seq & 1) || seq == 3"))}});
        ADD_FAILURE() << "a filter lttng-ust refuses was accepted";
    } catch (const sdbus::Error& e) {
        EXPECT_EQ(e.getName(), "org.tracectl.Tracing1.Error.InvalidArgument");
        EXPECT_NE(e.getMessage().find("lttng-ust would refuse"), std::string::npos)
            << e.getMessage();
    }
    // As in LTTng, '&' binds tighter than '==': the even ticks. Each app
    // evaluates the bytecode lttng_ust_ctl_set_filter gave it.
    s.EnableEvents("ust", "", "tracectl_demo:tick",
                   {{"filter", sdbus::Variant(std::string("seq & 1 == 0"))}});
    s.Start({});
    runApp(50);
    s.Stop({});
    const auto counts = countEvents(dir);
    EXPECT_EQ(counts["events"].value("tracectl_demo:tick", 0), 25) << counts.dump();
    EXPECT_EQ(counts["total"], 25) << counts.dump();
    EXPECT_EQ(counts["seq"]["first"], 0) << counts.dump();
    EXPECT_EQ(counts["seq"]["last"], 48) << counts.dump();
    EXPECT_EQ(counts["seq"]["distinct"], 25) << counts.dump();
    EXPECT_EQ(counts["seq"]["missing"], 24) << counts.dump(); // the odd ones below 48
    s.Destroy({});
}

// A chain of 1,500 `||` terms nests nothing: LTTng 2.13 takes it, and each
// app records exactly what it selects (here 15 ticks, every seventh, named
// by terms spread along the chain). What bounds a chain is its bytecode:
// over LTTng's 65536 bytes it is refused saying so. Nesting is what is
// refused as too deep: 1,500 parentheses.
TEST_F(Tracing, AFilterOfFifteenHundredTermsRecordsWhatItSelects) {
    const std::string dir = output("long-filter");
    SessionClient s(*bus_,
                    manager_->CreateSession("long-filter", {{"output-path", sdbus::Variant(dir)}}));
    const auto refusal = [&](const std::string& filter) {
        try {
            s.EnableEvents("ust", "", "tracectl_demo:tick", {{"filter", sdbus::Variant(filter)}});
        } catch (const sdbus::Error& e) {
            EXPECT_EQ(e.getName(), "org.tracectl.Tracing1.Error.InvalidArgument");
            return e.getMessage();
        }
        ADD_FAILURE() << "accepted: " << filter.substr(0, 80) << "...";
        return std::string();
    };
    // 48,000 bytes of text, 88,000 of bytecode (22 bytes a term).
    std::string tooBig = "seq == 0";
    for (int i = 1; i < 4000; ++i)
        tooBig += " || seq == 1";
    EXPECT_NE(refusal(tooBig).find("over LTTng's limit of 65536 bytes"), std::string::npos)
        << refusal(tooBig);
    const std::string nested = std::string(1500, '(') + "seq == 1" + std::string(1500, ')');
    EXPECT_NE(refusal(nested).find("nested too deeply"), std::string::npos) << refusal(nested);

    std::string chain;
    for (int i = 0; i < 1500; ++i)
        chain += (i ? " || seq == " : "seq == ") +
                 std::to_string(i % 100 == 0 ? i / 100 * 7 : 100000 + i);
    s.EnableEvents("ust", "", "tracectl_demo:tick", {{"filter", sdbus::Variant(chain)}});
    s.Start({});
    runApp(100);
    s.Stop({});
    const auto counts = countEvents(dir);
    EXPECT_EQ(counts["events"].value("tracectl_demo:tick", 0), 15) << counts.dump();
    EXPECT_EQ(counts["total"], 15) << counts.dump();
    EXPECT_EQ(counts["seq"]["first"], 0) << counts.dump();
    EXPECT_EQ(counts["seq"]["last"], 98) << counts.dump();
    EXPECT_EQ(counts["seq"]["distinct"], 15) << counts.dump();
    s.Destroy({});
}

TEST_F(Tracing, FiltersOnStringsGlobsContextsArraysAndFloatsSelectAsLttngUst) {
    const std::string dir = output("filters");
    SessionClient s(*bus_,
                    manager_->CreateSession("filters", {{"output-path", sdbus::Variant(dir)}}));
    // One channel per filter, so that each one's records are counted apart.
    const std::vector<std::pair<std::string, std::string>> filters = {
        // text is alpha, beta, gamma, delta in turn: seq % 4 == 2.
        {"f1", "text == \"gam*\" && $ctx.procname == \"tracectl*\""},
        // triple is {seq, -seq, 2 seq}, ratio seq / 4: seq 5 and 39.
        {"f2", "triple[1] == -5 || ratio > 9.5"},
        // seq 30..39 whose text has no 'l' (beta, gamma): 30 33 34 37 38.
        {"f3", "!(seq < 30) && text != \"*l*\""},
    };
    for (const auto& [channel, filter] : filters) {
        s.AddChannel("ust", channel, {});
        s.AddContext("ust", channel, "procname", {});
        s.EnableEvents("ust", channel, "tracectl_demo:tick", {{"filter", sdbus::Variant(filter)}});
    }
    s.Start({});
    runApp(40);
    s.Stop({});
    const auto counts = countEvents(dir, {"--per-channel"});
    EXPECT_EQ(counts["per_channel"]["f1"]["events"], 10) << counts.dump();
    EXPECT_EQ(counts["per_channel"]["f2"]["events"], 2) << counts.dump();
    EXPECT_EQ(counts["per_channel"]["f3"]["events"], 5) << counts.dump();
    s.Destroy({});
}

TEST_F(Tracing, AnAppRunningBeforeTheStartIsTracedFromTheStart) {
    const std::string dir = output("early");
    ChildProcess app({demoApp(), "400", "5000"}, {}, sandbox_->dir() + "/log/apps.log");
    ASSERT_TRUE(eventually([&] { return listsApp(app.pid()); }, std::chrono::seconds(5)));
    SessionClient s(*bus_,
                    manager_->CreateSession("early", {{"output-path", sdbus::Variant(dir)}}));
    s.EnableEvents("ust", "", "tracectl_demo:tick", {});
    s.Start({});
    ASSERT_EQ(app.wait(30000), 0);
    s.Stop({});
    const auto lines = readTrace(dir);
    EXPECT_GT(countOf(lines, "tracectl_demo:tick:"), 0u);
    EXPECT_EQ(countOf(lines, "tracectl_demo:debug_note:"), 0u);
    EXPECT_NE(countOf(lines, "seq = 399,"), 0u) << "the last event is missing";
    s.Destroy({});
}

TEST_F(Tracing, TheCliDrivesTheWholeJob) {
    const char* cli = std::getenv("TRACECTL");
    ASSERT_NE(cli, nullptr);
    const std::string dir = output("cli");
    auto ok = [&](std::vector<std::string> argv) {
        argv.insert(argv.begin(), cli);
        const RunResult r = run(argv);
        EXPECT_EQ(r.exitCode, 0) << r.describe();
        return r.out;
    };
    ok({"create", "cli", "--output", dir});
    // debug_note is the only TRACE_DEBUG event; the filter keeps 20 of its 30.
    ok({"enable-event", "-u", "tracectl_demo:*", "-s", "cli", "--loglevel-only", "TRACE_DEBUG",
        "--filter", "seq >= 10"});
    const RunResult badFilter = run(
        {cli, "enable-event", "-u", "tracectl_demo:*", "-s", "cli", "--filter", "seq >= 10 &&"});
    EXPECT_EQ(badFilter.exitCode, 1);
    EXPECT_NE(badFilter.err.find("Invalid filter expression at column 13"), std::string::npos)
        << badFilter.err;
    EXPECT_NE(ok({"add-context", "-u", "-t", "vpid,vtid", "-s", "cli"}).find("vtid added"),
              std::string::npos);
    EXPECT_NE(ok({"show", "cli"}).find("vpid"), std::string::npos);
    EXPECT_EQ(run({cli, "add-context", "-u", "-t", "procname,bogus", "-s", "cli"}).exitCode, 1);
    // Run again once corrected: what was added the first time is skipped.
    EXPECT_NE(ok({"add-context", "-u", "-t", "procname,vpid", "-s", "cli"})
                  .find("vpid is recorded already"),
              std::string::npos);
    ok({"start", "cli"});
    ChildProcess app({demoApp(), "30", "20000"}, {}, sandbox_->dir() + "/log/apps.log");
    EXPECT_TRUE(eventually(
        [&] {
            return ok({"list-apps", "--tracepoints"}).find(std::to_string(app.pid()) + "  uid ") !=
                   std::string::npos;
        },
        std::chrono::seconds(5)));
    const auto apps = nlohmann::json::parse(ok({"list-apps", "--json", "--tracepoints"}));
    ASSERT_FALSE(apps.empty());
    EXPECT_FALSE(apps[0]["Tracepoints"].empty());
    ASSERT_EQ(app.wait(30000), 0);
    ok({"stop", "cli"});
    const std::string text = ok({"view", "cli"});
    std::size_t debug = 0, ticks = 0;
    for (std::size_t p = 0; (p = text.find("tracectl_demo:debug_note:", p)) != std::string::npos;
         ++p)
        ++debug;
    for (std::size_t p = 0; (p = text.find("tracectl_demo:tick:", p)) != std::string::npos; ++p)
        ++ticks;
    EXPECT_EQ(debug, 20u);
    EXPECT_EQ(ticks, 0u);
    EXPECT_NE(text.find("vpid = " + std::to_string(app.pid()) + ", vtid = "), std::string::npos)
        << text.substr(0, 400);
    // Bad usage: a clear error and exit status 2; unknown session: 1.
    EXPECT_EQ(run({cli, "enable-event", "tracectl_demo:*"}).exitCode, 2); // no -u
    EXPECT_EQ(run({cli, "enable-event", "-u", "x:*", "-s", "nope"}).exitCode, 1);
    // An unknown global option is named (CLI11 alone said "A subcommand is
    // required"), and so is an unknown command.
    const RunResult unknownOption = run({cli, "--bogus"});
    EXPECT_EQ(unknownOption.exitCode, 2);
    EXPECT_NE(unknownOption.err.find("unknown option '--bogus'"), std::string::npos)
        << unknownOption.err;
    const RunResult badOutput = run({cli, "create", "bad-output", "--output", "/tmp/\xff"});
    EXPECT_EQ(badOutput.exitCode, 2);
    EXPECT_NE(badOutput.err.find("must be valid UTF-8"), std::string::npos) << badOutput.err;
    const RunResult unknownCommand = run({cli, "frobnicate"});
    EXPECT_EQ(unknownCommand.exitCode, 2);
    EXPECT_NE(unknownCommand.err.find("unknown command 'frobnicate'"), std::string::npos)
        << unknownCommand.err;
    ok({"destroy", "cli"});
}

TEST_F(Tracing, AConsumerThatFailsMidWayLeavesTheDaemonServing) {
    // Regression: a consumer refusing CreateChannel (here: its output folder
    // made unusable after the start) for a late app must not leave a
    // half-made trace that crashes Stop or Destroy.
    const std::string dir = output("broken");
    SessionClient s(*bus_,
                    manager_->CreateSession("broken", {{"output-path", sdbus::Variant(dir)}}));
    s.EnableEvents("ust", "", "tracectl_demo:*", {});
    s.Start({});
    ASSERT_EQ(run({"touch", dir + "/ust"}).exitCode, 0); // "ust" can no longer be a folder
    runApp(5);
    try {
        s.Stop({});
    } catch (const sdbus::Error& e) {
        ADD_FAILURE() << "Stop failed: " << e.getName() << ": " << e.getMessage();
    }
    s.Destroy({});
    EXPECT_TRUE(sandbox_->daemonRunning());
    EXPECT_EQ(manager_->Version(), TRACECTL_TEST_VERSION);
}

TEST_F(Tracing, ADeadConsumerPutsItsSessionInErrorAndOthersGoOn) {
    const std::string deadDir = output("dead");
    const std::string liveDir = output("alive");
    SessionClient dead(*bus_,
                       manager_->CreateSession("dead", {{"output-path", sdbus::Variant(deadDir)}}));
    SessionClient alive(
        *bus_, manager_->CreateSession("alive", {{"output-path", sdbus::Variant(liveDir)}}));
    for (auto* s : {&dead, &alive}) {
        s->EnableEvents("ust", "", "tracectl_demo:*", {});
        s->Start({});
    }
    // The dead session's consumer is the one writing to its folder.
    const RunResult killed =
        run({"pkill", "-KILL", "-f", "tracectl-consumerd --output " + deadDir});
    ASSERT_EQ(killed.exitCode, 0) << killed.describe();
    EXPECT_EQ(stateWithin(dead, "error"), "error");
    EXPECT_EQ(errorNameOf([&] { dead.Start({}); }), "org.tracectl.Tracing1.Error.WrongState");
    runApp(20);
    alive.Stop({});
    const auto lines = readTrace(liveDir);
    EXPECT_EQ(countOf(lines, "tracectl_demo:tick:"), 20u);
    dead.Destroy({});
    alive.Destroy({});
    EXPECT_TRUE(sandbox_->daemonRunning());
}

TEST_F(Tracing, AnAppKilledMidTraceKeepsItsEventsUpToTheKill) {
    const std::string dir = output("killed");
    SessionClient s(*bus_,
                    manager_->CreateSession("killed", {{"output-path", sdbus::Variant(dir)}}));
    s.EnableEvents("ust", "", "tracectl_demo:tick", {});
    s.Start({});
    {
        ChildProcess app({demoApp(), "100000", "1000"}, {}, appLog());
        ASSERT_TRUE(waitTracing(app.pid(), appLog()));
        // Pacing, on purpose: the app ticks (every 1 ms) for a while before the kill.
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        app.kill(SIGKILL);
        EXPECT_EQ(app.wait(5000), -1); // died of the signal
    }
    runApp(10); // the session goes on
    s.Stop({});
    EXPECT_EQ(s.State(), "stopped");
    const auto lines = readTrace(dir);
    // The killed app's events are contiguous from seq 0; the later app's 10 follow.
    std::size_t contiguous = 0;
    while (countOf(lines, "{ seq = " + std::to_string(contiguous) + ",") > 0)
        ++contiguous;
    EXPECT_GT(contiguous, 10u) << "too few events of the killed app";
    EXPECT_GE(countOf(lines, "tracectl_demo:tick:"), contiguous);
    s.Destroy({});
}

TEST_F(Tracing, AStalledConsumerGivesAClearTimeoutAndTheDaemonServesMeanwhile) {
    const std::string dir = output("stalled");
    const std::string path =
        manager_->CreateSession("stalled", {{"output-path", sdbus::Variant(dir)}});
    SessionClient s(*bus_, path);
    s.EnableEvents("ust", "", "tracectl_demo:tick", {});
    s.Start({});
    runApp(5); // the consumer now holds this app's buffers
    const std::string pattern = "tracectl-consumerd --output " + dir;
    ASSERT_EQ(run({"pkill", "-STOP", "-f", pattern}).exitCode, 0);
    std::string error;
    std::thread stopper([&] {
        auto bus = sdbus::createSystemBusConnection();
        SessionClient mine(*bus, path);
        try {
            mine.Stop({});
        } catch (const sdbus::Error& e) {
            error = e.getMessage();
        }
    });
    // Once the daemon is in that Stop (a Start is refused as busy, not as
    // "already active"), it still answers.
    EXPECT_TRUE(eventually(
        [&] {
            try {
                s.Start({});
            } catch (const sdbus::Error& e) {
                return e.getMessage().find("is busy with another Start, Stop or Destroy") !=
                       std::string::npos;
            }
            ADD_FAILURE() << "Start succeeded on an active session";
            return true;
        },
        std::chrono::seconds(5)))
        << "the daemon never got to the Stop";
    EXPECT_EQ(manager_->Version(), TRACECTL_TEST_VERSION); // the D-Bus loop is not blocked
    stopper.join();
    run({"pkill", "-CONT", "-f", pattern});
    EXPECT_NE(error.find("did not answer"), std::string::npos) << error;
    // Regression: the apps were stopped but the session stayed "active".
    EXPECT_EQ(stateWithin(s, "error"), "error");
    EXPECT_NE(s.ErrorReason().find("failed while flushing"), std::string::npos) << s.ErrorReason();
    // A consumer that stops answering is not a fault of the daemon: its log
    // says what failed once, never "internal failure".
    std::ifstream logFile(sandbox_->dir() + "/log/tracectld.log");
    const std::string log{std::istreambuf_iterator<char>(logFile), {}};
    EXPECT_NE(log.find("session 'stalled' failed"), std::string::npos);
    EXPECT_EQ(log.find("internal failure"), std::string::npos) << "logged as an internal failure";
    s.Destroy({});
}

TEST_F(Tracing, TwoAppsOfOneUidShareOnePerUidBufferSetAndShowTheirPids) {
    const std::string dir = output("two-apps");
    SessionClient s(*bus_,
                    manager_->CreateSession("two-apps", {{"output-path", sdbus::Variant(dir)}}));
    s.AddContext("ust", "", "vpid", {}); // makes channel0, as lttng add-context does
    s.AddContext("ust", "channel0", "procname", {});
    s.EnableEvents("ust", "", "tracectl_demo:tick", {});
    EXPECT_EQ(s.Contexts().size(), 2u);
    s.Start({});
    ChildProcess first({demoApp(), "300", "1000"}, {}, sandbox_->dir() + "/log/apps.log");
    ChildProcess second({demoApp(), "300", "1000"}, {}, sandbox_->dir() + "/log/apps.log");
    ASSERT_EQ(first.wait(30000), 0);
    ASSERT_EQ(second.wait(30000), 0);
    s.Stop({});
    const auto lines = readTrace(dir);
    EXPECT_EQ(countOf(lines, "tracectl_demo:tick:"), 600u);
    for (const pid_t pid : {first.pid(), second.pid()})
        EXPECT_EQ(countOf(lines, "vpid = " + std::to_string(pid) + ","), 300u) << pid;
    EXPECT_EQ(countOf(lines, "procname = \"tracectl-demo-a\""), 600u)
        << (lines.empty() ? "" : lines.front());
    // One per-UID buffer set: one uid folder, one bitness, channel0 per CPU.
    const RunResult uids = run({"ls", dir + "/ust/uid"});
    EXPECT_EQ(uids.out, std::to_string(getuid()) + "\n") << uids.describe();
    const RunResult files = run({"ls", dir + "/ust/uid/" + std::to_string(getuid()) + "/64-bit"});
    std::size_t streams = 0;
    std::istringstream in(files.out);
    for (std::string f; std::getline(in, f);)
        streams += f.rfind("channel0_", 0) == 0 ? 1 : 0;
    EXPECT_EQ(streams, static_cast<std::size_t>(sysconf(_SC_NPROCESSORS_CONF))) << files.out;
    // Contexts are fixed once the session has started.
    EXPECT_EQ(errorNameOf([&] { s.AddContext("ust", "", "vtid", {}); }),
              "org.tracectl.Tracing1.Error.WrongState");
    s.Destroy({});
}

TEST_F(Tracing, AConsumerUnitKilledWithSystemctlPutsTheSessionInErrorWithItsReason) {
    const std::string dir = output("systemctl-kill");
    SessionClient s(
        *bus_, manager_->CreateSession("systemctl-kill", {{"output-path", sdbus::Variant(dir)}}));
    // Small sub-buffers: most of what the app emits is on disk before the kill.
    s.AddChannel("ust", "small",
                 {{"subbuf-size", sdbus::Variant(uint64_t{4096})},
                  {"subbuf-count", sdbus::Variant(uint64_t{4})}});
    s.EnableEvents("ust", "small", "tracectl_demo:tick", {});
    s.Start({});
    {
        // Paced: small buffers at full speed would discard.
        ChildProcess app({demoApp(), "2000", "200"}, {}, sandbox_->dir() + "/log/apps.log");
        ASSERT_EQ(app.wait(30000), 0);
    }
    std::string unit = "tracectl-consumer-";
    for (char c : s.Id())
        if (c != '-')
            unit += c;
    unit += ".service";
    EXPECT_EQ(sandbox_->systemctl({"is-active", unit}).out, "active\n");
    const RunResult killed = sandbox_->systemctl({"kill", "--signal=SIGKILL", unit});
    ASSERT_EQ(killed.exitCode, 0) << killed.describe();
    ASSERT_EQ(stateWithin(s, "error"), "error");
    const std::string reason = s.ErrorReason();
    EXPECT_NE(reason.find(unit), std::string::npos) << reason;
    EXPECT_NE(reason.find("no longer running"), std::string::npos) << reason;
    // systemd's own word on how it ended: read before the unit is collected.
    EXPECT_NE(reason.find("Result signal"), std::string::npos) << reason;
    // The daemon goes on serving; what was written is readable.
    EXPECT_EQ(manager_->Version(), TRACECTL_TEST_VERSION);
    EXPECT_EQ(errorNameOf([&] { s.Stop({}); }), "org.tracectl.Tracing1.Error.WrongState");
    const auto lines = readTrace(dir);
    EXPECT_GT(countOf(lines, "tracectl_demo:tick:"), 1000u);
    EXPECT_EQ(countOf(lines, "seq = 0,"), 1u);
    s.Destroy({});
    EXPECT_EQ(errorNameOf([&] { manager_->GetSession("systemctl-kill"); }),
              "org.tracectl.Tracing1.Error.NoSuchSession");
}

TEST_F(Tracing, EventsEnabledWhileActiveReachRunningAndLaterApps) {
    const std::string dir = output("live-enable");
    SessionClient s(*bus_,
                    manager_->CreateSession("live-enable", {{"output-path", sdbus::Variant(dir)}}));
    s.EnableEvents("ust", "", "tracectl_demo:tick", {});
    s.Start({});
    ChildProcess running({demoApp(), "400", "5000"}, {}, appLog());
    ASSERT_TRUE(waitTracing(running.pid(), appLog()));
    // Pacing, on purpose: some ticks (every 5 ms) go by with debug_note not yet enabled.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    s.EnableEvents("ust", "", "tracectl_demo:debug_note", {});
    ASSERT_EQ(running.wait(30000), 0);
    runApp(100); // registers after the enable: gets both rules
    s.Stop({});
    const auto lines = readTrace(dir);
    EXPECT_EQ(countOf(lines, "tracectl_demo:tick:"), 500u);
    const std::size_t notes = countOf(lines, "tracectl_demo:debug_note:");
    EXPECT_GT(notes, 100u) << "the running app never took the new rule";
    EXPECT_LT(notes, 500u) << "debug_note recorded before it was enabled";
    s.Destroy({});
}

TEST_F(Tracing, StartRefusesOutputsThatCannotHoldTheTrace) {
    // Regression (break-it pass): these started "fine" and recorded nothing.
    // CreateSession refuses them too (polkit suite); here each obstacle
    // appears after the session was created, so Start's own check is tested.
    auto startError = [&](const std::string& name, const std::string& out,
                          const std::function<void()>& between) {
        SessionClient s(*bus_,
                        manager_->CreateSession(name, {{"output-path", sdbus::Variant(out)}}));
        s.EnableEvents("ust", "", "tracectl_demo:*", {});
        between();
        std::string message;
        try {
            s.Start({});
        } catch (const sdbus::Error& e) {
            message = e.getName() + ": " + e.getMessage();
        }
        EXPECT_EQ(s.State(), "created") << name;
        s.Destroy({});
        return message;
    };
    const std::string file = output("a-file");
    ASSERT_EQ(run({"mkdir", "-p", output("")}).exitCode, 0);
    EXPECT_NE(startError("to-a-file", file,
                         [&] {
                             ASSERT_TRUE(run({"touch", file}).ok());
                         })
                  .find("InvalidArgument: the output path " + file + " is not a folder"),
              std::string::npos);

    // A folder that already holds a trace is not written over.
    const std::string used = output("used");
    EXPECT_NE(startError("second", used,
                         [&] {
                             SessionClient first(
                                 *bus_, manager_->CreateSession(
                                            "first", {{"output-path", sdbus::Variant(used)}}));
                             first.EnableEvents("ust", "", "tracectl_demo:*", {});
                             first.Start({});
                             runApp(3);
                             first.Stop({});
                             first.Destroy({});
                         })
                  .find("already holds a trace"),
              std::string::npos);
    EXPECT_EQ(countOf(readTrace(used), "tracectl_demo:tick:"), 3u) << "the first trace was spoilt";

    // Two sessions on one folder: the second Start is refused even before
    // the first has written anything.
    const std::string shared = output("shared");
    std::unique_ptr<SessionClient> owner;
    EXPECT_NE(startError("shared-2", shared,
                         [&] {
                             owner = std::make_unique<SessionClient>(
                                 *bus_, manager_->CreateSession(
                                            "shared-1", {{"output-path", sdbus::Variant(shared)}}));
                             owner->EnableEvents("ust", "", "tracectl_demo:*", {});
                             owner->Start({});
                         })
                  .find("another session writes there"),
              std::string::npos);
    owner->Destroy({});

    // A symbolic link to nothing.
    const std::string dangling = output("dangling");
    EXPECT_NE(
        startError("dangling", dangling,
                   [&] {
                       ASSERT_TRUE(run({"ln", "-s", output("nowhere/at/all"), dangling}).ok());
                   })
            .find("leads nowhere"),
        std::string::npos);

    // A folder its owner may not write (root's, mode 0755), asked by nobody.
    // (In /tmp: nobody may not even look into the sandbox's own folder.)
    const std::string rootOnly = "/tmp/tracectl-root-only-" + std::to_string(getpid());
    ASSERT_EQ(run({"mkdir", "-m", "0777", rootOnly}).exitCode, 0);
    const std::vector<std::string> asNobody{
        "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "busctl", "--system"};
    auto nobody = [&](std::vector<std::string> args) {
        std::vector<std::string> argv = asNobody;
        argv.insert(argv.end(), args.begin(), args.end());
        return run(argv);
    };
    const RunResult created =
        nobody({"call", kService, kManagerPath, "org.tracectl.Tracing1.Manager", "CreateSession",
                "sa{sv}", "nobody-s", "1", "output-path", "s", rootOnly});
    ASSERT_EQ(created.exitCode, 0) << created.describe();
    const std::string path = created.out.substr(created.out.find('"') + 1,
                                                created.out.rfind('"') - created.out.find('"') - 1);
    ASSERT_EQ(nobody({"call", kService, path, "org.tracectl.Tracing1.Session", "EnableEvents",
                      "sssa{sv}", "ust", "", "tracectl_demo:*", "0"})
                  .exitCode,
              0);
    // Writable when the session was created, no longer when it starts.
    ASSERT_EQ(run({"chmod", "0755", rootOnly}).exitCode, 0);
    const RunResult started =
        nobody({"call", kService, path, "org.tracectl.Tracing1.Session", "Start", "a{sv}", "0"});
    EXPECT_NE(started.exitCode, 0);
    EXPECT_NE(started.err.find("uid 65534 cannot write to the output folder " + rootOnly),
              std::string::npos)
        << started.describe();
    nobody({"call", kService, path, "org.tracectl.Tracing1.Session", "Destroy", "a{sv}", "0"});
    run({"rmdir", rootOnly});
}

TEST_F(Tracing, TwelveAppsAtOnceAreAllRecordedAndTheDaemonStaysSmall) {
    // Regression (break-it pass): with five or more traced apps the
    // app-handle table's hash put every app's handle h into one bucket and
    // the daemon grew by hundreds of MB a second until the OOM killer came.
    const std::string dir = output("twelve");
    SessionClient s(*bus_,
                    manager_->CreateSession("twelve", {{"output-path", sdbus::Variant(dir)}}));
    s.EnableEvents("ust", "", "tracectl_demo:*", {});
    s.Start({});
    std::vector<std::unique_ptr<ChildProcess>> apps;
    for (int i = 0; i < 12; ++i)
        apps.push_back(std::make_unique<ChildProcess>(
            std::vector<std::string>{demoApp(), "100", "2000"}, std::vector<std::string>{},
            sandbox_->dir() + "/log/apps.log"));
    for (auto& app : apps)
        ASSERT_EQ(app->wait(30000), 0);
    s.Stop({});
    std::ifstream status("/proc/" + std::to_string(sandbox_->daemonPid()) + "/status");
    std::size_t rssKiB = 0;
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmRSS:", 0) == 0)
            rssKiB = std::stoul(line.substr(6));
    EXPECT_GT(rssKiB, 0u);
    EXPECT_LT(rssKiB, 100u * 1024) << "tracectld uses " << rssKiB << " KiB";
    const auto lines = readTrace(dir);
    EXPECT_EQ(countOf(lines, "tracectl_demo:tick:"), 1200u);
    EXPECT_EQ(countOf(lines, "tracectl_demo:done:"), 12u);
    s.Destroy({});
}

namespace {

/// The per-PID trace folders (ust/pid/<name>-<pid>-<date>) under `dir`, by pid.
std::map<pid_t, std::string> perPidFolders(const std::string& dir) {
    std::map<pid_t, std::string> out;
    const RunResult ls = run({"ls", dir + "/ust/pid"});
    std::istringstream in(ls.out);
    for (std::string f; std::getline(in, f);) {
        // <name>-<pid>-<YYYYmmdd>-<HHMMSS>: the pid is the third field from the end.
        const auto time = f.rfind('-');
        const auto date = time == std::string::npos ? time : f.rfind('-', time - 1);
        const auto pid = date == std::string::npos ? date : f.rfind('-', date - 1);
        if (pid != std::string::npos)
            out[std::stoi(f.substr(pid + 1, date - pid - 1))] = dir + "/ust/pid/" + f;
    }
    return out;
}

} // namespace

TEST_F(Tracing, PerPidBuffersGiveEachAppItsOwnTraceDrainedWhenItExits) {
    const std::string dir = output("per-pid");
    SessionClient s(*bus_,
                    manager_->CreateSession(
                        "per-pid", {{"output-path", sdbus::Variant(dir)},
                                    {"buffer-ownership", sdbus::Variant(std::string("per-pid"))}}));
    EXPECT_EQ(s.BufferOwnership(), "per-pid");
    s.EnableEvents("ust", "", "tracectl_demo:tick", {});
    s.Start({});
    ChildProcess first({demoApp(), "300", "0"}, {}, sandbox_->dir() + "/log/apps.log");
    ASSERT_EQ(first.wait(30000), 0);
    // The session still runs: the exited app's buffers were read to the
    // end and closed anyway (nothing switches them otherwise until stop).
    std::size_t early = 0;
    eventually(
        [&] {
            const auto folders = perPidFolders(dir);
            if (folders.count(first.pid()) != 0) {
                const RunResult r = run({"babeltrace2", folders.at(first.pid())});
                early = countOf(readTraceText(r.out), "tracectl_demo:tick:");
            }
            return early == 300;
        },
        std::chrono::seconds(10), std::chrono::milliseconds(50));
    EXPECT_EQ(early, 300u) << "the exited app's trace is not complete while the session runs";

    ChildProcess second({demoApp(), "200", "100"}, {}, sandbox_->dir() + "/log/apps.log");
    ChildProcess third({demoApp(), "100", "100"}, {}, sandbox_->dir() + "/log/apps.log");
    ASSERT_EQ(second.wait(30000), 0);
    ASSERT_EQ(third.wait(30000), 0);
    s.Stop({});
    EXPECT_EQ(countOf(readTrace(dir), "tracectl_demo:tick:"), 600u);

    // One trace per app, each with its own metadata naming it.
    const auto folders = perPidFolders(dir);
    ASSERT_EQ(folders.size(), 3u) << run({"ls", "-R", dir}).out;
    const std::map<pid_t, std::size_t> expected{
        {first.pid(), 300}, {second.pid(), 200}, {third.pid(), 100}};
    for (const auto& [pid, count] : expected) {
        ASSERT_EQ(folders.count(pid), 1u) << pid;
        const std::string& f = folders.at(pid);
        EXPECT_NE(f.find("/tracectl-demo-a-" + std::to_string(pid) + "-"), std::string::npos) << f;
        EXPECT_EQ(countOf(readTrace(f), "tracectl_demo:tick:"), count) << f;
        EXPECT_EQ(
            run({"grep", "-qa", "vpid = " + std::to_string(pid) + ";", f + "/metadata"}).exitCode,
            0)
            << f;
        EXPECT_EQ(
            run({"grep", "-qa", "tracer_buffering_scheme = \"pid\";", f + "/metadata"}).exitCode,
            0);
        EXPECT_EQ(run({"test", "-s", f + "/index/channel0_0.idx"}).exitCode, 0) << f;
    }
    EXPECT_FALSE(run({"test", "-e", dir + "/ust/uid"}).exitCode == 0);
    s.Destroy({});
}

TEST_F(Tracing, PerPidAppKilledMidTraceKeepsEveryEventUpToTheKill) {
    const std::string dir = output("per-pid-killed");
    SessionClient s(*bus_, manager_->CreateSession(
                               "per-pid-killed",
                               {{"output-path", sdbus::Variant(dir)},
                                {"buffer-ownership", sdbus::Variant(std::string("per-pid"))}}));
    s.EnableEvents("ust", "", "tracectl_demo:tick", {});
    s.Start({});
    pid_t killed = 0;
    {
        ChildProcess app({demoApp(), "1000000", "200"}, {}, appLog());
        killed = app.pid();
        ASSERT_TRUE(waitTracing(app.pid(), appLog()));
        // Pacing, on purpose: the app ticks (every 200 us) for a while before the kill.
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        app.kill(SIGKILL);
        EXPECT_EQ(app.wait(5000), -1);
    }
    // Drained without a stop: read while the session is active.
    std::size_t contiguous = 0;
    std::vector<std::string> lines;
    eventually(
        [&] {
            const auto folders = perPidFolders(dir);
            if (folders.count(killed) == 0)
                return false;
            lines = readTraceText(run({"babeltrace2", folders.at(killed)}).out);
            contiguous = 0;
            while (countOf(lines, "{ seq = " + std::to_string(contiguous) + ",") > 0)
                ++contiguous;
            return contiguous > 10 && contiguous == countOf(lines, "tracectl_demo:tick:");
        },
        std::chrono::seconds(10), std::chrono::milliseconds(50));
    EXPECT_GT(contiguous, 10u);
    EXPECT_EQ(countOf(lines, "tracectl_demo:tick:"), contiguous)
        << "a gap in the killed app's events";
    s.Stop({});
    s.Destroy({});
}

namespace {

// Regression: a per-PID app killed while it was being set up, before it
// registered its channel, left a trace folder whose metadata declared no
// stream class while the consumer still wrote its streams' last (empty)
// packets; babeltrace2 then refused the whole session trace ("No stream
// class with ID"). Apps are killed 0-90 ms after they start, so some die
// during set-up, some before their first event, some while tracing.
TEST_F(Tracing, PerPidAppsKilledDuringSetUpLeaveTheWholeTraceReadable) {
    const std::string dir = output("killed-per-pid");
    SessionClient s(*bus_, manager_->CreateSession(
                               "killed-per-pid",
                               {{"output-path", sdbus::Variant(dir)},
                                {"buffer-ownership", sdbus::Variant(std::string("per-pid"))}}));
    s.EnableEvents("ust", "", "tracectl_demo:*", {});
    s.Start({});
    for (int i = 0; i < 24; ++i) {
        ChildProcess app({demoApp(), "100000", "200"}, {}, sandbox_->dir() + "/log/apps.log");
        // Pacing, on purpose: killed 0-90 ms after its start, whatever it is doing then.
        std::this_thread::sleep_for(std::chrono::milliseconds((i * 37) % 90));
        app.kill(SIGKILL);
        app.wait(5000);
    }
    s.Stop({});
    const RunResult read = run({"babeltrace2", dir});
    EXPECT_EQ(read.exitCode, 0) << read.describe().substr(0, 2000);
    s.Destroy({});
}

} // namespace

namespace {

/// The app that spoils its ring buffers: $TRACECTL_HOSTILE_APP (meson sets it).
std::string hostileApp() {
    const char* p = std::getenv("TRACECTL_HOSTILE_APP");
    return p != nullptr ? p : "tracectl-hostile-app";
}

// Regression (issue 40 F): an app that punched holes in the ring buffers it
// shares with the consumer (fallocate(FALLOC_FL_PUNCH_HOLE): they read back
// as zeros) made liblttng-ust-ctl assert inside the consumer's flush of
// them (client_buffer_begin: Assertion 'header' failed): the consumer died
// of SIGABRT, the session went to error and the other app's events were
// lost. A truncation is refused (the shm is sealed). Now the spoiled
// streams are dropped and every other app of the session records on (the
// consumer's log line naming the app's folder is checked by consumer's
// StreamsWhoseAppPunchedHolesInThem...: the sandbox keeps no journal).
// With a switch timer: its ticks flush the spoiled streams too
// (liblttng-ust-ctl's own timer thread did, where nothing could guard it).
TEST_F(Tracing, AnAppThatSpoilsItsRingBuffersHarmsNoOtherApp) {
    for (const std::string mode : {"punch", "truncate"}) {
        SCOPED_TRACE(mode);
        const std::string name = "spoiled-" + mode;
        const std::string dir = output(name);
        SessionClient s(*bus_,
                        manager_->CreateSession(
                            name, {{"output-path", sdbus::Variant(dir)},
                                   {"buffer-ownership", sdbus::Variant(std::string("per-pid"))}}));
        s.AddChannel("ust", "channel0", {{"switch-timer", sdbus::Variant(uint32_t{20000})}});
        s.EnableEvents("ust", "channel0", "tracectl_demo:tick", {});
        s.Start({});
        ChildProcess good({demoApp(), "400", "2000"}, {}, appLog());
        const std::string hostileLog = sandbox_->dir() + "/log/hostile-" + mode + ".log";
        ChildProcess hostile({hostileApp(), mode, "50", "300"}, {}, hostileLog);
        const int hostileExit = hostile.wait(30000);
        ASSERT_EQ(good.wait(30000), 0);
        std::ifstream in(hostileLog);
        const std::string said((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
        std::cout << mode << ": hostile app exited " << hostileExit << ", said: " << said;
        int spoiled = -1, tried = -1;
        const auto at = said.find("spoiled ");
        ASSERT_NE(at, std::string::npos) << said;
        ASSERT_EQ(std::sscanf(said.c_str() + at, "spoiled %d of %d", &spoiled, &tried), 2);
        EXPECT_GT(tried, 0);
        // Holes can be punched in a sealed shm; it cannot be truncated.
        EXPECT_EQ(spoiled, mode == "punch" ? tried : 0);

        // The consumer lives on: an app that comes later is recorded too.
        ChildProcess later({demoApp(), "7", "0"}, {}, appLog());
        ASSERT_EQ(later.wait(30000), 0);
        EXPECT_EQ(s.State(), "active");
        s.Stop({});
        EXPECT_EQ(s.State(), "stopped");
        const auto folders = perPidFolders(dir);
        ASSERT_EQ(folders.count(good.pid()), 1u) << run({"ls", "-R", dir}).out;
        ASSERT_EQ(folders.count(later.pid()), 1u) << run({"ls", "-R", dir}).out;
        EXPECT_EQ(countTicks(folders.at(good.pid())), 400);
        EXPECT_EQ(countTicks(folders.at(later.pid())), 7);
        // Nothing the app spoiled reached the output: the whole of it reads.
        const RunResult read = run({"babeltrace2", dir});
        EXPECT_EQ(read.exitCode, 0) << read.describe().substr(0, 2000);
        s.Destroy({});
    }
}

} // namespace
