// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The callstack-kernel and callstack-user contexts of the kernel domain
// (lttng-add-context(1) -k -t callstack-kernel / callstack-user,
// Session.AddContext) on the real kernel: the tracefs instance's
// options/stacktrace and options/userstacktrace make ftrace write a stack
// entry after each event, the consumer attaches it to that event as
// lttng-modules 2.13's context sequence, babeltrace2 reads the addresses
// back (trace_events.py), and `tracectl view` names them. Only the channels
// that asked carry the context, and the stack entries are never events of
// their own. LTTng-UST has no call stack context: refused.
#include "child_process.hpp"
#include "eventually.hpp"
#include "kernel_trace_support.hpp"
#include "sandbox_suite.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace tracectl::test;
using Json = nlohmann::json;

namespace {

using Options = std::map<std::string, sdbus::Variant>;

std::string callstackApp() {
    const char* p = std::getenv("TRACECTL_CALLSTACK_APP");
    return p != nullptr ? p : "tracectl-callstack-app";
}

std::string cli() {
    const char* p = std::getenv("TRACECTL");
    return p != nullptr ? p : "tracectl";
}

/// Runs the app (N getppid calls); its pid.
pid_t runApp(int n) {
    const RunResult r = run({callstackApp(), std::to_string(n)}); // it prints its pid first
    EXPECT_TRUE(r.ok()) << r.describe();
    return static_cast<pid_t>(std::atol(r.out.c_str()));
}

std::vector<std::uint64_t> addresses(const Json& sequence) {
    std::vector<std::uint64_t> out;
    for (const Json& a : sequence)
        out.push_back(a.get<std::uint64_t>());
    return out;
}

class Callstack : public SandboxSuite {
protected:
    void SetUp() override {
        SandboxSuite::SetUp();
        ASSERT_TRUE(manager_->KernelTracingAvailable());
    }

    std::unique_ptr<SessionClient> create(const std::string& name) {
        Options options{{"output-path", sdbus::Variant(output(name))}};
        return std::make_unique<SessionClient>(*bus_, manager_->CreateSession(name, options));
    }

    /// `tracectl view` of the session's trace.
    RunResult view(const std::string& name) { return run({cli(), "view", name}); }

