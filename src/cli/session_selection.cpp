#include "session_selection.hpp"

#include "session_view.hpp"
#include "trace_commands.hpp"

#include <fnmatch.h>
#include <sdbus-c++/Error.h>
#include <unistd.h>
#include <utility>

namespace tracectl::cli {
namespace {

/// The error a call on the path of a session destroyed meanwhile is answered with.
constexpr const char* unknown_object_error = "org.freedesktop.DBus.Error.UnknownObject";

} // namespace

std::vector<SelectedSession> select_sessions(BusClient& bus, const SessionSpec& spec) {
    if (!spec.several()) {
        std::string path = resolve_session(bus, spec.name);
        SessionView view = session_view_from_properties(path, bus.session_properties(path));
        return {{std::move(path), std::move(view.name), std::move(view.state)}};
    }
    const uid_t self = geteuid();
    std::vector<SessionView> views;
    for (const std::string& path : bus.list_sessions()) {
        try {
            SessionView view = session_view_from_properties(path, bus.session_properties(path));
            if (view.owner != self) {
                continue;
            }
            if (spec.glob && ::fnmatch(spec.glob->c_str(), view.name.c_str(), 0) != 0) {
                continue;
            }
            views.push_back(std::move(view));
        } catch (const sdbus::Error& e) {
            if (e.getName() != unknown_object_error) {
                throw;
            }
        }
    }
    sort_by_creation_time(views);
    std::vector<SelectedSession> out;
    out.reserve(views.size());
    for (SessionView& view : views) {
        out.push_back({std::move(view.object_path), std::move(view.name), std::move(view.state)});
    }
    return out;
}

} // namespace tracectl::cli
