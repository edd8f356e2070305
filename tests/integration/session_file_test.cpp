// LTTng's session files against the real stack: sessions saved by an
// unmodified lttng-sessiond 2.13 load into tracectld and record the same
// events, tracectl's saves load back into LTTng unchanged, hostile
// documents are refused whole, and the daemon's auto-load at start checks
// each file's owner.
#include "relay_support.hpp"
#include "sandbox_suite.hpp"
#include "trace_counts.hpp"

#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace tracectl::test {
namespace {

namespace fs = std::filesystem;

std::string tracectlCli() {
    const char* p = std::getenv("TRACECTL");
    return p != nullptr ? p : "tracectl";
}

std::string readText(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

void writeText(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::trunc);
    f << text;
}

/// The events a trace holds, by name.
std::map<std::string, long> eventsIn(const std::string& dir) {
    const nlohmann::json counts = countEvents(dir);
    std::map<std::string, long> out;
    if (counts.contains("events"))
        for (const auto& [name, n] : counts["events"].items())
            out[name] = n.get<long>();
    return out;
}

/// What the session below records, whoever runs it: 10 ticks (INFO, seq <
/// 10, by a wildcard with an exclusion), 20 debug notes (DEBUG exactly) and
/// the done event, in two channels, with contexts and a rotation schedule.
const std::map<std::string, long> kExpected = {
    {"tracectl_demo:tick", 10}, {"tracectl_demo:debug_note", 20}, {"tracectl_demo:done", 1}};

class SessionFileTest : public SandboxSuite {
protected:
    RunResult tracectl(std::vector<std::string> args) {
        args.insert(args.begin(), tracectlCli());
        return run(args);
    }

    std::vector<std::string> sessionNames() {
        std::vector<std::string> names;
        for (const auto& path : manager_->ListSessions())
            names.push_back(SessionClient(*bus_, path).Name());
        std::sort(names.begin(), names.end());
        return names;
    }

