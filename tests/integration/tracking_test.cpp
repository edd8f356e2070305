// Process attribute tracking (Session.TrackProcessAttribute and
// UntrackProcessAttribute, `tracectl track` / `untrack`, as LTTng 2.13's
// lttng-track(1)), against the real stack: real demo apps, real users
// (multi_user.hpp: alice and bob ordinary, carol holding trace-all-users
// through group "tracing"), babeltrace2 reading what was written.
#include "child_process.hpp"
#include "eventually.hpp"
#include "multi_user.hpp"
#include "sandbox.hpp"
#include "trace_counts.hpp"
#include "tracectl_clients.hpp"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using namespace tracectl::test;

namespace {

constexpr const char* kLimitExceeded = "org.tracectl.Tracing1.Error.LimitExceeded";

class Tracking : public MultiUserSuite {
protected:
    static std::string appLog() { return sandbox_->dir() + "/log/apps.log"; }

    static std::string cli() {
        const char* p = std::getenv("TRACECTL");
        return p != nullptr ? p : "tracectl";
    }

    /// A file the demo apps wait for before they emit (removed first).
    static std::string goFile(const std::string& name) {
        const std::string path = sandbox_->dir() + "/" + name + ".go";
        std::remove(path.c_str());
        return path;
    }
    static void touch(const std::string& path) { std::ofstream(path).put('\n'); }

    /// A demo app emitting `count` ticks `intervalUs` apart once `go`
    /// exists ("" : at once), already set up for the active sessions.
    std::unique_ptr<ChildProcess> startApp(int count, int intervalUs, const std::string& go) {
        std::vector<std::string> argv{demoApp(), std::to_string(count), std::to_string(intervalUs)};
        if (!go.empty())
            argv.push_back(go);
        auto app = std::make_unique<ChildProcess>(argv, std::vector<std::string>{}, appLog());
        EXPECT_TRUE(waitTracing(app->pid(), appLog())) << "app " << app->pid() << " never ready";
        return app;
    }

    /// The tracectl_demo:tick records of `dir` whose vpid context is `pid`
    /// (babeltrace2's text: "{ vpid = <pid> }"), and every tick in `total`.
    static long ticksOf(const std::string& dir, pid_t pid, long* total = nullptr) {
        const RunResult r = run({"babeltrace2", dir});
        EXPECT_EQ(r.exitCode, 0) << r.describe();
        long mine = 0, all = 0;
        std::istringstream in(r.out);
        for (std::string line; std::getline(in, line);) {
            if (line.find("tracectl_demo:tick:") == std::string::npos)
                continue;
            ++all;
            // "{ vpid = 1234 }": the vpid context alone.
            mine += line.find("vpid = " + std::to_string(pid) + " }") != std::string::npos;
        }
        if (total != nullptr)
            *total = all;
        return mine;
    }

    /// Rotates `s`, waits until the rotation is over, and returns the ticks
    /// of the archive (-1 if it did not end within 20 s).
    static long rotateAndCount(SessionClient& s) {
        const std::string archive = s.Rotate({});
        if (!eventually([&] { return s.State() != "rotating"; }, 20s))
            return -1;
        return countTicksIfAny(archive);
    }

    /// The (tracks every process, values) of `attribute` in the session's
    /// ProcessAttributeTrackers.
    static std::pair<bool, std::vector<uint32_t>> tracker(SessionClient& s,
                                                          const std::string& attribute) {
        for (const auto& t : s.ProcessAttributeTrackers())
            if (t.get<1>() == attribute)
                return {t.get<2>(), t.get<3>()};
        ADD_FAILURE() << "no " << attribute << " tracker";
        return {};
    }

    /// A root session recording ticks with their vpid, started.
    std::unique_ptr<SessionClient> vpidSession(const std::string& name, bool perPid = false) {
        std::map<std::string, sdbus::Variant> options{
            {"output-path", sdbus::Variant(output(name))}};
        if (perPid)
            options["buffer-ownership"] = sdbus::Variant(std::string("per-pid"));
        auto s = std::make_unique<SessionClient>(*bus_, manager_->CreateSession(name, options));
        s->AddContext("ust", "", "vpid", {});
        s->EnableEvents("ust", "", "tracectl_demo:tick", {});
        s->Start({});
        return s;
    }
};

} // namespace

