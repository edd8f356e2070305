#include "bus_client.hpp"

#include "error_report.hpp"
#include "variant_json.hpp"

#include <chrono>
#include <client/bus_names.hpp>
#include <client/proxies.hpp>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <poll.h>
#include <sdbus-c++/StandardInterfaces.h>
#include <sdbus-c++/sdbus-c++.h>
#include <string_view>
#include <utility>
#include <variant>

namespace tracectl::cli {
namespace {

using client::ApplicationProxy;
using client::ManagerProxy;
using client::openBus;
using client::SessionProxy;

constexpr const char* kSessionInterface = client::bus::kSessionInterface;

} // namespace

struct BusClient::Connection {
    std::unique_ptr<sdbus::IConnection> bus;
    ManagerProxy manager; // borrows *bus: declared after it, so destroyed before it

    explicit Connection(std::unique_ptr<sdbus::IConnection> opened)
        : bus(std::move(opened)), manager(*bus) {}

    /// A proxy of the session object at `path`, borrowing *bus.
    SessionProxy session(const std::string& path) { return SessionProxy{*bus, path}; }
};

namespace {

/// The current-session key of `bus` (BusClient::current_session()).
std::string currentSessionKey(const BusChoice& bus) {
    switch (bus.kind) {
    case BusChoice::Kind::User:
        return "user";
    case BusChoice::Kind::Address:
        return CurrentSession::addressBusKey(bus.address);
    case BusChoice::Kind::System:
        break;
    }
    const char* address = std::getenv("DBUS_SYSTEM_BUS_ADDRESS");
    if (address == nullptr || *address == '\0' ||
        std::string_view(address) == "unix:path=/run/dbus/system_bus_socket" ||
        std::string_view(address) == "unix:path=/var/run/dbus/system_bus_socket") {
        return "system";
    }
    return CurrentSession::addressBusKey(address);
}

std::filesystem::path currentSessionBase() {
    return CurrentSession::baseFolder(std::getenv("XDG_RUNTIME_DIR"),
                                      std::getenv("XDG_CONFIG_HOME"), std::getenv("HOME"),
                                      ::geteuid());
}

} // namespace

BusClient::BusClient(const BusChoice& bus)
    : current_(currentSessionBase(), currentSessionKey(bus)) {
    try {
        connection_ = std::make_unique<Connection>(openBus(bus));
    } catch (const sdbus::Error& e) {
        throw ConnectionFailed(e.getName(), e.getMessage());
    }
}

BusClient::~BusClient() = default;

sdbus::IConnection& BusClient::connection() noexcept {
    return *connection_->bus;
}

std::map<std::string, sdbus::Variant> BusClient::callOptions() const {
    std::map<std::string, sdbus::Variant> options;
    if (interactive_) {
        options.emplace("interactive", sdbus::Variant{true});
    }
    return options;
}

std::string BusClient::daemonVersion() {
    return connection_->manager.Version();
}

std::string BusClient::createSession(const std::string& name, const CreateOptions& options,
                                     bool countEvents) {
    std::map<std::string, sdbus::Variant> variants = callOptions();
    for (const auto& [key, value] : options) {
        variants.emplace(key, std::visit([](const auto& v) { return sdbus::Variant{v}; }, value));
    }
    if (countEvents) {
        variants.emplace("count-events", sdbus::Variant{true});
    }
    return connection_->manager.CreateSession(name, variants);
}

std::string BusClient::getSession(const std::string& name) {
    return connection_->manager.GetSession(name);
}

std::vector<std::string> BusClient::listSessions() {
    const std::vector<sdbus::ObjectPath> paths = connection_->manager.ListSessions();
    return {paths.begin(), paths.end()};
}

PropertyMap BusClient::sessionProperties(const std::string& path) {
    return toPropertyMap(connection_->session(path).GetAll(kSessionInterface));
}

std::string BusClient::sessionName(const std::string& path) {
    return connection_->session(path).Name();
}

void BusClient::start(const std::string& path) {
    connection_->session(path).Start(callOptions());
}

void BusClient::stop(const std::string& path) {
    connection_->session(path).Stop(callOptions());
}

void BusClient::destroy(const std::string& path) {
    connection_->session(path).Destroy(callOptions());
}

std::pair<std::uint64_t, std::uint64_t> BusClient::rotationSchedule(const std::string& path) {
    const sdbus::Struct<std::uint64_t, std::uint64_t> schedule =
        connection_->session(path).RotationSchedule();
    return {std::get<0>(schedule), std::get<1>(schedule)};
}

void BusClient::setRotationSchedule(const std::string& path, std::uint64_t timerUs,
                                    std::uint64_t sizeBytes) {
    std::map<std::string, sdbus::Variant> options = callOptions();
    options.emplace("timer-us", sdbus::Variant(timerUs));
    options.emplace("size-bytes", sdbus::Variant(sizeBytes));
    connection_->session(path).SetRotationSchedule(options);
}

std::pair<std::string, std::vector<std::string>>
BusClient::saveConfiguration(const std::string& path) {
    auto [document, warnings] = connection_->session(path).SaveConfiguration(callOptions());
    return {std::move(document), std::move(warnings)};
}

std::pair<std::vector<std::string>, std::vector<std::string>>
BusClient::loadSessions(const std::string& document, const std::optional<std::string>& only,
                        const std::optional<std::string>& overrideName,
                        const std::optional<std::string>& overrideUrl) {
    std::map<std::string, sdbus::Variant> options = callOptions();
    if (only)
        options.emplace("name", sdbus::Variant(*only));
    if (overrideName)
        options.emplace("override-name", sdbus::Variant(*overrideName));
    if (overrideUrl)
        options.emplace("override-url", sdbus::Variant(*overrideUrl));
    auto [paths, warnings] = connection_->manager.LoadSessions(document, options);
    return {std::vector<std::string>(paths.begin(), paths.end()), std::move(warnings)};
}

void BusClient::clear(const std::string& path) {
    connection_->session(path).Clear(callOptions());
}

std::string BusClient::recordSnapshot(const std::string& path, std::uint64_t maxSize) {
    std::map<std::string, sdbus::Variant> options;
    if (maxSize != 0)
        options.emplace("max-size", sdbus::Variant(maxSize));
    return connection_->session(path).RecordSnapshot(options);
}

std::string BusClient::rotate(const std::string& path, bool wait,
                              const std::function<void(const std::string&)>& progress) {
    std::optional<std::string> archive;
    std::optional<std::optional<std::string>> outcome; // set once our archive is announced
    client::SessionSignals signals;
    signals.rotationCompleted = [&](const std::string& p) {
        if (archive && p == *archive)
            outcome.emplace(); // completed: no failure
    };
    signals.rotationFailed = [&](const std::string& p, const std::string& reason) {
        if (archive && p == *archive)
            outcome = reason;
    };
    SessionProxy session(*connection_->bus, path, std::move(signals)); // subscribed before the call
    archive = session.Rotate(callOptions());
    if (!wait)
        return *archive;
    const auto started = std::chrono::steady_clock::now();
    // A rotation that completes within a second prints no progress at all.
    auto nextProgress = started + std::chrono::seconds(1);
    while (!outcome) {
        // Signals that came with the reply are already queued: process first.
        while (connection_->bus->processPendingRequest() && !outcome) {
        }
        if (outcome)
            break;
        const auto now = std::chrono::steady_clock::now();
        if (now >= nextProgress) {
            const auto ms =
                std::chrono::duration_cast<std::chrono::milliseconds>(now - started).count();
            progress("rotating: " + std::to_string(ms / 1000) + "." +
                     std::to_string(ms % 1000 / 100) + " s, session state " + session.State());
            nextProgress = now + std::chrono::seconds(1);
            continue; // State()'s round trip may have queued the signal: process it first
        }
        const auto pollData = connection_->bus->getEventLoopPollData();
        if (pollData.timeout_usec == 0)
            continue; // sd-bus holds messages already read: no need to wait
        pollfd p{pollData.fd, static_cast<short>(pollData.events), 0};
        ::poll(&p, 1, 200);
    }
    if (*outcome)
        throw sdbus::Error("org.tracectl.Tracing1.Error.Failed", **outcome);
    return *archive;
}

} // namespace tracectl::cli