    /// Records session `name` (callstack-user on getppid) while the callstack app runs
    /// with `appArgs` (`calls` getppid calls, then a wait on a FIFO until the session
    /// stopped, so that the consumer reads its maps while it lives), once its log has
    /// `logLines` lines; stops the session, lets the app go and waits for its exit 0.
    /// Returns the app's log (its pid first). The session is left to destroy.
    std::string recordHeldApp(SessionClient& s, const std::string& name, const std::string& appArgs,
                              int calls, int logLines) {
        s.AddContext("kernel", "", "callstack-user", {});
        s.EnableEvents("kernel", "", "getppid", {{"syscall", sdbus::Variant(true)}});
        s.Start({});
        const std::string fifo = sandbox_->dir() + "/" + name + "-fifo";
        ::unlink(fifo.c_str());
        EXPECT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
        const std::string log = sandbox_->dir() + "/log/" + name + "-app.log";
        ChildProcess app({"sh", "-c", "exec \"$0\" " + appArgs + " \"$1\" 3 3<>\"$2\"",
                          callstackApp(), std::to_string(calls), fifo},
                         {}, log);
        EXPECT_TRUE(eventually([&] {
            const std::string text = fileText(log);
            return std::count(text.begin(), text.end(), '\n') >= logLines;
        })) << fileText(log);
        s.Stop({});
        const int fd = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
        EXPECT_GE(fd, 0) << std::strerror(errno);
        if (fd >= 0) {
            EXPECT_EQ(::write(fd, "x", 1), 1);
            ::close(fd);
        }
        EXPECT_EQ(app.wait(30000), 0) << fileText(log);
        return fileText(log);
    }
};

TEST_F(Callstack, KernelStacksOfSchedSwitchAreSequencesOnlyInTheirChannel) {
    auto s = create("cs-kernel");
    s->AddChannel("kernel", "stacks", {});
    s->AddChannel("kernel", "plain", {});
    s->AddContext("kernel", "stacks", "callstack-kernel", {});
    s->EnableEvents("kernel", "stacks", "sched_switch", {});
    s->EnableEvents("kernel", "plain", "sched_switch", {});
    s->Start({});
    for (int i = 0; i < 20; ++i)
        ::usleep(1000); // switches of our own, at least
    s->Stop({});
    Json totals;
    const auto events = traceEvents(output("cs-kernel"), {}, &totals);
    std::size_t withStack = 0, plain = 0;
    for (const Json& e : events) {
        const std::string name = e["name"].get<std::string>();
        EXPECT_TRUE(name != "kernel_stack" && name != "user_stack")
            << "a stack entry is never an event: " << e.dump();
        if (name != "sched_switch")
            continue;
        const std::string stream = e["stream"].get<std::string>();
        if (stream.rfind("plain_", 0) == 0) {
            ++plain;
            EXPECT_FALSE(e["context"].contains("callstack_kernel")) << e.dump();
            EXPECT_FALSE(e["context"].contains("_callstack_kernel_length")) << e.dump();
            continue;
        }
        ASSERT_TRUE(e["context"].contains("callstack_kernel")) << e.dump();
        ASSERT_TRUE(e["context"].contains("_callstack_kernel_length")) << e.dump();
        const auto frames = addresses(e["context"]["callstack_kernel"]);
        EXPECT_EQ(frames.size(), e["context"]["_callstack_kernel_length"].get<std::size_t>());
        if (!frames.empty()) {
            ++withStack;
            for (const std::uint64_t a : frames)
                EXPECT_GE(a, 0xffff800000000000ull) << "a kernel address: " << e.dump();
        }
    }
    EXPECT_GT(plain, 0u);
    EXPECT_GT(withStack, 0u) << "sched_switch events with their kernel stack";
    const RunResult v = view("cs-kernel");
    ASSERT_TRUE(v.ok()) << v.describe();
    EXPECT_NE(v.out.find("__schedule"), std::string::npos)
        << "view names the frames (kallsyms recorded in the trace)";
    s->Destroy({});
}

TEST_F(Callstack, UserStacksOfASystemCallNameMainAndItsCaller) {
    auto s = create("cs-user");
    s->AddContext("kernel", "", "callstack-user", {});
    s->EnableEvents("kernel", "", "getppid", {{"syscall", sdbus::Variant(true)}});
    s->Start({});
    constexpr int kCalls = 5;
    const pid_t pid = runApp(kCalls);
    s->Stop({});
    std::size_t mine = 0;
    for (const Json& e : traceEvents(output("cs-user"), {"syscall_entry_getppid"})) {
        ASSERT_TRUE(e["context"].contains("callstack_user")) << e.dump();
        if (e["context"]["tid"] != pid)
            continue;
        ++mine;
        const auto frames = addresses(e["context"]["callstack_user"]);
        ASSERT_GE(frames.size(), 3u) << "caller, main, libc: " << e.dump();
        for (const std::uint64_t a : frames)
            EXPECT_LT(a, 0x0000800000000000ull) << "a user address: " << e.dump();
    }
    EXPECT_EQ(mine, static_cast<std::size_t>(kCalls)) << "each call, with its stack";
    s->Destroy({});
}

TEST_F(Callstack, UserStacksAreNamedByViewFromTheMappingsTheTraceRecorded) {
    // The app makes its 5 getppid calls, then waits (on a FIFO) until the session has
    // stopped: the consumer converts the stacks, and reads the app's /proc/PID/maps into
    // tracectl_vm_map events, while the app lives. view then names each frame of the app
    // by its ELF symbols: the calling function, then main.
    auto s = create("cs-user-names");
    constexpr int kCalls = 5;
    std::istringstream printed(recordHeldApp(*s, "cs-user-names", "", kCalls, 2)); // pid, sum
    long appPid = 0;
    printed >> appPid;
    ASSERT_GT(appPid, 0);
    const std::string pid = std::to_string(appPid);
    std::size_t maps = 0;
    for (const Json& e : traceEvents(output("cs-user-names"), {"tracectl_vm_map"})) {
        if (e["fields"]["pid"] == appPid && e["fields"]["path"].get<std::string>().find(
                                                "tracectl-callstack-app") != std::string::npos)
            ++maps;
    }
    EXPECT_GT(maps, 0u) << "the app's executable mapping is in the trace";
    const RunResult v = view("cs-user-names");
    ASSERT_TRUE(v.ok()) << v.describe();
    std::istringstream lines(v.out);
    std::size_t named = 0;
    for (std::string line; std::getline(lines, line);) {
        if (line.find(" syscall_entry_getppid: ") == std::string::npos ||
            line.find("tid = " + pid + ",") == std::string::npos)
            continue;
        // (sh's own getppid before it exec'd the app has only the C library's frame.)
        const std::size_t caller = line.find(" <tracectl_callstack_caller+0x");
        if (caller == std::string::npos)
            continue;
        const std::size_t main = line.find(" <main+0x");
        EXPECT_NE(main, std::string::npos) << line;
        EXPECT_LT(caller, main) << "the caller is the innermost frame: " << line;
        EXPECT_NE(line.find(" [tracectl-callstack-app]>"), std::string::npos) << line;
        ++named;
    }
    EXPECT_EQ(named, static_cast<std::size_t>(kCalls)) << v.out;
    s->Destroy({});
}

TEST_F(Callstack, AThreadsUserStacksAreNamedByViewWithoutAPidContext) {
    // The app's 5 getppid calls come from a second thread (tid != pid), and the session
    // has no pid context: the trace's tracectl_thread event tells view the thread's
    // process, whose mappings name the frames: the calling function, then the thread's.
    auto s = create("cs-thread-names");
    constexpr int kCalls = 5;
    const std::string log = recordHeldApp(*s, "cs-thread-names", "--thread", kCalls, 3);
    std::istringstream printed(log); // pid, the thread's tid, sum
    long pid = 0, tid = 0;
    printed >> pid >> tid;
    ASSERT_GT(pid, 0) << log;
    ASSERT_NE(tid, pid) << log;
    // The thread's calls, without a pid context; a tracectl_thread event says whose.
    std::size_t calls = 0;
    for (const Json& e : traceEvents(output("cs-thread-names"), {"syscall_entry_getppid"})) {
        EXPECT_FALSE(e["context"].contains("pid")) << e.dump();
        calls += e["context"]["tid"] == tid ? 1 : 0;
    }
    EXPECT_EQ(calls, static_cast<std::size_t>(kCalls));
    std::size_t told = 0;
    for (const Json& e : traceEvents(output("cs-thread-names"), {"tracectl_thread"}))
        told += e["fields"]["tid"] == tid && e["fields"]["pid"] == pid ? 1 : 0;
    EXPECT_GT(told, 0u) << "the app's thread is told";
    const RunResult v = view("cs-thread-names");
    ASSERT_TRUE(v.ok()) << v.describe();
    std::istringstream lines(v.out);
    std::size_t named = 0;
    for (std::string line; std::getline(lines, line);) {
        if (line.find(" syscall_entry_getppid: ") == std::string::npos ||
            line.find(" <tracectl_callstack_caller+0x") == std::string::npos)
            continue;
        EXPECT_NE(line.find("tid = " + std::to_string(tid) + ","), std::string::npos)
            << "only the thread calls: " << line;
        const std::size_t caller = line.find(" <tracectl_callstack_caller+0x");
        const std::size_t thread = line.find(" <tracectl_callstack_thread+0x");
        EXPECT_NE(thread, std::string::npos) << line;
        EXPECT_LT(caller, thread) << "the caller is the innermost frame: " << line;
        ++named;
    }
    EXPECT_EQ(named, static_cast<std::size_t>(kCalls)) << v.out;
    s->Destroy({});
}

TEST_F(Callstack, UnknownContextsAndCallstacksOfUstAreRefusedClearly) {
    auto s = create("cs-refused");
    try {
        s->AddContext("ust", "", "callstack-user", {});
        ADD_FAILURE() << "callstack-user accepted for UST";
    } catch (const sdbus::Error& e) {
        EXPECT_EQ(e.getName(), "org.tracectl.Tracing1.Error.InvalidArgument");
        EXPECT_NE(e.getMessage().find("LTTng-UST 2.13 records no call stacks"), std::string::npos)
            << e.getMessage();
    }
    try {
        s->AddContext("kernel", "", "callstack-everything", {});
        ADD_FAILURE() << "an unknown context accepted";
    } catch (const sdbus::Error& e) {
        EXPECT_EQ(e.getName(), "org.tracectl.Tracing1.Error.InvalidArgument");
        EXPECT_NE(e.getMessage().find("unknown kernel context type 'callstack-everything'"),
                  std::string::npos)
            << e.getMessage();
        EXPECT_NE(e.getMessage().find("callstack-user"), std::string::npos) << e.getMessage();
    }
    const RunResult r =
        run({cli(), "add-context", "-s", "cs-refused", "-u", "-t", "callstack-user"});
    EXPECT_FALSE(r.ok());
    EXPECT_NE(r.err.find("LTTng-UST 2.13 records no call stacks"), std::string::npos)
        << r.describe();
    EXPECT_TRUE(s->Channels().empty()) << "nothing made by a refused call";
    s->Destroy({});
}

} // namespace
