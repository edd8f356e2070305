// The connection to the bus and the calls tracectl makes on tracectld's objects
// (org.tracectl.Tracing1 on the bus; see dbus/org.tracectl.Tracing1.*.xml).
#pragma once

#include "create_options.hpp"
#include "current_session.hpp"
#include "kernel_domain.hpp"
#include "property_map.hpp"

#include <client/bus_choice.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sdbus-c++/sdbus-c++.h>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace tracectl::cli {

/// Which bus to talk to (client/bus_choice.hpp).
using BusChoice = client::BusChoice;

/// A connection to the bus plus proxies of the manager and session objects. Every call is a
/// blocking method call (sd-bus default timeout, 25 s). Failed calls throw sdbus::Error with
/// the D-Bus error name the daemon (or the bus) answered with.
class BusClient {
public:
    /// Connects to the chosen bus. Throws ConnectionFailed when the bus cannot be reached.
    explicit BusClient(const BusChoice& bus);
    ~BusClient();
    BusClient(const BusClient&) = delete;
    BusClient& operator=(const BusClient&) = delete;
    BusClient(BusClient&&) = delete;
    BusClient& operator=(BusClient&&) = delete;

    /// Where the current session of this bus is kept (current_session.hpp):
    /// keyed "system" (the system bus at its default address), "user", or by
    /// the address (--bus-address, or a DBUS_SYSTEM_BUS_ADDRESS elsewhere:
    /// another daemon, other sessions), under $XDG_RUNTIME_DIR, else
    /// $XDG_CONFIG_HOME or $HOME/.config (CurrentSession::baseFolder()).
    const CurrentSession& currentSession() const noexcept { return current_; }

    /// Adds "interactive" = true to the options of every call that takes
    /// options (polkit may then ask an authentication agent).
    void setInteractive(bool interactive) noexcept { interactive_ = interactive; }

    /// Manager.CreateSession(name, options); each option value is sent as the variant of its
    /// alternative ("s", "t" or "b"), plus "count-events" (b) true with `count_events`.
    /// Returns the new session's object path. A relay that cannot be reached or refuses the
    /// session throws Error.RelayUnavailable.
    std::string createSession(const std::string& name, const CreateOptions& options,
                              bool countEvents = false);

    /// The Manager's Version property: the daemon's version.
    std::string daemonVersion();

    /// Manager.GetSession(name): the object path of the caller's session called `name`.
    std::string getSession(const std::string& name);

    /// Manager.ListSessions(): the object paths of the sessions the caller may see.
    std::vector<std::string> listSessions();

    /// Properties.GetAll("org.tracectl.Tracing1.Session") on the session at `path`.
    PropertyMap sessionProperties(const std::string& path);

    /// The Name property of the session at `path`.
    std::string sessionName(const std::string& path);

    /// Session.Start(options) on the session at `path`.
    void start(const std::string& path);

    /// Session.Stop(options) on the session at `path`.
    void stop(const std::string& path);

    /// Session.Rotate({}) on the session at `path`; returns the archive's
    /// folder. With `wait`, returns only once RotationCompleted announced it
    /// (calling `progress` with a line about once a second meanwhile);
    /// RotationFailed throws sdbus::Error(...Error.Failed, reason).
    std::string rotate(const std::string& path, bool wait,
                       const std::function<void(const std::string&)>& progress);

    /// Session.Clear(options) on the session at `path`: returns once what
    /// it recorded so far is deleted.
    void clear(const std::string& path);

    /// Session.RecordSnapshot({max-size}) (0: no bound, key left out);
    /// returns the snapshot's folder once written.
    std::string recordSnapshot(const std::string& path, std::uint64_t maxSize);

    /// The RotationSchedule property: (timer in microseconds, size in bytes), 0 = not used.
    std::pair<std::uint64_t, std::uint64_t> rotationSchedule(const std::string& path);

    /// Session.SetRotationSchedule({timer-us, size-bytes}) (0 = not used).
    void setRotationSchedule(const std::string& path, std::uint64_t timerUs,
                             std::uint64_t sizeBytes);

    /// Session.Destroy(options) on the session at `path`.
    void destroy(const std::string& path);

    /// Session.EnableEvents("ust", channel, pattern, options) on the session at `path`.
    /// `options` keys: "loglevel" / "loglevel-only" (log level names), "exclusions" (list),
    /// "filter" (an LTTng filter expression, compiled by the daemon).
    void enableEvents(const std::string& path, const std::string& channel,
                      const std::string& pattern, const std::optional<std::string>& loglevel,
                      bool loglevelOnly, const std::vector<std::string>& exclusions,
                      const std::optional<std::string>& filter = std::nullopt);