    /// Runs the demo app (20 ticks) traced by tracectld and waits for its end.
    void runAppUnderTracectl() {
        const RunResult r = run({demoApp(), "20", "1000"}, {}, std::chrono::seconds(30));
        ASSERT_TRUE(r.ok()) << r.describe();
    }
};

TEST_F(SessionFileTest, LttngSavedSessionLoadsRecordsTheSameEventsAndGoesBackUnchanged) {
    LttngSessiond lttng;
    const std::string home = lttng.home();
    const std::string out = home + "/out";
    auto ok = [&](const std::vector<std::string>& args) {
        const RunResult r = lttng.lttng(args);
        ASSERT_TRUE(r.ok()) << "lttng " << ::testing::PrintToString(args) << ": " << r.describe();
    };
    ok({"create", "rt", "--output", out});
    ok({"enable-channel", "-u", "chA", "--subbuf-size", "16384", "--num-subbuf", "8",
        "--switch-timer", "200000"});
    ok({"enable-channel", "-u", "chB", "--overwrite"});
    ok({"enable-event", "-u", "-c", "chA", "tracectl_demo:*", "--loglevel", "TRACE_INFO",
        "--exclude", "tracectl_demo:done", "--filter", "seq < 10"});
    ok({"enable-event", "-u", "-c", "chB", "tracectl_demo:debug_note", "--loglevel-only",
        "TRACE_DEBUG"});
    ok({"enable-event", "-u", "-c", "chB", "tracectl_demo:done"});
    ok({"add-context", "-u", "-c", "chA", "-t", "vpid", "-t", "procname"});
    ok({"enable-rotation", "--timer", "1h"});
    ok({"enable-rotation", "--size", "1G"});
    ok({"start"});
    const std::string saved = home + "/saved";
    ok({"save", "rt", "-o", saved});
    const std::string original = readText(saved + "/rt.lttng");
    ASSERT_NE(original.find("<started>true</started>"), std::string::npos) << original;

    // LTTng records the demo app run as nobody.
    const RunResult app =
        run(lttng.command({demoApp(), "20", "1000"}), {}, std::chrono::seconds(30));
    ASSERT_TRUE(app.ok()) << app.describe();
    ok({"stop"});
    const auto lttngEvents = eventsIn(out);
    EXPECT_EQ(lttngEvents, kExpected);
    ok({"destroy", "rt"});
    fs::remove_all(out);

    // tracectl load: the same session, started.
    const RunResult load = tracectl({"load", "-i", saved + "/rt.lttng"});
    ASSERT_TRUE(load.ok()) << load.describe();
    EXPECT_NE(load.out.find("Session rt loaded"), std::string::npos) << load.out;
    SessionClient s(*bus_, manager_->GetSession("rt"));
    EXPECT_EQ(s.State(), "active");
    EXPECT_EQ(s.OutputPath(), out);
    EXPECT_EQ(s.Mode(), "normal");
    EXPECT_EQ(s.BufferOwnership(), "per-uid");
    // (name, subbuf size, count, overwrite, switch timer, read timer, enabled),
    // in the file's order (LTTng writes its channels in hash order).
    std::map<std::string,
             sdbus::Struct<std::string, uint64_t, uint64_t, bool, uint32_t, uint32_t, bool>>
        channels;
    for (const auto& c : s.Channels())
        channels.emplace(c.get<0>(), c);
    ASSERT_EQ(channels.size(), 2u);
    EXPECT_TRUE(channels.at("chB").get<3>());
    EXPECT_EQ(channels.at("chA").get<1>(), 16384u);
    EXPECT_EQ(channels.at("chA").get<2>(), 8u);
    EXPECT_FALSE(channels.at("chA").get<3>());
    EXPECT_EQ(channels.at("chA").get<4>(), 200000u);
    const auto schedule = s.RotationSchedule();
    EXPECT_EQ(schedule.get<0>(), 3600000000u);
    EXPECT_EQ(schedule.get<1>(), 1024ull * 1024 * 1024);
    const auto contexts = s.Contexts();
    EXPECT_EQ(contexts.size(), 2u);
    bool sawFilter = false;
    for (const auto& e : s.Events())
        if (e.get<1>() == "tracectl_demo:*") {
            sawFilter = true;
            EXPECT_EQ(e.get<2>(), "at-least");
            EXPECT_EQ(e.get<3>(), 6);
            EXPECT_EQ(e.get<4>(), std::vector<std::string>{"tracectl_demo:done"});
            EXPECT_EQ(e.get<6>(), "seq < 10");
        }
    EXPECT_TRUE(sawFilter);

    runAppUnderTracectl();
    s.Stop({});
    EXPECT_EQ(eventsIn(out), lttngEvents);

    // tracectl save, then back into LTTng: LTTng saves it as it did first.
    s.Start({});
    const std::string resaved = home + "/resaved";
    ASSERT_EQ(mkdir(resaved.c_str(), 0755), 0);
    const RunResult save = tracectl({"save", "rt", "-o", resaved});
    ASSERT_TRUE(save.ok()) << save.describe();
    EXPECT_EQ(save.err, "") << "nothing left out";
    s.Destroy({});
    fs::remove_all(out);
    ok({"load", "-i", resaved + "/rt.lttng"});
    const std::string again = home + "/again";
    ok({"save", "rt", "-o", again});
    EXPECT_EQ(readText(again + "/rt.lttng"), original);
    // And that LTTng session records the same events again.
    const RunResult app2 =
        run(lttng.command({demoApp(), "20", "1000"}), {}, std::chrono::seconds(30));
    ASSERT_TRUE(app2.ok()) << app2.describe();
    // lttng load sets no current session: name it.
    ok({"stop", "rt"});
    EXPECT_EQ(eventsIn(out), kExpected);
    ok({"destroy", "rt"});
}

TEST_F(SessionFileTest, SnapshotLiveAndTrackedSessionsRoundTrip) {
    LttngSessiond lttng;
    const std::string home = lttng.home();
    RelayDaemon relay(sandbox_->dir() + "/relay-out");
    auto ok = [&](const std::vector<std::string>& args) {
        const RunResult r = lttng.lttng(args);
        ASSERT_TRUE(r.ok()) << "lttng " << ::testing::PrintToString(args) << ": " << r.describe();
    };
    ok({"create", "snap", "--snapshot", "--output", home + "/snap"});
    ok({"enable-channel", "-u", "-s", "snap", "--buffers-pid", "big", "--subbuf-size", "1M"});
    ok({"enable-event", "-u", "-s", "snap", "-c", "big", "tracectl_demo:tick"});
    ok({"track", "-u", "-s", "snap", "--vpid", "7,11"});
    ok({"track", "-u", "-s", "snap", "--vgid", "0"});
    ok({"create", "lv", "--live", "2000000", "--set-url", relay.url()});
    ok({"enable-event", "-u", "-s", "lv", "-a"});
    const std::string saved = home + "/saved";
    ok({"save", "-a", "-o", saved});
    const std::string snapOriginal = readText(saved + "/snap.lttng");
    const std::string liveOriginal = readText(saved + "/lv.lttng");
    ok({"destroy", "-a"});

    const RunResult load = tracectl({"load", "-i", saved});
    ASSERT_TRUE(load.ok()) << load.describe();
    SessionClient snap(*bus_, manager_->GetSession("snap"));
    EXPECT_EQ(snap.Mode(), "snapshot");
    EXPECT_EQ(snap.BufferOwnership(), "per-pid");
    EXPECT_EQ(snap.State(), "created");
    bool vpid = false;
    for (const auto& t : snap.ProcessAttributeTrackers())
        if (t.get<1>() == "vpid") {
            vpid = true;
            EXPECT_FALSE(t.get<2>());
            EXPECT_EQ(t.get<3>(), (std::vector<uint32_t>{7, 11}));
        }
    EXPECT_TRUE(vpid);
    SessionClient live(*bus_, manager_->GetSession("lv"));
    EXPECT_EQ(live.Mode(), "live");
    EXPECT_EQ(live.LiveTimer(), 2000000u);
    EXPECT_EQ(live.OutputUrl(), relay.url());

    const std::string resaved = home + "/resaved";
    ASSERT_EQ(mkdir(resaved.c_str(), 0755), 0);
    const RunResult save = tracectl({"save", "--all", "-o", resaved});
    ASSERT_TRUE(save.ok()) << save.describe();
    snap.Destroy({});
    live.Destroy({});
    ok({"load", "-a", "-i", resaved});
    const std::string again = home + "/again";
    ok({"save", "-a", "-o", again});
    EXPECT_EQ(readText(again + "/snap.lttng"), snapOriginal);
    EXPECT_EQ(readText(again + "/lv.lttng"), liveOriginal);
    ok({"destroy", "-a"});
}

TEST_F(SessionFileTest, WhatTracectlLacksIsNamedAndTheRestLoads) {
    const std::string doc = R"(<?xml version="1.0" encoding="UTF-8"?>
<sessions><session><name>partial</name><domains>
<domain><type>UST</type><buffer_type>PER_UID</buffer_type><channels><channel>
<name>c</name><subbuffer_size>65536</subbuffer_size><read_timer_interval>0</read_timer_interval>
<output_type>MMAP</output_type><tracefile_size>1048576</tracefile_size><tracefile_count>4</tracefile_count>
<events><event><name>tracectl_demo:tick</name></event></events>
<contexts><context><perf><type>0</type><config>0</config><name>perf:cpu:cycles</name></perf></context>
<context><type>VTID</type></context></contexts></channel></channels></domain>
<domain><type>JUL</type><buffer_type>PER_UID</buffer_type><channels><channel><name>lttng_jul_channel</name>
<read_timer_interval>0</read_timer_interval><output_type>MMAP</output_type></channel></channels></domain>
</domains><output><consumer_output><enabled>true</enabled><destination><path>)" +
                            output("partial") + R"(</path></destination></consumer_output></output>
<colour>blue</colour></session></sessions>)";
    const auto [paths, warnings] = manager_->LoadSessions(doc, {});
    ASSERT_EQ(paths.size(), 1u);
    std::string all;
    for (const auto& w : warnings)
        all += w + "\n";
    EXPECT_NE(all.find("tracefile_size"), std::string::npos) << all;
    EXPECT_NE(all.find("perf:cpu:cycles"), std::string::npos) << all;
    EXPECT_NE(all.find("JUL"), std::string::npos) << all;
    EXPECT_NE(all.find("colour"), std::string::npos) << all;
    SessionClient s(*bus_, paths[0]);
    EXPECT_EQ(s.Contexts().size(), 1u);
    EXPECT_EQ(s.Events().size(), 1u);
    s.Destroy({});
}

