// SPDX-License-Identifier: LGPL-2.1-or-later
//
// D's probes of a process (tracectl-dtrace(1): the pid provider, USDT providers, -c and
// -p, $target) on the real stack: `tracectl dtrace -c` starts our tracectl-uprobe-app
// stopped at its first instruction, the sandbox's tracectld defines the userspace probes
// on its executable (uprobe_events), the kernel consumer records them and the program
// aggregates them. The app calls tracectl_uprobe_work(i) for i < N (it returns 3i+1) and
// fires USDT probe tracectl_test:tick(i, 1000i+7) for i < M, so every result is known
// exactly. Afterwards no session and nothing of ours in uprobe_events.
#include "child_process.hpp"
#include "eventually.hpp"
#include "kernel_trace_support.hpp"
#include "sandbox_suite.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace tracectl::test;
using Json = nlohmann::json;

namespace {

std::string uprobeApp() {
    const char* p = std::getenv("TRACECTL_UPROBE_APP");
    return p != nullptr ? p : "tracectl-uprobe-app";
}

std::string ustackApp() {
    const char* p = std::getenv("TRACECTL_USTACK_APP");
    return p != nullptr ? p : "tracectl-ustack-app";
}

std::string libcApp() {
    const char* p = std::getenv("TRACECTL_LIBC_APP");
    return p != nullptr ? p : "tracectl-libc-app";
}

std::string tracectlCli() {
    const char* p = std::getenv("TRACECTL");
    return p != nullptr ? p : "tracectl";
}

/// The lines of uprobe_events naming an event of process `pid`'s probes (our events are
/// named pidPID_FUNCTION_entry... and PROVIDERPID_NAME).
std::vector<std::string> uprobeLinesOf(pid_t pid) {
    std::ifstream in(tracefsRoot() + "/uprobe_events");
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
        if (line.find("/pid" + std::to_string(pid) + "_") != std::string::npos ||
            line.find("/tracectl_test" + std::to_string(pid) + "_") != std::string::npos) {
            lines.push_back(line);
        }
    }
    return lines;
}

/// The entries of aggregation `name` of tracectl dtrace --json's output: key (its first
/// key, an integer; 0 for an aggregation without keys) -> value.
std::map<long long, long long> entries(const std::string& out, const std::string& name) {
    std::map<long long, long long> result;
    const Json parsed = Json::parse(out, nullptr, false);
    if (parsed.is_discarded()) {
        return result;
    }
    for (const auto& a : parsed["aggregations"]) {
        if (a["name"] != name) {
            continue;
        }
        for (const auto& e : a["entries"]) {
            const long long key =
                e.contains("keys") && !e["keys"].empty() ? e["keys"][0].get<long long>() : 0;
            result[key] = e["value"].get<long long>();
        }
    }
    return result;
}

/// The entries of aggregation `name` whose keys hold a stack (stack(), ustack(): an
/// array of frame names in --json's output): the keys as text (an integer as itself, a
/// stack as its frames joined by " < ") -> value.
std::map<std::string, long long> stackEntries(const std::string& out, const std::string& name) {
    std::map<std::string, long long> result;
    const Json parsed = Json::parse(out, nullptr, false);
    if (parsed.is_discarded()) {
        return result;
    }
    for (const auto& a : parsed["aggregations"]) {
        if (a["name"] != name) {
            continue;
        }
        for (const auto& e : a["entries"]) {
            std::string key;
            for (const auto& k : e["keys"]) {
                key += key.empty() ? "" : " ";
                if (!k.is_array()) {
                    key += k.dump();
                    continue;
                }
                std::string frames;
                for (const auto& f : k) {
                    frames += (frames.empty() ? "" : " < ") + f.get<std::string>();
                }
                key += frames;
            }
            result[key] = e["value"].get<long long>();
        }
    }
    return result;
}

