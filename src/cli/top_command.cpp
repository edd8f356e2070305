#include "top_command.hpp"

#include "common/unique_fd.hpp"
#include "error_report.hpp"
#include "top_model.hpp"
#include "top_screen.hpp"
#include "variant_json.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <client/bus_names.hpp>
#include <clocale>
#include <csignal>
#include <ctime>
#include <map>
#include <optional>
#include <poll.h>
#include <sdbus-c++/sdbus-c++.h>
#include <set>
#include <stdexcept>
#include <string>
#include <sys/signalfd.h>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace tracectl::cli {
namespace {

using client::bus::kNameOwnerRule;
constexpr const char* kBusName = client::bus::kName;
constexpr const char* kSessionInterface = client::bus::kSessionInterface;

/// Signals are unicast to connections that have called the daemon and may see the object; the
/// rules are added before the first call (ListSessions), as the Manager's XML asks.
const std::string propertiesChangedRule =
    "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
    "path_namespace='/org/tracectl/Tracing1/session',arg0='org.tracectl.Tracing1.Session'";
const std::string objectManagerRule =
    "type='signal',interface='org.freedesktop.DBus.ObjectManager',path='/org/tracectl/Tracing1'";

constexpr const char* kUnknownObjectError = "org.freedesktop.DBus.Error.UnknownObject";
constexpr const char* kAccessDeniedError = "org.freedesktop.DBus.Error.AccessDenied";

std::uint64_t monotonicUs() {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000U +
           static_cast<std::uint64_t>(now.tv_nsec) / 1'000U;
}

/// Blocks SIGINT, SIGTERM and SIGHUP for the lifetime of the object and delivers them on a
/// signalfd instead; restores the previous mask on destruction.
class SignalCatcher {
public:
    SignalCatcher() {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &set, &previous_) != 0) {
            throw std::system_error(errno, std::generic_category(), "sigprocmask");
        }
        fd_.reset(signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
        if (!fd_) {
            const int error = errno;
            sigprocmask(SIG_SETMASK, &previous_, nullptr);
            throw std::system_error(error, std::generic_category(), "signalfd");
        }
    }
    ~SignalCatcher() {
        fd_.reset();
        sigprocmask(SIG_SETMASK, &previous_, nullptr);
    }
    SignalCatcher(const SignalCatcher&) = delete;
    SignalCatcher& operator=(const SignalCatcher&) = delete;
    SignalCatcher(SignalCatcher&&) = delete;
    SignalCatcher& operator=(SignalCatcher&&) = delete;

    int fd() const noexcept { return fd_.get(); }

    /// Takes the pending signals off the fd, so that none is delivered once the mask is
    /// restored (ncurses' own SIGINT handler would then exit with status 1).
    void take() noexcept {
        signalfd_siginfo info{};
        while (::read(fd_.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
        }
    }

private:
    sigset_t previous_{};
    UniqueFd fd_;
};

/// The sessions `top` follows, fed by the bus. The signal handlers only record what they saw;
/// calls back to the daemon are made between two rounds of message processing (sync()).
class SessionFeed {
public:
    SessionFeed(BusClient& bus, TopModel& model) : bus_(bus), model_(model) {
        sdbus::IConnection& connection = bus_.connection();
        slots_.push_back(connection.addMatch(propertiesChangedRule,
                                             [this](sdbus::Message& m) { onChanged(m); }));
        slots_.push_back(connection.addMatch(objectManagerRule,
                                             [this](sdbus::Message& m) { onObjectManager(m); }));
        slots_.push_back(
            connection.addMatch(kNameOwnerRule, [this](sdbus::Message& m) { onNameOwner(m); }));
        relist_ = true;
    }

    /// Makes the calls the signals asked for: the first listing, a listing after the daemon
    /// restarted, GetAll of sessions announced incompletely.
    void sync() {
        if (relist_) {
            relist_ = false;
            refresh_.clear();
            TopModel fresh;
            for (const std::string& path : bus_.listSessions()) {
                fetch(fresh, path);
            }
            model_ = std::move(fresh);
        }
        const std::set<std::string> paths = std::move(refresh_);
        refresh_.clear();
        for (const std::string& path : paths) {
            fetch(model_, path);
        }
    }

private:
    void fetch(TopModel& model, const std::string& path) {
        try {
            model.update(path, bus_.sessionProperties(path));
        } catch (const sdbus::Error& e) {
            if (e.getName() != kUnknownObjectError && e.getName() != kAccessDeniedError) {
                throw;
            }
            model.remove(path); // destroyed meanwhile, or not ours to see
        }
    }

    // The handlers run inside sd-bus (processPendingRequest): nothing may escape them.
    void onChanged(sdbus::Message& message) noexcept {
        try {
            const std::string path = message.getPath();
            std::string interface;
            std::map<std::string, sdbus::Variant> changed;
            std::vector<std::string> invalidated;
            message >> interface >> changed >> invalidated;
            if (!model_.contains(path) || !invalidated.empty()) {
                refresh_.insert(path); // a session we missed, or values not included
            }
            if (model_.contains(path)) {
                model_.update(path, toPropertyMap(changed));
            }
        } catch (...) {
            // A malformed signal: the next one, or a refresh, brings the figures.
        }
    }

