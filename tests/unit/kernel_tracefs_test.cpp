// tracefs (src/daemon/kernel/tracefs.hpp): the pure parsers always; the
// instance life cycle against the real tracefs when run as root (mounting
// it if needed), skipped otherwise. Instances made here are named
// tracectl-unittest-<pid>-... and removed.
#include "kernel/tracefs.hpp"
#include "kernel/tracepoint_catalog.hpp"
#include "kernel_fixtures.hpp"

#include <cerrno>
#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace tracectl::kernel;
namespace fs = std::filesystem;

namespace {

TEST(KernelTracefsText, FindsTheMount) {
    EXPECT_EQ(findTracefsMount("sysfs /sys sysfs rw 0 0\n"
                               "tracefs /sys/kernel/tracing tracefs rw,nosuid 0 0\n"),
              fs::path("/sys/kernel/tracing"));
    EXPECT_EQ(findTracefsMount("nodev /mnt/my\\040trace tracefs rw 0 0"),
              fs::path("/mnt/my trace"));
    EXPECT_FALSE(findTracefsMount("debugfs /sys/kernel/debug debugfs rw 0 0\n"));
    EXPECT_FALSE(findTracefsMount(""));
}

TEST(KernelTracefsText, ParsesStats) {
    const CpuStats s = parseCpuStats("entries: 5\noverrun: 1\ncommit overrun: 2\nbytes: 4096\n"
                                     "oldest event ts:  1.000010\nnow ts: 31476.944231\n"
                                     "dropped events: 3\nread events: 7\n");
    EXPECT_EQ(s.entries, 5u);
    EXPECT_EQ(s.overrun, 1u);
    EXPECT_EQ(s.commitOverrun, 2u);
    EXPECT_EQ(s.bytes, 4096u);
    EXPECT_EQ(s.oldestEventNs, 1'000'010'000u);
    EXPECT_EQ(s.nowNs, 31'476'944'231'000u);
    EXPECT_EQ(s.droppedEvents, 3u);
    EXPECT_EQ(s.readEvents, 7u);
    EXPECT_THROW(parseCpuStats("entries: x\n"), TracefsError);
    EXPECT_EQ(parseCpuStats("future key: x\n").entries, 0u);
}

class KernelTracefs : public ::testing::Test {
protected:
    void SetUp() override {
        if (::geteuid() != 0)
            GTEST_SKIP() << "needs root (tracefs instances)";
        tracefs_.emplace(Tracefs::locate());
        ASSERT_TRUE(tracefs_->writable());
    }
    std::string id(const std::string& what) const {
        return "unittest-" + std::to_string(::getpid()) + "-" + what;
    }
    std::optional<Tracefs> tracefs_;
};

TEST_F(KernelTracefs, InstanceLifeCycle) {
    const std::string topClock = tracefs_->read("trace_clock");
    fs::path path;
    {
        TracefsInstance inst = TracefsInstance::create(*tracefs_, id("life"));
        path = inst.path();
        EXPECT_EQ(inst.name(), "tracectl-" + id("life"));
        EXPECT_TRUE(fs::is_directory(path));
        EXPECT_EQ(inst.read("tracing_on"), "0\n");
        EXPECT_THROW(TracefsInstance::create(*tracefs_, id("life")), TracefsError);

        inst.setClock("mono");
        EXPECT_EQ(inst.clock(), "mono");
        EXPECT_THROW(inst.setClock("no-such-clock"), TracefsError);
        inst.setBufferSizeKb(256);
        // The kernel rounds up to whole sub-buffers of data (4080 of 4096 bytes).
        const unsigned long kb = std::stoul(inst.read("buffer_size_kb"));
        EXPECT_GE(kb, 256u);
        EXPECT_LE(kb, 256u + 16u);
        if (inst.setSubbufferSizeKb(8)) {
            EXPECT_EQ(inst.headerPage().pageSize, 8192u);
        }
        inst.setOverwrite(false);
        EXPECT_EQ(inst.read("options/overwrite"), "0\n");
        inst.enableEvent("sched", "sched_switch");
        EXPECT_EQ(inst.read("events/sched/sched_switch/enable"), "1\n");
        EXPECT_THROW(inst.enableEvent("sched", "no_such_event"), TracefsError);
        EXPECT_THROW(inst.enableEvent("..", "x"), std::invalid_argument);

        inst.setFilter("sched", "sched_switch", "prev_pid != 0");
        try {
            inst.setFilter("sched", "sched_switch", "nosuchfield > 3");
            ADD_FAILURE() << "bad filter accepted";
        } catch (const TracefsError& e) {
            EXPECT_EQ(e.error(), EINVAL);
            EXPECT_NE(std::string(e.what()).find("Field not found"), std::string::npos) << e.what();
        }
        inst.clearFilter("sched", "sched_switch");

        const std::vector<unsigned> cpus = inst.cpus();
        ASSERT_FALSE(cpus.empty());
        EXPECT_EQ(cpus.front(), 0u);
        inst.setTracingOn(true);
        std::vector<tracectl::UniqueFd> fds;
        for (const unsigned cpu : cpus)
            fds.push_back(inst.openRaw(cpu));
        for (const auto& fd : fds)
            EXPECT_TRUE(fd.valid());
        ::usleep(50'000);
        std::uint64_t entries = 0;
        for (const unsigned cpu : cpus)
            entries += inst.stats(cpu).entries;
        EXPECT_GT(entries, 0u) << "no sched_switch in 50 ms";
        const PageFormat page = inst.headerPage();
        EXPECT_EQ(page.dataOffset, 16u);

        // Open fds keep the instance: remove() fails with EBUSY, then works.
        try {
            inst.remove(std::chrono::milliseconds(100));
            // Some kernels allow it; then the instance is simply gone.
            EXPECT_FALSE(fs::exists(path));
        } catch (const TracefsError& e) {
            EXPECT_EQ(e.error(), EBUSY) << e.what();
            EXPECT_TRUE(inst.valid());
            EXPECT_EQ(inst.read("tracing_on"), "0\n");
            fds.clear();
            inst.remove();
        }
        EXPECT_FALSE(inst.valid());
        EXPECT_FALSE(fs::exists(path));
        inst.remove(); // no-op
    }
    EXPECT_EQ(tracefs_->read("trace_clock"), topClock);
}

TEST_F(KernelTracefs, DestructorRemoves) {
    fs::path path;
    {
        TracefsInstance inst = TracefsInstance::create(*tracefs_, id("dtor"));
        path = inst.path();
        TracefsInstance moved = std::move(inst);
        EXPECT_FALSE(inst.valid());
        EXPECT_TRUE(moved.valid());
    }
    EXPECT_FALSE(fs::exists(path));
    EXPECT_THROW(TracefsInstance::create(*tracefs_, "bad/id"), std::invalid_argument);
}

// A restarted daemon takes an instance over as it is: its clock, buffer
// size, tracing state and what its buffer holds stay; open() of a missing
// instance fails.
TEST_F(KernelTracefs, OpenTakesAnInstanceOverAsItIs) {
    EXPECT_FALSE(TracefsInstance::exists(*tracefs_, id("over")));
    EXPECT_THROW(TracefsInstance::open(*tracefs_, id("over")), TracefsError);
    EXPECT_THROW(TracefsInstance::open(*tracefs_, "bad/id"), std::invalid_argument);
    TracefsInstance made = TracefsInstance::create(*tracefs_, id("over"));
    made.setClock("mono");
    made.setBufferSizeKb(64);
    const std::string size = made.read("buffer_size_kb");
    made.setTracingOn(true);
    EXPECT_TRUE(TracefsInstance::exists(*tracefs_, id("over")));
    {
        TracefsInstance taken = TracefsInstance::open(*tracefs_, id("over"));
        EXPECT_EQ(taken.path(), made.path());
        EXPECT_EQ(taken.name(), made.name());
        EXPECT_EQ(taken.clock(), "mono");
        EXPECT_EQ(taken.read("buffer_size_kb"), size);
        EXPECT_EQ(taken.read("tracing_on"), "1\n") << "tracing goes on as it was";
    } // the taker removes it, as the owner it became
    EXPECT_FALSE(TracefsInstance::exists(*tracefs_, id("over")));
}

// An instance given up on (still held open after every attempt) is let go
// without a removal: its destructor, wherever it runs, neither waits for it
// nor warns again; it stays for the next start's removal of what was left.
TEST_F(KernelTracefs, ReleaseLeavesTheInstanceWithoutWaiting) {
    fs::path path;
    {
        TracefsInstance inst = TracefsInstance::create(*tracefs_, id("release"));
        path = inst.path();
        inst.release();
        EXPECT_FALSE(inst.valid());
    }
    EXPECT_TRUE(fs::is_directory(path)) << "left in place";
    EXPECT_EQ(tracefs_->removeStaleInstances("tracectl-" + id("release")),
              std::vector<std::string>{"tracectl-" + id("release")});
    EXPECT_FALSE(fs::exists(path));
}

TEST_F(KernelTracefs, RemovesStaleInstancesOnly) {
    const fs::path stale = tracefs_->root() / "instances" / ("tracectl-" + id("stale"));
    const fs::path other = tracefs_->root() / "instances" / ("other-" + id("keep"));
    ASSERT_TRUE(fs::create_directory(stale));
    ASSERT_TRUE(fs::create_directory(other));
    // This test's prefix only: a daemon (or another test) running on this
    // machine keeps its instances.
    EXPECT_TRUE(tracefs_->removeStaleInstances("other-").empty());
    EXPECT_TRUE(fs::exists(other));
    const std::vector<std::string> removed =
        tracefs_->removeStaleInstances("tracectl-unittest-" + std::to_string(::getpid()) + "-");
    EXPECT_EQ(removed, std::vector<std::string>{stale.filename().string()});
    EXPECT_FALSE(fs::exists(stale));
    EXPECT_TRUE(fs::exists(other));
    fs::remove(other);
}

TEST_F(KernelTracefs, CatalogOfTheRealKernel) {
    TracepointCatalog c = TracepointCatalog::fromTracefs(*tracefs_);
    ASSERT_TRUE(c.contains("sched", "sched_switch"));
    EXPECT_EQ(c.format("sched", "sched_switch").name, "sched_switch");
    EXPECT_FALSE(c.match("sched:*").empty());
    EXPECT_EQ(c.syscalls({"write"}).size(), 2u);
    // Every format of this kernel parses.
    std::size_t failures = 0;
    for (const TracepointId& id : c.all()) {
        try {
            c.format(id.system, id.event);
        } catch (const FormatError& e) {
            ++failures;
            ADD_FAILURE() << id.full() << ": " << e.what();
            if (failures > 10)
                break;
        }
    }
    // The same set as available_events.
    std::size_t available = 0;
    const std::string list = tracefs_->read("available_events");
    for (const char ch : list)
        available += ch == '\n';
    EXPECT_EQ(c.all().size(), available);
    const PageFormat page = tracefs_->headerPage();
    EXPECT_EQ(page, parseHeaderPage(tracefs_->read("events/header_page")));
}

} // namespace
