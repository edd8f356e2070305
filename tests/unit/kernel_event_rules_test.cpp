// Kernel event rules as EnableEvents takes them (SessionInstances::checkRule)
// and which channels write the statedump (SessionInstances::statedumpChannels),
// over a fake events/ tree: ftrace's names, lttng-modules' names and the
// statedump's, as lttng-analyses-record enables them.
#include "common/error.hpp"
#include "kernel/session_instances.hpp"
#include "kernel/tracepoint_catalog.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <stdexcept>
#include <unistd.h>

using namespace tracectl;
using namespace tracectl::kernel;
namespace fs = std::filesystem;

namespace {

// irq/softirq_entry's format file as this kernel (6.18) writes it.
constexpr const char* kSoftirqEntryFormat =
    "name: softirq_entry\n"
    "ID: 223\n"
    "format:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
    "\n"
    "\tfield:unsigned int vec;\toffset:8;\tsize:4;\tsigned:0;\n"
    "\n"
    "print fmt: \"vec=%u\", REC->vec\n";

// kmem/mm_page_alloc's, its print fmt cut short.
constexpr const char* kMmPageAllocFormat =
    "name: mm_page_alloc\n"
    "ID: 653\n"
    "format:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
    "\n"
    "\tfield:unsigned long pfn;\toffset:8;\tsize:8;\tsigned:0;\n"
    "\tfield:unsigned int order;\toffset:16;\tsize:4;\tsigned:0;\n"
    "\tfield:unsigned long gfp_flags;\toffset:24;\tsize:8;\tsigned:0;\n"
    "\tfield:int migratetype;\toffset:32;\tsize:4;\tsigned:1;\n"
    "\n"
    "print fmt: \"pfn=0x%lx order=%d\", REC->pfn, REC->order\n";

/// An events/ tree with irq:softirq_entry and kmem:mm_page_alloc, as this
/// kernel (6.18) has them.
class EventsTree {
public:
    EventsTree() {
        std::string t = (fs::temp_directory_path() / "kernel-rules-XXXXXX").string();
        if (::mkdtemp(t.data()) == nullptr)
            throw std::runtime_error("mkdtemp");
        root_ = t;
        add("irq", "softirq_entry", kSoftirqEntryFormat);
        add("kmem", "mm_page_alloc", kMmPageAllocFormat);
    }
    ~EventsTree() {
        std::error_code ec;
        fs::remove_all(root_, ec);
    }
    EventsTree(const EventsTree&) = delete;
    EventsTree& operator=(const EventsTree&) = delete;
    const fs::path& path() const { return root_; }

private:
    void add(const std::string& system, const std::string& event, const std::string& format) {
        const fs::path dir = root_ / system / event;
        fs::create_directories(dir);
        std::ofstream(dir / "format") << format;
        std::ofstream(dir / "enable") << "0\n";
    }
    fs::path root_;
};

EventRule kernelRule(const std::string& pattern, const std::string& channel = "chan1",
                     const std::string& filter = {}) {
    EventRule r;
    r.domain = TracingDomain::Kernel;
    r.channel = channel;
    r.pattern = pattern;
    r.filter = filter;
    return r;
}

/// checkRule's error message, "" when it accepts the rule; fails the test for
/// an error other than InvalidArgument.
std::string refusal(TracepointCatalog& catalog, const EventRule& rule) {
    try {
        SessionInstances::checkRule(catalog, rule);
        return {};
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
        return e.what();
    }
}

TEST(KernelEventRules, LttngModulesAndFtraceNamesAreBothTaken) {
    EventsTree tree;
    TracepointCatalog catalog(tree.path());
    for (const char* pattern :
         {"irq_softirq_entry", "softirq_entry", "irq_softirq_*", "kmem_mm_page_alloc",
          "mm_page_alloc", "kmem_*", "irq:softirq_entry", "*"})
        EXPECT_EQ(refusal(catalog, kernelRule(pattern)), "") << pattern;
    // A filter names the fields as the trace does; it applies to the event
    // whichever of its names the rule gives.
    EXPECT_EQ(refusal(catalog, kernelRule("irq_softirq_entry", "chan1", "vec == 3")), "");
    EXPECT_NE(refusal(catalog, kernelRule("irq_softirq_entry", "chan1", "nothing == 3")), "");
}

TEST(KernelEventRules, UnknownNamesAreStillRefusedClearly) {
    EventsTree tree;
    TracepointCatalog catalog(tree.path());
    EXPECT_EQ(refusal(catalog, kernelRule("irq_softirq_nothing")),
              "no kernel tracepoint matches 'irq_softirq_nothing' (tracectl list-tracepoints -k "
              "lists them)");
    EXPECT_NE(refusal(catalog, kernelRule("irq:irq_softirq_entry")), "")
        << "with a system, ftrace's names only";
    EXPECT_NE(refusal(catalog, kernelRule("lttng_statedump_nothing")), "");
}

TEST(KernelEventRules, StatedumpNamesAreTakenWithoutAFilter) {
    EventsTree tree;
    TracepointCatalog catalog(tree.path());
    for (const char* pattern :
         {"lttng_statedump_process_state", "lttng_statedump_file_descriptor",
          "lttng_statedump_block_device", "lttng_statedump_interrupt", "lttng_statedump_*",
          "lttng_statedump:*", "lttng_statedump:lttng_statedump_vm_map"})
        EXPECT_EQ(refusal(catalog, kernelRule(pattern)), "") << pattern;
    EXPECT_EQ(refusal(catalog, kernelRule("lttng_statedump_*", "chan1", "tid == 1")),
              "'lttng_statedump_*' names only statedump events, which are written whole: a "
              "filter does not apply to them");
    // A pattern naming tracepoints too: the filter applies to those (to
    // irq:softirq_entry here; kmem:mm_page_alloc has no `vec`).
    EXPECT_EQ(refusal(catalog, kernelRule("*", "chan1", "vec == 3")), "");
    EXPECT_EQ(refusal(catalog, kernelRule("*", "chan1", "order > 0 && vec == 3")),
              "no event that '*' names has every field the filter names, so the rule would "
              "never record anything");
}

ChannelConfig kernelChannel(const std::string& name) {
    ChannelConfig c;
    c.name = name;
    return c;
}

TEST(KernelEventRules, TheStatedumpIsWrittenWhereItsEventsAreEnabledElseInTheFirstChannel) {
    SessionSnapshot s;
    EXPECT_TRUE(SessionInstances::statedumpChannels(s).empty());
    s.kernelChannels = {kernelChannel("first"), kernelChannel("second")};
    s.kernelRules = {kernelRule("irq_softirq_entry", "second")};
    EXPECT_EQ(SessionInstances::statedumpChannels(s), (std::set<std::string>{"first"}));
    s.kernelRules.push_back(kernelRule("lttng_statedump_process_state", "second"));
    EXPECT_EQ(SessionInstances::statedumpChannels(s), (std::set<std::string>{"second"}));
    s.kernelRules.push_back(kernelRule("*", "first"));
    EXPECT_EQ(SessionInstances::statedumpChannels(s), (std::set<std::string>{"first", "second"}));
    // A disabled rule asks for nothing; system calls are no statedump.
    s.kernelRules = {kernelRule("lttng_statedump_*", "second"), kernelRule("*", "first")};
    s.kernelRules[0].enabled = false;
    s.kernelRules[1].syscall = true;
    EXPECT_EQ(SessionInstances::statedumpChannels(s), (std::set<std::string>{"first"}));
}

} // namespace
