// The statedump (consumer/kernel/statedump.hpp), ProcfsProcessInfo and the
// /proc parsers over a fake /proc tree in a temporary directory.
#include "kernel_records.hpp"
#include "kernel_test_support.hpp"
#include "proc_stat.hpp"
#include "process_info.hpp"
#include "statedump.hpp"

#include <array>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace tracectl::consumer;
using namespace tracectl::consumer::kernel;
using namespace tracectl::kernel_records;
using ktest::Bytes;
using ktest::getLe;
namespace fs = std::filesystem;

namespace {

// A stat line with the fields we read set, the rest 0.
std::string statLine(int pid, const std::string& comm, char state, int ppid, unsigned long flags,
                     int priority, int cpu) {
    std::string s = std::to_string(pid) + " (" + comm + ") " + state + " " + std::to_string(ppid);
    for (int field = 5; field <= 52; ++field) {
        s += ' ';
        if (field == 9)
            s += std::to_string(flags);
        else if (field == 18)
            s += std::to_string(priority);
        else if (field == 39)
            s += std::to_string(cpu);
        else
            s += '0';
    }
    return s + '\n';
}

class FakeProc : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/tracectl-fakeproc-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        root_ = tmpl;
    }
    void TearDown() override { fs::remove_all(root_); }

    void write(const fs::path& rel, const std::string& text) {
        fs::create_directories((root_ / rel).parent_path());
        std::ofstream(root_ / rel) << text;
    }
    void thread(int pid, int tid, const std::string& comm, char state, int ppid,
                unsigned long flags = 0, int prio = 20, int cpu = 0) {
        const std::string line = statLine(tid, comm, state, ppid, flags, prio, cpu);
        const std::string status = "Name:\t" + comm + "\nUmask:\t0022\nState:\tS\nTgid:\t" +
                                   std::to_string(pid) + "\nPid:\t" + std::to_string(tid) + "\n";
        write(fs::path(std::to_string(pid)) / "task" / std::to_string(tid) / "stat", line);
        write(fs::path(std::to_string(pid)) / "task" / std::to_string(tid) / "status", status);
        // /proc/<tid> resolves for threads too.
        write(fs::path(std::to_string(tid)) / "stat", line);
        write(fs::path(std::to_string(tid)) / "status", status);
    }
    void fd(int pid, int n, const std::string& target, const std::string& flags) {
        const fs::path dir = root_ / std::to_string(pid) / "fd";
        fs::create_directories(dir);
        fs::create_symlink(target, dir / std::to_string(n));
        write(fs::path(std::to_string(pid)) / "fdinfo" / std::to_string(n),
              "pos:\t0\nflags:\t" + flags + "\nmnt_id:\t25\n");
    }

    fs::path root_;
};

struct Event {
    std::uint16_t id;
    std::uint64_t ts;
    Bytes fields;
};

constexpr std::size_t kProcessStateBytes = 6 * 4 + 16 + 5 * 4;

// A sink that keeps every event.
StatedumpSink collect(std::vector<Event>& out) {
    return [&out](std::uint16_t id, std::uint64_t ts, std::span<const std::byte> fields) {
        out.push_back({id, ts, Bytes(fields.begin(), fields.end())});
        return true;
    };
}

std::int32_t i32(const Bytes& b, std::size_t at) {
    return static_cast<std::int32_t>(getLe(b, at, 4));
}

} // namespace

TEST(ProcStat, ParsesCommWithSpacesAndParentheses) {
    const auto s = parseProcStat(statLine(77, "a) (b c", 'D', 5, 0x00208040, -51, 1));
    ASSERT_TRUE(s);
    EXPECT_EQ(s->pid, 77);
    EXPECT_STREQ(s->comm.data(), "a) (b c");
    EXPECT_EQ(s->state, 'D');
    EXPECT_EQ(s->ppid, 5);
    EXPECT_EQ(s->flags, 0x00208040u);
    EXPECT_EQ(s->priority, -51);
    EXPECT_EQ(s->processor, 1);
    EXPECT_FALSE(parseProcStat("12 (x"));
    EXPECT_FALSE(parseProcStat("12 (x) R"));
    EXPECT_FALSE(parseProcStat("x (y) R 1 2 3 4 5 6"));
    EXPECT_FALSE(parseProcStat(""));
    // A comm longer than 15 characters is cut to 15 (the kernel's never is).
    const auto longComm = parseProcStat(statLine(1, "0123456789abcdefgh", 'S', 0, 0, 20, 0));
    ASSERT_TRUE(longComm);
    EXPECT_STREQ(longComm->comm.data(), "0123456789abcde");
    EXPECT_EQ(parseTgid("Name:\tx\nTgid:\t4321\nPid:\t1\n"), 4321);
    EXPECT_EQ(parseTgid("Tgid: 5\n"), 5);
    EXPECT_FALSE(parseTgid("Name:\tTgid:\nPid:\t1\n"));
    EXPECT_FALSE(parseTgid("Tgid:\tx\n"));
}

