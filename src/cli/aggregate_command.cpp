#include "aggregate_command.hpp"

#include "aggregate/aggregation_set.hpp"
#include "aggregate/binding.hpp"
#include "aggregate/chunked_run.hpp"
#include "aggregate/interpreter.hpp"
#include "aggregate/ip_aggregation.hpp"
#include "aggregate/json_output.hpp"
#include "aggregate/options.hpp"
#include "aggregate/parser.hpp"
#include "aggregate/program_checks.hpp"
#include "aggregate/program_run.hpp"
#include "aggregate/text_output.hpp"
#include "aggregate/trace_reader.hpp"
#include "bus_client.hpp"
#include "dtrace_user_probes.hpp"
#include "error_report.hpp"
#include "kernel_domain.hpp"
#include "quantities.hpp"
#include "session_chunks.hpp"
#include "session_view.hpp"
#include "symbols/proc_maps.hpp"
#include "symbols/stack_names.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <ostream>
#include <poll.h>
#include <pthread.h>
#include <sdbus-c++/Error.h>
#include <set>
#include <sstream>
#include <stdexcept>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tracectl::cli {

namespace agg = tracectl::aggregate;

namespace {

/// Whether a line of `program` is `#pragma D option defaultargs` (spaces
/// and tabs anywhere between the words), before the program is parsed: it
/// decides how $N parse.
bool hasDefaultargsPragma(std::string_view program) {
    std::size_t at = 0;
    while (at <= program.size()) {
        const std::size_t end = std::min(program.find('\n', at), program.size());
        std::string_view line = program.substr(at, end - at);
        at = end + 1;
        const auto skipBlank = [&line] {
            while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) {
                line.remove_prefix(1);
            }
        };
        // What must follow a word: anything, a blank, or no more of an
        // identifier.
        enum class Then { Any, Blank, Boundary };
        const auto word = [&line, &skipBlank](std::string_view w, Then then) {
            skipBlank();
            if (line.substr(0, w.size()) != w) {
                return false;
            }
            line.remove_prefix(w.size());
            if (line.empty() || then == Then::Any) {
                return then != Then::Blank;
            }
            const char next = line.front();
            if (then == Then::Blank) {
                return next == ' ' || next == '\t';
            }
            return std::isalnum(static_cast<unsigned char>(next)) == 0 && next != '_';
        };
        if (word("#", Then::Any) && word("pragma", Then::Blank) && word("D", Then::Blank) &&
            word("option", Then::Blank) && word("defaultargs", Then::Boundary)) {
            return true;
        }
    }
    return false;
}

/// The program of `args`: its pragmas' defaultargs decide how $N parse.
agg::Program parse(const AggregateArgs& args, std::optional<long> target = std::nullopt) {
    agg::Macros macros;
    macros.arguments = args.arguments;
    if (args.pid) {
        macros.target = *args.pid;
    }
    if (target) {
        macros.target = *target;
    }
    macros.defaultArgs =
        hasDefaultargsPragma(args.program) ||
        std::find(args.options.begin(), args.options.end(), "defaultargs") != args.options.end();
    return agg::parseProgram(args.program, macros);
}

/// What the program and the command line set: pragmas, then -x, then -q.
agg::RunOptions runOptions(const AggregateArgs& args, const agg::Program& program) {
    agg::RunOptions options;
    agg::applyOptions(program.options, options);
    std::vector<agg::OptionSetting> given;
    for (const std::string& text : args.options) {
        given.push_back(agg::optionFromText(text));
    }
    try {
        agg::applyOptions(given, options);
    } catch (const agg::ProgramError& e) {
        throw std::invalid_argument("-x: " + e.message());
    }
    options.quiet = options.quiet || args.quiet;
    return options;
}

/// dtrace -l's table of the event classes matched (or, with no trace, of the program's
/// probe descriptions as written).
void listProbes(const std::vector<agg::ProbeNames>& probes, std::ostream& out) {
    char line[512];
    std::snprintf(line, sizeof line, "%5s %10s %17s %33s %s\n", "ID", "PROVIDER", "MODULE",
                  "FUNCTION", "NAME");
    out << line;
    int id = 1;
    for (const agg::ProbeNames& probe : probes) {
        std::snprintf(line, sizeof line, "%5d %10s %17s %33s %s\n", id++, probe.provider.c_str(),
                      probe.module.c_str(), probe.function.c_str(), probe.name.c_str());
        out << line;
    }
}

/// A probe description as written, in dtrace -l's columns: "p:m:f:n", "p:n" or "n".
agg::ProbeNames describedProbe(const std::string& text) {
    const std::vector<std::string> parts = agg::probeFields(text);
    agg::ProbeNames probe;
    if (parts.size() == 4) {
        probe.provider = parts[0];
        probe.module = parts[1];
        probe.function = parts[2];
        probe.name = parts[3];
    } else if (parts.size() == 2) {
        probe.provider = parts[0];
        probe.name = parts[1];
    } else {
        probe.name = text;
    }
    return probe;
}

/// Receives nothing: for -l, which only binds.
class NoSink final : public agg::EventSink {
public:
    bool event(const agg::BoundEventClass&, const agg::Value*, std::int64_t) override {
        return true;
    }
    bool wantsEveryRecord() const override { return false; }
};