/// A frame's name without its offset ("app`f+0x1a" -> "app`f"), in a key of stackEntries.
std::string withoutOffsets(std::string key) {
    for (std::size_t at = key.find("+0x"); at != std::string::npos; at = key.find("+0x", at)) {
        std::size_t end = at + 3;
        while (end < key.size() && std::isxdigit(static_cast<unsigned char>(key[end]))) {
            ++end;
        }
        key.erase(at, end - at);
    }
    return key;
}

/// The stacks the action stack() or ustack() printed after each line "hit" of a quiet
/// run's output, as dtrace prints them: the line, an empty line, then a frame a line
/// indented 14 columns (each frame without its offset). `stray`: the frame lines that
/// followed no "hit". Other lines (the command's own output) are skipped.
struct PrintedStacks {
    std::vector<std::vector<std::string>> stacks;
    int stray = 0;
};

PrintedStacks printedStacks(const std::string& out) {
    PrintedStacks printed;
    enum class State { Other, AfterHit, InStack } state = State::Other;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
        const bool frame = line.size() > 14 && line.find_first_not_of(' ') == 14;
        if (line == "hit") {
            printed.stacks.emplace_back();
            state = State::AfterHit;
        } else if (line.empty()) {
            state = state == State::AfterHit ? State::InStack : State::Other;
        } else if (frame && state == State::InStack) {
            printed.stacks.back().push_back(withoutOffsets(line.substr(14)));
        } else if (frame) {
            ++printed.stray;
        }
    }
    return printed;
}

/// The pid a -c command had: the "pid N has exited" line tracectl prints at its end.
pid_t exitedPid(const std::string& err) {
    const std::size_t at = err.find(": pid ");
    return at == std::string::npos ? 0 : static_cast<pid_t>(std::atol(err.c_str() + at + 6));
}

class DtracePid : public SandboxSuite {
protected:
    void SetUp() override {
        SandboxSuite::SetUp();
        ASSERT_TRUE(manager_->KernelTracingAvailable());
    }

    /// tracectl dtrace --json -c "APP N M" PROGRAM.
    static RunResult dtraceC(int n, int m, const std::string& program) {
        return run({tracectlCli(), "dtrace", "--json", "-c",
                    uprobeApp() + " " + std::to_string(n) + " " + std::to_string(m), "-n",
                    program});
    }

    /// After a run: no session left, and none of process `pid`'s probes in uprobe_events.
    void expectNothingLeft(pid_t pid) {
        EXPECT_TRUE(manager_->ListSessions().empty());
        EXPECT_NE(pid, 0);
        EXPECT_TRUE(uprobeLinesOf(pid).empty()) << uprobeLinesOf(pid).front();
    }
};

} // namespace

TEST_F(DtracePid, EntryProbeCountsEachArgumentExactly) {
    // 10 calls, i = 0..9: arg0 % 3 is 0 four times (0 3 6 9), 1 and 2 three times each.
    // main is entered once, with argc 3 as arg0: the command ran from its first
    // instruction with its probes in place.
    const RunResult r =
        dtraceC(10, 0,
                "pid$target::tracectl_uprobe_work:entry { @calls[arg0 % 3] = count(); } "
                "pid$target::main:entry { @main[arg0] = count(); }");
    ASSERT_EQ(r.exitCode, 0) << r.describe() << r.out;
    EXPECT_EQ(entries(r.out, "calls"), (std::map<long long, long long>{{0, 4}, {1, 3}, {2, 3}}))
        << r.out << r.err;
    EXPECT_EQ(entries(r.out, "main"), (std::map<long long, long long>{{3, 1}})) << r.out;
    expectNothingLeft(exitedPid(r.err));
}