TEST(ProcStat, ParsesNsPids) {
    std::array<std::int32_t, 4> ids{};
    EXPECT_EQ(parseNsPids("Tgid:\t9\nNSpid:\t4242\t17\t1\nNSpgid:\t1\n", ids), 3u);
    EXPECT_EQ(ids, (std::array<std::int32_t, 4>{4242, 17, 1, 0}));
    EXPECT_EQ(parseNsPids("NSpid: 5\n", ids), 1u);
    EXPECT_EQ(ids[0], 5);
    // At most out.size(); up to the first value that is not a number.
    EXPECT_EQ(parseNsPids("NSpid:\t1\t2\t3\t4\t5\t6\n", ids), 4u);
    EXPECT_EQ(parseNsPids("NSpid:\t7\tx\t9\n", ids), 1u);
    EXPECT_EQ(parseNsPids("NSpid:\tx\n", ids), 0u);
    EXPECT_EQ(parseNsPids("NSpid:\n", ids), 0u);
    EXPECT_EQ(parseNsPids("Name:\tNSpid:\nPid:\t1\n", ids), 0u);
    EXPECT_EQ(parseNsPids("", ids), 0u);
}

TEST(ProcStat, ReadsThisProcess) {
    char text[4096];
    const auto body = readSmallFile("/proc/self/stat", text);
    ASSERT_TRUE(body);
    const auto s = parseProcStat(*body);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->pid, ::getpid());
    EXPECT_FALSE(readSmallFile("/nonexistent/stat", text));
}

TEST_F(FakeProc, ProcessInfoLooksUpAndCaches) {
    thread(100, 100, "server", 'S', 1, 0, 20);
    thread(100, 101, "server-io", 'R', 1, 0, -2);
    ProcfsProcessInfo info(root_, 3);
    ProcessDetails d = info.lookup(101);
    EXPECT_EQ(d.pid, 100);
    EXPECT_STREQ(d.procname.data(), "server-io");
    EXPECT_EQ(d.prio, -2);
    EXPECT_EQ(info.lookup(100).pid, 100);

    // Cached: gone from /proc, still known.
    fs::remove_all(root_ / "101");
    EXPECT_EQ(info.lookup(101), d);
    EXPECT_EQ(info.reads(), 2u);

    // Vanished: pid = tid, no name, prio 0; cached too.
    d = info.lookup(555);
    EXPECT_EQ(d.pid, 555);
    EXPECT_EQ(d.procname[0], '\0');
    EXPECT_EQ(d.prio, 0);
    EXPECT_EQ(info.vanished(), 1u);
    EXPECT_EQ(info.cached(), 3u);

    // Full: the cache is cleared, then refilled; 101 is read again (gone).
    info.lookup(100);
    EXPECT_EQ(info.cached(), 3u);
    info.lookup(7); // a fourth tid clears
    EXPECT_EQ(info.cached(), 1u);
    EXPECT_EQ(info.lookup(101).pid, 101);

    // forget() drops one entry.
    info.forget(101);
    EXPECT_EQ(info.cached(), 1u);

    // tid 0: the idle task.
    d = info.lookup(0);
    EXPECT_EQ(d.pid, 0);
    EXPECT_STREQ(d.procname.data(), "swapper");
    EXPECT_EQ(d.prio, 20);
}