TEST_F(Tracking, WithTheVpidOfOneOfTwoAppsTrackedOnlyItsEventsAreRecorded) {
    const std::string dir = output("trk-vpid");
    auto s = vpidSession("trk-vpid");
    const std::string go = goFile("trk-vpid");
    auto a = startApp(200, 1000, go);
    auto b = startApp(200, 1000, go);
    // Every process is tracked by default.
    EXPECT_EQ(tracker(*s, "vpid"), (std::pair<bool, std::vector<uint32_t>>{true, {}}));
    s->TrackProcessAttribute("ust", "vpid", {static_cast<uint32_t>(a->pid())}, {});
    EXPECT_EQ(tracker(*s, "vpid"),
              (std::pair<bool, std::vector<uint32_t>>{false, {static_cast<uint32_t>(a->pid())}}));
    EXPECT_EQ(tracker(*s, "vuid").first, true);
    touch(go);
    ASSERT_EQ(a->wait(30000), 0);
    ASSERT_EQ(b->wait(30000), 0);
    s->Stop({});
    long total = 0;
    EXPECT_EQ(ticksOf(dir, a->pid(), &total), 200);
    EXPECT_EQ(ticksOf(dir, b->pid()), 0);
    EXPECT_EQ(total, 200);
}

TEST_F(Tracking, PerPidAnAppRegisteringUntrackedGetsNoBuffersAndRecordsNothing) {
    const std::string dir = output("trk-perpid");
    auto s = vpidSession("trk-perpid", true);
    const std::string go = goFile("trk-perpid");
    auto a = startApp(150, 1000, go);
    s->TrackProcessAttribute("ust", "vpid", {static_cast<uint32_t>(a->pid())}, {});
    auto b = startApp(150, 1000, go); // registers after: must not join
    touch(go);
    ASSERT_EQ(a->wait(30000), 0);
    ASSERT_EQ(b->wait(30000), 0);
    s->Stop({});
    const auto counts = countEvents(dir, {"--per-vpid"});
    ASSERT_TRUE(counts.contains("per_vpid")) << counts.dump();
    EXPECT_EQ(counts["per_vpid"], nlohmann::json({{std::to_string(a->pid()), 150}}))
        << counts.dump();
    // One per-PID trace folder: a's; b never got buffers.
    const RunResult ls = run({"ls", dir + "/ust/pid"});
    ASSERT_TRUE(ls.ok()) << ls.describe();
    std::istringstream in(ls.out);
    std::vector<std::string> folders;
    for (std::string f; std::getline(in, f);)
        folders.push_back(f);
    ASSERT_EQ(folders.size(), 1u) << ls.out;
    EXPECT_NE(folders[0].find("-" + std::to_string(a->pid()) + "-"), std::string::npos) << ls.out;
}

TEST_F(Tracking, UntrackingWhileActiveStopsTheAppAndTrackingItAgainResumes) {
    auto s = vpidSession("trk-live");
    auto a = startApp(1000000, 2000, ""); // runs until killed
    const auto pid = static_cast<uint32_t>(a->pid());
    s->TrackProcessAttribute("ust", "vpid", {pid}, {});
    EXPECT_TRUE(eventually([&] { return rotateAndCount(*s) > 0; }, 20s))
        << "the tracked app was never recorded";
    s->UntrackProcessAttribute("ust", "vpid", {pid}, {});
    EXPECT_EQ(tracker(*s, "vpid"), (std::pair<bool, std::vector<uint32_t>>{false, {}}));
    // What it wrote before the reply is in the chunk this rotation closes;
    // nothing after.
    EXPECT_GE(rotateAndCount(*s), 0);
    observeFor(500ms);
    EXPECT_EQ(rotateAndCount(*s), 0) << "an untracked app went on recording";
    EXPECT_EQ(a->wait(0), -1) << "the app stopped emitting on its own";
    s->TrackProcessAttribute("ust", "vpid", {pid}, {});
    EXPECT_TRUE(eventually([&] { return rotateAndCount(*s) > 0; }, 20s))
        << "the app tracked again never recorded again";
    // Back to every process: it still records.
    s->TrackProcessAttribute("ust", "vpid", {}, {{"all", sdbus::Variant(true)}});
    EXPECT_EQ(tracker(*s, "vpid").first, true);
    EXPECT_TRUE(eventually([&] { return rotateAndCount(*s) > 0; }, 20s));
    s->Stop({});
    s->Destroy({});
}