namespace tracectl::cli {

void BusClient::enableEvents(const std::string& path, const std::string& channel,
                             const std::string& pattern, const std::optional<std::string>& loglevel,
                             bool loglevelOnly, const std::vector<std::string>& exclusions,
                             const std::optional<std::string>& filter) {
    std::map<std::string, sdbus::Variant> options = callOptions();
    if (loglevel) {
        options[loglevelOnly ? "loglevel-only" : "loglevel"] = sdbus::Variant(*loglevel);
    }
    if (!exclusions.empty()) {
        options["exclusions"] = sdbus::Variant(exclusions);
    }
    if (filter) {
        options["filter"] = sdbus::Variant(*filter);
    }
    connection_->session(path).EnableEvents("ust", channel, pattern, options);
}

void BusClient::enableKernelEvents(const std::string& path, const std::string& channel,
                                   const std::string& pattern, bool syscall,
                                   const std::optional<std::string>& filter,
                                   const std::string& userspaceProbe) {
    std::map<std::string, sdbus::Variant> options = callOptions();
    if (syscall) {
        options["syscall"] = sdbus::Variant(true);
    }
    if (!userspaceProbe.empty()) {
        options["userspace-probe"] = sdbus::Variant(userspaceProbe);
    }
    if (filter) {
        options["filter"] = sdbus::Variant(*filter);
    }
    connection_->session(path).EnableEvents(domainName(Domain::Kernel), channel, pattern, options);
}

void BusClient::addContext(Domain domain, const std::string& path, const std::string& channel,
                           const std::string& type) {
    connection_->session(path).AddContext(domainName(domain), channel, type, callOptions());
}

void BusClient::disableEvents(Domain domain, const std::string& path, const std::string& channel,
                              const std::string& pattern) {
    connection_->session(path).DisableEvents(domainName(domain), channel, pattern, callOptions());
}

void BusClient::disableChannel(Domain domain, const std::string& path, const std::string& channel) {
    connection_->session(path).DisableChannel(domainName(domain), channel, callOptions());
}

void BusClient::changeTracker(bool track, Domain domain, const std::string& path,
                              const std::string& attribute,
                              const std::vector<std::uint32_t>& values, bool all) {
    std::map<std::string, sdbus::Variant> options = callOptions();
    if (all) {
        options["all"] = sdbus::Variant(true);
    }
    if (track) {
        connection_->session(path).TrackProcessAttribute(domainName(domain), attribute, values,
                                                         options);
    } else {
        connection_->session(path).UntrackProcessAttribute(domainName(domain), attribute, values,
                                                           options);
    }
}

void BusClient::addChannel(Domain domain, const std::string& path, const std::string& name,
                           const std::map<std::string, std::uint64_t>& sizes,
                           std::optional<bool> overwrite,
                           const std::map<std::string, std::uint32_t>& timers) {
    std::map<std::string, sdbus::Variant> options = callOptions();
    for (const auto& [key, value] : sizes) {
        options[key] = sdbus::Variant(value);
    }
    for (const auto& [key, value] : timers) {
        options[key] = sdbus::Variant(value);
    }
    if (overwrite) {
        options["overwrite"] = sdbus::Variant(*overwrite);
    }
    connection_->session(path).AddChannel(domainName(domain), name, options);
}

std::vector<KernelTracepoint> BusClient::listKernelTracepoints() {
    std::vector<KernelTracepoint> out;
    for (const auto& tp : connection_->manager.ListTracepoints(domainName(Domain::Kernel))) {
        KernelTracepoint& entry = out.emplace_back();
        entry.system = tp.get<0>();
        entry.event = tp.get<1>();
        for (const auto& field : tp.get<2>()) {
            entry.fields.emplace_back(field.get<0>(), field.get<1>());
        }
    }
    return out;
}

std::uint64_t BusClient::createIpAggregation(const std::vector<std::string>& probes,
                                             const std::vector<std::string>& fields) {
    std::map<std::string, sdbus::Variant> options{{"probes", sdbus::Variant(probes)},
                                                  {"fields", sdbus::Variant(fields)}};
    if (interactive_) {
        options.emplace("interactive", sdbus::Variant(true));
    }
    return connection_->manager.CreateIpAggregation(options);
}

BusClient::IpAggregationRows BusClient::readIpAggregation(std::uint64_t handle) {
    const auto [rows, dropped] = connection_->manager.ReadIpAggregation(handle);
    IpAggregationRows out;
    out.dropped = dropped;
    for (const auto& row : rows) {
        out.rows.emplace_back(row.get<0>(), row.get<1>());
    }
    return out;
}

void BusClient::closeIpAggregation(std::uint64_t handle) {
    connection_->manager.CloseIpAggregation(handle);
}

std::vector<std::string> BusClient::listApplications() {
    const std::vector<sdbus::ObjectPath> paths = connection_->manager.ListApplications();
    return {paths.begin(), paths.end()};
}

PropertyMap BusClient::applicationProperties(const std::string& path) {
    ApplicationProxy app(*connection_->bus, path);
    return toPropertyMap(app.GetAll(org::tracectl::Tracing1::Application_proxy::INTERFACE_NAME));
}

std::vector<std::tuple<std::string, std::string, std::int32_t>>
BusClient::listTracepoints(const std::string& path) {
    ApplicationProxy app(*connection_->bus, path);
    std::vector<std::tuple<std::string, std::string, std::int32_t>> out;
    for (const auto& tp : app.ListTracepoints()) {
        out.emplace_back(tp.get<0>(), tp.get<1>(), tp.get<2>());
    }
    return out;
}

} // namespace tracectl::cli