/// Where the program prints: -o FILE (appended to) or the standard output.
class ProgramOutput {
public:
    ProgramOutput(const AggregateArgs& args, std::ostream& standardOut)
        : args_(args), standardOut_(standardOut) {
        if (args.output) {
            file_.open(*args.output, std::ios::out | std::ios::app);
            if (!file_) {
                throw agg::TraceReadError("cannot write " + *args.output + ": " +
                                          std::strerror(errno));
            }
        }
    }
    std::ostream& stream() { return args_.output ? file_ : standardOut_; }
    /// Flushes; throws TraceReadError if -o FILE could not be written.
    void close() {
        stream().flush();
        if (args_.output && !file_) {
            throw agg::TraceReadError("cannot write " + *args_.output);
        }
    }

private:
    const AggregateArgs& args_;
    std::ostream& standardOut_;
    std::ofstream file_;
};

/// What is left to say once `run` is finished: the warnings on `err` (discarded records,
/// probe descriptions that matched nothing, run-time errors), the aggregations as JSON
/// (--json, `json`) on `out`; the exit status (exit()'s).
ExitStatus report(const AggregateArgs& args, const agg::ProgramRun& run, const std::string& json,
                  ProgramOutput& out, std::ostream& err) {
    const std::string& command = args.command;
    if (run.statistics.discardedEvents > 0) {
        printErrorLine(err, command + ": " + (run.statistics.discardedExact ? "" : "at least ") +
                                std::to_string(run.statistics.discardedEvents) +
                                " event records were discarded by the tracer; the "
                                "aggregations do not include them");
    }
    for (const std::string& probe : run.unmatchedProbes) {
        printErrorLine(err, command + ": warning: probe description " + probe +
                                " matched no event record");
    }
    if (run.errors > 0) {
        printErrorLine(err, command + ": warning: " + std::to_string(run.errors) +
                                " error(s): division by zero or an invalid argument (the "
                                "clause was skipped for those event records)");
    }
    if (args.json) {
        out.stream() << json << '\n';
    }
    out.close();
    if (const auto status = run.exitStatus) {
        return static_cast<ExitStatus>(static_cast<int>(*status & 0xff));
    }
    return ExitStatus::Success;
}

/// Runs `program` over `traces`, prints the result; ProgramError and TraceReadError become
/// an error line and an exit status.
ExitStatus aggregate(const AggregateArgs& args, const agg::Program& program,
                     const std::vector<std::string>& traces, std::ostream& standardOut,
                     std::ostream& err) {
    const agg::RunOptions options = runOptions(args, program);
    if (args.list) {
        std::vector<agg::ProbeNames> probes;
        if (traces.empty()) {
            for (const auto& clause : program.clauses) {
                for (const auto& probe : clause.probes) {
                    probes.push_back(describedProbe(probe.text));
                }
            }
        } else {
            agg::Binder binder(program);
            NoSink nothing;
            agg::readTracesInOrder(traces, binder, nothing);
            probes = binder.matchedProbes();
        }
        listProbes(probes, standardOut);
        return ExitStatus::Success;
    }
    ProgramOutput out(args, standardOut);
    std::string json;
    const agg::ProgramRun run =
        agg::runProgram(program, options, traces, out.stream(), args.json, &json);
    return report(args, run, json, out, err);
}

/// "LINE:COLUMN" of `at` in the piece of the program it falls in ("FILE:LINE:COLUMN" for
/// a -s FILE).
std::string located(const AggregateArgs& args, agg::Position at) {
    const ProgramOrigin* origin = nullptr;
    for (const ProgramOrigin& o : args.origins) {
        if (o.firstLine <= at.line) {
            origin = &o;
        }
    }
    const int line = origin != nullptr ? at.line - origin->firstLine + 1 : at.line;
    const std::string where = std::to_string(line) + ":" + std::to_string(at.column);
    return origin != nullptr && !origin->label.empty() ? origin->label + ":" + where : where;
}

class Interrupted : public std::runtime_error {
public:
    explicit Interrupted(const std::string& command)
        : std::runtime_error(command + ": interrupted during set-up; nothing left") {}
};

template <typename F>
ExitStatus reportingErrors(const AggregateArgs& args, std::ostream& err, F&& body) {
    try {
        return body();
    } catch (const agg::ProgramError& e) {
        printErrorLine(err, args.command + ": " + located(args, e.position()) + ": " + e.message());
        return ExitStatus::Usage;
    } catch (const std::invalid_argument& e) {
        printErrorLine(err, args.command + ": " + e.what());
        return ExitStatus::Usage;
    } catch (const agg::TraceReadError& e) {
        printErrorLine(err, args.command + ": " + e.what());
        return ExitStatus::DaemonError;
    } catch (const Interrupted& e) {
        printErrorLine(err, e.what());
        return ExitStatus::DaemonError;
    }
}

} // namespace

ExitStatus runAggregateTrace(const AggregateArgs& args, std::ostream& out, std::ostream& err) {
    return reportingErrors(args, err, [&] {
        if (args.run) {
            throw std::invalid_argument("-c runs a command to trace it live: not with --trace "
                                        "or --session");
        }
        const agg::Program program = parse(args);
        runOptions(args, program); // refuses bad options before reading
        // -l without a trace lists the program's probe descriptions.
        return aggregate(args, program,
                         args.trace ? agg::findTraces(*args.trace) : std::vector<std::string>{},
                         out, err);
    });
}