TEST_F(Tracking, AnotherUsersTrackedUidIsRecordedOnlyIfTheOwnerHoldsTraceAllUsers) {
    const std::string aliceOut = homeOutput("alice", "trk-uid-alice");
    const std::string carolOut = homeOutput("carol", "trk-uid-carol");
    const std::string alicePath = createAs("alice", "trk-uid-alice", aliceOut);
    const std::string carolPath = createAs("carol", "trk-uid-carol", carolOut);
    // With the tracectl command as each owner (names as lttng track takes them).
    const RunResult aliceTracks =
        as("alice", {cli(), "track", "-u", "-s", "trk-uid-alice", "--vuid", "alice,bob"});
    ASSERT_EQ(aliceTracks.exitCode, 0) << aliceTracks.describe();
    const RunResult carolTracks =
        as("carol", {cli(), "track", "-u", "-s", "trk-uid-carol", "--vuid", "bob"});
    ASSERT_EQ(carolTracks.exitCode, 0) << carolTracks.describe();
    for (const auto& [user, path] : {std::pair{"alice", alicePath}, {"carol", carolPath}}) {
        const RunResult started = call(user, path, "org.tracectl.Tracing1.Session.Start", {"{}"});
        ASSERT_TRUE(started.ok()) << user << ": " << started.describe();
    }
    SessionClient alice(*bus_, alicePath), carol(*bus_, carolPath);
    EXPECT_FALSE(alice.TracesAllUsers());
    EXPECT_TRUE(carol.TracesAllUsers());
    EXPECT_EQ(tracker(alice, "vuid"),
              (std::pair<bool, std::vector<uint32_t>>{false,
                                                      {std::min(uidOf("alice"), uidOf("bob")),
                                                       std::max(uidOf("alice"), uidOf("bob"))}}));
    for (const std::string user : {"alice", "bob"}) {
        ChildProcess app({"setpriv", "--reuid=" + user, "--regid=" + user, "--init-groups", "--",
                          demoApp(), "100", "1000"},
                         {}, appLog());
        ASSERT_EQ(app.wait(30000), 0) << user;
    }
    for (const auto& [user, path] : {std::pair{"alice", alicePath}, {"carol", carolPath}}) {
        const RunResult stopped = call(user, path, "org.tracectl.Tracing1.Session.Stop", {"{}"});
        ASSERT_TRUE(stopped.ok()) << user << ": " << stopped.describe();
    }
    const auto uidDir = [](const std::string& out, const std::string& user) {
        return out + "/ust/uid/" + std::to_string(uidOf(user));
    };
    // alice tracks bob's uid but may not trace him: only her own app.
    EXPECT_EQ(countTicksIfAny(uidDir(aliceOut, "alice")), 100);
    EXPECT_EQ(countTicksIfAny(uidDir(aliceOut, "bob")), 0);
    // carol may: bob's app, and not hers (alice's here) since only bob is tracked.
    EXPECT_EQ(countTicksIfAny(uidDir(carolOut, "bob")), 100);
    EXPECT_EQ(countTicksIfAny(uidDir(carolOut, "alice")), 0);
}

TEST_F(Tracking, RefusedChangesAreClearAndChangeNothing) {
    SessionClient s(*bus_, manager_->CreateSession("trk-errors", {}));
    const auto refused = [&](const std::string& domain, const std::string& attribute,
                             std::vector<uint32_t> values,
                             std::map<std::string, sdbus::Variant> options = {},
                             bool untrack = false) -> std::pair<std::string, std::string> {
        try {
            if (untrack)
                s.UntrackProcessAttribute(domain, attribute, values, options);
            else
                s.TrackProcessAttribute(domain, attribute, values, options);
        } catch (const sdbus::Error& e) {
            return {e.getName(), e.getMessage()};
        }
        return {"no error", ""};
    };
    // Untracking while every process is tracked.
    auto e = refused("ust", "vpid", {5}, {}, true);
    EXPECT_EQ(e.first, kInvalidArgument);
    EXPECT_NE(e.second.find("tracks every process"), std::string::npos) << e.second;
    s.TrackProcessAttribute("ust", "vpid", {5, 7}, {});
    const auto before = s.ProcessAttributeTrackers();
    e = refused("ust", "pid", {1});
    EXPECT_EQ(e.first, kInvalidArgument);
    EXPECT_NE(e.second.find("the ust domain has no pid tracker"), std::string::npos) << e.second;
    EXPECT_EQ(refused("kernel", "vpid", {1}).first, kInvalidArgument);
    e = refused("ust", "tid", {1});
    EXPECT_EQ(e.first, kInvalidArgument);
    EXPECT_NE(e.second.find("unknown process attribute"), std::string::npos) << e.second;
    EXPECT_EQ(refused("java", "vpid", {1}).first, kInvalidArgument);
    e = refused("ust", "vpid", {8, 5});
    EXPECT_EQ(e.first, kInvalidArgument);
    EXPECT_NE(e.second.find("vpid 5 is already tracked"), std::string::npos) << e.second;
    e = refused("ust", "vpid", {6}, {}, true);
    EXPECT_EQ(e.first, kInvalidArgument);
    EXPECT_NE(e.second.find("vpid 6 is not tracked"), std::string::npos) << e.second;
    EXPECT_EQ(refused("ust", "vpid", {9}, {{"all", sdbus::Variant(true)}}).first, kInvalidArgument);
    EXPECT_EQ(refused("ust", "vpid", {}).first, kInvalidArgument);
    EXPECT_EQ(refused("ust", "vpid", {9}, {{"bogus", sdbus::Variant(true)}}).first,
              kInvalidArgument);
    EXPECT_EQ(refused("ust", "vpid", {9}, {{"all", sdbus::Variant(std::string("yes"))}}).first,
              kInvalidArgument);
    std::vector<uint32_t> many;
    for (uint32_t v = 100; v < 100 + 4097; ++v)
        many.push_back(v);
    EXPECT_EQ(refused("ust", "vpid", many).first, kLimitExceeded);
    // Kernel trackers: refused with why (or the kernel domain is unavailable here).
    e = refused("kernel", "pid", {1});
    if (e.first == kInvalidArgument)
        EXPECT_NE(e.second.find("set_event_pid"), std::string::npos) << e.second;
    else
        EXPECT_EQ(e.first, "org.tracectl.Tracing1.Error.KernelUnavailable") << e.second;
    EXPECT_EQ(s.ProcessAttributeTrackers(), before);
    // A destroyed session takes no more changes.
    s.Destroy({});
    EXPECT_NE(errorNameOf([&] { s.TrackProcessAttribute("ust", "vpid", {1}, {}); }), "no error");
}

