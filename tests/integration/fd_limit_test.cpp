// A consumer that runs out of file descriptors (EMFILE) refuses one app's
// buffers, not the session: that app is refused (counted in the session's
// Statistics "apps-refused", logged at warning with its pid and name), the
// apps already traced record on, a later app is traced once fds are free
// again, and every per-PID trace folder written stays readable.
//
// The consumer's limit is lowered while it runs (prlimit(2) on its pid, as
// root): just enough for the apps it traces, not for one more.
#include "child_process.hpp"
#include "eventually.hpp"
#include "sandbox.hpp"
#include "sandbox_suite.hpp"
#include "tracectl_clients.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <gtest/gtest.h>
#include <map>
#include <sdbus-c++/sdbus-c++.h>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/types.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace tracectl::test;
using namespace std::chrono_literals;

namespace {

/// The fds a consumer keeps free whatever the channels it is asked for
/// (tracectl-consumerd(8), LIMITS): for rotations, snapshots, closing.
constexpr std::size_t kConsumerFdReserve = 32;

class FdLimit : public SandboxSuite {
protected:
    static std::string appLog() { return sandbox_->dir() + "/log/apps.log"; }

    /// The pid of the consumer writing below `dir` (0 if none).
    static pid_t consumerOf(const std::string& dir) {
        const RunResult r = run({"pgrep", "-f", "tracectl-consumerd --output " + dir});
        std::istringstream in(r.out);
        pid_t pid = 0;
        in >> pid;
        return pid;
    }

