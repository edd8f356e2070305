// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Userspace probes in the kernel domain (EnableEvents("kernel", ...,
// {"userspace-probe": ...}), lttng-enable-event(1) --userspace-probe) on the
// real kernel: our tracectl-uprobe-app calls a known function N times and
// fires a USDT probe M times; the sandbox's tracectld defines the probes in
// uprobe_events, the consumer records them, babeltrace2 reads them back
// (trace_events.py). And nothing of ours stays in uprobe_events once the
// session is gone, by Destroy or by a daemon killed and restarted; every
// refusal leaves nothing defined.
#include "kernel_trace_support.hpp"
#include "multi_user.hpp"
#include "sandbox_suite.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace tracectl::test;
using Json = nlohmann::json;

namespace {

using Options = std::map<std::string, sdbus::Variant>;

std::string uprobeApp() {
    const char* p = std::getenv("TRACECTL_UPROBE_APP");
    return p != nullptr ? p : "tracectl-uprobe-app";
}

Options probeAt(const std::string& location) {
    return {{"userspace-probe", sdbus::Variant(location)}};
}

/// The lines of uprobe_events that define events of `group`.
std::vector<std::string> uprobeLines(const std::string& group) {
    std::ifstream in(tracefsRoot() + "/uprobe_events");
    std::vector<std::string> lines;
    std::string line;
    while (std::getline(in, line))
        if (line.find(":" + group + "/") != std::string::npos)
            lines.push_back(line);
    return lines;
}

std::string groupOf(SessionClient& s) {
    return "tracectl_" + hexId(s);
}

/// Runs the app (N calls, M probe hits); its pid.
pid_t runApp(int n, int m) {
    const RunResult r = run({"sh", "-c", "echo $$; exec \"$0\" \"$1\" \"$2\"", uprobeApp(),
                             std::to_string(n), std::to_string(m)});
    EXPECT_TRUE(r.ok()) << r.describe();
    return static_cast<pid_t>(std::atol(r.out.c_str()));
}

std::vector<Json> eventsOf(const std::string& dir, const std::string& name, pid_t pid) {
    std::vector<Json> out;
    for (const Json& e : traceEvents(dir, {name}))
        if (e["context"].contains("tid") && e["context"]["tid"] == pid)
            out.push_back(e);
    return out;
}

class Uprobe : public SandboxSuite {
protected:
    void SetUp() override {
        SandboxSuite::SetUp();
        ASSERT_TRUE(manager_->KernelTracingAvailable());
    }

