// SPDX-License-Identifier: LGPL-2.1-or-later
//
// LTTng's own analyses (Debian's python3-lttnganalyses) on a kernel trace
// recorded as their users record it: lttng-analyses-record's commands, run
// through tracectl as they are, and known workloads. Every analysis runs
// without --no-intersection: the streams' time ranges must intersect.
#include "child_process.hpp"
#include "eventually.hpp"
#include "sandbox_suite.hpp"

#include <filesystem>
#include <fstream>
#include <future>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace tracectl::test;
using Json = nlohmann::json;

namespace {

// /usr/bin/lttng-analyses-record's event list, unchanged.
constexpr const char* kAnalysesEvents =
    "sched_switch,sched_wakeup,sched_waking,block_rq_complete,block_rq_issue,"
    "block_bio_remap,block_bio_backmerge,netif_receive_skb,net_dev_xmit,sched_process_fork,"
    "sched_process_exec,lttng_statedump_process_state,lttng_statedump_file_descriptor,"
    "lttng_statedump_block_device,mm_vmscan_wakeup_kswapd,mm_page_free,mm_page_alloc,"
    "block_dirty_buffer,irq_handler_entry,irq_handler_exit,softirq_entry,softirq_exit,"
    "softirq_raise,irq_softirq_entry,irq_softirq_exit,irq_softirq_raise,kmem_mm_page_alloc,"
    "kmem_mm_page_free";

// What the workloads do, and their names: each runs through a symbolic link
// of that name, so exec names the process after it (comm).
constexpr int kWrites = 2000;
constexpr int kSleeps = 50;

// Every analysis the package installs (its console scripts), text form.
const std::vector<std::string> kAnalyses = {
    "cputop",     "iolatencyfreq", "iolatencystats", "iolatencytop", "iolog",
    "iousagetop", "irqfreq",       "irqlog",         "irqstats",     "memtop",
    "periodfreq", "periodlog",     "periodstats",    "periodtop",    "schedfreq",
    "schedlog",   "schedstats",    "schedtop",       "syscallstats",
};

/// utime + stime of process `pid`, in seconds (/proc/<pid>/stat fields 14, 15).
double cpuSeconds(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = text.rfind(')');
    if (close == std::string::npos)
        return -1;
    std::istringstream rest(text.substr(close + 2));
    std::string field;
    unsigned long long utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
        if (i == 14)
            utime = std::stoull(field);
        if (i == 15)
            stime = std::stoull(field);
    }
    return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

class KernelAnalyses : public SandboxSuite {
protected:
    static void SetUpTestSuite() {
        SandboxSuite::SetUpTestSuite();
        if (!fs::exists("/usr/bin/lttng-cputop"))
            return;
        recordOnce();
    }

    void SetUp() override {
        SandboxSuite::SetUp();
        if (!fs::exists("/usr/bin/lttng-cputop"))
            GTEST_SKIP() << "python3-lttnganalyses is not installed (scripts/install-deps)";
        ASSERT_TRUE(recorded_) << recordFailure_;
    }

    /// How the analyses run: without meson's MALLOC_PERTURB_, under which
    /// the babeltrace 1 bindings they read traces with crash on any trace.
    static RunOptions analysisOptions() {
        RunOptions options;
        options.timeout = std::chrono::minutes(3);
        options.unsetEnv = {"MALLOC_PERTURB_"};
        return options;
    }

    /// An analysis' output (`name` as in /usr/bin/lttng-NAME) on the trace.
    static RunResult analysis(const std::string& name) {
        const RunOptions options = analysisOptions();
        return run({"/usr/bin/lttng-" + name, "--no-progress", trace_}, options);
    }

    /// The JSON of lttng-NAME-mi on the trace; an empty object, and a
    /// failure, if it fails.
    static Json machineInterface(const std::string& name,
                                 const std::vector<std::string>& extra = {}) {
        const RunOptions options = analysisOptions();
        std::vector<std::string> argv = {"/usr/bin/lttng-" + name + "-mi"};
        argv.insert(argv.end(), extra.begin(), extra.end());
        argv.push_back(trace_);
        const RunResult r = run(argv, options);
        EXPECT_TRUE(r.ok()) << name << ": " << r.describe();
        if (!r.ok())
            return Json::object();
        try {
            return Json::parse(r.out);
        } catch (const Json::exception& e) {
            ADD_FAILURE() << name << ": " << e.what() << "\n" << r.out.substr(0, 2000);
            return Json::object();
        }
    }