    void onObjectManager(sdbus::Message& message) noexcept {
        try {
            sdbus::ObjectPath path;
            if (message.getMemberName() == "InterfacesAdded") {
                std::map<std::string, std::map<std::string, sdbus::Variant>> interfaces;
                message >> path >> interfaces;
                if (const auto it = interfaces.find(kSessionInterface); it != interfaces.end()) {
                    model_.update(path, toPropertyMap(it->second));
                }
            } else if (message.getMemberName() == "InterfacesRemoved") {
                std::vector<std::string> interfaces;
                message >> path >> interfaces;
                if (std::find(interfaces.begin(), interfaces.end(), kSessionInterface) !=
                    interfaces.end()) {
                    model_.remove(path);
                    refresh_.erase(path);
                }
            }
        } catch (...) {
        }
    }

    void onNameOwner(sdbus::Message& message) noexcept {
        try {
            std::string name;
            std::string oldOwner;
            std::string newOwner;
            message >> name >> oldOwner >> newOwner;
            if (name != kBusName) {
                return;
            }
            if (newOwner.empty()) {
                model_ = TopModel{}; // the daemon exited: its sessions are gone
            } else {
                relist_ = true; // a new daemon: list again (which also subscribes us to it)
            }
        } catch (...) {
        }
    }

    BusClient& bus_;
    TopModel& model_;
    std::vector<sdbus::Slot> slots_;
    std::set<std::string> refresh_;
    bool relist_ = false;
};

/// Processes every message sd-bus has, then the calls they asked for, until nothing is left.
void drain(sdbus::IConnection& connection, SessionFeed& feed) {
    do {
        while (connection.processPendingRequest()) {
        }
        feed.sync();
    } while (connection.getEventLoopPollData().timeout_usec == 0);
}

} // namespace

bool checkTerminalForTop(std::ostream& err) {
    if (isatty(STDIN_FILENO) != 0 && isatty(STDOUT_FILENO) != 0) {
        return true;
    }
    printErrorLine(err, "top needs a terminal on standard input and output; for the "
                        "figures without one, use 'tracectl list' or 'tracectl show NAME' "
                        "(--json for programs)");
    return false;
}

ExitStatus runTop(BusClient& bus, std::ostream& err) {
    if (!checkTerminalForTop(err)) {
        return ExitStatus::Usage;
    }
    std::setlocale(LC_ALL, ""); // UTF-8 session names through ncursesw

    TopModel model;
    SessionFeed feed(bus, model);
    sdbus::IConnection& connection = bus.connection();
    drain(connection, feed); // the first listing, before the terminal is taken over

    SignalCatcher signals;
    std::optional<TopScreen> made;
    try {
        made.emplace();
    } catch (const std::runtime_error& e) {
        // A terminal curses cannot drive (TERM unknown or unset): the
        // caller's environment, as without a terminal.
        printErrorLine(err, std::string("top: ") + e.what() +
                                "; set TERM to your terminal's type (e.g. xterm-256color)");
        return ExitStatus::Usage;
    }
    TopScreen& screen = *made;
    const auto redraw = [&] {
        screen.draw(formatTopFrame(model.rows(monotonicUs()), model.size()), 2);
    };
    redraw();
    auto nextFrame = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    for (;;) {
        drain(connection, feed);
        const auto busPoll = connection.getEventLoopPollData();
        const auto now = std::chrono::steady_clock::now();
        auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(nextFrame - now);
        if (busPoll.timeout_usec != UINT64_MAX) {
            const std::uint64_t nowUs = monotonicUs();
            const auto busWait = std::chrono::milliseconds(
                busPoll.timeout_usec > nowUs ? (busPoll.timeout_usec - nowUs + 999) / 1000 : 0);
            wait = std::min(wait, busWait);
        }
        std::array<pollfd, 3> fds{{
            {busPoll.fd, static_cast<short>(busPoll.events), 0},
            {STDIN_FILENO, POLLIN, 0},
            {signals.fd(), POLLIN, 0},
        }};
        const int timeout = static_cast<int>(std::clamp<std::int64_t>(wait.count(), 0, 1000));
        if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) {
            throw std::system_error(errno, std::generic_category(), "poll");
        }
        if ((fds[2].revents & POLLIN) != 0) {
            signals.take();
            return ExitStatus::Success; // Ctrl-C, SIGTERM, SIGHUP: the screen is restored
        }
        if ((fds[1].revents & (POLLHUP | POLLERR | POLLNVAL)) != 0 &&
            (fds[1].revents & POLLIN) == 0) {
            return ExitStatus::Success; // the terminal went away
        }
        // Keys are read on every turn: a resize (SIGWINCH, handled by ncurses) only shows up
        // as KEY_RESIZE from getch().
        switch (screen.readKeys()) {
        case KeyAction::Quit:
            return ExitStatus::Success;
        case KeyAction::Redraw:
            drain(connection, feed);
            redraw();
            break;
        case KeyAction::None:
            break;
        }
        if (std::chrono::steady_clock::now() >= nextFrame) {
            drain(connection, feed);
            redraw();
            nextFrame += std::chrono::seconds(1);
            if (nextFrame < std::chrono::steady_clock::now()) {
                nextFrame = std::chrono::steady_clock::now() + std::chrono::seconds(1);
            }
        }
    }
}

} // namespace tracectl::cli