TEST_F(Tracking, TheTracectlCommandsTrackUntrackAndShowTheTrackers) {
    const std::string tracectl = cli();
    manager_->CreateSession("trk-cli", {});
    const auto ok = [&](std::vector<std::string> argv) {
        argv.insert(argv.begin(), tracectl);
        const RunResult r = run(argv);
        EXPECT_EQ(r.exitCode, 0) << r.describe();
        return r.out;
    };
    const auto fails = [&](std::vector<std::string> argv) {
        argv.insert(argv.begin(), tracectl);
        return run(argv);
    };
    EXPECT_NE(ok({"track", "-u", "-s", "trk-cli", "--vpid", "34,12"}).find("12, 34"),
              std::string::npos);
    std::string shown = ok({"show", "trk-cli"});
    EXPECT_NE(shown.find("Process attribute tracking:\n  ust vpid: 12, 34\n  ust vuid: all\n"),
              std::string::npos)
        << shown;
    EXPECT_EQ(shown.find("ProcessAttributeTrackers:"), std::string::npos) << shown;
    EXPECT_NE(ok({"untrack", "-u", "-s", "trk-cli", "--vpid", "12"}).find(": 34."),
              std::string::npos);
    // Refused by the daemon: exit status 1, its message, nothing changed.
    const RunResult missing = fails({"untrack", "-u", "-s", "trk-cli", "--vpid", "99"});
    EXPECT_EQ(missing.exitCode, 1) << missing.describe();
    EXPECT_NE(missing.err.find("vpid 99 is not tracked"), std::string::npos) << missing.err;
    EXPECT_NE(ok({"show", "trk-cli"}).find("  ust vpid: 34\n"), std::string::npos);
    // --all both ways; names of users and groups.
    EXPECT_NE(ok({"untrack", "-u", "-s", "trk-cli", "--vuid", "--all"}).find("none"),
              std::string::npos);
    ok({"track", "-u", "-s", "trk-cli", "--vgid", "root"});
    ok({"track", "-u", "-s", "trk-cli", "--vpid", "--all"});
    shown = ok({"show", "trk-cli"});
    EXPECT_NE(shown.find("  ust vpid: all\n  ust vuid: none\n  ust vgid: 0\n  kernel pid: all\n"),
              std::string::npos)
        << shown;
    // Usage errors: exit status 2, nothing sent.
    for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
             {"track", "-u", "-s", "trk-cli"},
             {"track", "-s", "trk-cli", "--vpid", "1"},
             {"track", "-k", "-s", "trk-cli", "--vpid", "1"},
             {"track", "-u", "-s", "trk-cli", "--pid", "1"},
             {"track", "-u", "-s", "trk-cli", "--vpid", "1", "--all"},
             {"track", "-u", "-s", "trk-cli", "--vpid"},
             {"track", "-u", "-s", "trk-cli", "--vpid", "1", "--vuid", "2"},
             {"track", "-u", "-s", "trk-cli", "--vpid", "-3"},
             {"track", "-u", "-s", "trk-cli", "--vuid", "no-such-user-here"}}) {
        const RunResult r = fails(bad);
        EXPECT_EQ(r.exitCode, 2) << r.describe();
    }
    EXPECT_NE(ok({"show", "trk-cli"}).find("  ust vpid: all\n"), std::string::npos);
    EXPECT_NE(ok({"track", "--help"}).find("tracectl track -u --vpid 1234,5678"),
              std::string::npos);
}