TEST_F(DtracePid, PidProbeOfALibraryFunctionCountsEachCallExactly) {
    // tracectl-libc-app 7 calls libc's getppid( ) 7 times, and nothing else of it does:
    // the executable has no getppid, so an empty module finds it in libc.so.6, one of the
    // executable's DT_NEEDED libraries (not mapped yet: -c's command waits at its first
    // instruction); the module named finds the same. Each entry and each return counts,
    // and only this process's (every process using libc.so.6 hits the probe meanwhile).
    for (const std::string module : {"", "libc.so.6"}) {
        const std::string probe = "pid$target:" + module + ":getppid:";
        const RunResult r = run(
            {tracectlCli(), "dtrace", "--json", "-c", libcApp() + " 7", "-n",
             probe + "entry { @calls = count(); } " + probe + "return { @returns = count(); }"});
        ASSERT_EQ(r.exitCode, 0) << module << ": " << r.describe() << r.out;
        EXPECT_EQ(entries(r.out, "calls"), (std::map<long long, long long>{{0, 7}}))
            << module << ": " << r.out << r.err;
        EXPECT_EQ(entries(r.out, "returns"), (std::map<long long, long long>{{0, 7}}))
            << module << ": " << r.out << r.err;
        expectNothingLeft(exitedPid(r.err));
    }
}

TEST_F(DtracePid, PidProbeOfAFunctionInNoObjectIsRefusedNamingWhatWasSearched) {
    // A function neither the executable nor any of its libraries has, and a module that is
    // none of them: status 1, what was searched, the command killed before its first
    // instruction (it printed nothing), no session, no probe.
    const std::vector<std::pair<std::string, std::vector<std::string>>> refused = {
        {"pid$target::tracectl_no_such_function:entry { @ = count(); }",
         {"no function named 'tracectl_no_such_function' in process ", libcApp(), "libc.so.6",
          "DT_NEEDED"}},
        {"pid$target:libtracectl_none.so.1:getppid:entry { @ = count(); }",
         {"module libtracectl_none.so.1 is neither the executable of process ", libcApp(),
          "libc.so.6"}},
        {"pid$target:libc.so.6:tracectl_no_such_function:entry { @ = count(); }",
         {"libc.so.6 exports no function named 'tracectl_no_such_function'"}},
    };
    for (const auto& [program, parts] : refused) {
        const RunResult r = run({tracectlCli(), "dtrace", "-c", libcApp() + " 3", "-n", program});
        EXPECT_EQ(r.exitCode, 1) << program << ": " << r.describe();
        for (const std::string& part : parts) {
            EXPECT_NE(r.err.find(part), std::string::npos) << program << ": " << part << "\n"
                                                           << r.err;
        }
        EXPECT_EQ(r.out, "") << program << ": the command ran: " << r.out;
        EXPECT_TRUE(manager_->ListSessions().empty()) << program;
        std::ifstream in(tracefsRoot() + "/uprobe_events");
        for (std::string line; std::getline(in, line);) {
            EXPECT_EQ(line.find("getppid"), std::string::npos) << line;
            EXPECT_EQ(line.find("tracectl_no_such_function"), std::string::npos) << line;
        }
    }
}

TEST_F(DtracePid, ReturnProbeSumsTheReturnValue) {
    // tracectl_uprobe_work(i) returns 3i + 1: over i = 0..19, 3 * 190 + 20 = 590. END runs
    // once the command has exited.
    const RunResult r =
        dtraceC(20, 0,
                "pid$target::tracectl_uprobe_work:return { @sum = sum(arg1); @n = count(); } "
                "END { @ended = count(); }");
    ASSERT_EQ(r.exitCode, 0) << r.describe() << r.out;
    EXPECT_EQ(entries(r.out, "sum"), (std::map<long long, long long>{{0, 590}})) << r.out;
    EXPECT_EQ(entries(r.out, "n"), (std::map<long long, long long>{{0, 20}})) << r.out;
    EXPECT_EQ(entries(r.out, "ended"), (std::map<long long, long long>{{0, 1}})) << r.out;
    expectNothingLeft(exitedPid(r.err));
}

