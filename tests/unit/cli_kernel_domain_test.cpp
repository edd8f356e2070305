// Unit tests of the kernel domain on tracectl's command line: the -u/-k
// flags, enable-event's selection of events (PATTERN lists, -a, --syscall),
// list-tracepoints' text and JSON, and show's "Kernel domain" section.
#include "cli/kernel_domain.hpp"
#include "cli/output_format.hpp"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <optional>
#include <sdbus-c++/Error.h>
#include <sstream>
#include <string>
#include <vector>

using namespace tracectl::cli;
using nlohmann::json;

namespace {

/// An `enable-event` command as tracectl builds it (add_event_selection()
/// plus the UST-only options), parsed from `args`.
struct EnableEventLine {
    CLI::App app{"test", "enable-event"};
    EventSelectionFlags flags;
    std::string loglevel;
    std::string exclude;
    CLI::Option* loglevelOption = nullptr;
    CLI::Option* excludeOption = nullptr;

    EnableEventLine() {
        addEventSelection(app, flags);
        loglevelOption = app.add_option("--loglevel", loglevel);
        excludeOption = app.add_option("-x,--exclude", exclude);
    }

    /// Parses `args` and resolves them; throws CLI::ParseError as tracectl's
    /// parser does (a usage error, exit status 2).
    EventSelection parse(std::vector<std::string> args) {
        std::vector<std::string> reversed(args.rbegin(), args.rend());
        app.parse(reversed);
        return resolveEventSelection(flags, {loglevelOption, excludeOption});
    }
};

/// The message of the CLI::ParseError that parsing `args` throws, or
/// nullopt when it does not throw.
std::optional<std::string> usageError(std::vector<std::string> args) {
    EnableEventLine line;
    try {
        line.parse(std::move(args));
    } catch (const CLI::ParseError& e) {
        EXPECT_NE(e.get_exit_code(), 0);
        return std::string{e.what()};
    }
    return std::nullopt;
}

bool contains(const std::optional<std::string>& text, const std::string& part) {
    return text && text->find(part) != std::string::npos;
}

} // namespace

TEST(CliKernelDomain, DomainNames) {
    EXPECT_STREQ(domainName(Domain::Ust), "ust");
    EXPECT_STREQ(domainName(Domain::Kernel), "kernel");
    EXPECT_STREQ(domainLabel(Domain::Kernel), "Kernel");
}

TEST(CliKernelDomain, ExactlyOneOfUserspaceAndKernel) {
    EXPECT_EQ(EnableEventLine{}.parse({"-u", "p:e"}).domain, Domain::Ust);
    EXPECT_EQ(EnableEventLine{}.parse({"--userspace", "p:e"}).domain, Domain::Ust);
    EXPECT_EQ(EnableEventLine{}.parse({"-k", "sched:*"}).domain, Domain::Kernel);
    EXPECT_EQ(EnableEventLine{}.parse({"--kernel", "sched:*"}).domain, Domain::Kernel);
    EXPECT_TRUE(contains(usageError({"sched:*"}), "-u (user space"));
    EXPECT_TRUE(contains(usageError({"-u", "-k", "sched:*"}), "excludes"));
    EXPECT_TRUE(contains(usageError({"-k", "-u", "sched:*"}), "excludes"));
}

TEST(CliKernelDomain, DomainFlagsOnOtherCommands) {
    CLI::App app{"test", "add-context"};
    DomainFlags flags;
    addDomainFlags(app, flags);
    app.parse(std::vector<std::string>{"-k"});
    EXPECT_EQ(chosenDomain(flags), Domain::Kernel);

    CLI::App none{"test", "add-context"};
    DomainFlags noFlags;
    addDomainFlags(none, noFlags);
    none.parse(std::vector<std::string>{});
    EXPECT_THROW(chosenDomain(noFlags), CLI::ValidationError);
}

TEST(CliKernelDomain, KernelPatternListIsOneCallEach) {
    const EventSelection s = EnableEventLine{}.parse({"-k", "sched:*,net:net_dev_xmit,,*"});
    EXPECT_EQ(s.kernelCalls, (std::vector<KernelEventCall>{
                                 {"sched:*", false}, {"net:net_dev_xmit", false}, {"*", false}}));
    EXPECT_TRUE(s.ustPattern.empty());
    // A name given twice is one call.
    EXPECT_EQ(EnableEventLine{}.parse({"-k", "sched:a,sched:a"}).kernelCalls.size(), 1u);
}