TEST_F(FakeProc, ProcessInfoReadsPidNamespaces) {
    // 300 runs in a nested pid namespace (id 7 there); /proc's ns/pid is a
    // link whose inode is the namespace's: the file's inode stands for it.
    thread(300, 300, "contained", 'S', 1);
    write("300/status", "Name:\tcontained\nTgid:\t300\nNSpid:\t300\t7\n");
    write("300/ns/pid", "");
    struct stat st {};
    ASSERT_EQ(::stat((root_ / "300/ns/pid").c_str(), &st), 0);
    ProcfsProcessInfo info(root_);
    const ProcessDetails d = info.lookup(300);
    EXPECT_EQ(d.pidNsInum, static_cast<std::uint32_t>(st.st_ino));
    EXPECT_EQ(d.nsLevels, 2u);
    EXPECT_EQ(d.nsTids[0], 300);
    EXPECT_EQ(d.nsTids[1], 7);
    // No NSpid line, no ns/pid: unknown (0 levels, inode 0).
    thread(400, 400, "old", 'S', 1);
    const ProcessDetails old = info.lookup(400);
    EXPECT_EQ(old.nsLevels, 0u);
    EXPECT_EQ(old.pidNsInum, 0u);
    EXPECT_EQ(old.pid, 400);
}

TEST(ProcessInfo, ReadsThisThreadsPidNamespace) {
    struct stat st {};
    ASSERT_EQ(::stat("/proc/self/ns/pid", &st), 0);
    ProcfsProcessInfo info;
    const ProcessDetails d = info.lookup(static_cast<std::int32_t>(::gettid()));
    EXPECT_EQ(d.pid, ::getpid());
    EXPECT_EQ(d.pidNsInum, static_cast<std::uint32_t>(st.st_ino));
    ASSERT_GE(d.nsLevels, 1u);
    // The consumer and this test run in the initial pid namespace's view.
    EXPECT_EQ(d.nsTids[0], static_cast<std::int32_t>(::gettid()));
}