    static std::string trace_;
    static std::string writtenFile_;
    static pid_t burner_, writer_, sleeper_, forker_, execd_;
    static double burnerCpu_; // its CPU seconds while the session recorded
    static bool recorded_;
    static std::string recordFailure_;

private:
    static void fail(const std::string& why) { recordFailure_ += why + "\n"; }

    // Records the trace every test reads: lttng-analyses-record's commands
    // as they are, then the workloads.
    static void recordOnce() {
        const char* cli = std::getenv("TRACECTL");
        if (cli == nullptr)
            return fail("TRACECTL is not set");
        const std::string dir = output("analyses");
        const std::string bin = sandbox_->dir() + "/analyses-bin";
        fs::create_directories(bin);
        const auto link = [&](const std::string& target, const std::string& name) {
            std::error_code ec;
            fs::remove(bin + "/" + name, ec);
            fs::create_symlink(target, bin + "/" + name);
            return bin + "/" + name;
        };
        const std::string burner = link("/bin/sh", "tc-burner");
        const std::string writer = link(fs::canonical("/usr/bin/python3"), "tc-writer");
        const std::string sleeper = link(fs::canonical("/usr/bin/python3"), "tc-sleeper");
        const std::string forker = link(fs::canonical("/usr/bin/python3"), "tc-forker");
        const std::string execd = link(fs::canonical("/bin/sleep"), "tc-execd");
        writtenFile_ = sandbox_->dir() + "/analyses-written.dat";
        const std::string log = sandbox_->dir() + "/log/analyses-workloads.log";

        const auto tracectl = [&](std::vector<std::string> argv) {
            argv.insert(argv.begin(), cli);
            const RunResult r = run(argv);
            if (!r.ok())
                fail("tracectl " + argv[1] + ": " + r.describe());
            return r.ok();
        };
        if (!tracectl({"create", "analyses", "--output", dir}) ||
            !tracectl({"enable-channel", "-s", "analyses", "-k", "chan1", "--subbuf-size=8M"}) ||
            !tracectl({"enable-event", "-s", "analyses", "-k", kAnalysesEvents, "-c", "chan1"}) ||
            !tracectl({"enable-event", "-s", "analyses", "-k", "-c", "chan1", "--syscall", "-a"}))
            return;

        // The burner, the writer and the sleeper run before the session
        // starts, as the processes a user records usually do: the statedump
        // names them. (LTTng's analyses name a process after its comm when
        // they first see it, and lttng-modules records no event with the new
        // name at an exec: a process that execs during the trace keeps its
        // parent's name there, as it would with lttng-modules.) The writer
        // and the sleeper wait for `go`.
        const std::string go = sandbox_->dir() + "/analyses-go";
        std::error_code ec;
        fs::remove(go, ec);
        const std::string waitForGo = "import os, sys, time\n"
                                      "while not os.path.exists(sys.argv[1]): time.sleep(0.01)\n";
        const int lastCpu = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN)) - 1;
        ChildProcess burn(
            {"taskset", "-c", std::to_string(lastCpu), burner, "-c", "while :; do :; done"}, {},
            log);
        burner_ = burn.pid();
        ChildProcess write({writer, "-c",
                            waitForGo +
                                "fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | "
                                "os.O_TRUNC, 0o600)\n"
                                "for _ in range(" +
                                std::to_string(kWrites) +
                                "):\n"
                                "    os.write(fd, b'x' * 512)\n"
                                "os.fsync(fd)\n"
                                "os.close(fd)\n"
                                "fd = os.open(sys.argv[2], os.O_RDONLY)\n"
                                "while os.read(fd, 65536): pass\n",
                            go, writtenFile_},
                           {}, log);
        ChildProcess sleep(
            {sleeper, "-c",
             waitForGo + "for _ in range(" + std::to_string(kSleeps) + "): time.sleep(0.01)\n", go},
            {}, log);
        writer_ = write.pid();
        sleeper_ = sleep.pid();
        // Past their execs (taskset's too): the statedump must see their names.
        const auto named = [](pid_t pid, const std::string& name) {
            std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
            std::string now;
            std::getline(comm, now);
            return now == name;
        };
        if (!eventually([&] {
                return named(burner_, "tc-burner") && named(writer_, "tc-writer") &&
                       named(sleeper_, "tc-sleeper");
            }))
            return fail("the workloads did not exec: see " + log);
        if (!tracectl({"start", "analyses"}))
            return;
        const double burnerBefore = cpuSeconds(burner_);
        std::ofstream(go) << "go\n";
        {
            // A process that forks a child, which execs a named program.
            ChildProcess fork({forker, "-c",
                               "import os, sys\n"
                               "pid = os.fork()\n"
                               "if pid == 0:\n"
                               "    os.execv(sys.argv[1], [sys.argv[1], '0.2'])\n"
                               "print(pid, flush=True)\n"
                               "os.waitpid(pid, 0)\n",
                               execd},
                              {}, sandbox_->dir() + "/log/analyses-forker.log");
            forker_ = fork.pid();
            for (ChildProcess* p : {&write, &sleep, &fork})
                if (p->wait(60000) != 0)
                    fail("a workload failed: see " + log);
            std::ifstream forked(sandbox_->dir() + "/log/analyses-forker.log");
            forked >> execd_;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(150)); // the burner alone
        burnerCpu_ = cpuSeconds(burner_) - burnerBefore;
        if (!tracectl({"stop", "analyses"}) || !tracectl({"destroy", "analyses"}))
            return;
        burn.kill();
        burn.wait(10000);
        trace_ = dir + "/kernel";
        recorded_ = recordFailure_.empty();
    }
};