TEST_F(DtracePid, UsdtProbeKeysOnItsTypedArguments) {
    // tick(i, 1000i + 7) for i = 0..4: each arg0 once, with its arg1.
    const RunResult r = dtraceC(
        3, 5, "tracectl_test$target:::tick { @hits[arg0] = count(); @value[arg0] = sum(arg1); }");
    ASSERT_EQ(r.exitCode, 0) << r.describe() << r.out;
    EXPECT_EQ(entries(r.out, "hits"),
              (std::map<long long, long long>{{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}}))
        << r.out;
    EXPECT_EQ(entries(r.out, "value"),
              (std::map<long long, long long>{{0, 7}, {1, 1007}, {2, 2007}, {3, 3007}, {4, 4007}}))
        << r.out;
    expectNothingLeft(exitedPid(r.err));
}

TEST_F(DtracePid, OnlyTheTargetProcessCountsWithDashP) {
    // The target waits on a FIFO (opened read-write, so that the shell does not block on
    // it before exec) while tracectl dtrace -p traces it; another process of the same
    // executable calls the function 7 times meanwhile: its calls hit the same userspace
    // probe but are not the target's. Released, the target calls it 10 times, then
    // printf( ) once, and exits, which ends the run. printf is libc.so.6's, found among
    // the libraries the running target has mapped (/proc/PID/maps).
    const std::string fifo = sandbox_->dir() + "/dtrace-pid-fifo";
    ::unlink(fifo.c_str());
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
    const std::string log = sandbox_->dir() + "/log/dtrace-pid-target.log";
    ChildProcess target({"sh", "-c", "exec \"$0\" 10 0 3 3<>\"$1\"", uprobeApp(), fifo}, {}, log);
    const std::string exe = "/proc/" + std::to_string(target.pid()) + "/exe";
    ASSERT_TRUE(eventually([&] {
        return std::filesystem::equivalent(std::filesystem::path(uprobeApp()),
                                           std::filesystem::path(exe));
    })) << "the target never exec'd the app";
    const std::string dtraceLog = sandbox_->dir() + "/log/dtrace-pid.log";
    ChildProcess dtrace({tracectlCli(), "dtrace", "--json", "-p", std::to_string(target.pid()),
                         "-n",
                         "pid$target::tracectl_uprobe_work:entry { @n = count(); } "
                         "pid$target::printf:entry { @printf = count(); }"},
                        {}, dtraceLog);
    ASSERT_TRUE(eventually([&] { return fileText(dtraceLog).find("Tracing") != std::string::npos; },
                           std::chrono::seconds(30)))
        << fileText(dtraceLog);
    const RunResult other = run({uprobeApp(), "7", "0"});
    ASSERT_TRUE(other.ok()) << other.describe();
    {
        const int fd = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
        ASSERT_GE(fd, 0) << std::strerror(errno);
        ASSERT_EQ(::write(fd, "x", 1), 1);
        ::close(fd);
    }
    ASSERT_EQ(target.wait(30000), 0) << fileText(log);
    ASSERT_EQ(dtrace.wait(30000), 0) << fileText(dtraceLog);
    const std::string text = fileText(dtraceLog);
    const std::string out = text.substr(text.find('{'), text.rfind('}') - text.find('{') + 1);
    EXPECT_EQ(entries(out, "n"), (std::map<long long, long long>{{0, 10}})) << text;
    EXPECT_EQ(entries(out, "printf"), (std::map<long long, long long>{{0, 1}})) << text;
    expectNothingLeft(target.pid());
}