TEST(CliKernelDomain, SyscallListAndAll) {
    EXPECT_EQ(EnableEventLine{}.parse({"-k", "--syscall", "openat,close"}).kernelCalls,
              (std::vector<KernelEventCall>{{"openat", true}, {"close", true}}));
    EXPECT_EQ(EnableEventLine{}.parse({"-k", "--syscall", "-a"}).kernelCalls,
              (std::vector<KernelEventCall>{{"*", true}}));
    EXPECT_EQ(EnableEventLine{}.parse({"-k", "--syscall", "*"}).kernelCalls,
              (std::vector<KernelEventCall>{{"*", true}}));
    // -a alone: every tracepoint.
    EXPECT_EQ(EnableEventLine{}.parse({"-k", "--all"}).kernelCalls,
              (std::vector<KernelEventCall>{{"*", false}}));
    EXPECT_EQ(EnableEventLine{}.parse({"-u", "-a"}).ustPattern, "*");
}

TEST(CliKernelDomain, RefusedCombinations) {
    EXPECT_TRUE(contains(usageError({"-k"}), "give event names or -a/--all"));
    EXPECT_TRUE(contains(usageError({"-k", "--syscall"}), "system call names"));
    EXPECT_TRUE(contains(usageError({"-k", "-a", "sched:*"}), "not both"));
    EXPECT_TRUE(contains(usageError({"-k", ",,"}), "names no event"));
    EXPECT_TRUE(contains(usageError({"-k", "sched:*", "--loglevel", "info"}),
                         "--loglevel: is for user-space events (-u) only"));
    EXPECT_TRUE(contains(usageError({"-k", "sched:*", "-x", "sched:a"}),
                         "--exclude: is for user-space events (-u) only"));
    EXPECT_TRUE(contains(usageError({"-u", "--syscall", "write"}), "kernel events (-k) only"));
    EXPECT_TRUE(contains(usageError({"-u"}), "give a PATTERN or -a/--all"));
    EXPECT_TRUE(contains(usageError({"-u", "-a", "p:*"}), "not both"));
    // UST patterns are not split.
    EXPECT_EQ(EnableEventLine{}.parse({"-u", "a:b,c:d", "--loglevel", "info"}).ustPattern,
              "a:b,c:d");
}

