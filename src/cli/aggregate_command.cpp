#include "aggregate_command.hpp"

#include "aggregate/aggregation_set.hpp"
#include "aggregate/binding.hpp"
#include "aggregate/json_output.hpp"
#include "aggregate/parser.hpp"
#include "aggregate/text_output.hpp"
#include "aggregate/trace_reader.hpp"
#include "bus_client.hpp"
#include "error_report.hpp"
#include "quantities.hpp"
#include "session_view.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fnmatch.h>
#include <functional>
#include <ostream>
#include <pthread.h>
#include <sdbus-c++/Error.h>
#include <stdexcept>
#include <unistd.h>

namespace tracectl::cli {

namespace agg = tracectl::aggregate;

namespace {

/// Runs `program` over `traces`, prints the result; ProgramError and TraceReadError become
/// an error line and an exit status.
ExitStatus aggregate(const agg::Program& program, const std::vector<std::string>& traces, bool json,
                     std::ostream& out, std::ostream& err) {
    agg::Binder binder(program);
    agg::AggregationSet aggregations(program);
    const agg::ReadStatistics statistics = agg::read_traces(traces, program, binder, aggregations);
    if (statistics.discarded_events > 0) {
        print_error_line(err, std::string("aggregate: ") +
                                  (statistics.discarded_exact ? "" : "at least ") +
                                  std::to_string(statistics.discarded_events) +
                                  " event records were discarded by the tracer; the "
                                  "aggregations do not include them");
    }
    for (const std::string& probe : binder.unmatched_probes()) {
        print_error_line(err, "aggregate: warning: probe description " + probe +
                                  " matched no event record");
    }
    if (aggregations.errors > 0) {
        print_error_line(err, "aggregate: warning: " + std::to_string(aggregations.errors) +
                                  " error(s): division by zero (the clause was skipped "
                                  "for those event records)");
    }
    if (json) {
        nlohmann::json document = agg::to_json(aggregations);
        document["discarded"] = statistics.discarded_events;
        out << agg::json_text(document) << '\n';
    } else {
        agg::print_text(out, aggregations);
    }
    return ExitStatus::success;
}

class Interrupted : public std::runtime_error {
public:
    Interrupted() : std::runtime_error("aggregate: interrupted during set-up; nothing left") {}
};

template <typename F>
ExitStatus reporting_errors(std::ostream& err, F&& body) {
    try {
        return body();
    } catch (const agg::ProgramError& e) {
        print_error_line(err, std::string("aggregate: ") + e.what());
        return ExitStatus::usage;
    } catch (const agg::TraceReadError& e) {
        print_error_line(err, std::string("aggregate: ") + e.what());
        return ExitStatus::daemon_error;
    } catch (const Interrupted& e) {
        print_error_line(err, e.what());
        return ExitStatus::daemon_error;
    }
}

} // namespace

ExitStatus run_aggregate_trace(const AggregateArgs& args, std::ostream& out, std::ostream& err) {
    return reporting_errors(err, [&] {
        const agg::Program program = agg::parse_program(args.program);
        return aggregate(program, agg::find_traces(args.trace.value()), args.json, out, err);
    });
}

ExitStatus run_aggregate_session(BusClient& bus, const AggregateArgs& args, std::ostream& out,
                                 std::ostream& err) {
    return reporting_errors(err, [&] {
        const agg::Program program = agg::parse_program(args.program);
        const std::string& name = args.session.value();
        // A name among the caller's sessions, or a session's object path (another user's
        // session: the daemon decides, and answers AccessDenied if the caller may not).
        const std::string path = name.starts_with('/') ? name : bus.get_session(name);
        const SessionView view = session_view_from_properties(path, bus.session_properties(path));
        if (const auto note = remote_trace_note(view)) {
            throw std::runtime_error(*note + " (aggregate --trace a copy of it)");
        }
        std::string folder = view.output_path;
        if (view.state == "active" && view.mode == "snapshot") {
            // A snapshot session cannot rotate: record a snapshot of its buffers now (as
            // `tracectl snapshot` does), then read its snapshots.
            err << "Recorded snapshot " << bus.record_snapshot(path, 0) << '\n' << std::flush;
        } else if (view.state == "active") {
            bus.rotate(path, true, [&](const std::string& line) {
                err << line << '\n' << std::flush;
            });
            folder = (std::filesystem::path(view.output_path) / "archives").string();
        }
        return aggregate(program, agg::find_traces(folder), args.json, out, err);
    });
}

namespace {

/// SIGINT, SIGTERM, SIGHUP (a closed terminal or SSH connection) and SIGQUIT blocked for the
/// command's lifetime (restored after), so that none of them kills it half-way and leaves its
/// temporary session behind: they are polled (pending()) between steps and awaited (wait()).
class BlockedSignals {
public:
    BlockedSignals() {
        sigemptyset(&set_);
        sigaddset(&set_, SIGINT);
        sigaddset(&set_, SIGTERM);
        sigaddset(&set_, SIGHUP);
        sigaddset(&set_, SIGQUIT);
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
        for (const int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
            if (sigismember(&pending, signal) == 1) {
                return true;
            }
        }
        return false;
    }
    /// Waits for one of the signals, or `seconds` if given, or until `keep_waiting` (asked
    /// once a second) says false.
    void wait(std::optional<double> seconds, const std::function<bool()>& keep_waiting) const {
        const auto end = seconds ? std::chrono::steady_clock::now() +
                                       std::chrono::duration_cast<std::chrono::nanoseconds>(
                                           std::chrono::duration<double>(*seconds))
                                 : std::chrono::steady_clock::time_point::max();
        for (;;) {
            const auto now = std::chrono::steady_clock::now();
            if (now >= end) {
                return;
            }
            const auto ns = std::min<std::int64_t>(
                std::chrono::duration_cast<std::chrono::nanoseconds>(end - now).count(),
                1000000000);
            const timespec timeout{static_cast<time_t>(ns / 1000000000),
                                   static_cast<long>(ns % 1000000000)};
            if (sigtimedwait(&set_, nullptr, &timeout) > 0) {
                return;
            }
            if (errno != EINTR && errno != EAGAIN) {
                return;
            }
            if (!keep_waiting()) {
                return;
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

} // namespace

ExitStatus run_aggregate_live(BusClient& bus, const AggregateArgs& args, std::ostream& out,
                              std::ostream& err) {
    const BlockedSignals signals;
    return reporting_errors(err, [&]() -> ExitStatus {
        const agg::Program program = agg::parse_program(args.program);
        std::vector<std::string> patterns;
        for (const auto& clause : program.clauses) {
            for (const auto& probe : clause.probes) {
                if (std::find(patterns.begin(), patterns.end(), probe.pattern) == patterns.end()) {
                    patterns.push_back(probe.pattern);
                }
            }
        }
        // Which probes are kernel tracepoints (system:event as tracefs lists them, or the
        // ip provider's); the rest are UST.
        std::vector<std::string> kernel_tracepoints;
        bool kernel_listed = false;
        std::vector<std::pair<std::string, Domain>> enabled;
        for (const std::string& pattern : patterns) {
            Domain domain = Domain::ust;
            if (pattern.rfind("ip:", 0) == 0) {
                domain = Domain::kernel;
            } else if (pattern.find(':') != std::string::npos) {
                if (!kernel_listed) {
                    kernel_listed = true;
                    try {
                        for (const auto& tp : bus.list_kernel_tracepoints()) {
                            kernel_tracepoints.push_back(tp.system + ":" + tp.event);
                        }
                    } catch (const sdbus::Error&) {
                        // No kernel domain for this caller (rights, tracefs): UST only.
                    }
                }
                for (const std::string& tp : kernel_tracepoints) {
                    if (fnmatch(pattern.c_str(), tp.c_str(), 0) == 0) {
                        domain = Domain::kernel;
                        break;
                    }
                }
            }
            enabled.emplace_back(pattern, domain);
        }
        const char* tmpdir = std::getenv("TMPDIR");
        std::string templ = std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") +
                            "/tracectl-aggregate-XXXXXX";
        if (mkdtemp(templ.data()) == nullptr) {
            throw agg::TraceReadError("cannot make a folder for the trace: " +
                                      std::string(std::strerror(errno)));
        }
        TemporarySession session(bus, templ);
        const std::string output = templ + "/trace";
        const std::string name =
            "aggregate-" + std::to_string(getpid()) + "-" +
            std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count());
        const auto step = [&] {
            if (signals.pending()) {
                throw Interrupted();
            }
        };
        step();
        session.path = bus.create_session(name, {{"output-path", output}});
        bool kernel_channel = false;
        for (const auto& [pattern, domain] : enabled) {
            step();
            if (domain == Domain::kernel) {
                if (!kernel_channel) {
                    bus.add_channel(Domain::kernel, session.path, "aggregate", {}, false, {});
                    kernel_channel = true;
                }
                bus.enable_kernel_events(session.path, "aggregate", pattern, false, std::nullopt);
            } else {
                bus.enable_events(session.path, "", pattern, std::nullopt, false, {});
            }
        }
        step();
        bus.start(session.path);
        step();
        std::string described;
        for (const auto& [pattern, domain] : enabled) {
            described += (described.empty() ? "" : ", ") + pattern +
                         (domain == Domain::kernel ? " (kernel)" : " (ust)");
        }
        err << "Tracing " << described << " in session " << name << "; "
            << (args.duration ? "for " + format_seconds(*args.duration) + " s or " : "")
            << "Ctrl-C to end.\n"
            << std::flush;
        // The session may end without us: its consumer dies (state "error"), someone stops
        // or destroys it. Then the wait ends, saying why.
        bool destroyed = false;
        bool incomplete = false;
        const auto is_unknown = [](const sdbus::Error& e) {
            return e.getName() == "org.freedesktop.DBus.Error.UnknownObject";
        };
        signals.wait(args.duration, [&] {
            try {
                const SessionView now = session_view_from_properties(
                    session.path, bus.session_properties(session.path));
                if (now.state != "active") {
                    print_error_line(err, "aggregate: session " + name +
                                              " ended while tracing (state " + now.state +
                                              "); the results may be incomplete");
                    incomplete = true;
                    return false;
                }
            } catch (const sdbus::Error& e) {
                if (is_unknown(e)) {
                    destroyed = true;
                    return false;
                }
                // Anything else (a slow daemon): keep tracing.
            }
            return true;
        });
        if (!destroyed) {
            try {
                bus.stop(session.path);
            } catch (const sdbus::Error& e) {
                if (is_unknown(e)) {
                    destroyed = true;
                } else {
                    print_error_line(err, "aggregate: cannot stop session " + name + ": " +
                                              e.getMessage() +
                                              "; aggregating what it recorded, the results may "
                                              "be incomplete");
                    incomplete = true;
                }
            }
        }
        if (destroyed) {
            print_error_line(err, "aggregate: session " + name +
                                      " was destroyed while tracing (by someone else); "
                                      "nothing to aggregate");
            session.path.clear();
            return ExitStatus::daemon_error;
        }
        std::error_code ec;
        bool any = false;
        for (auto it = std::filesystem::recursive_directory_iterator(output, ec);
             !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
            any = any || it->path().filename() == "metadata";
        }
        if (!any) {
            for (const auto& [pattern, domain] : enabled) {
                print_error_line(err, "aggregate: warning: probe description " + pattern +
                                          " matched no event record");
            }
            if (args.json) {
                agg::AggregationSet empty(program);
                nlohmann::json json = agg::to_json(empty);
                json["discarded"] = 0;
                out << agg::json_text(json) << '\n';
            }
            return incomplete ? ExitStatus::daemon_error : ExitStatus::success;
        }
        const ExitStatus status = aggregate(program, agg::find_traces(output), args.json, out, err);
        return incomplete ? ExitStatus::daemon_error : status;
    });
}

} // namespace tracectl::cli
