#include "clear_command.hpp"

#include "session_view.hpp"
#include "trace_commands.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <sdbus-c++/Error.h>
#include <thread>
#include <unistd.h>

namespace tracectl::cli {

namespace {

constexpr const char* kUnknownObject = "org.freedesktop.DBus.Error.UnknownObject";

/// Session.Clear on `path`, telling `progress` once a second while it runs.
void clearWithProgress(BusClient& bus, const std::string& path, const std::string& name,
                       std::ostream& progress) {
    std::mutex m;
    std::condition_variable cv;
    bool over = false;
    // Only this thread writes to `progress` while the call runs; it touches
    // no bus object.
    std::thread ticker([&] {
        const auto started = std::chrono::steady_clock::now();
        std::unique_lock lock(m);
        while (!cv.wait_for(lock, std::chrono::seconds(1), [&] { return over; })) {
            const auto s = std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::steady_clock::now() - started)
                               .count();
            progress << "clearing session " << name << ": " << s << " s\n" << std::flush;
        }
    });
    const auto finish = [&] {
        {
            std::lock_guard lock(m);
            over = true;
        }
        cv.notify_one();
        ticker.join();
    };
    try {
        bus.clear(path);
    } catch (...) {
        finish();
        throw;
    }
    finish();
}

} // namespace

void runClear(BusClient& bus, const ClearArgs& args, std::ostream& out, std::ostream& progress) {
    if (!args.all) {
        const std::string path = resolveSession(bus, args.name);
        const std::string name = args.name ? *args.name : bus.sessionName(path);
        clearWithProgress(bus, path, name, progress);
        out << "Session " << name << " cleared.\n";
        return;
    }
    bool any = false;
    // Only the caller's own sessions, as destroy --all: for root,
    // ListSessions lists every user's.
    const uid_t self = geteuid();
    for (const std::string& path : bus.listSessions()) {
        try {
            const SessionView session =
                sessionViewFromProperties(path, bus.sessionProperties(path));
            if (session.owner != self)
                continue;
            clearWithProgress(bus, path, session.name, progress);
            out << "Session " << session.name << " cleared.\n" << std::flush;
            any = true;
        } catch (const sdbus::Error& e) {
            if (e.getName() != kUnknownObject) // destroyed meanwhile
                throw;
        }
    }
    if (!any)
        out << "No session of yours to clear.\n";
}

} // namespace tracectl::cli