TEST(CliKernelDomain, SplitCommas) {
    EXPECT_EQ(splitCommas("a,b,,c,"), (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_TRUE(splitCommas("").empty());
    EXPECT_TRUE(splitCommas(",").empty());
}

namespace {

std::vector<KernelTracepoint> someTracepoints() {
    return {
        {"sched", "sched_switch", {{"prev_comm", "char[16]"}, {"prev_pid", "pid_t"}}},
        {"net", "net_dev_xmit", {{"len", "unsigned int"}}},
        {"sched", "sched_wakeup", {}},
    };
}

} // namespace

TEST(CliKernelDomain, TracepointsTextIsSorted) {
    EXPECT_EQ(formatKernelTracepoints(someTracepoints(), false),
              "net:net_dev_xmit\nsched:sched_switch\nsched:sched_wakeup\n");
    EXPECT_EQ(formatKernelTracepoints(someTracepoints(), true), "net:net_dev_xmit\n"
                                                                "    unsigned int len\n"
                                                                "sched:sched_switch\n"
                                                                "    char[16] prev_comm\n"
                                                                "    pid_t prev_pid\n"
                                                                "sched:sched_wakeup\n");
    EXPECT_EQ(formatKernelTracepoints({}, true), "No kernel tracepoints.\n");
}

TEST(CliKernelDomain, TracepointsJson) {
    const json parsed = json::parse(formatKernelTracepointsJson(someTracepoints()));
    const json expected = json::parse(R"([
        {"system": "net", "event": "net_dev_xmit", "lttng_name": "net_dev_xmit",
         "fields": [{"name": "len", "type": "unsigned int"}]},
        {"system": "sched", "event": "sched_switch", "lttng_name": "sched_switch",
         "fields": [{"name": "prev_comm", "type": "char[16]"},
                    {"name": "prev_pid", "type": "pid_t"}]},
        {"system": "sched", "event": "sched_wakeup", "lttng_name": "sched_wakeup", "fields": []}
    ])");
    EXPECT_EQ(parsed, expected);
    EXPECT_EQ(formatKernelTracepointsJson({}), "[]\n");
}

// Both names of an event: ftrace's system:event, then lttng-modules' name
// when it is another (what enable-event -k also takes, and the trace's name).
TEST(CliKernelDomain, TracepointsShowTheirLttngModulesName) {
    const std::vector<KernelTracepoint> tracepoints = {
        {"irq", "softirq_entry", {{"vec", "unsigned int"}}},
        {"kmem", "mm_page_alloc", {}},
        {"net", "netif_receive_skb", {}},
        {"timer", "hrtimer_start", {}},
        {"syscalls", "sys_enter_write", {}},
        {"lttng_statedump", "lttng_statedump_process_state", {{"tid", "pid_t"}}},
        {"ip", "send", {}},
    };
    EXPECT_EQ(formatKernelTracepoints(tracepoints, false),
              "ip:send\n"
              "irq:softirq_entry (irq_softirq_entry)\n"
              "kmem:mm_page_alloc (kmem_mm_page_alloc)\n"
              "lttng_statedump:lttng_statedump_process_state\n"
              "net:netif_receive_skb (net_if_receive_skb)\n"
              "syscalls:sys_enter_write (syscall_entry_write)\n"
              "timer:hrtimer_start (timer_hrtimer_start)\n");
    EXPECT_EQ(formatKernelTracepoints({tracepoints[0]}, true),
              "irq:softirq_entry (irq_softirq_entry)\n    unsigned int vec\n");
    const json parsed = json::parse(formatKernelTracepointsJson(tracepoints));
    ASSERT_EQ(parsed.size(), tracepoints.size());
    EXPECT_FALSE(parsed[0].contains("lttng_name")) << "the ip provider's probes have none";
    EXPECT_EQ(parsed[1]["lttng_name"], "irq_softirq_entry");
    EXPECT_EQ(parsed[1]["event"], "softirq_entry") << "ftrace's name stays where it was";
    EXPECT_EQ(parsed[3]["lttng_name"], "lttng_statedump_process_state");
}

// A live dtrace probe named as lttng-modules names the kernel event (no ftrace system) is a
// kernel event, as what the trace's records are then named; other names stay UST.
TEST(CliKernelDomain, LiveProbesNamedAsLttngModulesDoAreKernelEvents) {
    const std::vector<KernelTracepoint> kernel = {
        {"sched", "sched_switch", {}},
        {"irq", "softirq_entry", {}},
        {"syscalls", "sys_enter_getppid", {}},
        {"lttng_statedump", "lttng_statedump_process_state", {}},
        {"lttng_statedump", "lttng_statedump_start", {}},
        {"ip", "receive", {}},
    };
    using D = std::vector<Domain>;
    const D k{Domain::Kernel};
    const D u{Domain::Ust};
    const D both{Domain::Kernel, Domain::Ust};
    EXPECT_EQ(liveProbeDomains("sched_switch", kernel), k);
    EXPECT_EQ(liveProbeDomains("lttng_statedump_process_state", kernel), k);
    EXPECT_EQ(liveProbeDomains("syscall_entry_getppid", kernel), k);
    EXPECT_EQ(liveProbeDomains("irq_softirq_entry", kernel), k);
    // With a wildcard, the kernel's and any app's event it matches.
    EXPECT_EQ(liveProbeDomains("lttng_statedump_*", kernel), both);
    EXPECT_EQ(liveProbeDomains("sched_sw?tch", kernel), both);
    // As before: system:event, the ip provider, apps' provider:event.
    EXPECT_EQ(liveProbeDomains("sched:sched_switch", kernel), k);
    EXPECT_EQ(liveProbeDomains("syscalls:sys_enter_*", kernel), k);
    EXPECT_EQ(liveProbeDomains("ip:receive", kernel), k);
    EXPECT_EQ(liveProbeDomains("ip:send", {}), k);
    EXPECT_EQ(liveProbeDomains("tracectl_demo:tick", kernel), u);
    EXPECT_EQ(liveProbeDomains("tracectl_demo:*", kernel), u);
    // Not a kernel event's trace name (ftrace's own without its system is no record's
    // name), or no kernel domain for this caller: UST.
    EXPECT_EQ(liveProbeDomains("softirq_entry", kernel), u);
    EXPECT_EQ(liveProbeDomains("no_such_event", kernel), u);
    // issue 40 (B12): a kernel system's event that does not exist names no probe (it was
    // sent to UST, recorded nothing and exited 0); without a kernel list, UST as ever.
    EXPECT_EQ(liveProbeDomains("syscalls:sys_enter_nosuchcall", kernel), D{});
    EXPECT_EQ(liveProbeDomains("sched:no_such", kernel), D{});
    EXPECT_EQ(liveProbeDomains("syscalls:sys_enter_nosuchcall", {}), u);
    EXPECT_EQ(liveProbeDomains("sched*:no_such", kernel), u);
    EXPECT_EQ(liveProbeDomains("sched_switch", {}), u);
}

namespace {

PropertyMap kernelProperties() {
    return {
        {"Name", json("k")},
        {"KernelChannels", json::array({json::array({"kchan", 1048576u, 4u, false, 0u, 200u, true}),
                                        json::array({"ring", 4096u, 2u, true, 1000u, 0u, false})})},
        {"KernelEvents",
         json::array({json::array({"kchan", "sched:*", false, "prev_tid != 0", true}),
                      json::array({"kchan", "openat", true, "", false}),
                      json::array({"ring", "*", true, "", true})})},
        {"KernelContexts",
         json::array({json::array({"kchan", "tid"}), json::array({"kchan", "procname"})})},
    };
}

} // namespace

TEST(CliKernelDomain, KernelSection) {
    EXPECT_EQ(formatKernelSection(kernelProperties()),
              "Kernel domain:\n"
              "  Channels:\n"
              "    kchan  subbuf 1048576 x 4, discard, switch timer off, read timer 200 us\n"
              "    ring  subbuf 4096 x 2, overwrite, switch timer 1000 us, read timer off "
              "[disabled]\n"
              "  Event rules:\n"
              "    kchan  sched:*  filter: prev_tid != 0\n"
              "    kchan  syscall openat [disabled]\n"
              "    ring  syscall *\n"
              "  Contexts:\n"
              "    kchan  tid\n"
              "    kchan  procname\n");
}

TEST(CliKernelDomain, KernelSectionOfADaemonWithoutDisable) {
    // Rows without the trailing `enabled` (before DisableEvents existed).
    EXPECT_EQ(formatKernelSection(
                  {{"KernelChannels", json::array({json::array({"k", 4096u, 2u, false, 0u, 0u})})},
                   {"KernelEvents", json::array({json::array({"k", "sched:*", false, ""})})}}),
              "Kernel domain:\n"
              "  Channels:\n"
              "    k  subbuf 4096 x 2, discard, switch timer off, read timer off\n"
              "  Event rules:\n"
              "    k  sched:*\n");
}

TEST(CliKernelDomain, KernelSectionOnlyWhatThereIs) {
    EXPECT_EQ(formatKernelSection({{"KernelChannels", json::array()},
                                   {"KernelEvents", json::array()},
                                   {"KernelContexts", json::array()}}),
              "");
    EXPECT_EQ(formatKernelSection({}), "");
    EXPECT_EQ(formatKernelSection({{"KernelContexts", json::array({json::array({"c", "pid"})})},
                                   {"KernelEvents", json::array({json("not a rule")})}}),
              "Kernel domain:\n  Contexts:\n    c  pid\n");
}

TEST(CliKernelDomain, ShowPrintsTheKernelSectionNotRawLines) {
    PropertyMap properties = kernelProperties();
    properties["Channels"] = json::array();
    const SessionView view = sessionViewFromProperties("/s", properties);
    const std::string details = formatSessionDetails(view, nullptr);
    EXPECT_EQ(details.find("KernelChannels:"), std::string::npos) << details;
    EXPECT_EQ(details.find("KernelEvents:"), std::string::npos) << details;
    // No UST channel: no empty UST "Channels: []" line beside the kernel's section.
    EXPECT_EQ(details.find("\nChannels:"), std::string::npos) << details;
    const auto section = details.find("\nKernel domain:\n  Channels:\n    kchan  subbuf");
    EXPECT_NE(section, std::string::npos) << details;
    EXPECT_NE(details.find("    kchan  syscall openat [disabled]\n"), std::string::npos) << details;

    // Without kernel content: neither the section nor the empty properties.
    const SessionView ust = sessionViewFromProperties("/s", {{"Name", json("u")},
                                                             {"KernelChannels", json::array()},
                                                             {"KernelEvents", json::array()},
                                                             {"KernelContexts", json::array()}});
    EXPECT_EQ(formatSessionDetails(ust, nullptr), "Name: u\n");
}

TEST(CliKernelDomain, ShowJsonHasTheKernelProperties) {
    const SessionView view = sessionViewFromProperties("/s", kernelProperties());
    const json parsed = json::parse(formatSessionJson(view));
    EXPECT_EQ(parsed["KernelChannels"], kernelProperties()["KernelChannels"]);
    EXPECT_EQ(parsed["KernelEvents"][1], json::array({"kchan", "openat", true, "", false}));
    EXPECT_EQ(parsed["KernelContexts"][0], json::array({"kchan", "tid"}));
}

TEST(CliKernelDomain, EveryCallIsMadeAndEachFailureReported) {
    std::vector<std::string> made;
    std::ostringstream out;
    std::ostringstream err;
    const std::vector<KernelEventCall> calls{
        {"sched:*", false}, {"nosuch:x", false}, {"net:*", false}};
    const ExitStatus status = enableKernelEventCalls(
        calls, "channel0",
        [&](const KernelEventCall& call) {
            made.push_back(call.pattern);
            if (call.pattern == "nosuch:x") {
                throw sdbus::Error("org.tracectl.Tracing1.Error.InvalidArgument",
                                   "no kernel tracepoint matches nosuch:x");
            }
        },
        out, err);
    EXPECT_EQ(made, (std::vector<std::string>{"sched:*", "nosuch:x", "net:*"}));
    EXPECT_EQ(status, ExitStatus::DaemonError);
    EXPECT_EQ(out.str(), "Kernel event sched:* enabled in channel channel0.\n"
                         "Kernel event net:* enabled in channel channel0.\n");
    EXPECT_EQ(err.str(), "tracectl: nosuch:x: org.tracectl.Tracing1.Error.InvalidArgument: no "
                         "kernel tracepoint matches nosuch:x\n");
}

TEST(CliKernelDomain, SyscallCallsSucceedingAndAnUnreachableDaemonStops) {
    std::ostringstream out;
    std::ostringstream err;
    EXPECT_EQ(
        enableKernelEventCalls(
            {{"openat", true}, {"close", true}}, "k", [](const KernelEventCall&) {}, out, err),
        ExitStatus::Success);
    EXPECT_EQ(out.str(), "Kernel syscall openat enabled in channel k.\n"
                         "Kernel syscall close enabled in channel k.\n");
    EXPECT_EQ(err.str(), "");

    int made = 0;
    std::ostringstream err2;
    EXPECT_EQ(enableKernelEventCalls(
                  {{"a:b", false}, {"c:d", false}}, "k",
                  [&](const KernelEventCall&) {
                      ++made;
                      throw sdbus::Error("org.freedesktop.DBus.Error.NoReply", "");
                  },
                  out, err2),
              ExitStatus::Unreachable);
    EXPECT_EQ(made, 1);
    EXPECT_EQ(err2.str(), "tracectl: a:b: org.freedesktop.DBus.Error.NoReply\n");
}

namespace {

// --userspace-probe's PATH is made absolute as lttng(1) makes it: looked up
// in $PATH without a '/', taken from the current folder when relative.
TEST(CliUserspaceProbe, PathsAreMadeAbsoluteAsLttngMakesThem) {
    using tracectl::cli::resolveUserspaceProbe;
    EXPECT_EQ(resolveUserspaceProbe("elf:/usr/bin/../bin/true:main", "", "/x"),
              "elf:/usr/bin/true:main");
    EXPECT_EQ(resolveUserspaceProbe("sdt:app/prog:prov:probe", "", "/home/u"),
              "sdt:/home/u/app/prog:prov:probe");
    EXPECT_EQ(resolveUserspaceProbe("true:main%return", "/nonexistent:/usr/bin", "/x"),
              "elf:/usr/bin/true:main%return")
        << "no '/': the first regular file of that name in $PATH; no elf: is elf:";
    EXPECT_THROW(resolveUserspaceProbe("tracectl-no-such-program:main", "/usr/bin", "/x"),
                 CLI::ValidationError);
    EXPECT_THROW(resolveUserspaceProbe("elf:/a:0x1000", "", "/x"), CLI::ValidationError);
    EXPECT_THROW(resolveUserspaceProbe("kprobe:/a:b", "", "/x"), CLI::ValidationError);
}

} // namespace
