#include "commands.hpp"

#include "create_options.hpp"
#include "error_report.hpp"
#include "output_format.hpp"
#include "session_statistics.hpp"
#include "session_view.hpp"
#include "user_names.hpp"

#include <filesystem>
#include <ostream>
#include <sdbus-c++/Error.h>
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

} // namespace

void run_create(BusClient& bus, const CreateArgs& args, std::ostream& out) {
    std::optional<std::string> output;
    if (args.output) {
        output = absolute_output_path(*args.output, std::filesystem::current_path());
    }
    const std::string path = bus.create_session(
        args.name, create_session_options(output, args.snapshot, args.buffers), args.count_events);
    out << format_created(fetch_session(bus, path));
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

void run_start(BusClient& bus, const std::string& name, std::ostream& out) {
    bus.start(bus.get_session(name));
    out << format_started(name);
}

void run_stop(BusClient& bus, const std::string& name, std::ostream& out) {
    bus.stop(bus.get_session(name));
    out << format_stopped(name);
}

void run_rotate(BusClient& bus, const std::string& name, bool wait, std::ostream& out,
                std::ostream& progress) {
    const std::string archive =
        bus.rotate(bus.get_session(name), wait, [&](const std::string& line) {
            progress << line << '\n' << std::flush;
        });
    out << (wait ? "Rotation of session " + name + " complete: "
                 : "Rotation of session " + name + " under way, archive: ")
        << archive << '\n';
}

void run_destroy(BusClient& bus, const DestroyArgs& args, std::ostream& out) {
    if (!args.all) {
        const std::string& name = args.name.value();
        bus.destroy(bus.get_session(name));
        out << format_destroyed(name);
        return;
    }
    bool destroyed_any = false;
    // Only the caller's own sessions: for root, ListSessions lists every
    // user's, and "--all" must not reach into them.
    const uid_t self = geteuid();
    for (const std::string& path : bus.list_sessions()) {
        try {
            const SessionView session =
                session_view_from_properties(path, bus.session_properties(path));
            if (session.owner != self) {
                continue;
            }
            bus.destroy(path);
            out << format_destroyed(session.name) << std::flush;
            destroyed_any = true;
        } catch (const sdbus::Error& e) {
            if (e.getName() != unknown_object_error) {
                throw;
            }
        }
    }
    if (!destroyed_any) {
        out << format_nothing_destroyed();
    }
}

} // namespace tracectl::cli