std::string KernelAnalyses::trace_;
std::string KernelAnalyses::writtenFile_;
pid_t KernelAnalyses::burner_ = -1, KernelAnalyses::writer_ = -1, KernelAnalyses::sleeper_ = -1,
      KernelAnalyses::forker_ = -1, KernelAnalyses::execd_ = -1;
double KernelAnalyses::burnerCpu_ = 0;
bool KernelAnalyses::recorded_ = false;
std::string KernelAnalyses::recordFailure_;

/// The titles of `mi`'s results that name `pid`, for failure messages.
std::string titlesNaming(const Json& mi, pid_t pid) {
    std::string titles;
    for (const Json& result : mi.value("results", Json::array())) {
        const Json& cls = result["class"];
        const std::string name = cls.is_object() ? cls.value("title", "") : cls.get<std::string>();
        if (name.find(std::to_string(pid)) != std::string::npos)
            titles += name + "\n";
    }
    return titles.empty() ? "(none)" : titles;
}

/// The "data" rows of the results of `mi` whose title names `title` (or of
/// every result when `title` is empty).
std::vector<Json> rowsOf(const Json& mi, const std::string& title = "") {
    std::vector<Json> rows;
    for (const Json& result : mi.value("results", Json::array())) {
        const Json& cls = result["class"];
        const std::string name = cls.is_object() ? cls.value("title", "") : cls.get<std::string>();
        if (!title.empty() && name.find(title) == std::string::npos)
            continue;
        for (const Json& row : result.value("data", Json::array()))
            rows.push_back(row);
    }
    return rows;
}

} // namespace

// Every analysis the package installs reads the trace and exits 0, with no
// --no-intersection: no stream covers only an instant (the statedump is in a
// CPU's stream) and every event they read has lttng-modules' fields.
TEST_F(KernelAnalyses, EveryAnalysisReadsTheTraceAsItIs) {
    // Two at a time (each is one single-threaded Python process).
    std::vector<std::future<RunResult>> running;
    for (const std::string& name : kAnalyses)
        running.push_back(std::async(std::launch::deferred, [name] { return analysis(name); }));
    for (std::size_t i = 0; i < running.size(); i += 2) {
        auto second = i + 1 < running.size()
                          ? std::optional(std::async(std::launch::async,
                                                     [&] { return running[i + 1].get(); }))
                          : std::nullopt;
        for (std::size_t j = i; j < std::min(i + 2, running.size()); ++j) {
            const RunResult r = j == i ? running[i].get() : second->get();
            EXPECT_TRUE(r.ok()) << "lttng-" << kAnalyses[j] << ": " << r.describe() << "\n"
                                << r.out;
            EXPECT_EQ(r.out.find("no intersection"), std::string::npos) << kAnalyses[j];
        }
    }
}

