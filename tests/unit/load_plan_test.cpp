// LTTng session files onto tracectl sessions (src/daemon/save_load): what maps,
// what is left out with a warning naming it, what refuses the session, and
// the save side written back in LTTng's terms.
#include "save_load/load_plan.hpp"
#include "save_load/session_description_of.hpp"
#include "session_file/session_xml.hpp"

#include <gtest/gtest.h>

namespace tracectl {
namespace {

namespace sf = session_file;

sf::SessionDescription described(const std::string& inner) {
    return sf::readSessionFile("<sessions><session>" + inner + "</session></sessions>")
        .sessions.at(0);
}

std::string joined(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& l : lines)
        out += l + "\n";
    return out;
}

const char* kUstChannel =
    "<name>s</name><domains><domain><type>UST</type><buffer_type>PER_PID</buffer_type>"
    "<channels><channel><name>c</name><overwrite_mode>OVERWRITE</overwrite_mode>"
    "<subbuffer_size>8192</subbuffer_size><subbuffer_count>2</subbuffer_count>"
    "<switch_timer_interval>1000</switch_timer_interval><read_timer_interval>0"
    "</read_timer_interval><output_type>MMAP</output_type><events>"
    "<event><name>p:*</name><loglevel_type>RANGE</loglevel_type><loglevel>4</loglevel>"
    "<filter>a == 1</filter><exclusions><exclusion>p:x</exclusion></exclusions></event>"
    "<event><name>p:only</name><enabled>false</enabled><loglevel_type>SINGLE</loglevel_type>"
    "<loglevel>14</loglevel></event></events><contexts><context><type>VTID</type></context>"
    "<context><type>PROCNAME</type></context></contexts></channel></channels>"
    "<process_attr_trackers><vpid_process_attr_tracker><process_attr_values><vpid><id>3</id>"
    "</vpid></process_attr_values></vpid_process_attr_tracker><vuid_process_attr_tracker>"
    "<process_attr_values/></vuid_process_attr_tracker></process_attr_trackers></domain>"
    "</domains><started>true</started><attributes><rotation_schedules><periodic><time_us>"
    "60000000</time_us></periodic></rotation_schedules></attributes><output><consumer_output>"
    "<enabled>true</enabled><destination><path>/tmp/out</path></destination>"
    "</consumer_output></output>";

TEST(LoadPlan, AUstSessionMapsWhole) {
    std::vector<std::string> warnings;
    const LoadPlan p = planLoad(described(kUstChannel), warnings);
    EXPECT_EQ(warnings, std::vector<std::string>{}) << joined(warnings);
    EXPECT_EQ(p.request.name, "s");
    EXPECT_EQ(p.request.outputPath, "/tmp/out");
    EXPECT_EQ(p.request.bufferOwnership, "per-pid");
    EXPECT_FALSE(p.request.mode);
    EXPECT_TRUE(p.start);
    EXPECT_FALSE(p.usesKernel);
    ASSERT_EQ(p.channels.size(), 1u);
    const ChannelConfig& c = p.channels[0].second;
    EXPECT_TRUE(c.overwrite);
    EXPECT_EQ(c.subbufSize, 8192u);
    EXPECT_EQ(c.subbufCount, 2u);
    EXPECT_EQ(c.switchTimerUs, 1000u);
    ASSERT_EQ(p.contexts.size(), 2u);
    EXPECT_EQ(p.contexts[0].type, "vtid");
    EXPECT_EQ(p.contexts[1].type, "procname");
    ASSERT_EQ(p.rules.size(), 2u);
    EXPECT_EQ(p.rules[0].loglevelMatch, LoglevelMatch::AtLeastAsSevere);
    EXPECT_EQ(p.rules[0].loglevel, 4);
    EXPECT_EQ(p.rules[0].exclusions, std::vector<std::string>{"p:x"});
    EXPECT_FALSE(p.rules[0].filterBytecode.empty()) << "compiled";
    EXPECT_EQ(p.rules[1].loglevelMatch, LoglevelMatch::Exactly);
    EXPECT_FALSE(p.rules[1].enabled);
    ASSERT_EQ(p.trackers.size(), 2u);
    EXPECT_EQ(p.trackers[0].ids, std::vector<uint32_t>{3});
    EXPECT_TRUE(p.trackers[1].ids.empty()) << "an empty inclusion set: nothing tracked";
    EXPECT_EQ(p.schedule.timerUs, 60'000'000u);
}

// An LTTng 2.11 file's <pid_tracker> is loaded as LTTng 2.12+ loads it: the
// UST domain's VPID tracker, its targets the values; no target tracks
// nothing (it loaded as "every process" before). The kernel domain's is its
// PID tracker, which tracectl leaves out, saying so.
TEST(LoadPlan, ALegacyPidTrackerIsTheVpidTrackerOfTheUstDomain) {
    const auto withLegacy = [](const std::string& type, const std::string& targets) {
        return described("<name>l</name><domains><domain><type>" + type +
                         "</type><buffer_type>PER_UID</buffer_type><trackers><pid_tracker>"
                         "<targets>" +
                         targets + "</targets></pid_tracker></trackers></domain></domains>");
    };
    std::vector<std::string> warnings;
    LoadPlan p = planLoad(withLegacy("UST", ""), warnings);
    ASSERT_EQ(p.trackers.size(), 1u) << "an empty inclusion set, not \"all\"";
    EXPECT_EQ(p.trackers[0].attribute, ProcessAttribute::Vpid);
    EXPECT_TRUE(p.trackers[0].ids.empty());
    EXPECT_EQ(joined(warnings).find("tracker"), std::string::npos) << joined(warnings);
    p = planLoad(withLegacy("UST", "<pid_target><pid>4</pid></pid_target>"
                                   "<pid_target><pid>9</pid></pid_target>"),
                 warnings);
    ASSERT_EQ(p.trackers.size(), 1u);
    EXPECT_EQ(p.trackers[0].ids, (std::vector<uint32_t>{4, 9}));
    warnings.clear();
    p = planLoad(withLegacy("KERNEL", ""), warnings);
    EXPECT_TRUE(p.trackers.empty());
    EXPECT_NE(joined(warnings).find("the kernel domain's pid tracker (tracking no process) left "
                                    "out: tracectl's kernel domain records every process"),
              std::string::npos)
        << joined(warnings);
    warnings.clear();
    p = planLoad(withLegacy("KERNEL", "<pid_target><pid>4</pid></pid_target>"), warnings);
    EXPECT_NE(joined(warnings).find("pid tracker (tracking 1 value) left out"), std::string::npos)
        << joined(warnings);
}

// A session file's timer below tracectl's floor loads at the floor, saying
// so, rather than refusing the file (LTTng 2.13 saved it).
TEST(LoadPlan, ATimerBelowTheFloorLoadsAtTheFloorWithAWarning) {
    std::vector<std::string> warnings;
    const LoadPlan p = planLoad(
        described("<name>t</name><domains><domain><type>UST</type><buffer_type>PER_UID"
                  "</buffer_type><channels><channel><name>c</name><read_timer_interval>200"
                  "</read_timer_interval><switch_timer_interval>0</switch_timer_interval>"
                  "<output_type>MMAP</output_type></channel></channels></domain></domains>"),
        warnings);
    ASSERT_EQ(p.channels.size(), 1u);
    EXPECT_EQ(p.channels[0].second.readTimerUs, kMinTimerUs);
    EXPECT_EQ(p.channels[0].second.switchTimerUs, 0u) << "off stays off";
    EXPECT_NE(joined(warnings).find("read timer of 200 µs raised to 1000 µs"), std::string::npos)
        << joined(warnings);
}

TEST(LoadPlan, ALiveTimerBelowTheFloorLoadsAtTheFloorWithAWarning) {
    std::vector<std::string> warnings;
    const LoadPlan p =
        planLoad(described("<name>lv</name><attributes><live_timer_interval>1</live_timer_interval>"
                           "</attributes>"),
                 warnings);
    EXPECT_EQ(p.request.mode, "live");
    EXPECT_EQ(p.request.liveTimerUs, kMinTimerUs);
    EXPECT_NE(joined(warnings).find("live timer of 1 µs raised to 1000 µs"), std::string::npos)
        << joined(warnings);
}

// lttng-sessiond loads a rule whose exclusion excludes every event it
// matches (the refusal is lttng-enable-event(1)'s) and it records nothing:
// tracectl, which refuses it to clients, leaves it out with a warning
// instead of refusing the whole file (issue 40 B8).
TEST(LoadPlan, ARuleThatExcludesEverythingItMatchesIsLeftOutWithAWarning) {
    std::vector<std::string> warnings;
    const LoadPlan p = planLoad(
        described("<name>x</name><domains><domain><type>UST</type><buffer_type>PER_UID"
                  "</buffer_type><channels><channel><name>c</name><read_timer_interval>0"
                  "</read_timer_interval><output_type>MMAP</output_type><events>"
                  "<event><name>p:*</name><exclusions><exclusion>p:*</exclusion></exclusions>"
                  "</event><event><name>q:*</name><exclusions><exclusion>q:x</exclusion>"
                  "</exclusions></event></events></channel></channels></domain></domains>"),
        warnings);
    ASSERT_EQ(p.rules.size(), 1u);
    EXPECT_EQ(p.rules[0].pattern, "q:*");
    EXPECT_NE(joined(warnings).find("event 'p:*' of channel 'c': left out: its exclusion 'p:*' "
                                    "excludes every event it matches"),
              std::string::npos)
        << joined(warnings);
}

TEST(LoadPlan, WhatTracectlLacksIsNamedInAWarning) {
    std::vector<std::string> warnings;
    const LoadPlan p = planLoad(
        described("<name>w</name><shared_memory_path>/dev/shm/x</shared_memory_path><domains>"
                  "<domain><type>UST</type><buffer_type>PER_UID</buffer_type><channels><channel>"
                  "<name>c</name><read_timer_interval>0</read_timer_interval><output_type>MMAP"
                  "</output_type><blocking_timeout>-1</blocking_timeout><tracefile_size>100"
                  "</tracefile_size><events><event><name>k</name><type>PROBE</type></event>"
                  "</events><contexts><context><app><provider_name>a</provider_name><ctx_name>b"
                  "</ctx_name></app></context><context><type>HOSTNAME</type></context></contexts>"
                  "</channel></channels><trackers><pid_tracker><targets><pid_target><pid>4</pid>"
                  "</pid_target></targets></pid_tracker></trackers></domain><domain><type>PYTHON"
                  "</type><buffer_type>PER_UID</buffer_type><channels><channel><name>py</name>"
                  "<read_timer_interval>0</read_timer_interval><output_type>MMAP</output_type>"
                  "</channel></channels></domain></domains>"),
        warnings);
    const std::string all = joined(warnings);
    for (const char* what : {"shared_memory_path", "blocking_timeout", "tracefile_size", "PROBE",
                             "$app.a:b", "HOSTNAME", "PYTHON", "no output"})
        EXPECT_NE(all.find(what), std::string::npos) << what << " in\n" << all;
    for (const std::string& w : warnings)
        EXPECT_EQ(w.rfind("session 'w': ", 0), 0u) << w;
    EXPECT_TRUE(p.rules.empty());
    EXPECT_TRUE(p.contexts.empty());
}

TEST(LoadPlan, SnapshotLiveAndNetworkOutputs) {
    std::vector<std::string> warnings;
    const LoadPlan snap = planLoad(
        described("<name>sn</name><attributes><snapshot_mode>true</snapshot_mode></attributes>"
                  "<output><snapshot_outputs><output><name>snapshot-1</name><max_size>4096"
                  "</max_size><consumer_output><enabled>true</enabled><destination><path>/s"
                  "</path></destination></consumer_output></output></snapshot_outputs></output>"),
        warnings);
    EXPECT_EQ(snap.request.mode, "snapshot");
    EXPECT_EQ(snap.request.outputPath, "/s");
    EXPECT_NE(joined(warnings).find("max_size"), std::string::npos);
    warnings.clear();
    const LoadPlan live = planLoad(
        described("<name>lv</name><attributes><live_timer_interval>2000000</live_timer_interval>"
                  "</attributes><output><consumer_output><enabled>true</enabled><destination>"
                  "<net_output><control_uri>tcp4://10.0.0.1:5342/</control_uri><data_uri>"
                  "tcp4://10.0.0.1:5343/</data_uri></net_output></destination></consumer_output>"
                  "</output>"),
        warnings);
    EXPECT_EQ(warnings, std::vector<std::string>{}) << joined(warnings);
    EXPECT_EQ(live.request.mode, "live");
    EXPECT_EQ(live.request.liveTimerUs, 2'000'000u);
    EXPECT_EQ(live.request.controlUrl, "tcp://10.0.0.1:5342");
    EXPECT_EQ(live.request.dataUrl, "tcp://10.0.0.1:5343");
}

TEST(LoadPlan, ASessionThatCannotBeLoadedIsRefusedNamingIt) {
    for (const char* inner :
         {"<name>f</name><domains><domain><type>UST</type><buffer_type>PER_UID</buffer_type>"
          "<channels><channel><name>c</name><read_timer_interval>0</read_timer_interval>"
          "<output_type>MMAP</output_type><events><event><name>a</name><filter>((</filter>"
          "</event></events></channel></channels></domain></domains>",
          "<name>f</name><attributes><snapshot_mode>true</snapshot_mode><live_timer_interval>1"
          "</live_timer_interval></attributes>",
          "<name>f</name><domains><domain><type>UST</type><buffer_type>PER_UID</buffer_type>"
          "<process_attr_trackers><vpid_process_attr_tracker><process_attr_values><vpid><id>-4"
          "</id></vpid></process_attr_values></vpid_process_attr_tracker></process_attr_trackers>"
          "</domain></domains>"}) {
        std::vector<std::string> warnings;
        try {
            planLoad(described(inner), warnings);
            ADD_FAILURE() << "planned: " << inner;
        } catch (const Error& e) {
            EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
            EXPECT_EQ(std::string(e.what()).rfind("session 'f': ", 0), 0u) << e.what();
        }
    }
}

TEST(SessionDescriptionOf, KernelPatternsAreWrittenInLttngTerms) {
    SessionConfig c;
    c.name = "k";
    c.outputPath = "/k";
    Session s(SessionId::random(), c, std::chrono::system_clock::now());
    s.addChannel(defaultKernelChannel("kc"), TracingDomain::Kernel);
    for (const char* pattern : {"sched:sched_switch", "sched:*", "*"}) {
        EventRule r;
        r.domain = TracingDomain::Kernel;
        r.channel = "kc";
        r.pattern = pattern;
        s.enableEvents(r);
    }
    std::vector<std::string> warnings;
    const sf::SessionDescription d = describeSession(s, warnings);
    ASSERT_EQ(d.domains.size(), 2u);
    EXPECT_EQ(d.domains[0].type, sf::DomainType::Kernel);
    const auto& events = d.domains[0].channels.at(0).events;
    ASSERT_EQ(events.size(), 3u);
    EXPECT_EQ(events[0].name, "sched_switch");
    EXPECT_EQ(events[1].name, "sched_*");
    EXPECT_EQ(events[2].name, "*");
    EXPECT_NE(joined(warnings).find("sched:*"), std::string::npos) << joined(warnings);
    // And back: an LTTng kernel name matches the event in any system.
    std::vector<std::string> loadWarnings;
    const LoadPlan p = planLoad(d, loadWarnings);
    ASSERT_EQ(p.rules.size(), 3u);
    EXPECT_EQ(p.rules[0].pattern, "*:sched_switch");
    EXPECT_TRUE(p.usesKernel);
}

} // namespace
} // namespace tracectl

namespace tracectl {
namespace {

// lttng-modules' call stack contexts: CALLSTACK_KERNEL and CALLSTACK_USER
// in a session file (LTTng's config/session.xsd) are callstack-kernel and
// callstack-user here.
TEST(LoadPlan, KernelCallStackContextsLoadByLttngsNames) {
    std::vector<std::string> warnings;
    const LoadPlan p =
        planLoad(described("<name>k</name><domains><domain><type>KERNEL</type><buffer_type>"
                           "GLOBAL</buffer_type><channels><channel><name>c</name><contexts>"
                           "<context><type>CALLSTACK_KERNEL</type></context><context><type>"
                           "CALLSTACK_USER</type></context></contexts></channel></channels>"
                           "</domain></domains>"),
                 warnings);
    EXPECT_EQ(joined(warnings).find("context"), std::string::npos) << joined(warnings);
    ASSERT_EQ(p.contexts.size(), 2u);
    EXPECT_EQ(p.contexts[0].type, "callstack-kernel");
    EXPECT_EQ(p.contexts[1].type, "callstack-user");
}

} // namespace
} // namespace tracectl