TEST_F(DtracePid, UstackKeysCountEachDistinctStackExactly) {
    // tracectl-ustack-app: caller_a, _b and _c (each called once by main) call work 2, 3
    // and 5 times. At work's entry the stack is work, its caller (the return address the
    // probe read at the top of the stack), then main: three stacks, named from the
    // app's ELF symbols by the mappings of the target read at its first instruction.
    const RunResult r = run({tracectlCli(), "dtrace", "--json", "-c", ustackApp(), "-n",
                             "pid$target::tracectl_ustack_work:entry { @s[ustack()] = count(); }"});
    ASSERT_EQ(r.exitCode, 0) << r.describe() << r.out;
    const auto stacks = stackEntries(r.out, "s");
    std::map<std::string, long long> named;
    for (const auto& [key, value] : stacks) {
        // The frames of the app; the C library's below main are not asserted.
        const std::size_t main = key.find(" < tracectl-ustack-app`main");
        ASSERT_NE(main, std::string::npos) << key;
        named[withoutOffsets(key.substr(0, main)) + " < main"] += value;
    }
    const std::string app = "tracectl-ustack-app`";
    EXPECT_EQ(named,
              (std::map<std::string, long long>{
                  {app + "tracectl_ustack_work < " + app + "tracectl_ustack_caller_a < main", 2},
                  {app + "tracectl_ustack_work < " + app + "tracectl_ustack_caller_b < main", 3},
                  {app + "tracectl_ustack_work < " + app + "tracectl_ustack_caller_c < main", 5}}))
        << r.out;
    EXPECT_EQ(stacks.size(), 3u) << "one entry per distinct stack: " << r.out;
    expectNothingLeft(exitedPid(r.err));
}

TEST_F(DtracePid, UsdtProbeKeysOnItsArgumentAndItsTruncatedUstack) {
    // tracectl_ustack:hit(id) fires in work (its frame set up), called by caller_<id>:
    // ustack(2) is work and that caller, nothing more.
    const RunResult r = run({tracectlCli(), "dtrace", "--json", "-c", ustackApp(), "-n",
                             "tracectl_ustack$target:::hit { @s[arg0, ustack(2)] = count(); }"});
    ASSERT_EQ(r.exitCode, 0) << r.describe() << r.out;
    std::map<std::string, long long> named;
    for (const auto& [key, value] : stackEntries(r.out, "s")) {
        named[withoutOffsets(key)] += value;
    }
    const std::string work = "tracectl-ustack-app`tracectl_ustack_work < tracectl-ustack-app`";
    EXPECT_EQ(named,
              (std::map<std::string, long long>{{"1 " + work + "tracectl_ustack_caller_a", 2},
                                                {"2 " + work + "tracectl_ustack_caller_b", 3},
                                                {"3 " + work + "tracectl_ustack_caller_c", 5}}))
        << r.out;
    expectNothingLeft(exitedPid(r.err));
}