// Files of older and newer LTTng versions load with LTTng's meaning
// (issue 40 B9, B10, B11's session-file side), run against a real app:
// - an LTTng 2.11 file whose legacy <pid_tracker> has no targets tracks no
//   process, as lttng load reads it (it loaded as every process, with no
//   warning, and recorded everything);
// - a file of LTTng 2.14 or later with a LOG4J2 domain loads without it,
//   with a warning (it was refused whole as "not an LTTng session file");
// - a switch timer of 1 µs is raised to 1 ms, with a warning.
// The second session, the same without a tracker, records the app, so the
// first one's nothing is the tracker's doing.
TEST_F(SessionFileTest, OlderAndNewerLttngFilesLoadWithLttngsMeaning) {
    const auto session = [&](const std::string& name, const std::string& trackers,
                             const std::string& moreDomains) {
        return "<session><name>" + name +
               "</name><domains><domain><type>UST</type><buffer_type>PER_UID</buffer_type>"
               "<channels><channel><name>c</name><switch_timer_interval>1</switch_timer_interval>"
               "<read_timer_interval>0</read_timer_interval><output_type>MMAP</output_type>"
               "<events><event><name>tracectl_demo:tick</name></event></events></channel>"
               "</channels>" +
               trackers + "</domain>" + moreDomains +
               "</domains><output><consumer_output><enabled>true</enabled><destination><path>" +
               output(name) + "</path></destination></consumer_output></output></session>";
    };
    const std::string log4j2 =
        "<domain><type>LOG4J2</type><buffer_type>PER_UID</buffer_type><channels><channel>"
        "<name>lttng_log4j2_channel</name><read_timer_interval>0</read_timer_interval>"
        "<output_type>MMAP</output_type><events><event><name>org.example.*</name>"
        "<loglevel_type>RANGE</loglevel_type><loglevel>400</loglevel></event></events>"
        "</channel></channels></domain>";
    const std::string dir = sandbox_->dir() + "/versions";
    fs::create_directories(dir);
    writeText(dir + "/versions.lttng",
              "<?xml version=\"1.0\" encoding=\"UTF-8\"?><sessions>" +
                  session("nobody", "<trackers><pid_tracker><targets/></pid_tracker></trackers>",
                          "") +
                  session("everyone", "", log4j2) + "</sessions>");
    const RunResult load = tracectl({"load", "-i", dir + "/versions.lttng"});
    ASSERT_TRUE(load.ok()) << load.describe();
    EXPECT_NE(load.err.find("domain of type 'LOG4J2' left out"), std::string::npos)
        << load.describe();
    EXPECT_NE(load.err.find("switch timer of 1 µs raised to 1000 µs"), std::string::npos)
        << load.describe();
    EXPECT_EQ(sessionNames(), (std::vector<std::string>{"everyone", "nobody"}));
    SessionClient nobody(*bus_, manager_->GetSession("nobody"));
    SessionClient everyone(*bus_, manager_->GetSession("everyone"));
    bool vpid = false;
    for (const auto& t : nobody.ProcessAttributeTrackers())
        if (t.get<0>() == "ust" && t.get<1>() == "vpid") {
            vpid = true;
            EXPECT_FALSE(t.get<2>()) << "tracks every process";
            EXPECT_TRUE(t.get<3>().empty());
        }
    EXPECT_TRUE(vpid);
    ASSERT_EQ(everyone.Channels().size(), 1u);
    EXPECT_EQ(everyone.Channels()[0].get<4>(), 1000u) << "the switch timer";

    nobody.Start({});
    everyone.Start({});
    runAppUnderTracectl();
    nobody.Stop({});
    everyone.Stop({});
    EXPECT_EQ(eventsIn(output("everyone")),
              (std::map<std::string, long>{{"tracectl_demo:tick", 20}}));
    // No app got buffers: its folder holds at most a trace without streams,
    // which babeltrace2 may not read; whatever it prints has no tick.
    const RunResult nothing = run({"babeltrace2", output("nobody")});
    EXPECT_EQ(nothing.out.find("tracectl_demo:tick"), std::string::npos) << nothing.out;
    nobody.Destroy({});
    everyone.Destroy({});
}

