// The tracepoint catalog (src/daemon/kernel/tracepoint_catalog.hpp) over a
// fake events/ tree made of the data/kernel fixtures.
#include "kernel/tracefs.hpp"
#include "kernel/tracepoint_catalog.hpp"
#include "kernel_fixtures.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace tracectl::kernel;
namespace fs = std::filesystem;

namespace {

class FakeEvents {
public:
    FakeEvents() {
        std::string t = (fs::temp_directory_path() / "kernel-events-XXXXXX").string();
        if (::mkdtemp(t.data()) == nullptr)
            throw std::runtime_error("mkdtemp");
        root_ = t;
    }
    ~FakeEvents() {
        std::error_code ec;
        fs::remove_all(root_, ec);
    }
    FakeEvents(const FakeEvents&) = delete;
    FakeEvents& operator=(const FakeEvents&) = delete;

    void add(const std::string& system, const std::string& event, const std::string& fixture = {}) {
        const fs::path dir = root_ / system / event;
        fs::create_directories(dir);
        std::ofstream(dir / "format")
            << (fixture.empty() ? std::string("garbage") : ktest::fixture(fixture));
        std::ofstream(dir / "enable") << "0\n";
    }
    const fs::path& path() const { return root_; }

private:
    fs::path root_;
};

std::vector<std::string> names(const std::vector<TracepointId>& ids) {
    std::vector<std::string> out;
    for (const TracepointId& id : ids)
        out.push_back(id.full());
    return out;
}

void addStandard(FakeEvents& f) {
    f.add("sched", "sched_switch", "sched_switch.format");
    f.add("sched", "sched_process_exec", "sched_process_exec.format");
    f.add("sched", "sched_wakeup");
    f.add("net", "net_dev_xmit", "net_dev_xmit.format");
    f.add("net", "netif_receive_skb");
    f.add("syscalls", "sys_enter_write", "sys_enter_write.format");
    f.add("syscalls", "sys_exit_write", "sys_exit_write.format");
    f.add("syscalls", "sys_enter_openat", "sys_enter_openat.format");
    f.add("syscalls", "sys_exit_openat");
    f.add("raw_syscalls", "sys_enter", "sys_enter.format");
    f.add("raw_syscalls", "sys_exit");
    // ftrace's record types have no enable file: not tracepoints.
    fs::create_directories(f.path() / "ftrace" / "function");
    std::ofstream(f.path() / "ftrace" / "function" / "format")
        << ktest::fixture("sys_enter.format");
    // Files beside the systems (enable, header_page) are no tracepoints.
    std::ofstream(f.path() / "enable") << "0\n";
    std::ofstream(f.path() / "header_page") << "x";
}

TEST(KernelGlob, Matching) {
    EXPECT_TRUE(globMatch("*", ""));
    EXPECT_TRUE(globMatch("*", "sched:sched_switch"));
    EXPECT_TRUE(globMatch("sched:*", "sched:sched_switch"));
    EXPECT_FALSE(globMatch("sched:*", "net:sched_switch"));
    EXPECT_TRUE(globMatch("sched:sched_*", "sched:sched_switch"));
    EXPECT_TRUE(globMatch("*:*wake*", "sched:sched_wakeup_new"));
    EXPECT_TRUE(globMatch("s*d:*h", "sched:sched_switch"));
    EXPECT_FALSE(globMatch("s*d:*h", "sched:sched_switcx"));
    EXPECT_TRUE(globMatch("a**b", "ab"));
    EXPECT_FALSE(globMatch("abc", "ab"));
    EXPECT_FALSE(globMatch("ab", "abc"));
    EXPECT_TRUE(globMatch("*a*a*a", "aaaa"));
    EXPECT_FALSE(globMatch("*a*a*b", "aaaa"));
}

TEST(KernelCatalog, ListsAndMatches) {
    FakeEvents f;
    addStandard(f);
    const TracepointCatalog c(f.path());
    EXPECT_EQ(c.all().size(), 11u);
    EXPECT_TRUE(c.contains("sched", "sched_switch"));
    EXPECT_FALSE(c.contains("sched", "nope"));
    EXPECT_EQ(names(c.match("sched:*")),
              (std::vector<std::string>{"sched:sched_process_exec", "sched:sched_switch",
                                        "sched:sched_wakeup"}));
    EXPECT_EQ(names(c.match("net:net_dev_xmit")), (std::vector<std::string>{"net:net_dev_xmit"}));
    EXPECT_EQ(c.match("*").size(), 11u);
    EXPECT_EQ(names(c.match("sched:sched_s*")), (std::vector<std::string>{"sched:sched_switch"}));
    // Without a system: the event name alone.
    EXPECT_EQ(names(c.match("sched_switch")), (std::vector<std::string>{"sched:sched_switch"}));
    EXPECT_EQ(names(c.match("sys_enter*")),
              (std::vector<std::string>{"raw_syscalls:sys_enter", "syscalls:sys_enter_openat",
                                        "syscalls:sys_enter_write"}));
    EXPECT_TRUE(c.match("nothing:*").empty());
}

// Without a system, a pattern also matches the name lttng-modules gives an
// event in a trace (lttngNaming()), as lttng-analyses-record enables them.
TEST(KernelCatalog, MatchesLttngModulesNamesToo) {
    FakeEvents f;
    addStandard(f);
    for (const char* e : {"softirq_entry", "softirq_exit", "softirq_raise", "irq_handler_entry"})
        f.add("irq", e);
    for (const char* e : {"mm_page_alloc", "mm_page_free", "kmem_cache_alloc"})
        f.add("kmem", e);
    f.add("timer", "hrtimer_start");
    const TracepointCatalog c(f.path());
    using V = std::vector<std::string>;
    EXPECT_EQ(names(c.match("irq_softirq_entry")), V{"irq:softirq_entry"});
    EXPECT_EQ(names(c.match("softirq_entry")), V{"irq:softirq_entry"}) << "ftrace's name too";
    EXPECT_EQ(names(c.match("irq_softirq_*")),
              (V{"irq:softirq_entry", "irq:softirq_exit", "irq:softirq_raise"}));
    EXPECT_EQ(names(c.match("*softirq_entry")), V{"irq:softirq_entry"})
        << "an event both of whose names match is named once";
    EXPECT_EQ(names(c.match("irq_*")), (V{"irq:irq_handler_entry", "irq:softirq_entry",
                                          "irq:softirq_exit", "irq:softirq_raise"}));
    EXPECT_EQ(names(c.match("kmem_mm_page_alloc")), V{"kmem:mm_page_alloc"});
    EXPECT_EQ(names(c.match("kmem_mm_page_free")), V{"kmem:mm_page_free"});
    EXPECT_EQ(names(c.match("mm_page_*")), (V{"kmem:mm_page_alloc", "kmem:mm_page_free"}));
    EXPECT_EQ(names(c.match("kmem_*")),
              (V{"kmem:kmem_cache_alloc", "kmem:mm_page_alloc", "kmem:mm_page_free"}));
    EXPECT_EQ(names(c.match("net_if_receive_skb")), V{"net:netif_receive_skb"});
    EXPECT_EQ(names(c.match("netif_receive_skb")), V{"net:netif_receive_skb"});
    EXPECT_EQ(names(c.match("timer_hrtimer_start")), V{"timer:hrtimer_start"});
    EXPECT_EQ(names(c.match("syscall_entry_write")), V{"syscalls:sys_enter_write"});
    EXPECT_EQ(names(c.match("syscall_entry_unknown")), V{"raw_syscalls:sys_enter"});
    // With a system, ftrace's names only.
    EXPECT_TRUE(c.match("irq:irq_softirq_entry").empty());
    EXPECT_EQ(names(c.match("irq:softirq_*")),
              (V{"irq:softirq_entry", "irq:softirq_exit", "irq:softirq_raise"}));
    EXPECT_TRUE(c.match("kmem_mm_page_nothing").empty());
    EXPECT_TRUE(c.match("lttng_statedump_process_state").empty()) << "no tracepoint";
}

TEST(KernelCatalog, FormatsAreReadOnceOnDemand) {
    FakeEvents f;
    addStandard(f);
    TracepointCatalog c(f.path());
    const EventFormat& sw = c.format("sched", "sched_switch");
    EXPECT_EQ(sw.id, 372);
    // Cached: changing the file changes nothing.
    std::ofstream(f.path() / "sched" / "sched_switch" / "format") << "garbage";
    EXPECT_EQ(&c.format("sched", "sched_switch"), &sw);
    EXPECT_THROW(c.format("sched", "sched_wakeup"), FormatError);
    EXPECT_THROW(c.format("sched", "nope"), NoSuchTracepoint);
}

TEST(KernelCatalog, Syscalls) {
    FakeEvents f;
    addStandard(f);
    const TracepointCatalog c(f.path());
    EXPECT_TRUE(c.hasSyscallTracepoints());
    EXPECT_EQ(names(c.syscalls({"write"})),
              (std::vector<std::string>{"syscalls:sys_enter_write", "syscalls:sys_exit_write"}));
    EXPECT_EQ(names(c.syscalls({"openat", "write", "write"})),
              (std::vector<std::string>{"syscalls:sys_enter_openat", "syscalls:sys_enter_write",
                                        "syscalls:sys_exit_openat", "syscalls:sys_exit_write"}));
    EXPECT_EQ(c.syscalls({"*"}).size(), 4u);
    try {
        c.syscalls({"write", "frobnicate"});
        ADD_FAILURE() << "accepted";
    } catch (const NoSuchTracepoint& e) {
        EXPECT_STREQ(e.what(), "no system call 'frobnicate'");
    }
}

TEST(KernelCatalog, RawSyscallsFallback) {
    FakeEvents f;
    f.add("raw_syscalls", "sys_enter", "sys_enter.format");
    f.add("raw_syscalls", "sys_exit");
    const TracepointCatalog c(f.path());
    EXPECT_FALSE(c.hasSyscallTracepoints());
    EXPECT_EQ(names(c.syscalls({"write"})),
              (std::vector<std::string>{"raw_syscalls:sys_enter", "raw_syscalls:sys_exit"}));
    FakeEvents none;
    none.add("sched", "sched_switch");
    EXPECT_THROW(TracepointCatalog(none.path()).syscalls({"write"}), NoSuchTracepoint);
}

TEST(KernelCatalog, MissingDirectoryThrows) {
    EXPECT_THROW(TracepointCatalog("/nonexistent/events"), TracefsError);
}

} // namespace