    /// Session.EnableEvents("kernel", channel, pattern, options): options "syscall" (b,
    /// only when true), "filter" (s, translated by the daemon into a tracefs filter) and
    /// "userspace-probe" (s, a location whose path is absolute; when not empty).
    void enableKernelEvents(const std::string& path, const std::string& channel,
                            const std::string& pattern, bool syscall,
                            const std::optional<std::string>& filter,
                            const std::string& userspaceProbe = {});

    /// Session.AddChannel(domain, name, options) on the session at `path`; numeric options
    /// are sent as "t" (sizes) or "u" (timers, microseconds); `overwrite` as "overwrite" (b)
    /// when given (nullopt: the session's default mode, overwrite in snapshot mode, else
    /// discard).
    void addChannel(Domain domain, const std::string& path, const std::string& name,
                    const std::map<std::string, std::uint64_t>& sizes,
                    std::optional<bool> overwrite,
                    const std::map<std::string, std::uint32_t>& timers);

    /// Session.AddContext(domain, channel, type, options) on the session at `path`.
    void addContext(Domain domain, const std::string& path, const std::string& channel,
                    const std::string& type);

    /// Session.DisableEvents(domain, channel, pattern, options) on the session at `path`;
    /// pattern "" disables every rule of the channel.
    void disableEvents(Domain domain, const std::string& path, const std::string& channel,
                       const std::string& pattern);

    /// Session.DisableChannel(domain, channel, options) on the session at `path`.
    void disableChannel(Domain domain, const std::string& path, const std::string& channel);
    /// Session.TrackProcessAttribute (`track`) or UntrackProcessAttribute
    /// (domain, attribute, values, options {"all": b}) on the session at `path`.
    void changeTracker(bool track, Domain domain, const std::string& path,
                       const std::string& attribute, const std::vector<std::uint32_t>& values,
                       bool all);

    /// Session.SaveConfiguration(options): the session as LTTng session XML,
    /// and the warnings for what LTTng's schema cannot hold.
    std::pair<std::string, std::vector<std::string>> saveConfiguration(const std::string& path);

    /// Manager.LoadSessions(document, options {"name": only, "override-name",
    /// "override-url"}): the object
    /// paths of the sessions made, and the warnings for what was left out.
    std::pair<std::vector<std::string>, std::vector<std::string>>
    loadSessions(const std::string& document, const std::optional<std::string>& only,
                 const std::optional<std::string>& overrideName = std::nullopt,
                 const std::optional<std::string>& overrideUrl = std::nullopt);

    /// Manager.ListApplications(): object paths of the apps the caller may see.
    std::vector<std::string> listApplications();

    /// Properties.GetAll("org.tracectl.Tracing1.Application") of the app at `path`.
    PropertyMap applicationProperties(const std::string& path);

    /// Application.ListTracepoints(): (provider, event, log level) triples.
    std::vector<std::tuple<std::string, std::string, std::int32_t>>
    listTracepoints(const std::string& path);

    /// Manager.ListTracepoints("kernel"): every tracefs tracepoint with its fields.
    std::vector<KernelTracepoint> listKernelTracepoints();

    /// Manager.CreateIpAggregation({probes, fields}): the handle of an in-kernel count of
    /// the ip provider's packets by `fields` (payload field names).
    std::uint64_t createIpAggregation(const std::vector<std::string>& probes,
                                      const std::vector<std::string>& fields);
    /// Manager.ReadIpAggregation(handle): each row's record bytes (a struct
    /// tracectl_ip_record) and packets, and the packets dropped for want of a row.
    struct IpAggregationRows {
        std::vector<std::pair<std::vector<std::uint8_t>, std::uint64_t>> rows;
        std::uint64_t dropped = 0;
    };
    IpAggregationRows readIpAggregation(std::uint64_t handle);
    /// Manager.CloseIpAggregation(handle).
    void closeIpAggregation(std::uint64_t handle);

    /// The connection itself, for what subscribes to signals and runs its own loop
    /// (`tracectl top`). Valid as long as the BusClient.
    sdbus::IConnection& connection() noexcept;

private:
    /// {"interactive": true} if set_interactive(true), else {}.
    std::map<std::string, sdbus::Variant> callOptions() const;

    struct Connection;
    std::unique_ptr<Connection> connection_;
    CurrentSession current_;
    bool interactive_ = false;
};

} // namespace tracectl::cli