ExitStatus runAggregateSession(BusClient& bus, const AggregateArgs& args, std::ostream& out,
                               std::ostream& err) {
    return reportingErrors(args, err, [&] {
        if (args.run) {
            throw std::invalid_argument("-c runs a command to trace it live: not with --trace "
                                        "or --session");
        }
        const agg::Program program = parse(args);
        runOptions(args, program);
        const std::string& name = args.session.value();
        // A name among the caller's sessions, or a session's object path (another user's
        // session: the daemon decides, and answers AccessDenied if the caller may not).
        const std::string path = name.starts_with('/') ? name : bus.getSession(name);
        const SessionView view = sessionViewFromProperties(path, bus.sessionProperties(path));
        if (const auto note = remoteTraceNote(view)) {
            throw std::runtime_error(*note + " (" + args.command + " --trace a copy of it)");
        }
        std::string folder = view.outputPath;
        if (view.state == "active" && view.mode == "snapshot") {
            // A snapshot session cannot rotate: record a snapshot of its buffers now (as
            // `tracectl snapshot` does), then read its snapshots.
            err << "Recorded snapshot " << bus.recordSnapshot(path, 0) << '\n' << std::flush;
        } else if (view.state == "active") {
            bus.rotate(path, true, [&](const std::string& line) {
                err << line << '\n' << std::flush;
            });
            folder = (std::filesystem::path(view.outputPath) / "archives").string();
        }
        return aggregate(args, program, agg::findTraces(folder), out, err);
    });
}

namespace {

/// SIGINT, SIGTERM, SIGHUP (a closed terminal or SSH connection), SIGQUIT and SIGPIPE (the
/// reader of its output gone: `| head`) blocked for the command's lifetime (restored after),
/// so that none of them kills it half-way and leaves its temporary session recording: they
/// are polled (pending()) between steps and awaited (wait()). A write to a closed pipe then
/// fails (EPIPE) instead, and the pending SIGPIPE ends the command as Ctrl-C does.
class BlockedSignals {
public:
    BlockedSignals() {
        sigemptyset(&set_);
        sigaddset(&set_, SIGINT);
        sigaddset(&set_, SIGTERM);
        sigaddset(&set_, SIGHUP);
        sigaddset(&set_, SIGQUIT);
        sigaddset(&set_, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &set_, &previous_);
    }
    ~BlockedSignals() {
        // A signal that came after wait() stays pending; consume it rather than die of it
        // once unblocked: the command has cleaned up and is about to exit anyway.
        const timespec zero{0, 0};
        while (sigtimedwait(&set_, nullptr, &zero) > 0) {
        }
        pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
    }
    BlockedSignals(const BlockedSignals&) = delete;
    BlockedSignals& operator=(const BlockedSignals&) = delete;

    bool pending() const {
        sigset_t pending;
        sigpending(&pending);
        for (const int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) {
            if (sigismember(&pending, signal) == 1) {
                return true;
            }
        }
        return false;
    }
    /// Why wait() returned.
    enum class Woken { Signal, Timeout, Told };
    /// Waits for one of the signals (at once if one is pending), or `seconds` if given, or
    /// until `keep_waiting` (asked every 100 ms, and at the end) says false.
    Woken wait(std::optional<double> seconds, const std::function<bool()>& keepWaiting) const {
        const auto end = seconds ? std::chrono::steady_clock::now() +
                                       std::chrono::duration_cast<std::chrono::nanoseconds>(
                                           std::chrono::duration<double>(*seconds))
                                 : std::chrono::steady_clock::time_point::max();
        for (;;) {
            const auto now = std::chrono::steady_clock::now();
            const auto ns = std::clamp<std::int64_t>(
                std::chrono::duration_cast<std::chrono::nanoseconds>(end - now).count(), 0,
                100000000);
            const timespec timeout{static_cast<time_t>(ns / 1000000000),
                                   static_cast<long>(ns % 1000000000)};
            if (sigtimedwait(&set_, nullptr, &timeout) > 0) {
                return Woken::Signal;
            }
            if (errno != EINTR && errno != EAGAIN) {
                return Woken::Timeout;
            }
            if (!keepWaiting()) {
                return Woken::Told;
            }
            if (std::chrono::steady_clock::now() >= end) {
                return Woken::Timeout;
            }
        }
    }

private:
    sigset_t set_;
    sigset_t previous_;
};

/// The temporary session and its folder, both gone when this goes.
class TemporarySession {
public:
    TemporarySession(BusClient& bus, std::filesystem::path folder)
        : bus_(bus), folder_(std::move(folder)) {}
    ~TemporarySession() {
        if (!path.empty()) {
            try {
                bus_.destroy(path);
            } catch (...) {
                // Reported by nothing: the daemon is gone or refuses; the folder still goes.
            }
        }
        std::error_code ec;
        std::filesystem::remove_all(folder_, ec);
    }
    TemporarySession(const TemporarySession&) = delete;
    TemporarySession& operator=(const TemporarySession&) = delete;

