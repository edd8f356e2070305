#include "commands.hpp"

#include "create_options.hpp"
#include "error_report.hpp"
#include "output_format.hpp"
#include "session_statistics.hpp"
#include "session_view.hpp"
#include "trace_commands.hpp"
#include "user_names.hpp"

#include <algorithm>
#include <ctime>
#include <exception>
#include <filesystem>
#include <functional>
#include <ostream>
#include <pwd.h>
#include <sdbus-c++/Error.h>
#include <string_view>
#include <unistd.h>
#include <utility>
#include <vector>

namespace tracectl::cli {
namespace {

/// The error a call on the path of a session destroyed meanwhile is answered with.
constexpr const char* unknown_object_error = "org.freedesktop.DBus.Error.UnknownObject";

SessionView fetch_session(BusClient& bus, std::string path) {
    PropertyMap properties = bus.session_properties(path);
    return session_view_from_properties(std::move(path), std::move(properties));
}

/// The loss warning of `session` on `err`, after what went to `out`.
void warn_about_losses(const SessionView& session, std::ostream& out, std::ostream& err) {
    const auto statistics = statistics_from_properties(session.properties);
    if (!statistics) {
        return;
    }
    if (const auto warning = loss_warning(session.name, statistics->totals)) {
        out.flush(); // on a terminal, the warning comes after the table it is about
        print_error_line(err, *warning);
    }
}

/// The home folder of user `uid` (the passwd database), as the daemon takes it for the default
/// output folder; nullopt if there is none.
std::optional<std::filesystem::path> home_of(uid_t uid) {
    std::vector<char> buffer(16384);
    struct passwd entry {};
    struct passwd* found = nullptr;
    if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr ||
        found->pw_dir == nullptr || found->pw_dir[0] != '/') {
        return std::nullopt;
    }
    return std::filesystem::path(found->pw_dir);
}

} // namespace

void run_create(BusClient& bus, const CreateArgs& args, std::ostream& out, std::ostream& err) {
    std::optional<std::string> output;
    if (args.output) {
        output = absolute_output_path(*args.output, std::filesystem::current_path());
    }
    std::string name = args.name;
    if (name.empty()) { // as lttng create: an "auto-" name, its folder named after it alone
        name = auto_session_name(std::time(nullptr));
        // A session streaming to a relay has no local folder.
        if (const auto home = home_of(geteuid()); home && !output && !args.network.streams()) {
            output = auto_session_output(*home, name);
        }
    }
    const std::string path = bus.create_session(
        name, create_session_options(output, args.snapshot, args.buffers, args.network),
        args.count_events);
    out << format_created(fetch_session(bus, path));
    if (bus.current_session().file().empty()) {
        return; // no $XDG_RUNTIME_DIR (a root shell without a login session): nothing kept
    }
    try {
        bus.current_session().write(name);
    } catch (const std::exception& e) {
        out.flush();
        print_error_line(err, std::string("warning: ") + e.what());
    }
}

void run_list(BusClient& bus, const ListArgs& args, std::ostream& out, std::ostream& err) {
    // ListSessions, not GetManagedObjects: it lists only what the caller may see.
    std::vector<SessionView> sessions;
    for (const std::string& path : bus.list_sessions()) {
        try {
            sessions.push_back(session_view_from_properties(path, bus.session_properties(path)));
        } catch (const sdbus::Error& e) {
            if (e.getName() != unknown_object_error) {
                throw;
            }
            // Destroyed between the two calls: not listed.
        }
    }
    sort_by_creation_time(sessions);
    out << (args.json ? format_sessions_json(sessions)
                      : format_session_table(sessions, lookup_user_name));
    for (const SessionView& session : sessions) {
        warn_about_losses(session, out, err);
    }
}

void run_show(BusClient& bus, const ShowArgs& args, std::ostream& out, std::ostream& err) {
    const SessionView session = fetch_session(bus, bus.get_session(args.name));
    out << (args.json ? format_session_json(session)
                      : format_session_details(session, lookup_user_name));
    warn_about_losses(session, out, err);
}

void run_rotate(BusClient& bus, const std::optional<std::string>& name, bool wait,
                std::ostream& out, std::ostream& progress) {
    const std::string path = resolve_session(bus, name);
    const std::string shown = name ? *name : bus.session_name(path);
    const std::string archive = bus.rotate(path, wait, [&](const std::string& line) {
        progress << line << '\n' << std::flush;
    });
    out << (wait ? "Rotation of session " + shown + " complete: "
                 : "Rotation of session " + shown + " under way, archive: ")
        << archive << '\n';
}