    /// How many fds `pid` holds open.
    static std::size_t openFds(pid_t pid) {
        std::size_t n = 0;
        for ([[maybe_unused]] const auto& e :
             std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd"))
            ++n;
        return n;
    }

    /// The per-PID trace folders (ust/pid/<name>-<pid>-<date>) under `dir`, by pid.
    static std::map<pid_t, std::string> perPidFolders(const std::string& dir) {
        std::map<pid_t, std::string> out;
        std::error_code ec;
        for (const auto& e : std::filesystem::directory_iterator(dir + "/ust/pid", ec)) {
            const std::string f = e.path().filename();
            // <name>-<pid>-<YYYYmmdd>-<HHMMSS>: the pid is the third field from the end.
            const auto time = f.rfind('-');
            const auto date = time == std::string::npos ? time : f.rfind('-', time - 1);
            const auto pid = date == std::string::npos ? date : f.rfind('-', date - 1);
            if (pid != std::string::npos)
                out[std::stoi(f.substr(pid + 1, date - pid - 1))] = e.path();
        }
        return out;
    }

    static std::size_t ticksIn(const std::string& text) {
        std::size_t n = 0;
        for (std::size_t at = 0; (at = text.find("tracectl_demo:tick:", at)) != std::string::npos;
             ++at)
            ++n;
        return n;
    }

    static std::uint64_t refusedOf(SessionClient& s) {
        const auto stats = s.Statistics();
        const auto it = stats.find("apps-refused");
        return it == stats.end() ? 0 : it->second.get<std::uint64_t>();
    }
};

} // namespace

// Issue 40 A.3. Before the fix the third app's CreateChannel failed with
// EMFILE, the session went to `error`, its consumer exited, the first two
// apps' recording stopped there, and their traces could be left with
// metadata lacking their event classes (babeltrace2 read nothing).
TEST_F(FdLimit, AnAppTheConsumerHasNoFdsForIsRefusedAndTheOthersRecordOn) {
    const std::string dir = output("fdlimit");
    auto s = startTickSession("fdlimit", {}, true, {});
    const pid_t consumer = consumerOf(dir);
    ASSERT_NE(consumer, 0) << "no consumer writes to " << dir;

    // Paced so that both run through the refusal below, and a little after.
    const int ticks = 1500;
    const std::size_t before = openFds(consumer);
    ChildProcess first({demoApp(), std::to_string(ticks), "2000"}, {}, appLog());
    ASSERT_TRUE(waitTracing(first.pid(), appLog()));
    const std::size_t perApp = openFds(consumer) - before;
    ChildProcess second({demoApp(), std::to_string(ticks), "2000"}, {}, appLog());
    ASSERT_TRUE(waitTracing(second.pid(), appLog()));
    ASSERT_GT(perApp, 4u);

    // Room for half an app's more beside the consumer's reserve: the next
    // one cannot be given buffers.
    const rlim_t limit = openFds(consumer) + kConsumerFdReserve + perApp / 2;
    const struct rlimit lowered { limit, limit };
    ASSERT_EQ(prlimit(consumer, RLIMIT_NOFILE, &lowered, nullptr), 0);

    ChildProcess refused({demoApp(), "50", "1000"}, {}, appLog());
    // The app goes on untraced (its register_done came): it ends normally.
    ASSERT_EQ(refused.wait(30000), 0);
    EXPECT_TRUE(eventually([&] { return refusedOf(*s) == 1; }, 5s))
        << "apps-refused: " << refusedOf(*s);
    EXPECT_EQ(s->State(), "active") << s->ErrorReason();
    const std::string log = sandbox_->readLog("tracectld");
    const std::string named = "app " + std::to_string(refused.pid()) + " (tracectl-demo-a";
    EXPECT_NE(log.find(named), std::string::npos) << "no warning names the refused app";
    EXPECT_NE(log.find("Too many open files"), std::string::npos) << "the reason is not told";

    // The first app's exit frees its fds: an app after it is traced again.
    ASSERT_EQ(first.wait(30000), 0);
    ASSERT_TRUE(
        eventually([&] { return openFds(consumer) + perApp + kConsumerFdReserve <= limit; }, 10s))
        << "the exited app's buffers were not closed";
    ChildProcess later({demoApp(), "200", "1000"}, {}, appLog());
    ASSERT_EQ(later.wait(30000), 0);
    ASSERT_EQ(second.wait(30000), 0);
    EXPECT_EQ(s->State(), "active") << s->ErrorReason();
    s->Stop({});
    EXPECT_EQ(refusedOf(*s), 1u);

    // Every trace folder written reads, and holds all of its app's events.
    const auto folders = perPidFolders(dir);
    const std::map<pid_t, std::size_t> expected{
        {first.pid(), ticks}, {second.pid(), ticks}, {later.pid(), 200}};
    for (const auto& [pid, count] : expected) {
        ASSERT_EQ(folders.count(pid), 1u) << "no trace of app " << pid;
        const RunResult r = run({"babeltrace2", folders.at(pid)});
        EXPECT_EQ(r.exitCode, 0) << folders.at(pid) << ": " << r.describe().substr(0, 2000);
        EXPECT_EQ(ticksIn(r.out), count) << folders.at(pid);
    }
    for (const auto& [pid, folder] : folders) {
        if (expected.count(pid) != 0)
            continue;
        EXPECT_EQ(pid, refused.pid()) << "a trace of an unknown app: " << folder;
        const RunResult r = run({"babeltrace2", folder});
        EXPECT_EQ(r.exitCode, 0) << folder << ": " << r.describe().substr(0, 2000);
        EXPECT_EQ(ticksIn(r.out), 0u) << folder;
    }
    const RunResult all = run({"babeltrace2", dir});
    EXPECT_EQ(all.exitCode, 0) << all.describe().substr(0, 2000);
    EXPECT_EQ(ticksIn(all.out), 2 * ticks + 200u);
    s->Destroy({});
}

// Found by a fresh-user pass: with two channels, an app refused at the second
// left its trace half-made (its metadata, the first channel's streams with an
// empty packet each, no stream class declared for them): babeltrace2 failed
// on that folder and on the whole trace. The refused trace's files now go
// with the channels the daemon destroys.
TEST_F(FdLimit, AnAppRefusedAtItsSecondChannelLeavesNoHalfMadeTrace) {
    const std::string dir = output("fdlimit2");
    auto s = std::make_unique<SessionClient>(
        *bus_, manager_->CreateSession(
                   "fdlimit2", {{"output-path", sdbus::Variant(dir)},
                                {"buffer-ownership", sdbus::Variant(std::string("per-pid"))}}));
    for (const char* channel : {"ca", "cb"}) {
        s->AddChannel("ust", channel, {});
        s->EnableEvents("ust", channel, "tracectl_demo:tick", {});
    }
    s->Start({});
    const pid_t consumer = consumerOf(dir);
    ASSERT_NE(consumer, 0) << "no consumer writes to " << dir;

    const int ticks = 600;
    const std::size_t before = openFds(consumer);
    ChildProcess first({demoApp(), std::to_string(ticks), "2000"}, {}, appLog());
    ASSERT_TRUE(waitTracing(first.pid(), appLog()));
    const std::size_t perApp = openFds(consumer) - before;
    ASSERT_GT(perApp, 8u);

    // Room for all of an app's buffers but one fd: its metadata channel and
    // channel ca are made, cb is refused.
    const rlim_t limit = openFds(consumer) + kConsumerFdReserve + perApp - 1;
    const struct rlimit lowered { limit, limit };
    ASSERT_EQ(prlimit(consumer, RLIMIT_NOFILE, &lowered, nullptr), 0);
    ChildProcess refused({demoApp(), "50", "1000"}, {}, appLog());
    ASSERT_EQ(refused.wait(30000), 0);
    EXPECT_TRUE(eventually([&] { return refusedOf(*s) == 1; }, 5s))
        << "apps-refused: " << refusedOf(*s);
    ASSERT_EQ(first.wait(30000), 0);
    s->Stop({});
    EXPECT_EQ(s->State(), "stopped") << s->ErrorReason();

    const auto folders = perPidFolders(dir);
    EXPECT_EQ(folders.count(refused.pid()), 0u)
        << "the refused app left " << folders.at(refused.pid());
    ASSERT_EQ(folders.count(first.pid()), 1u) << "no trace of the first app";
    const RunResult all = run({"babeltrace2", dir});
    EXPECT_EQ(all.exitCode, 0) << all.describe().substr(0, 2000);
    EXPECT_EQ(ticksIn(all.out), 2u * ticks) << "both channels record every tick";
    s->Destroy({});
}

// Found by a fresh-user pass: a snapshot the consumer could not write (no
// fd left for its files) failed, and left its folder behind, empty but for
// the "ust" folder that claims it. Such a snapshot now says nothing was
// written and removes what it made; the session goes on, and the next
// snapshot, once fds are free, is whole.
TEST_F(FdLimit, ASnapshotWithoutFdsFailsSaysSoAndLeavesNoFolder) {
    const std::string dir = output("fdsnap");
    auto s =
        startTickSession("fdsnap", {{"mode", sdbus::Variant(std::string("snapshot"))}}, false, {});
    const pid_t consumer = consumerOf(dir);
    ASSERT_NE(consumer, 0) << "no consumer writes to " << dir;
    ChildProcess app({demoApp(), "100000", "1000"}, {}, appLog());
    ASSERT_TRUE(waitTracing(app.pid(), appLog()));

    struct rlimit original {};
    ASSERT_EQ(prlimit(consumer, RLIMIT_NOFILE, nullptr, &original), 0);
    const rlim_t none = openFds(consumer);
    // The soft limit only: raising a hard one again is not allowed here.
    const struct rlimit lowered { none, original.rlim_max };
    ASSERT_EQ(prlimit(consumer, RLIMIT_NOFILE, &lowered, nullptr), 0);
    std::string failure;
    try {
        const std::string written = s->RecordSnapshot({});
        ADD_FAILURE() << "a snapshot without fds succeeded: " << written;
    } catch (const sdbus::Error& e) {
        failure = e.getMessage();
    }
    EXPECT_NE(failure.find("nothing was written"), std::string::npos) << failure;
    const auto snapshotFolders = [&dir] {
        std::vector<std::string> out;
        std::error_code ec;
        for (const auto& e : std::filesystem::directory_iterator(dir, ec))
            if (e.path().filename().string().rfind("snapshot-", 0) == 0)
                out.push_back(e.path());
        return out;
    };
    EXPECT_TRUE(snapshotFolders().empty()) << snapshotFolders().front();

    ASSERT_EQ(prlimit(consumer, RLIMIT_NOFILE, &original, nullptr), 0)
        << std::strerror(errno) << "; session " << s->State() << ": " << s->ErrorReason();
    EXPECT_EQ(s->State(), "active") << s->ErrorReason();
    const std::string written = s->RecordSnapshot({});
    ASSERT_EQ(snapshotFolders().size(), 1u);
    const RunResult r = run({"babeltrace2", written});
    EXPECT_EQ(r.exitCode, 0) << r.describe().substr(0, 2000);
    EXPECT_GT(ticksIn(r.out), 0u);
    app.kill();
    s->Destroy({});
}