    std::unique_ptr<SessionClient> create(const std::string& name) {
        Options options{{"output-path", sdbus::Variant(output(name))}};
        return std::make_unique<SessionClient>(*bus_, manager_->CreateSession(name, options));
    }
};

TEST_F(Uprobe, AFunctionProbeRecordsEachCallWithItsAddressAndDestroyRemovesIt) {
    auto s = create("u-elf");
    s->EnableEvents("kernel", "", "work_entry",
                    probeAt("elf:" + uprobeApp() + ":tracectl_uprobe_work"));
    s->Start({});
    const std::string group = groupOf(*s);
    const auto defined = uprobeLines(group);
    ASSERT_EQ(defined.size(), 1u) << "one probe, in the session's own group";
    EXPECT_EQ(defined.front().rfind("p:" + group + "/work_entry ", 0), 0u) << defined.front();
    constexpr int kCalls = 37;
    const pid_t pid = runApp(kCalls, 3);
    s->Stop({});
    const auto events = eventsOf(output("u-elf"), "work_entry", pid);
    ASSERT_EQ(events.size(), static_cast<std::size_t>(kCalls)) << "each call, once";
    std::set<std::uint64_t> ips;
    for (const Json& e : events) {
        ASSERT_TRUE(e["fields"].contains("ip")) << e.dump();
        EXPECT_EQ(e["fields"].size(), 1u) << "lttng-modules' uprobe event: ip alone; " << e.dump();
        ips.insert(e["fields"]["ip"].get<std::uint64_t>());
    }
    EXPECT_EQ(ips.size(), 1u) << "every call enters at the same address";
    EXPECT_NE(*ips.begin(), 0u);
    s->Destroy({});
    EXPECT_TRUE(uprobeLines(group).empty()) << "Destroy leaves nothing in uprobe_events";
}

TEST_F(Uprobe, AnSdtProbeRecordsItsArgumentsAndAReturnProbeTheReturnValue) {
    auto s = create("u-sdt");
    s->EnableEvents("kernel", "", "tick", probeAt("sdt:" + uprobeApp() + ":tracectl_test:tick"));
    s->EnableEvents("kernel", "", "work_return",
                    probeAt("elf:" + uprobeApp() + ":tracectl_uprobe_work%return"));
    s->Start({});
    constexpr int kCalls = 11;
    constexpr int kTicks = 23;
    const pid_t pid = runApp(kCalls, kTicks);
    s->Stop({});
    const auto ticks = eventsOf(output("u-sdt"), "tick", pid);
    ASSERT_EQ(ticks.size(), static_cast<std::size_t>(kTicks));
    std::map<std::int64_t, std::int64_t> byI;
    for (const Json& e : ticks) {
        ASSERT_TRUE(e["fields"].contains("ip") && e["fields"].contains("arg0") &&
                    e["fields"].contains("arg1"))
            << e.dump();
        byI[e["fields"]["arg0"].get<std::int64_t>()] = e["fields"]["arg1"].get<std::int64_t>();
    }
    ASSERT_EQ(byI.size(), static_cast<std::size_t>(kTicks)) << "i = 0..M-1, each once";
    for (const auto& [i, value] : byI)
        EXPECT_EQ(value, 1000 * i + 7) << "arg1 of tick " << i;
    const auto returns = eventsOf(output("u-sdt"), "work_return", pid);
    ASSERT_EQ(returns.size(), static_cast<std::size_t>(kCalls));
    std::multiset<std::int64_t> values;
    for (const Json& e : returns) {
        ASSERT_TRUE(e["fields"].contains("ret") && e["fields"].contains("ip") &&
                    e["fields"].contains("parent_ip"))
            << e.dump();
        values.insert(e["fields"]["ret"].get<std::int64_t>());
    }
    std::multiset<std::int64_t> expected;
    for (int i = 0; i < kCalls; ++i)
        expected.insert(3 * i + 1);
    EXPECT_EQ(values, expected) << "each call's return value, 3i+1";
    const std::string group = groupOf(*s);
    EXPECT_EQ(uprobeLines(group).size(), 2u);
    s->Destroy({});
    EXPECT_TRUE(uprobeLines(group).empty());
}

// tracectl enable-event -k --userspace-probe, with a path relative to the
// CLI's folder (made absolute by the CLI, as lttng does).
TEST_F(Uprobe, TheCliTakesLttngsSpellingWithARelativePath) {
    auto s = create("u-cli");
    const char* cli = std::getenv("TRACECTL");
    const fs::path app(uprobeApp());
    const RunResult enabled =
        run({"sh", "-c", "cd \"$0\" && exec \"$1\" enable-event -k -s u-cli \"$2\" tick",
             app.parent_path().string(), cli != nullptr ? cli : "tracectl",
             "--userspace-probe=sdt:./" + app.filename().string() + ":tracectl_test:tick"});
    ASSERT_TRUE(enabled.ok()) << enabled.describe();
    EXPECT_NE(enabled.out.find("Kernel event tick enabled"), std::string::npos) << enabled.out;
    const RunResult wrongDomain =
        run({cli != nullptr ? cli : "tracectl", "enable-event", "-u", "-s", "u-cli",
             "--userspace-probe=sdt:" + uprobeApp() + ":tracectl_test:tick", "tick2"});
    EXPECT_EQ(wrongDomain.exitCode, 2) << "a usage error: -k only";
    s->Start({});
    const pid_t pid = runApp(0, 9);
    s->Stop({});
    EXPECT_EQ(eventsOf(output("u-cli"), "tick", pid).size(), 9u);
    s->Destroy({});
}

TEST_F(Uprobe, DisableStopsAProbe) {
    auto s = create("u-disable");
    s->EnableEvents("kernel", "", "work_entry",
                    probeAt("elf:" + uprobeApp() + ":tracectl_uprobe_work"));
    s->Start({});
    const pid_t before = runApp(5, 0);
    s->DisableEvents("kernel", "", "work_entry", {});
    const pid_t after = runApp(6, 0);
    s->Stop({});
    EXPECT_EQ(eventsOf(output("u-disable"), "work_entry", before).size(), 5u);
    EXPECT_EQ(eventsOf(output("u-disable"), "work_entry", after).size(), 0u)
        << "nothing once disabled";
    s->Destroy({});
}

TEST_F(Uprobe, RefusalsSayWhyAndLeaveNothingDefined) {
    auto s = create("u-refused");
    s->EnableEvents("kernel", "", "work_entry",
                    probeAt("elf:" + uprobeApp() + ":tracectl_uprobe_work"));
    s->Start({});
    const std::string group = groupOf(*s);
    ASSERT_EQ(uprobeLines(group).size(), 1u);
    // An ELF header of another machine (aarch64, e_machine 183), nothing more.
    const std::string foreign = sandbox_->dir() + "/aarch64.elf";
    {
        std::string header(64, '\0');
        header.replace(0, 4,
                       "\x7f"
                       "ELF");
        header[4] = 2;                       // ELFCLASS64
        header[5] = 1;                       // little-endian
        header[6] = 1;                       // EV_CURRENT
        header[16] = 2;                      // ET_EXEC
        header[18] = static_cast<char>(183); // EM_AARCH64
        header[20] = 1;                      // e_version
        header[52] = 64;                     // e_ehsize
        std::ofstream(foreign, std::ios::binary) << header;
    }
    const struct {
        std::string name, location, says;
    } refused[] = {
        {"nofile", "elf:/nonexistent/tracectl-uprobe-app:main", "does not exist"},
        {"nosymbol", "elf:" + uprobeApp() + ":tracectl_no_such_function", "no function named"},
        {"noprobe", "sdt:" + uprobeApp() + ":tracectl_test:nosuchprobe", "no SDT probe"},
        {"arch", "elf:" + foreign + ":main", "another machine"},
        {"relative", "elf:relative/app:main", "absolute"},
        {"bad_name-", "elf:" + uprobeApp() + ":tracectl_uprobe_work", "event name"},
    };
    for (const auto& r : refused) {
        std::string message;
        const std::string name = errorNameOf(
            [&] { s->EnableEvents("kernel", "", r.name, probeAt(r.location)); }, &message);
        EXPECT_EQ(name, kInvalidArgument) << r.location;
        EXPECT_NE(message.find(r.says), std::string::npos) << r.location << ": " << message;
    }
    EXPECT_EQ(uprobeLines(group).size(), 1u) << "nothing defined by a refusal";
    s->Destroy({});
    EXPECT_TRUE(uprobeLines(group).empty());
}

TEST_F(Uprobe, ADaemonKilledAndRestartedLeavesNoProbe) {
    auto s = create("u-crash");
    s->EnableEvents("kernel", "", "work_entry",
                    probeAt("elf:" + uprobeApp() + ":tracectl_uprobe_work"));
    s->Start({});
    const std::string group = groupOf(*s);
    ASSERT_EQ(uprobeLines(group).size(), 1u);
    s.reset();
    ASSERT_TRUE(sandbox_->stopDaemon(SIGKILL).ok());
    const RunResult started = sandbox_->startDaemon();
    ASSERT_TRUE(started.ok()) << started.describe();
    EXPECT_TRUE(eventually([&] { return uprobeLines(group).empty(); }, std::chrono::seconds(15)))
        << "the next daemon removes the probes the dead one left";
}

TEST_F(Uprobe, NoProbeOutlivesAKilledConsumer) {
    auto s = create("u-consumer");
    s->EnableEvents("kernel", "", "work_entry",
                    probeAt("elf:" + uprobeApp() + ":tracectl_uprobe_work"));
    s->Start({});
    const std::string group = groupOf(*s);
    ASSERT_EQ(uprobeLines(group).size(), 1u);
    const RunResult killed = sandbox_->systemctl(
        {"kill", "--signal=SIGKILL", "tracectl-consumer-" + hexId(*s) + ".service"});
    ASSERT_EQ(killed.exitCode, 0) << killed.describe();
    EXPECT_TRUE(eventually([&] { return uprobeLines(group).empty(); }, std::chrono::seconds(10)))
        << "the probes go with the instances once nothing reads them";
    s->Destroy({});
}

class UprobeAccess : public MultiUserSuite {};

TEST_F(UprobeAccess, AUserWithoutTraceKernelOrRightsOnTheFileIsRefused) {
    // alice: no trace-kernel.
    const std::string alice = createAs("alice", "u-alice", homeOutput("alice", "u-alice"));
    const std::string location = "elf:" + uprobeApp() + ":tracectl_uprobe_work";
    EXPECT_EQ(errorOf(call("alice", alice, "org.tracectl.Tracing1.Session.EnableEvents",
                           {"'kernel'", "''", "'work_entry'",
                            "{'userspace-probe': <'" + location + "'>, 'interactive': <true>}"})),
              kAccessDenied);
    // carol has trace-kernel (group tracing), but may not read the file.
    const std::string secret = sandbox_->dir() + "/secret-uprobe-app";
    fs::copy_file(uprobeApp(), secret, fs::copy_options::overwrite_existing);
    ASSERT_EQ(::chmod(secret.c_str(), 0700), 0) << std::strerror(errno);
    const std::string carol = createAs("carol", "u-carol", homeOutput("carol", "u-carol"));
    const RunResult denied =
        call("carol", carol, "org.tracectl.Tracing1.Session.EnableEvents",
             {"'kernel'", "''", "'work_entry'",
              "{'userspace-probe': <'elf:" + secret + ":tracectl_uprobe_work'>}"});
    EXPECT_EQ(errorOf(denied), kInvalidArgument);
    EXPECT_NE((denied.out + denied.err).find("permission denied"), std::string::npos)
        << denied.out << denied.err;
    // A file carol may read is taken.
    EXPECT_EQ(errorOf(call(
                  "carol", carol, "org.tracectl.Tracing1.Session.EnableEvents",
                  {"'kernel'", "''", "'work_entry'", "{'userspace-probe': <'" + location + "'>}"})),
              "no error");
    fs::remove(secret);
}

} // namespace