    std::string path; ///< set once created

private:
    BusClient& bus_;
    std::filesystem::path folder_;
};

/// dtrace -c: the command, started at once and stopped on its first instruction, as
/// illumos libproc's Pcreate() stops the process dtrace -c creates as its exec returns:
/// the child asks to be traced (PTRACE_TRACEME) and execs, and the kernel stops it with
/// SIGTRAP on exec's return (ptrace(2)). $target is then its pid and /proc/PID/exe its
/// executable, whose probes are defined before release() lets it run (PTRACE_DETACH).
/// Killed if never released. `stdout_to_stderr`: its standard output is tracectl's
/// standard error (--json: tracectl's standard output is one JSON document, which the
/// command's output must not break). Throws TraceReadError ("cannot run COMMAND: REASON")
/// if it cannot be started (the child writes exec's errno on a close-on-exec pipe).
class TracedCommand {
public:
    TracedCommand(const std::string& command, bool stdoutToStderr) {
        std::vector<std::string> words;
        std::istringstream split(command);
        for (std::string word; split >> word;) {
            words.push_back(word);
        }
        if (words.empty()) {
            throw std::invalid_argument("-c needs a command");
        }
        program_ = words.front();
        std::vector<char*> argv;
        for (std::string& word : words) {
            argv.push_back(word.data());
        }
        argv.push_back(nullptr);
        int failed[2]; // the child's errno if exec fails; closed by a successful exec
        if (pipe2(failed, O_CLOEXEC) != 0) {
            throw agg::TraceReadError("cannot run " + program_ + ": " + std::strerror(errno));
        }
        pid_ = fork();
        if (pid_ == 0) {
            close(failed[0]);
            sigset_t none;
            sigemptyset(&none);
            pthread_sigmask(SIG_SETMASK, &none, nullptr);
            if ((stdoutToStderr && dup2(STDERR_FILENO, STDOUT_FILENO) < 0) ||
                ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) {
                const int error = errno;
                (void)!write(failed[1], &error, sizeof error);
                _exit(127);
            }
            execvp(argv[0], argv.data());
            const int error = errno;
            (void)!write(failed[1], &error, sizeof error);
            _exit(127);
        }
        const int error = errno;
        close(failed[1]);
        if (pid_ < 0) {
            close(failed[0]);
            throw agg::TraceReadError("cannot run " + program_ + ": " + std::strerror(error));
        }
        // Its stop at exec's return (SIGTRAP), or its end. A signal it gets before its
        // exec (say, the terminal's Ctrl-C: it is in tracectl's process group) stops it
        // too, being traced: passed on, it has its usual effect.
        int status = 0;
        for (;;) {
            if (waitpid(pid_, &status, 0) < 0) {
                if (errno == EINTR) {
                    continue;
                }
                status = 0;
                break;
            }
            if (!WIFSTOPPED(status) || WSTOPSIG(status) == SIGTRAP) {
                break;
            }
            ptrace(PTRACE_CONT, pid_, nullptr,
                   reinterpret_cast<void*>(static_cast<std::uintptr_t>(WSTOPSIG(status))));
        }
        // Closed by the exec, or by the child's end after writing exec's errno.
        int written = 0;
        ssize_t got = 0;
        if (!WIFSTOPPED(status)) {
            do {
                got = read(failed[0], &written, sizeof written);
            } while (got < 0 && errno == EINTR);
        }
        close(failed[0]);
        if (WIFSTOPPED(status)) {
            return; // at its first instruction
        }
        done_ = true;
        throw agg::TraceReadError("cannot run " + program_ + ": " +
                                  (got == static_cast<ssize_t>(sizeof written)
                                       ? std::strerror(written)
                                       : "it ended before its first instruction"));
    }
    ~TracedCommand() {
        // Still running when tracing ended first (Ctrl-C, --duration, exit(), the reader
        // of the output gone), or never released: killed, as dtrace(1M) kills the process
        // it created when it exits (libdtrace dt_proc.c releases a created process with
        // PRELEASE_KILL).
        if (pid_ > 0 && !exited()) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
    }
    TracedCommand(const TracedCommand&) = delete;
    TracedCommand& operator=(const TracedCommand&) = delete;

    long pid() const noexcept { return pid_; }
    /// Lets the command run from its first instruction.
    void release() {
        if (!released_) {
            released_ = true;
            // ESRCH: killed meanwhile; exited() says so.
            ptrace(PTRACE_DETACH, pid_, nullptr, nullptr);
        }
    }
    /// Whether it has ended (reaped then).
    bool exited() {
        if (done_) {
            return true;
        }
        int status = 0;
        done_ =
            waitpid(pid_, &status, WNOHANG) == pid_ && (WIFEXITED(status) || WIFSIGNALED(status));
        return done_;
    }

private:
    std::string program_;
    pid_t pid_ = -1;
    bool released_ = false;
    bool done_ = false;
};

/// Now, in ns from the Unix epoch: the clock LTTng's traces are on (their clock offsets
/// make a record's time ns from the epoch).
std::int64_t nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

/// Why execvp(3) would fail to run `program` (searched in $PATH unless it has a '/'): 0 if
/// it would find an executable regular file (EACCES, as execvp, if one was found but not
/// executable, or a folder).
int execvpError(const std::string& program) {
    if (program.empty()) {
        return ENOENT;
    }
    const auto check = [](const std::string& path) {
        struct stat st {};
        if (stat(path.c_str(), &st) != 0) {
            return errno;
        }
        if (!S_ISREG(st.st_mode) || access(path.c_str(), X_OK) != 0) {
            return EACCES;
        }
        return 0;
    };
    if (program.find('/') != std::string::npos) {
        return check(program);
    }
    const char* path = std::getenv("PATH");
    const std::string folders = path != nullptr ? path : "/bin:/usr/bin";
    int error = ENOENT;
    std::size_t at = 0;
    while (at <= folders.size()) {
        const std::size_t end = std::min(folders.find(':', at), folders.size());
        const std::string folder = folders.substr(at, end - at);
        at = end + 1;
        const int e = check((folder.empty() ? std::string(".") : folder) + "/" + program);
        if (e == 0) {
            return 0;
        }
        if (e == EACCES) {
            error = EACCES;
        }
    }
    return error;
}

} // namespace

/// Whether process `pid` has exited: gone (ESRCH), or a zombie its parent has not reaped
/// yet (/proc/PID/stat's state Z or X).
static bool processGone(pid_t pid) {
    if (kill(pid, 0) != 0 && errno == ESRCH) {
        return true;
    }
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const std::size_t close = text.rfind(')');
    return close != std::string::npos && close + 2 < text.size() &&
           (text[close + 2] == 'Z' || text[close + 2] == 'X');
}