TEST_F(SessionFileTest, LoadOverridesTheNameAndTheOutput) {
    const std::string dir = sandbox_->dir() + "/override";
    fs::create_directories(dir);
    writeText(dir + "/orig.lttng",
              "<sessions><session><name>orig</name><output><consumer_output><enabled>true"
              "</enabled><destination><path>/nonexistent/orig</path></destination>"
              "</consumer_output></output></session></sessions>");
    const RunResult r = tracectl({"load", "orig", "-i", dir + "/orig.lttng", "--override-name",
                                  "renamed", "--override-url", "file://" + output("renamed")});
    ASSERT_TRUE(r.ok()) << r.describe();
    SessionClient s(*bus_, manager_->GetSession("renamed"));
    EXPECT_EQ(s.OutputPath(), output("renamed"));
    s.Destroy({});
    const RunResult usage = tracectl({"load", "-i", dir, "--override-name", "x"});
    EXPECT_EQ(usage.exitCode, 2) << "--override-name needs NAME: " << usage.describe();
}

TEST_F(SessionFileTest, HostileDocumentsAreRefusedWholeAndTheDaemonServesOn) {
    const auto before = sessionNames();
    const std::string good =
        R"(<session><name>ok-one</name><output><consumer_output><enabled>true</enabled><destination><path>)" +
        output("ok-one") + R"(</path></destination></consumer_output></output></session>)";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"garbage", "this is not XML"},
        {"truncated", "<?xml version=\"1.0\"?><sessions><session><name>t</na"},
        {"wrong root", "<session><name>x</name></session>"},
        {"entity bomb",
         "<?xml version=\"1.0\"?><!DOCTYPE sessions [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b "
         "\"&a;&a;&a;&a;&a;&a;&a;&a;\">]><sessions><session><name>&b;</name></session></sessions>"},
        {"escaping path",
         "<sessions><session><name>esc</name><output><consumer_output><enabled>true</enabled>"
         "<destination><path>/tmp/../etc/x</path></destination></consumer_output></output>"
         "</session></sessions>"},
        {"bad filter (second session)",
         "<sessions>" + good +
             "<session><name>bad-filter</name><domains><domain><type>UST</type><buffer_type>PER_UID"
             "</buffer_type><channels><channel><name>c</name><read_timer_interval>0</"
             "read_timer_interval>"
             "<output_type>MMAP</output_type><events><event><name>a:b</name><filter>seq "
             "&lt;&lt;&lt; 3"
             "</filter></event></events></channel></channels></domain></domains></session></"
             "sessions>"},
        {"two of one name", "<sessions>" + good + good + "</sessions>"},
        {"unknown user in a tracker",
         "<sessions><session><name>who</name><domains><domain><type>UST</type><buffer_type>PER_UID"
         "</buffer_type><process_attr_trackers><vuid_process_attr_tracker><process_attr_values>"
         "<vuid><name>no-such-user-here</name></vuid></process_attr_values>"
         "</vuid_process_attr_tracker></process_attr_trackers></domain></domains></session></"
         "sessions>"},
        {"too large", "<sessions>" + std::string(5 * 1024 * 1024, ' ') + "</sessions>"},
    };
    for (const auto& [what, doc] : cases) {
        SCOPED_TRACE(what);
        try {
            manager_->LoadSessions(doc, {});
            ADD_FAILURE() << "loaded";
        } catch (const sdbus::Error& e) {
            EXPECT_TRUE(e.getName() == "org.tracectl.Tracing1.Error.InvalidArgument" ||
                        e.getName() == "org.freedesktop.DBus.Error.LimitsExceeded")
                << e.getName() << ": " << e.getMessage();
            EXPECT_FALSE(e.getMessage().empty());
        }
        EXPECT_EQ(sessionNames(), before) << "nothing made";
    }
    EXPECT_TRUE(sandbox_->daemonRunning());
    // A session of a name the caller has already: SessionExists, nothing made.
    const std::string doc = "<sessions>" + good + "</sessions>";
    const auto [paths, warnings] = manager_->LoadSessions(doc, {});
    ASSERT_EQ(paths.size(), 1u);
    try {
        manager_->LoadSessions(doc, {});
        ADD_FAILURE() << "loaded twice";
    } catch (const sdbus::Error& e) {
        EXPECT_EQ(e.getName(), "org.tracectl.Tracing1.Error.SessionExists") << e.getMessage();
    }
    SessionClient(*bus_, paths[0]).Destroy({});
}