// The burner, started before the session, has its name (from the statedump
// and its switches) and at least 90 % of the CPU time it used meanwhile.
TEST_F(KernelAnalyses, CputopNamesTheBurnerAndGivesItItsCpu) {
    const Json mi = machineInterface("cputop");
    bool found = false;
    for (const Json& result : mi.value("results", Json::array())) {
        if (result["class"] != "per-process")
            continue;
        const Json& range = result["time-range"];
        const double seconds = static_cast<double>(range["end"]["value"].get<int64_t>() -
                                                   range["begin"]["value"].get<int64_t>()) /
                               1e9;
        for (const Json& row : result["data"]) {
            if (row[0]["tid"] != burner_)
                continue;
            found = true;
            EXPECT_EQ(row[0]["name"], "tc-burner");
            const double cpu = row[3]["value"].get<double>() * seconds;
            // /proc counts in ticks (10 ms): two of them of slack.
            EXPECT_GE(cpu, 0.9 * burnerCpu_ - 0.02)
                << "cputop gives the burner " << cpu << " s of " << burnerCpu_ << " s";
        }
    }
    EXPECT_TRUE(found) << "no row for the burner (" << burner_ << ")\n"
                       << mi.dump().substr(0, 3000);
}

// The writer's write(2) calls, counted exactly, under its name.
TEST_F(KernelAnalyses, SyscallstatsCountsTheWritersWritesUnderItsName) {
    const Json mi = machineInterface("syscallstats");
    const std::string title =
        "tc-writer (" + std::to_string(writer_) + ", TID: " + std::to_string(writer_) + ")";
    const std::vector<Json> rows = rowsOf(mi, title);
    ASSERT_FALSE(rows.empty()) << "no statistics for " << title << "; those naming it:\n"
                               << titlesNaming(mi, writer_);
    std::int64_t writes = -1;
    for (const Json& row : rows)
        if (row[0]["name"] == "write")
            writes = row[1]["value"].get<std::int64_t>();
    EXPECT_EQ(writes, kWrites);
}

// A child forked and exec'd during the trace has its process id (the fork
// event's child_pid): "(?, TID: N)" when the analyses do not know it.
TEST_F(KernelAnalyses, AChildForkedDuringTheTraceHasItsProcessId) {
    ASSERT_GT(execd_, 0);
    const Json mi = machineInterface("syscallstats");
    const std::string title =
        "(" + std::to_string(execd_) + ", TID: " + std::to_string(execd_) + ")";
    EXPECT_FALSE(rowsOf(mi, title).empty())
        << "no statistics for " << title << "; those naming it:\n"
        << titlesNaming(mi, execd_);
}

// The sleeper is woken once per sleep at least: schedstats counts them.
TEST_F(KernelAnalyses, SchedstatsCountsTheSleepersWakeUps) {
    const Json mi = machineInterface("schedstats");
    std::int64_t wakeUps = -1;
    for (const Json& row : rowsOf(mi))
        if (row.size() > 1 && row[0].value("tid", -1) == sleeper_)
            wakeUps = row[1]["value"].get<std::int64_t>();
    EXPECT_GE(wakeUps, kSleeps) << mi.dump().substr(0, 3000);
}

// The I/O analyses name the written file: from the openat(2) string
// argument (copied from user memory) and the file descriptor it returned.
TEST_F(KernelAnalyses, TheIoAnalysesNameTheWrittenFile) {
    const Json usage = machineInterface("iousagetop", {"--limit", "100000"});
    std::int64_t written = -1;
    for (const Json& row : rowsOf(usage, "Per-file top I/O operations [written]"))
        if (row[0].value("path", "").find(writtenFile_) == 0)
            written = row[1]["value"].get<std::int64_t>();
    EXPECT_GE(written, std::int64_t{kWrites} * 512)
        << "iousagetop does not name " << writtenFile_ << " among the files written";
    const Json latency = machineInterface("iolatencytop", {"--limit", "100000"});
    EXPECT_NE(latency.dump().find(writtenFile_), std::string::npos)
        << "iolatencytop does not name " << writtenFile_;
}