/// Whether standard output is a pipe or socket whose reader is gone (poll(2) says POLLERR
/// or POLLHUP of its write end): nothing printed could be read. A terminal or a file is
/// never gone; nor is stdout when the program writes to -o FILE.
static bool outputGone(const AggregateArgs& args) {
    struct stat st {};
    if (args.output || fstat(STDOUT_FILENO, &st) != 0 ||
        !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
        return false;
    }
    pollfd out{STDOUT_FILENO, 0, 0};
    return poll(&out, 1, 0) == 1 && (out.revents & (POLLERR | POLLHUP)) != 0;
}

/// Whether tracing ends because -c's command exited, -p's process is gone (said on `err`),
/// as dtrace(1M)'s does, or the reader of the output is gone (output_gone; the output's
/// write then fails, saying so, as with a pipe closed while printing).
static bool targetEnded(const AggregateArgs& args, std::optional<TracedCommand>& command,
                        std::ostream& err) {
    if (outputGone(args)) {
        return true;
    }
    if (command && command->exited()) {
        err << args.command << ": pid " << command->pid() << " has exited\n" << std::flush;
        return true;
    }
    // A process that exists, another user's, answers EPERM.
    if (args.pid && processGone(static_cast<pid_t>(*args.pid))) {
        err << args.command << ": pid " << *args.pid << " has exited\n" << std::flush;
        return true;
    }
    return false;
}

/// Whether `program` reads the recording thread: pid, tid, execname or self-> variables.
static bool usesThreadBuiltins(const agg::Program& program) {
    for (const agg::VariableDeclaration& v : program.variables) {
        if (v.scope == agg::VariableScope::ThreadLocal) {
            return true;
        }
    }
    for (const agg::Clause& clause : program.clauses) {
        for (const agg::FieldReference& r : clause.references) {
            if (!r.payload && (r.name == "pid" || r.name == "tid" || r.name == "execname")) {
                return true;
            }
        }
    }
    return false;
}

/// Whether some clause of `program` names the context field `field` (stack() names
/// callstack_kernel, ustack() callstack_user: aggregate/parser.cpp).
static bool referencesField(const agg::Program& program, std::string_view field) {
    for (const agg::Clause& clause : program.clauses) {
        for (const agg::FieldReference& r : clause.references) {
            if (!r.payload && r.name == field) {
                return true;
            }
        }
    }
    return false;
}

/// Learns process `pid`'s executable file mappings, as /proc/PID/maps shows them now, into
/// `names`: ustack()'s frames of a process that is gone by the time the kernel consumer
/// converts its records (whose tracectl_vm_map events it then cannot write) are named all
/// the same. Nothing if the process is gone.
static void learnTargetMaps(long pid, symbols::StackNames& names) {
    const auto tgid = static_cast<std::int32_t>(pid);
    for (symbols::ProcMapping& m : symbols::readProcMaps(tgid)) {
        names.learnMapping(tgid, m.start, m.end, m.pgoff, std::move(m.path));
    }
}

std::optional<std::string> liveTargetProblem(const AggregateArgs& args) {
    if (args.run) {
        std::istringstream split(*args.run);
        std::string program;
        split >> program;
        if (!program.empty()) {
            if (const int error = execvpError(program)) {
                return "cannot run " + program + ": " + std::strerror(error);
            }
        }
    }
    // kill(PID, 0) sends nothing: it asks whether PID exists (EPERM: it does, another
    // user's). A PID beyond pid_t exists nowhere (and must not wrap to a process group).
    if (args.pid && (*args.pid > std::numeric_limits<pid_t>::max() ||
                     (kill(static_cast<pid_t>(*args.pid), 0) != 0 && errno == ESRCH))) {
        return "cannot grab pid " + std::to_string(*args.pid) + ": " + std::strerror(ESRCH);
    }
    return std::nullopt;
}