TEST_F(DtracePid, StackOfAKernelProbeNamesKernelFrames) {
    // The app's write(2) of its result: the kernel stack at the system call's entry, named
    // from the kallsyms symbols the trace recorded, printed as dtrace prints stacks.
    const RunResult r =
        run({tracectlCli(), "dtrace", "-c", ustackApp(), "-n",
             "syscalls:sys_enter_write /pid == $target/ { @[stack()] = count(); }"});
    ASSERT_EQ(r.exitCode, 0) << r.describe() << r.out;
    EXPECT_NE(r.out.find("\n              vmlinux`do_syscall_64+0x"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\n              vmlinux`entry_SYSCALL_64"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\n                1\n"), std::string::npos)
        << "one write, its count under its stack: " << r.out;
    expectNothingLeft(exitedPid(r.err));
}

/// Runs `tracectl dtrace -q -c` on the ustack app with `action` after a "hit" line at each
/// of work's ten firings (`r`: the run) into `printed`: every stack right after its hit,
/// ten of them, or the test fails (fatally: call it under ASSERT_NO_FATAL_FAILURE).
void stacksAfterEachHit(const std::string& action, RunResult& r, PrintedStacks& printed) {
    r = run({tracectlCli(), "dtrace", "-q", "-c", ustackApp(), "-n",
             "pid$target::tracectl_ustack_work:entry { printf(\"hit\\n\"); " + action + "; }"});
    ASSERT_EQ(r.exitCode, 0) << r.describe() << r.out;
    printed = printedStacks(r.out);
    EXPECT_EQ(printed.stray, 0) << "every stack right after its hit: " << r.out;
    ASSERT_EQ(printed.stacks.size(), 10u) << r.out;
}

TEST_F(DtracePid, UstackActionPrintsEachFiringsStackAfterItsOutput) {
    // work is called 2, 3 and 5 times by caller_a, _b and _c: ten firings, each printing
    // "hit" then its stack (work, its caller, ..., main), in the clause's order.
    RunResult r;
    PrintedStacks printed;
    ASSERT_NO_FATAL_FAILURE(stacksAfterEachHit("ustack()", r, printed));
    const std::string app = "tracectl-ustack-app`";
    std::map<std::string, int> named;
    for (const auto& frames : printed.stacks) {
        // The frames of the app; the C library's below main are not asserted.
        const auto main = std::find(frames.begin(), frames.end(), app + "main");
        ASSERT_NE(main, frames.end()) << r.out;
        std::string text;
        for (auto f = frames.begin(); f != main; ++f) {
            text += *f + " < ";
        }
        ++named[text + "main"];
    }
    EXPECT_EQ(named,
              (std::map<std::string, int>{
                  {app + "tracectl_ustack_work < " + app + "tracectl_ustack_caller_a < main", 2},
                  {app + "tracectl_ustack_work < " + app + "tracectl_ustack_caller_b < main", 3},
                  {app + "tracectl_ustack_work < " + app + "tracectl_ustack_caller_c < main", 5}}))
        << r.out;
    expectNothingLeft(exitedPid(r.err));
}

TEST_F(DtracePid, UstackActionOfOneFramePrintsTheFunctionAlone) {
    RunResult r;
    PrintedStacks printed;
    ASSERT_NO_FATAL_FAILURE(stacksAfterEachHit("ustack(1)", r, printed));
    for (const auto& frames : printed.stacks) {
        EXPECT_EQ(frames, std::vector<std::string>{"tracectl-ustack-app`tracectl_ustack_work"})
            << r.out;
    }
    expectNothingLeft(exitedPid(r.err));
}

TEST_F(DtracePid, StackActionOfAKernelProbeNamesKernelFrames) {
    // The app's write(2) of its result: its kernel stack, printed at the firing, after
    // the firing's "hit".
    const RunResult r =
        run({tracectlCli(), "dtrace", "-q", "-c", ustackApp(), "-n",
             "syscalls:sys_enter_write /pid == $target/ { printf(\"hit\\n\"); stack(); }"});
    ASSERT_EQ(r.exitCode, 0) << r.describe() << r.out;
    const PrintedStacks printed = printedStacks(r.out);
    EXPECT_EQ(printed.stray, 0) << r.out;
    ASSERT_EQ(printed.stacks.size(), 1u) << "one write: " << r.out;
    const auto& frames = printed.stacks.front();
    EXPECT_NE(std::find(frames.begin(), frames.end(), "vmlinux`do_syscall_64"), frames.end())
        << r.out;
    expectNothingLeft(exitedPid(r.err));
}

TEST_F(DtracePid, UstackOfASecondThreadIsItsProcesssAndNamed) {
    // tracectl-callstack-app --thread: a second thread makes the 5 getppid calls and
    // exits at once, likely before the consumer converts its records: their pid is the
    // process's all the same (ftrace's user_stack entry gives it), so the predicate
    // keeps them, and their stacks are named from the process's mappings.
    const char* app = std::getenv("TRACECTL_CALLSTACK_APP");
    ASSERT_NE(app, nullptr);
    const RunResult r =
        run({tracectlCli(), "dtrace", "--json", "-c", std::string(app) + " --thread 5", "-n",
             "syscalls:sys_enter_getppid /pid == $target/ "
             "{ @[ustack(2)] = count(); }"});
    ASSERT_EQ(r.exitCode, 0) << r.describe() << r.out;
    std::map<std::string, long long> stacks;
    for (const auto& [key, value] : stackEntries(r.out, "")) {
        stacks[withoutOffsets(key)] += value;
    }
    EXPECT_EQ(stacks, (std::map<std::string, long long>{
                          {"tracectl-callstack-app`tracectl_callstack_caller < "
                           "tracectl-callstack-app`tracectl_callstack_thread",
                           5}}))
        << r.out << r.err;
}

TEST_F(DtracePid, StacksAnywhereButAsAggregationKeysAndActionsAreRefused) {
    // As the program is compiled (before the command runs): exit 2, why, and nothing left.
    const RunResult r =
        run({tracectlCli(), "dtrace", "-c", ustackApp(), "-n",
             "pid$target::tracectl_ustack_work:entry { printf(\"%s\", ustack(5)); }"});
    EXPECT_EQ(r.exitCode, 2) << r.describe();
    // The call printed back as written (ustack(5), stack()).
    EXPECT_NE(r.err.find("ustack(5) is only taken as an aggregation key (@[ustack(5)] = "
                         "count()) or as an action (ustack(5);): it cannot be printf() "
                         "argument #2"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.out, "") << "the command ran";
    EXPECT_TRUE(manager_->ListSessions().empty());
    // Nor in arithmetic.
    const RunResult sum = run({tracectlCli(), "dtrace", "-c", ustackApp(), "-n",
                               "pid$target::tracectl_ustack_work:entry { trace(stack() + 1); }"});
    EXPECT_EQ(sum.exitCode, 2) << sum.describe();
    EXPECT_NE(sum.err.find("stack() is only taken as an aggregation key (@[stack()] = "
                           "count()) or as an action (stack();): it cannot be trace() "
                           "argument #1"),
              std::string::npos)
        << sum.err;
    EXPECT_EQ(sum.out, "") << "the command ran";
    EXPECT_TRUE(manager_->ListSessions().empty());
}

TEST_F(DtracePid, WhatTheProgramAndItsProbesTellIsRefusedBeforeTheCommandRuns) {
    // dtrace(1M) refuses these as it compiles the program: so does tracectl, before any
    // session or probe and before -c's command runs its first instruction (the app would
    // create its mark file first thing). Exit 2, why, where, and no mark.
    const std::string mark = sandbox_->dir() + "/ustack-app-ran";
    const std::string work = "pid$target::tracectl_ustack_work";
    const std::vector<std::pair<std::string, std::string>> refused = {
        {work + ":entry { trace(ustack()); }",
         "1:48: ustack() is only taken as an aggregation key (@[ustack()] = count()) or as an "
         "action (ustack();): it cannot be trace() argument #1"},
        {work + ":entry { x = ustack(); }",
         "1:46: ustack() is only taken as an aggregation key (@[ustack()] = count()) or as an "
         "action (ustack();): it cannot be assigned to a variable"},
        {work + ":entry /stack() != 0/ { @ = count(); }",
         "1:41: stack() is only taken as an aggregation key (@[stack()] = count()) or as an "
         "action (stack();): it cannot be used in a predicate"},
        {work + ":entry { @[strjoin(\"a\", ustack())] = count(); }",
         "it cannot be strjoin() argument #2"},
        {"tracectl_demo:* { @[ustack()] = count(); }",
         "1:21: ustack() needs the callstack-user context, which only kernel events record: "
         "tracectl_demo:* names LTTng-UST events, which have no call stack context"},
        {work + ":return { @[arg0] = count(); }",
         "1:45: arg0 is recorded by no probe of its clause: pid"},
        {work + ":return { @[arg1] = count(); } " + work + ":entry { @[arg7] = count(); }",
         "arg7 is recorded by no probe of its clause: pid"},
    };
    for (const auto& [program, message] : refused) {
        ::unlink(mark.c_str());
        const RunResult r =
            run({tracectlCli(), "dtrace", "-c", ustackApp() + " " + mark, "-n", program});
        EXPECT_EQ(r.exitCode, 2) << program << ": " << r.describe();
        EXPECT_NE(r.err.find(message), std::string::npos) << program << ": " << r.err;
        EXPECT_NE(::access(mark.c_str(), F_OK), 0) << program << ": the command ran";
        EXPECT_EQ(r.out, "") << program << ": the command ran";
        EXPECT_TRUE(manager_->ListSessions().empty()) << program;
        std::ifstream in(tracefsRoot() + "/uprobe_events");
        for (std::string line; std::getline(in, line);) {
            EXPECT_EQ(line.find("tracectl_ustack_work"), std::string::npos) << line;
        }
    }
    // The return's message says why arg0 is not there.
    const RunResult r = run({tracectlCli(), "dtrace", "-c", ustackApp() + " " + mark, "-n",
                             work + ":return { @[arg0] = count(); }"});
    EXPECT_NE(r.err.find("records arg1 only, the return value (dtrace's arg0 of a return, its "
                         "offset, is not recorded)"),
              std::string::npos)
        << r.err;
    // The same program with its stack where D takes it runs the command.
    ::unlink(mark.c_str());
    const RunResult ok = run(
        {tracectlCli(), "dtrace", "-c", ustackApp() + " " + mark, "-n",
         work + ":entry { @[ustack()] = count(); } " + work + ":return { @[arg1] = count(); }"});
    EXPECT_EQ(ok.exitCode, 0) << ok.describe();
    EXPECT_EQ(::access(mark.c_str(), F_OK), 0) << "the command ran: " << ok.describe();
}

TEST_F(DtracePid, RefusalsSayWhyExitNonZeroAndLeaveNothing) {
    // A command that does not exist: refused before anything is made.
    const RunResult missing = run({tracectlCli(), "dtrace", "-c", "/nonexistent/program", "-n",
                                   "pid$target::main:entry { @ = count(); }"});
    EXPECT_EQ(missing.exitCode, 1) << missing.describe();
    EXPECT_NE(missing.err.find("cannot run /nonexistent/program: No such file or directory"),
              std::string::npos)
        << missing.err;
    EXPECT_TRUE(manager_->ListSessions().empty());
    // A function, and a USDT probe, the executable does not have: the daemon's refusal,
    // status 1, the command killed before its first instruction (it printed nothing),
    // no session, no probe.
    for (const std::string program : {"pid$target::no_such_function:entry { @ = count(); }",
                                      "tracectl_test$target:::no_such_probe { @ = count(); }"}) {
        const RunResult r =
            run({tracectlCli(), "dtrace", "-c", uprobeApp() + " 3 3", "-n", program});
        EXPECT_EQ(r.exitCode, 1) << program << ": " << r.describe();
        const std::string name = program.find("no_such_function") != std::string::npos
                                     ? "no_such_function"
                                     : "no_such_probe";
        EXPECT_NE(r.err.find(name), std::string::npos) << r.err;
        EXPECT_EQ(r.out, "") << "the command ran: " << r.out;
        EXPECT_TRUE(manager_->ListSessions().empty()) << program;
        std::ifstream in(tracefsRoot() + "/uprobe_events");
        for (std::string line; std::getline(in, line);) {
            EXPECT_EQ(line.find(name), std::string::npos) << line;
        }
    }
    // A pid provider probe that is not entry or return: the program's error, status 2.
    const RunResult offset = run({tracectlCli(), "dtrace", "-c", uprobeApp() + " 1 1", "-n",
                                  "pid$target::tracectl_uprobe_work:4 { @ = count(); }"});
    EXPECT_EQ(offset.exitCode, 2) << offset.describe();
    EXPECT_NE(offset.err.find("entry and return"), std::string::npos) << offset.err;
}
