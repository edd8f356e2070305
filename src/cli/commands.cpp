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
constexpr const char* kUnknownObjectError = "org.freedesktop.DBus.Error.UnknownObject";

SessionView fetchSession(BusClient& bus, std::string path) {
    PropertyMap properties = bus.sessionProperties(path);
    return sessionViewFromProperties(std::move(path), std::move(properties));
}

/// The loss warning of `session` on `err`, after what went to `out`.
void warnAboutLosses(const SessionView& session, std::ostream& out, std::ostream& err) {
    const auto statistics = statisticsFromProperties(session.properties);
    if (!statistics) {
        return;
    }
    if (const auto warning =
            lossWarning(session.name, statistics->totals, session.mode == "snapshot")) {
        out.flush(); // on a terminal, the warning comes after the table it is about
        printErrorLine(err, *warning);
    }
}

/// The home folder of user `uid` (the passwd database), as the daemon takes it for the default
/// output folder; nullopt if there is none.
std::optional<std::filesystem::path> homeOf(uid_t uid) {
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

void runCreate(BusClient& bus, const CreateArgs& args, std::ostream& out, std::ostream& err) {
    std::optional<std::string> output;
    if (args.output) {
        output = absoluteOutputPath(*args.output, std::filesystem::current_path());
    }
    std::string name = args.name;
    if (name.empty()) { // as lttng create: an "auto-" name, its folder named after it alone
        name = autoSessionName(std::time(nullptr));
        // A session streaming to a relay has no local folder.
        if (const auto home = homeOf(geteuid()); home && !output && !args.network.streams()) {
            output = autoSessionOutput(*home, name);
        }
    }
    const std::string path = bus.createSession(
        name, createSessionOptions(output, args.snapshot, args.buffers, args.network),
        args.countEvents);
    out << formatCreated(fetchSession(bus, path));
    if (bus.currentSession().file().empty()) {
        // No XDG_RUNTIME_DIR, and no XDG_CONFIG_HOME or HOME of the caller's: nowhere to
        // keep it.
        out.flush();
        printErrorLine(err, "note: session " + name +
                                " is not the current session (no XDG_RUNTIME_DIR, and no "
                                "XDG_CONFIG_HOME or HOME of yours, to keep it in): name it with "
                                "-s " +
                                name + " on the next commands");
        return;
    }
    try {
        bus.currentSession().write(name);
    } catch (const std::exception& e) {
        out.flush();
        printErrorLine(err, std::string("warning: ") + e.what());
    }
}

void runList(BusClient& bus, const ListArgs& args, std::ostream& out, std::ostream& err) {
    // ListSessions, not GetManagedObjects: it lists only what the caller may see.
    std::vector<SessionView> sessions;
    for (const std::string& path : bus.listSessions()) {
        try {
            sessions.push_back(sessionViewFromProperties(path, bus.sessionProperties(path)));
        } catch (const sdbus::Error& e) {
            if (e.getName() != kUnknownObjectError) {
                throw;
            }
            // Destroyed between the two calls: not listed.
        }
    }
    sortByCreationTime(sessions);
    out << (args.json ? formatSessionsJson(sessions)
                      : formatSessionTable(sessions, lookupUserName));
    for (const SessionView& session : sessions) {
        warnAboutLosses(session, out, err);
    }
}

void runShow(BusClient& bus, const ShowArgs& args, std::ostream& out, std::ostream& err) {
    const SessionView session = fetchSession(bus, bus.getSession(args.name));
    out << (args.json ? formatSessionJson(session) : formatSessionDetails(session, lookupUserName));
    warnAboutLosses(session, out, err);
}

void runRotate(BusClient& bus, const std::optional<std::string>& name, bool wait, std::ostream& out,
               std::ostream& progress) {
    const std::string path = resolveSession(bus, name);
    const std::string shown = name ? *name : bus.sessionName(path);
    const std::string archive = bus.rotate(path, wait, [&](const std::string& line) {
        progress << line << '\n' << std::flush;
    });
    out << (wait ? "Rotation of session " + shown + " complete: "
                 : "Rotation of session " + shown + " under way, archive: ")
        << archive << '\n';
}

void runSnapshot(BusClient& bus, const std::optional<std::string>& name, std::uint64_t maxSize,
                 std::ostream& out, std::ostream& err) {
    const std::string path = resolveSession(bus, name);
    const auto packetsLost = [&]() -> std::optional<std::uint64_t> {
        const auto statistics = statisticsFromProperties(bus.sessionProperties(path));
        if (!statistics)
            return std::nullopt;
        return statistics->totals.packetsLost;
    };
    const std::optional<std::uint64_t> before = packetsLost();
    out << bus.recordSnapshot(path, maxSize) << '\n';
    const std::optional<std::uint64_t> after = packetsLost();
    if (before && after && *after > *before) {
        const std::uint64_t lost = *after - *before;
        out.flush();
        printErrorLine(err, "warning: the snapshot lacks " + std::to_string(lost) +
                                (lost == 1 ? " sub-buffer" : " sub-buffers") +
                                " the tracer overwrote before it could be copied (its "
                                "packet_seq_num values are missing from their streams); the "
                                "consumer's log names the streams");
    }
}

namespace {

constexpr const char* kNoSuchSessionError = "org.tracectl.Tracing1.Error.NoSuchSession";

/// What one of start, stop and destroy does to one session.
struct SessionAction {
    /// The State values in which, with --all/--glob, the session is left
    /// alone with `already` as the warning.
    std::vector<std::string_view> doneStates;
    std::string_view already; ///< "tracing already started for session"
    std::function<void(const std::string& path)> call;
    std::function<std::string(std::string_view name)> report;
    /// Printed when --all/--glob select no session.
    std::string nothing;
};

ExitStatus actOnSessions(BusClient& bus, const SessionSpec& spec, const SessionAction& action,
                         std::ostream& out, std::ostream& err) {
    const std::vector<SelectedSession> sessions = selectSessions(bus, spec);
    if (sessions.empty()) {
        out << action.nothing;
    }
    ExitStatus status = ExitStatus::Success;
    for (const SelectedSession& session : sessions) {
        if (!spec.several()) {
            action.call(session.path); // a failure throws: one session, one error
            out << action.report(session.name);
            continue;
        }
        if (std::find(action.doneStates.begin(), action.doneStates.end(), session.state) !=
            action.doneStates.end()) {
            out.flush();
            printErrorLine(err,
                           "warning: " + (session.state == "created"
                                              ? "session " + session.name + " was never started"
                                              : std::string(action.already) + " " + session.name));
            continue;
        }
        try {
            action.call(session.path);
            out << action.report(session.name) << std::flush;
        } catch (const sdbus::Error& e) {
            if (e.getName() == kUnknownObjectError || e.getName() == kNoSuchSessionError) {
                continue; // destroyed meanwhile: not ours to report
            }
            out.flush();
            printErrorLine(err, session.name + ": " + e.getName() + ": " + e.getMessage());
            status = exitStatusForError(e.getName());
        }
    }
    return status;
}

} // namespace

ExitStatus runStart(BusClient& bus, const SessionSpec& spec, std::ostream& out, std::ostream& err) {
    const SessionAction action{{"active"},
                               "tracing already started for session",
                               [&](const std::string& path) { bus.start(path); },
                               [](std::string_view name) { return formatStarted(name); },
                               "No sessions to start.\n"};
    return actOnSessions(bus, spec, action, out, err);
}

ExitStatus runStop(BusClient& bus, const SessionSpec& spec, std::ostream& out, std::ostream& err) {
    const SessionAction action{{"created", "stopped"},
                               "tracing already stopped for session",
                               [&](const std::string& path) { bus.stop(path); },
                               [](std::string_view name) { return formatStopped(name); },
                               "No sessions to stop.\n"};
    return actOnSessions(bus, spec, action, out, err);
}

ExitStatus runDestroy(BusClient& bus, const SessionSpec& spec, std::ostream& out,
                      std::ostream& err) {
    const SessionAction action{{},
                               "",
                               [&](const std::string& path) { bus.destroy(path); },
                               [&](std::string_view name) {
                                   bus.currentSession().forgetIf(name);
                                   return formatDestroyed(name);
                               },
                               formatNothingDestroyed()};
    return actOnSessions(bus, spec, action, out, err);
}

void runSetSession(BusClient& bus, const std::string& name, std::ostream& out) {
    bus.getSession(name); // NoSuchSession unless the caller has it
    bus.currentSession().write(name);
    out << "Session " << name << " set as the current session.\n";
}

void runStatus(BusClient& bus, bool json, std::ostream& out, std::ostream& err) {
    const SessionView session = fetchSession(bus, resolveSession(bus, std::nullopt));
    if (json) {
        out << formatSessionJson(session);
    } else {
        out << "Current session: " << session.name << "\n\n"
            << formatSessionDetails(session, lookupUserName);
    }
    warnAboutLosses(session, out, err);
}

} // namespace tracectl::cli
