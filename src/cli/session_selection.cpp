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
constexpr const char* kUnknownObjectError = "org.freedesktop.DBus.Error.UnknownObject";

} // namespace

std::vector<SelectedSession> selectSessions(BusClient& bus, const SessionSpec& spec) {
    if (!spec.several()) {
        std::string path = resolveSession(bus, spec.name);
        SessionView view = sessionViewFromProperties(path, bus.sessionProperties(path));
        return {{std::move(path), std::move(view.name), std::move(view.state)}};
    }
    const uid_t self = geteuid();
    std::vector<SessionView> views;
    for (const std::string& path : bus.listSessions()) {
        try {
            SessionView view = sessionViewFromProperties(path, bus.sessionProperties(path));
            if (view.owner != self) {
                continue;
            }
            if (spec.glob && ::fnmatch(spec.glob->c_str(), view.name.c_str(), 0) != 0) {
                continue;
            }
            views.push_back(std::move(view));
        } catch (const sdbus::Error& e) {
            if (e.getName() != kUnknownObjectError) {
                throw;
            }
        }
    }
    sortByCreationTime(views);
    std::vector<SelectedSession> out;
    out.reserve(views.size());
    for (SessionView& view : views) {
        out.push_back({std::move(view.objectPath), std::move(view.name), std::move(view.state)});
    }
    return out;
}

} // namespace tracectl::cli