void run_snapshot(BusClient& bus, const std::optional<std::string>& name, std::uint64_t max_size,
                  std::ostream& out, std::ostream& err) {
    const std::string path = resolve_session(bus, name);
    const auto packets_lost = [&]() -> std::optional<std::uint64_t> {
        const auto statistics = statistics_from_properties(bus.session_properties(path));
        if (!statistics)
            return std::nullopt;
        return statistics->totals.packets_lost;
    };
    const std::optional<std::uint64_t> before = packets_lost();
    out << bus.record_snapshot(path, max_size) << '\n';
    const std::optional<std::uint64_t> after = packets_lost();
    if (before && after && *after > *before) {
        const std::uint64_t lost = *after - *before;
        out.flush();
        print_error_line(err, "warning: the snapshot lacks " + std::to_string(lost) +
                                  (lost == 1 ? " sub-buffer" : " sub-buffers") +
                                  " the tracer overwrote before it could be copied (its "
                                  "packet_seq_num values are missing from their streams); the "
                                  "consumer's log names the streams");
    }
}

namespace {

constexpr const char* no_such_session_error = "org.tracectl.Tracing1.Error.NoSuchSession";

/// What one of start, stop and destroy does to one session.
struct SessionAction {
    /// The State values in which, with --all/--glob, the session is left
    /// alone with `already` as the warning.
    std::vector<std::string_view> done_states;
    std::string_view already; ///< "tracing already started for session"
    std::function<void(const std::string& path)> call;
    std::function<std::string(std::string_view name)> report;
    /// Printed when --all/--glob select no session.
    std::string nothing;
};

ExitStatus act_on_sessions(BusClient& bus, const SessionSpec& spec, const SessionAction& action,
                           std::ostream& out, std::ostream& err) {
    const std::vector<SelectedSession> sessions = select_sessions(bus, spec);
    if (sessions.empty()) {
        out << action.nothing;
    }
    ExitStatus status = ExitStatus::success;
    for (const SelectedSession& session : sessions) {
        if (!spec.several()) {
            action.call(session.path); // a failure throws: one session, one error
            out << action.report(session.name);
            continue;
        }
        if (std::find(action.done_states.begin(), action.done_states.end(), session.state) !=
            action.done_states.end()) {
            out.flush();
            print_error_line(err, "warning: " +
                                      (session.state == "created"
                                           ? "session " + session.name + " was never started"
                                           : std::string(action.already) + " " + session.name));
            continue;
        }
        try {
            action.call(session.path);
            out << action.report(session.name) << std::flush;
        } catch (const sdbus::Error& e) {
            if (e.getName() == unknown_object_error || e.getName() == no_such_session_error) {
                continue; // destroyed meanwhile: not ours to report
            }
            out.flush();
            print_error_line(err, session.name + ": " + e.getName() + ": " + e.getMessage());
            status = exit_status_for_error(e.getName());
        }
    }
    return status;
}

} // namespace

ExitStatus run_start(BusClient& bus, const SessionSpec& spec, std::ostream& out,
                     std::ostream& err) {
    const SessionAction action{{"active"},
                               "tracing already started for session",
                               [&](const std::string& path) { bus.start(path); },
                               [](std::string_view name) { return format_started(name); },
                               "No sessions to start.\n"};
    return act_on_sessions(bus, spec, action, out, err);
}

ExitStatus run_stop(BusClient& bus, const SessionSpec& spec, std::ostream& out, std::ostream& err) {
    const SessionAction action{{"created", "stopped"},
                               "tracing already stopped for session",
                               [&](const std::string& path) { bus.stop(path); },
                               [](std::string_view name) { return format_stopped(name); },
                               "No sessions to stop.\n"};
    return act_on_sessions(bus, spec, action, out, err);
}

ExitStatus run_destroy(BusClient& bus, const SessionSpec& spec, std::ostream& out,
                       std::ostream& err) {
    const SessionAction action{{},
                               "",
                               [&](const std::string& path) { bus.destroy(path); },
                               [&](std::string_view name) {
                                   bus.current_session().forget_if(name);
                                   return format_destroyed(name);
                               },
                               format_nothing_destroyed()};
    return act_on_sessions(bus, spec, action, out, err);
}

void run_set_session(BusClient& bus, const std::string& name, std::ostream& out) {
    bus.get_session(name); // NoSuchSession unless the caller has it
    bus.current_session().write(name);
    out << "Session " << name << " set as the current session.\n";
}

void run_status(BusClient& bus, bool json, std::ostream& out, std::ostream& err) {
    const SessionView session = fetch_session(bus, resolve_session(bus, std::nullopt));
    if (json) {
        out << format_session_json(session);
    } else {
        out << "Current session: " << session.name << "\n\n"
            << format_session_details(session, lookup_user_name);
    }
    warn_about_losses(session, out, err);
}

} // namespace tracectl::cli