/// An aggregation-only program of the ip provider (agg::ip_aggregation_plan) run over an
/// in-kernel aggregation (Manager.CreateIpAggregation), as dtrace(1M) and bpftrace aggregate
/// in the kernel: no session, no trace, nothing read while tracing. BEGIN runs once the
/// kernel counts; at the end (Ctrl-C, --duration, -c's or -p's process gone) the rows are
/// read once and run through the program, then END.
static ExitStatus runIpAggregation(BusClient& bus, const AggregateArgs& args,
                                   const agg::Program& program, const agg::RunOptions& options,
                                   const agg::IpAggregationPlan& plan,
                                   std::optional<TracedCommand>& command,
                                   const BlockedSignals& signals, std::ostream& out,
                                   std::ostream& err) {
    std::vector<std::string> probes;
    if (plan.send) {
        probes.emplace_back("send");
    }
    if (plan.receive) {
        probes.emplace_back("receive");
    }
    ProgramOutput programOut(args, out);
    agg::ChunkedRun run(program, options, programOut.stream(), args.json);
    if (signals.pending()) {
        throw Interrupted(args.command);
    }
    const std::uint64_t handle = bus.createIpAggregation(probes, plan.fields);
    // Closed however this ends (the daemon also closes it when this connection goes).
    const auto close = [&bus](const std::uint64_t* h) {
        try {
            bus.closeIpAggregation(*h);
        } catch (const sdbus::Error&) {
            // Gone already: the daemon restarted, or closed it with the connection.
        }
    };
    const std::unique_ptr<const std::uint64_t, decltype(close)> closer(&handle, close);
    std::string described;
    for (const std::string& p : probes) {
        described += (described.empty() ? "ip:::" : ", ip:::") + p;
    }
    err << "Tracing " << described << " (aggregating in the kernel); "
        << (args.duration ? "for " + formatSeconds(*args.duration) + " s or " : "")
        << "Ctrl-C to end.\n"
        << std::flush;
    // BEGIN once the probes count, as dtrace(1M) fires it once they are enabled: what it
    // prints ("Tracing... Hit Ctrl-C") is true when it appears. Packets counted during
    // BEGIN are only read after END's turn comes, so no clause sees them before BEGIN.
    run.begin(nowNs());
    if (!run.exitStatus()) {
        if (command) {
            command->release();
        }
        const auto keepWaiting = [&] { return !targetEnded(args, command, err); };
        signals.wait(args.duration, keepWaiting);
        const BusClient::IpAggregationRows read = bus.readIpAggregation(handle);
        std::vector<std::pair<tracectl_ip_record, std::uint64_t>> rows;
        rows.reserve(read.rows.size());
        for (const auto& [bytes, count] : read.rows) {
            if (bytes.size() != sizeof(tracectl_ip_record)) {
                throw agg::TraceReadError("the daemon's ip aggregation rows are " +
                                          std::to_string(bytes.size()) + " bytes, not " +
                                          std::to_string(sizeof(tracectl_ip_record)) +
                                          " (a daemon of another version?)");
            }
            tracectl_ip_record record{};
            std::memcpy(&record, bytes.data(), sizeof record);
            rows.emplace_back(record, count);
        }
        if (read.dropped > 0) {
            printErrorLine(err, args.command + ": " + std::to_string(read.dropped) +
                                    " packets were not counted: the kernel's aggregation "
                                    "was full (65,536 distinct values of the fields the "
                                    "program reads, counted over every packet of its probes, "
                                    "before its predicates)");
        }
        run.feedIpRows(rows, 0, nowNs());
    }
    std::string json;
    const agg::ProgramRun result = run.finish(&json);
    const ExitStatus status = report(args, result, json, programOut, err);
    // As a recording run: no packet on the probes at all is a failure (the result
    // says nothing), unless exit() said otherwise.
    if (result.statistics.matchedRecords == 0 && !result.exitStatus) {
        printErrorLine(err, args.command + ": no probe description matched an event "
                                           "record: nothing was aggregated");
        return ExitStatus::DaemonError;
    }
    return status;
}