TEST_F(SessionFileTest, AMillionUnknownElementsGiveABoundedReplyAndTheDaemonServesOn) {
    // Each unknown element is a warning: unbounded, they made a reply over
    // the bus's size limit, and the bus disconnected the daemon.
    std::string doc = "<sessions><session><name>noisy</name>";
    for (int i = 0; i < 1'000'000; ++i)
        doc += "<u/>";
    doc += "<output><consumer_output><enabled>true</enabled><destination><path>" + output("noisy") +
           "</path></destination></consumer_output></output></session></sessions>";
    const auto [paths, warnings] = manager_->LoadSessions(doc, {});
    ASSERT_EQ(paths.size(), 1u);
    EXPECT_LE(warnings.size(), 101u);
    EXPECT_NE(warnings.back().find("more"), std::string::npos) << warnings.back();
    EXPECT_TRUE(sandbox_->daemonRunning());
    SessionClient(*bus_, paths[0]).Destroy({});
}

TEST_F(SessionFileTest, SaveNeverWritesThroughASymbolicLink) {
    const std::string dir = sandbox_->dir() + "/save-links";
    fs::create_directories(dir);
    fs::permissions(dir, fs::perms::all | fs::perms::sticky_bit);
    const std::string precious = sandbox_->dir() + "/precious";
    writeText(precious, "secret\n");
    chmod(precious.c_str(), 0600);
    SessionClient s(*bus_, manager_->CreateSession(
                               "victim", {{"output-path", sdbus::Variant(output("victim"))}}));
    fs::create_symlink(precious, dir + "/victim.lttng");
    const RunResult refused = tracectl({"save", "victim", "-o", dir});
    EXPECT_EQ(refused.exitCode, 1) << refused.describe();
    EXPECT_NE(refused.err.find("exists"), std::string::npos) << refused.err;
    const RunResult forced = tracectl({"save", "victim", "-o", dir, "-f"});
    EXPECT_TRUE(forced.ok()) << forced.describe();
    EXPECT_EQ(readText(precious), "secret\n") << "written through the link";
    EXPECT_FALSE(fs::is_symlink(dir + "/victim.lttng")) << "the link is replaced";
    struct stat st {};
    ASSERT_EQ(stat(precious.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    size_t entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir))
        ++entries;
    EXPECT_EQ(entries, 1u) << "no temporary file left";
    s.Destroy({});
}