TEST_F(FakeProc, StatedumpWritesEveryThreadAndFile) {
    thread(1, 1, "init", 'S', 0, 0x400100, 20, 1);
    fd(1, 0, "/dev/null", "0100002");      // O_RDWR | O_LARGEFILE: read + write
    fd(1, 3, "socket:[1234]", "02004001"); // O_WRONLY: write
    thread(2, 2, "kthreadd", 'S', 0, 0x00208040, 20, 0);
    thread(40, 40, "app", 'R', 1, 0x400000, 20, 1);
    thread(40, 41, "app worker", 'D', 1, 0x400040, 19, 0);
    thread(40, 42, "zomb", 'Z', 1, 0, 20, 0);
    thread(40, 43, "idle", 'I', 1, 0, 20, 0);
    thread(40, 44, "stopped", 'T', 1, 0, 20, 0);
    write("self/stat", "not a process");
    write("cpuinfo", "x");

    std::uint64_t now = 1000;
    Statedump dump({root_, root_ / "sys", false}, [&] { return now += 10; });
    std::vector<Event> ev;
    const StatedumpCounts counts = dump.run(collect(ev));
    EXPECT_EQ(counts.processes, 3u); // 1, 2, 40: the per-tid dirs 41-44 are threads of 40
    EXPECT_EQ(counts.dropped, 0u);

    ASSERT_GE(ev.size(), 2u);
    EXPECT_EQ(ev.front().id, kStatedumpStartId);
    EXPECT_EQ(ev.back().id, kStatedumpEndId);
    std::uint64_t last = 0;
    for (const Event& e : ev) {
        EXPECT_GT(e.ts, last);
        last = e.ts;
        if (e.id == kStatedumpProcessStateId) {
            EXPECT_EQ(e.fields.size(), kProcessStateBytes);
        }
        if (e.id == kStatedumpStartId || e.id == kStatedumpEndId) {
            EXPECT_TRUE(e.fields.empty());
        }
    }

    // The events in order: init, its two files, kthreadd, app's 5 threads.
    std::vector<const Event*> states, files;
    for (const Event& e : ev)
        (e.id == kStatedumpProcessStateId ? states : files).push_back(&e);
    ASSERT_EQ(states.size(), 1u + 1u + 5u);
    EXPECT_EQ(counts.threads, states.size());
    EXPECT_EQ(counts.files, 2u);

    const auto check = [&](const Event& e, int tid, int pid, int ppid, const char* name, int type,
                           int status, int cpu) {
        const Bytes& f = e.fields;
        EXPECT_EQ(i32(f, 0), tid);
        EXPECT_EQ(i32(f, 4), tid);
        EXPECT_EQ(i32(f, 8), pid);
        EXPECT_EQ(i32(f, 12), pid);
        EXPECT_EQ(i32(f, 16), ppid);
        EXPECT_EQ(i32(f, 20), ppid);
        char got[16];
        std::memcpy(got, f.data() + 24, 16);
        EXPECT_EQ(std::string(got, strnlen(got, 16)), name);
        EXPECT_EQ(i32(f, 40), type) << name;
        EXPECT_EQ(i32(f, 44), 5); // mode unknown
        EXPECT_EQ(i32(f, 48), 0); // submode none
        EXPECT_EQ(i32(f, 52), status) << name;
        EXPECT_EQ(i32(f, 56), cpu) << name;
    };
    check(*states[0], 1, 1, 0, "init", 0, 5, 1);
    check(*states[1], 2, 2, 0, "kthreadd", 1, 5, 0);
    check(*states[2], 40, 40, 1, "app", 0, 2, 1);
    check(*states[3], 41, 40, 1, "app worker", 0, 5, 0);
    check(*states[4], 42, 40, 1, "zomb", 0, 4, 0);
    check(*states[5], 43, 40, 1, "idle", 0, 5, 0);
    check(*states[6], 44, 40, 1, "stopped", 0, 0, 0);

    // init's files come right after its thread.
    EXPECT_EQ(ev[2].id, kStatedumpFileDescriptorId);
    const Bytes& f0 = ev[2].fields;
    EXPECT_EQ(i32(f0, 0), 1);
    EXPECT_EQ(i32(f0, 4), 0);
    EXPECT_EQ(getLe(f0, 8, 4), 0100002u);
    EXPECT_EQ(getLe(f0, 12, 4), 3u); // FMODE_READ | FMODE_WRITE
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(f0.data() + 16)), "/dev/null");
    const Bytes& f1 = ev[3].fields;
    EXPECT_EQ(i32(f1, 4), 3);
    EXPECT_EQ(getLe(f1, 12, 4), 2u); // FMODE_WRITE
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(f1.data() + 16)), "socket:[1234]");
}

// A clock that goes backward never makes the events do so, and what the
// sink refuses is counted as dropped.
TEST_F(FakeProc, StatedumpCountsWhatItsSinkRefuses) {
    for (int pid = 10; pid < 40; ++pid)
        thread(pid, pid, "p" + std::to_string(pid), 'S', 1);
    std::uint64_t now = 1000;
    Statedump dump({root_, root_ / "sys", false}, [&] { return now -= 1; });
    std::vector<Event> ev;
    int calls = 0;
    const StatedumpCounts counts =
        dump.run([&](std::uint16_t id, std::uint64_t ts, std::span<const std::byte> fields) {
            if (++calls % 2 == 0)
                return false;
            ev.push_back({id, ts, Bytes(fields.begin(), fields.end())});
            return true;
        });
    EXPECT_EQ(counts.threads, 30u);
    EXPECT_EQ(calls, 32); // start, 30 threads, end
    EXPECT_EQ(counts.dropped, 16u);
    EXPECT_EQ(ev.size(), 16u);
    for (const Event& e : ev)
        EXPECT_EQ(e.ts, 999u);
}

TEST_F(FakeProc, UnreadableFdsAreSkipped) {
    thread(5, 5, "secret", 'S', 1);
    fd(5, 1, "/dev/tty", "02");
    // An entry readlink refuses (EINVAL: not a link) is skipped.
    write("5/fd/2", "");
    const StatedumpSink keep = [](std::uint16_t, std::uint64_t, std::span<const std::byte>) {
        return true;
    };
    Statedump dump({root_, root_ / "sys", false}, [] { return 5; });
    StatedumpCounts counts = dump.run(keep);
    EXPECT_EQ(counts.threads, 1u);
    EXPECT_EQ(counts.files, 1u);

    if (::geteuid() == 0)
        GTEST_SKIP() << "root reads any directory: EACCES cannot be staged";
    fs::permissions(root_ / "5" / "fd", fs::perms::none);
    Statedump again({root_, root_ / "sys", false}, [] { return 5; });
    counts = again.run(keep);
    fs::permissions(root_ / "5" / "fd", fs::perms::owner_all);
    EXPECT_EQ(counts.threads, 1u);
    EXPECT_EQ(counts.files, 0u);
}