ExitStatus runAggregateLive(BusClient& bus, const AggregateArgs& args, std::ostream& out,
                            std::ostream& err) {
    const BlockedSignals signals;
    return reportingErrors(args, err, [&]() -> ExitStatus {
        if (const auto problem = liveTargetProblem(args)) {
            throw agg::TraceReadError(*problem);
        }
        std::optional<TracedCommand> command;
        if (args.run) {
            command.emplace(*args.run, args.json);
        }
        const agg::Program program =
            parse(args, command ? std::optional<long>(command->pid()) : std::nullopt);
        const agg::RunOptions options = runOptions(args, program);
        if (const auto plan = agg::ipAggregationPlan(program)) {
            return runIpAggregation(bus, args, program, options, *plan, command, signals, out, err);
        }
        std::vector<std::string> patterns;
        for (const auto& clause : program.clauses) {
            for (const auto& probe : clause.probes) {
                if (probe.kind == agg::ProbeKind::Event && !probe.user &&
                    std::find(patterns.begin(), patterns.end(), probe.pattern) == patterns.end()) {
                    patterns.push_back(probe.pattern);
                }
            }
        }
        // Which probes are kernel events (live_probe_domains: the ip provider's, system:event
        // as tracefs lists them, or the names lttng-modules gives them); the rest are UST.
        // The kernel's list is asked for once, and only if some probe may be a kernel event.
        std::vector<KernelTracepoint> kernelTracepoints;
        bool kernelListed = false;
        std::vector<std::pair<std::string, Domain>> enabled;
        for (const std::string& pattern : patterns) {
            if (!kernelListed && pattern.rfind("ip:", 0) != 0) {
                kernelListed = true;
                try {
                    kernelTracepoints = bus.listKernelTracepoints();
                } catch (const sdbus::Error&) {
                    // No kernel domain for this caller (rights, tracefs): UST only.
                }
            }
            const std::vector<Domain> domains = liveProbeDomains(pattern, kernelTracepoints);
            if (domains.empty()) {
                // As dtrace(1M) refuses a description that matches no probe.
                throw agg::TraceReadError("probe description " + pattern +
                                          " does not match any probes (no such kernel "
                                          "tracepoint: tracectl list -k)");
            }
            for (const Domain domain : domains) {
                enabled.emplace_back(pattern, domain);
            }
        }
        // What the probe descriptions tell of the fields each clause reads is checked now,
        // as dtrace(1M) compiles a program: before any session, probe or run of -c's
        // command (the binder would only find it in the records).
        agg::checkProbeFields(program, [&](const agg::ProbeDescription& probe) {
            return std::any_of(enabled.begin(), enabled.end(), [&](const auto& e) {
                return e.first == probe.pattern && e.second == Domain::Kernel;
            });
        });
        // The probes of processes (pid$target::f:entry, PROVIDER$target:::NAME): userspace
        // probes of the kernel domain on each process's executable, defined while a -c
        // command waits at its first instruction.
        std::map<std::string, std::string> locations; // event -> userspace probe location
        std::map<std::string, std::string> written;   // event -> its probe description
        for (const UserProbeEnabling& e : userProbeEnablings(program)) {
            locations.emplace(e.event, e.location);
            written.emplace(e.event, e.description);
            enabled.emplace_back(e.event, Domain::Kernel);
        }
        // Only BEGIN, END, ERROR and timers: nothing to record, and no session. dtrace(1)
        // runs such a program all the same, until Ctrl-C, exit(), --duration or the end of
        // -c's command, its timers firing on the clock meanwhile.
        const bool records = !enabled.empty();
        std::optional<TemporarySession> temporary;
        std::string output;
        std::string name;
        const auto step = [&] {
            if (signals.pending()) {
                throw Interrupted(args.command);
            }
        };
        if (records) {
            const char* tmpdir = std::getenv("TMPDIR");
            std::string templ =
                std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") +
                "/tracectl-aggregate-XXXXXX";
            if (mkdtemp(templ.data()) == nullptr) {
                throw agg::TraceReadError("cannot make a folder for the trace: " +
                                          std::string(std::strerror(errno)));
            }
            temporary.emplace(bus, templ);
            output = templ + "/trace";
            name = args.command + "-" + std::to_string(getpid()) + "-" +
                   std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                      std::chrono::system_clock::now().time_since_epoch())
                                      .count());
            step();
            temporary->path = bus.createSession(name, {{"output-path", output}});
        }
        const std::string noSession;
        const std::string& sessionPath = temporary ? temporary->path : noSession;
        bool kernelChannel = false;
        for (const auto& [pattern, domain] : enabled) {
            step();
            if (domain == Domain::Kernel) {
                if (!kernelChannel) {
                    bus.addChannel(Domain::Kernel, sessionPath, "aggregate", {}, std::nullopt, {});
                    kernelChannel = true;
                }
                const auto location = locations.find(pattern);
                bus.enableKernelEvents(sessionPath, "aggregate", pattern, false, std::nullopt,
                                       location != locations.end() ? location->second
                                                                   : std::string());
            } else {
                bus.enableEvents(sessionPath, "", pattern, std::nullopt, false, {});
            }
        }
        // The built-ins that read the recording thread (pid, tid, execname, and self->
        // variables, keyed by tid) need its context fields in the records: the session
        // records them only for a program that uses them. A process's probe counts only
        // that process's records (the binder tests their pid).
        if (!locations.empty() && !usesThreadBuiltins(program)) {
            step();
            bus.addContext(Domain::Kernel, sessionPath, "aggregate", "pid");
        }
        if (usesThreadBuiltins(program)) {
            const bool ust = std::any_of(enabled.begin(), enabled.end(),
                                         [](const auto& e) { return e.second == Domain::Ust; });
            for (const char* type : {"vpid", "vtid", "procname"}) {
                step();
                if (ust) {
                    bus.addContext(Domain::Ust, sessionPath, "", type);
                }
            }
            for (const char* type : {"pid", "procname"}) { // a kernel channel has tid
                step();
                if (kernelChannel) {
                    bus.addContext(Domain::Kernel, sessionPath, "aggregate", type);
                }
            }
            // The kernel consumer takes a thread's name at event time from the scheduler's
            // switches and execs (tracectl-kernel(7)); without them, from /proc, where a
            // thread gone by then has none.
            if (kernelChannel) {
                for (const char* tracepoint : {"sched:sched_switch", "sched:sched_process_exec"}) {
                    step();
                    try {
                        bus.enableKernelEvents(sessionPath, "aggregate", tracepoint, false,
                                               std::nullopt);
                    } catch (const sdbus::Error& e) {
                        // The program's own probes enable it already.
                        if (e.getName() != "org.tracectl.Tracing1.Error.EventRuleExists") {
                            throw;
                        }
                    }
                }
            }
        }
        // stack() and ustack() read lttng-modules' call stack contexts: the channel's
        // tracefs instance records them (options/stacktrace, options/userstacktrace).
        if (kernelChannel) {
            for (const auto& [field, type] : {std::pair{"callstack_kernel", "callstack-kernel"},
                                              std::pair{"callstack_user", "callstack-user"}}) {
                if (referencesField(program, field)) {
                    step();
                    bus.addContext(Domain::Kernel, sessionPath, "aggregate", type);
                }
            }
        }
        // BEGIN fires before any other probe (dtrace(1M)): before the session starts, at
        // the traces' clock (ns from the Unix epoch, as LTTng's clock offsets make it).
        ProgramOutput programOut(args, out);
        agg::ChunkedRun run(program, options, programOut.stream(), args.json);
        run.begin(nowNs());
        bool started = false;
        bool destroyed = false;
        bool incomplete = false;
        bool anyTrace = false;
        std::optional<SessionChunks> chunks;
        if (records) {
            chunks.emplace(bus, sessionPath, output);
        }
        const auto isUnknown = [](const sdbus::Error& e) {
            return e.getName() == "org.freedesktop.DBus.Error.UnknownObject";
        };
        const auto feed = [&](const std::vector<std::string>& traces) {
            anyTrace = anyTrace || !traces.empty();
            run.feed(traces);
        };
        bool running = false; // the wait below began
        if (!run.exitStatus()) {
            step();
            if (records) {
                bus.start(sessionPath);
                started = true;
            }
            step();
            // ustack(): the target's mappings, at its first instruction (its executable
            // and the dynamic loader) and at each switch below while it runs.
            const bool targetMaps = referencesField(program, "callstack_user");
            const auto learnMaps = [&] {
                if (targetMaps && (command || args.pid)) {
                    learnTargetMaps(command ? command->pid() : *args.pid, run.stackNames());
                }
            };
            learnMaps();
            if (command) {
                command->release();
            }
            running = true;
            std::string described;
            for (const auto& [pattern, domain] : enabled) {
                const auto asWritten = written.find(pattern);
                described += (described.empty() ? "" : ", ") +
                             (asWritten != written.end() ? asWritten->second : pattern) +
                             (domain == Domain::Kernel ? " (kernel)" : " (ust)");
            }
            err << (records ? "Tracing " + described + " in session " + name
                            : std::string("No probe to trace: running BEGIN, the timers and END"))
                << "; " << (args.duration ? "for " + formatSeconds(*args.duration) + " s or " : "")
                << "Ctrl-C to end.\n"
                << std::flush;
            // Every switch period, the chunk recorded so far is closed and run: the program
            // prints within the switch rate, as dtrace(1M) does.
            const auto period = std::chrono::nanoseconds(agg::switchPeriodNs(options));
            const auto begun = std::chrono::steady_clock::now();
            const auto deadline =
                args.duration ? begun + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                            std::chrono::duration<double>(*args.duration))
                              : std::chrono::steady_clock::time_point::max();
            auto next = begun + period;
            auto checked = begun;
            // The session may end without us: its consumer dies (state "error"), someone
            // stops or destroys it. Then the wait ends, saying why. Asked once a second.
            const auto keepWaiting = [&] {
                if (targetEnded(args, command, err)) {
                    return false;
                }
                const auto now = std::chrono::steady_clock::now();
                if (now - checked < std::chrono::seconds(1)) {
                    return true;
                }
                checked = now;
                if (!records) {
                    return true;
                }
                try {
                    const SessionView view =
                        sessionViewFromProperties(sessionPath, bus.sessionProperties(sessionPath));
                    if (view.state != "active" && view.state != "rotating") {
                        printErrorLine(err, args.command + ": session " + name +
                                                " ended while tracing (state " + view.state +
                                                "); the results may be incomplete");
                        incomplete = true;
                        return false;
                    }
                } catch (const sdbus::Error& e) {
                    if (isUnknown(e)) {
                        destroyed = true;
                        return false;
                    }
                    // Anything else (a slow daemon): keep tracing.
                }
                return true;
            };
            while (!run.exitStatus()) {
                const auto wake = std::min(next, deadline);
                const double seconds =
                    std::chrono::duration<double>(wake - std::chrono::steady_clock::now()).count();
                if (signals.wait(std::max(seconds, 0.0), keepWaiting) !=
                        BlockedSignals::Woken::Timeout ||
                    std::chrono::steady_clock::now() >= deadline) {
                    break;
                }
                learnMaps();
                // Records after this instant go to the next chunk: the timers due by then
                // fire once this chunk is read, even if no record came.
                const std::int64_t boundary = nowNs();
                try {
                    if (chunks) {
                        feed(chunks->next());
                    }
                } catch (const sdbus::Error& e) {
                    if (isUnknown(e)) {
                        destroyed = true;
                    } else {
                        printErrorLine(err, args.command + ": cannot rotate session " + name +
                                                ": " + e.getMessage() +
                                                "; the results may be incomplete");
                        incomplete = true;
                    }
                    break;
                }
                run.advanceTo(boundary);
                // A chunk read slower than the switch rate: the next one at once.
                next = std::max(next + period, std::chrono::steady_clock::now());
            }
        }
        const std::int64_t ended = nowNs();
        if (started && !destroyed) {
            try {
                bus.stop(sessionPath);
            } catch (const sdbus::Error& e) {
                if (isUnknown(e)) {
                    destroyed = true;
                } else if (!incomplete) {
                    printErrorLine(err, args.command + ": cannot stop session " + name + ": " +
                                            e.getMessage() +
                                            "; aggregating what it recorded, the results may "
                                            "be incomplete");
                    incomplete = true;
                }
            }
        }
        if (destroyed) {
            printErrorLine(err, args.command + ": session " + name +
                                    " was destroyed while tracing (by someone else); "
                                    "nothing to aggregate");
            temporary->path.clear();
            return ExitStatus::DaemonError;
        }
        if (running && !run.exitStatus()) {
            // The last chunk, from the last rotation to the stop: complete once Stop has
            // answered, read where it is (rotating it out would make the consumer begin yet
            // another chunk in the folder about to be deleted).
            if (started) {
                feed(chunks->rest());
            }
            run.advanceTo(ended);
        }
        if (started && !anyTrace) {
            for (const auto& [pattern, domain] : enabled) {
                const auto asWritten = written.find(pattern);
                printErrorLine(err, args.command + ": probe description " +
                                        (asWritten != written.end() ? asWritten->second : pattern) +
                                        " matched no event record");
            }
        }
        std::string json;
        const agg::ProgramRun result = run.finish(&json);
        const ExitStatus status = report(args, result, json, programOut, err);
        // Every probe description matched nothing recorded: the (empty) result says nothing
        // of what was asked, so it is a failure (issue 40, B12), unless exit() said
        // otherwise. Some matched: the others were warned of (report()).
        std::set<std::string> described;
        for (const auto& clause : program.clauses) {
            for (const auto& probe : clause.probes) {
                if (probe.kind == agg::ProbeKind::Event) {
                    described.insert(probe.text);
                }
            }
        }
        const bool nothing =
            started && !described.empty() && (!anyTrace || result.statistics.matchedRecords == 0);
        if (nothing && !result.exitStatus && !incomplete) {
            printErrorLine(err, args.command + ": no probe description matched an event "
                                               "record: nothing was aggregated");
            return ExitStatus::DaemonError;
        }
        return incomplete ? ExitStatus::DaemonError : status;
    });
}

} // namespace tracectl::cli