TEST_F(SessionFileTest, AutoLoadAtStartChecksEachFilesOwner) {
    const std::string autoDir = sandbox_->lttngHome() + "/.lttng/sessions/auto";
    fs::create_directories(autoDir);
    auto session = [&](const std::string& name) {
        return "<sessions><session><name>" + name +
               "</name><domains><domain><type>UST</type><buffer_type>PER_UID</buffer_type>"
               "<channels><channel><name>channel0</name><read_timer_interval>0</"
               "read_timer_interval>"
               "<output_type>MMAP</output_type><events><event><name>tracectl_demo:tick</name>"
               "</event></events></channel></channels></domain></domains><started>true</started>"
               "<output><consumer_output><enabled>true</enabled><destination><path>" +
               output(name) +
               "</path></destination></consumer_output></output></session></sessions>";
    };
    writeText(autoDir + "/good.lttng", session("auto-good"));
    chmod((autoDir + "/good.lttng").c_str(), 0644);
    writeText(autoDir + "/nobody.lttng", session("auto-nobody"));
    ASSERT_EQ(chown((autoDir + "/nobody.lttng").c_str(), 65534, 65534), 0);
    writeText(autoDir + "/shared.lttng", session("auto-shared"));
    chmod((autoDir + "/shared.lttng").c_str(), 0666);
    writeText(sandbox_->dir() + "/elsewhere.lttng", session("auto-link"));
    fs::create_symlink(sandbox_->dir() + "/elsewhere.lttng", autoDir + "/link.lttng");
    writeText(autoDir + "/broken.lttng", "<sessions><session><name>auto-broken</name>");
    writeText(autoDir + "/ignored.xml", session("auto-ignored"));

    const RunResult restart = sandbox_->restartDaemon();
    ASSERT_TRUE(restart.ok()) << restart.describe();
    bus_ = sdbus::createSystemBusConnection();
    manager_ = std::make_unique<ManagerClient>(*bus_);
    ASSERT_TRUE(eventually([&] { return sessionNames() == std::vector<std::string>{"auto-good"}; },
                           std::chrono::seconds(10)))
        << "sessions: " << ::testing::PrintToString(sessionNames());
    {
        SessionClient good(*bus_, manager_->GetSession("auto-good"));
        EXPECT_TRUE(eventually([&] { return good.State() == "active"; }, std::chrono::seconds(10)));
        EXPECT_EQ(good.Owner(), 0u);
        runAppUnderTracectl();
        good.Stop({});
        EXPECT_EQ(countTicks(output("auto-good")), 20);
    }
    const std::string log = sandbox_->readLog("tracectld");
    EXPECT_NE(log.find("nobody.lttng: owned by uid 65534"), std::string::npos) << log;
    EXPECT_NE(log.find("shared.lttng: writable by others"), std::string::npos) << log;
    EXPECT_NE(log.find("link.lttng: a symbolic link"), std::string::npos) << log;
    EXPECT_NE(log.find("broken.lttng skipped"), std::string::npos) << log;
    SessionClient(*bus_, manager_->GetSession("auto-good")).Start({});
    // Restarted again: the session comes back from its state in error (it
    // was recording), and the file's is loaded again in its place.
    const RunResult again = sandbox_->restartDaemon();
    ASSERT_TRUE(again.ok()) << again.describe();
    bus_ = sdbus::createSystemBusConnection();
    manager_ = std::make_unique<ManagerClient>(*bus_);
    EXPECT_TRUE(eventually(
        [&] {
            if (sessionNames() != std::vector<std::string>{"auto-good"})
                return false;
            return SessionClient(*bus_, manager_->GetSession("auto-good")).State() == "active";
        },
        std::chrono::seconds(10)))
        << ::testing::PrintToString(sessionNames());
    SessionClient(*bus_, manager_->GetSession("auto-good")).Destroy({});
    fs::remove_all(autoDir);
}

} // namespace
} // namespace tracectl::test