// The system-wide events, from a fake /sys and cpuinfo: block devices with
// the kernel's dev_t, one interrupt event per action, one cpu_topology per
// processor; entries that are not what they should be are skipped.
TEST_F(FakeProc, StatedumpWritesBlockDevicesInterruptsAndCpus) {
    write("sys/class/block/vda/dev", "254:0\n");
    write("sys/class/block/vda1/dev", "254:1\n");
    write("sys/class/block/broken/dev", "nonsense\n");
    write("sys/kernel/irq/26/chip_name", "IO-APIC\n");
    write("sys/kernel/irq/26/actions", "ttyS0,ttyS1\n");
    write("sys/kernel/irq/9/chip_name", "IO-APIC\n");
    write("sys/kernel/irq/9/actions", "\n"); // no handler: no event
    write("sys/kernel/irq/x/actions", "not an irq\n");
    write("cpuinfo", "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\n"
                     "model name\t: Some CPU @ 2.00GHz\nphysical id\t: 0\ncore id\t\t: 1\n"
                     "cpu cores\t: 2\n\nprocessor\t: 1\nvendor_id\t: GenuineIntel\n");
    Statedump dump({root_, root_ / "sys", false}, [] { return 5; });
    std::vector<Event> ev;
    const StatedumpCounts counts = dump.run(collect(ev));
    EXPECT_EQ(counts.blockDevices, 2u);
    EXPECT_EQ(counts.interrupts, 2u);
    EXPECT_EQ(counts.cpus, 2u);
    EXPECT_EQ(counts.networkInterfaces, 0u);
    std::vector<Bytes> blocks, irqs, cpus;
    for (const Event& e : ev) {
        if (e.id == kStatedumpBlockDeviceId)
            blocks.push_back(e.fields);
        else if (e.id == kStatedumpInterruptId)
            irqs.push_back(e.fields);
        else if (e.id == kStatedumpCpuTopologyId)
            cpus.push_back(e.fields);
    }
    ASSERT_EQ(blocks.size(), 2u);
    EXPECT_EQ(getLe(blocks[0], 0, 4), (254u << 20) | 0u);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(blocks[0].data() + 4)), "vda");
    EXPECT_EQ(getLe(blocks[1], 0, 4), (254u << 20) | 1u);
    ASSERT_EQ(irqs.size(), 2u);
    const auto text = [](const Bytes& b, std::size_t at) {
        return std::string(reinterpret_cast<const char*>(b.data() + at));
    };
    EXPECT_EQ(getLe(irqs[0], 0, 4), 26u);
    EXPECT_EQ(text(irqs[0], 4), "IO-APIC");
    EXPECT_EQ(text(irqs[0], 12), "ttyS0");
    EXPECT_EQ(text(irqs[1], 12), "ttyS1");
    EXPECT_EQ(getLe(irqs[1], 18, 4), 0u); // tid
    ASSERT_EQ(cpus.size(), 2u);
    const Bytes& c = cpus[0];
    std::size_t at = 0;
    EXPECT_EQ(text(c, at), "x86");
    at += 4;
    EXPECT_EQ(getLe(c, at, 2), 0u);
    at += 2;
    EXPECT_EQ(text(c, at), "GenuineIntel");
    at += 13;
    EXPECT_EQ(getLe(c, at, 1), 6u);
    EXPECT_EQ(getLe(c, at + 1, 1), 85u);
    at += 2;
    EXPECT_EQ(text(c, at), "Some CPU @ 2.00GHz");
    at += 19;
    EXPECT_EQ(getLe(c, at, 2), 0u);
    EXPECT_EQ(getLe(c, at + 2, 2), 1u);
    EXPECT_EQ(getLe(c, at + 4, 2), 2u);
    EXPECT_EQ(getLe(cpus[1], 4, 2), 1u);
}
