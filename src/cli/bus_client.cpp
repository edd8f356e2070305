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
using client::open_bus;
using client::SessionProxy;

constexpr const char* session_interface = client::bus::session_interface;

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
std::string current_session_key(const BusChoice& bus) {
    switch (bus.kind) {
    case BusChoice::Kind::user:
        return "user";
    case BusChoice::Kind::address:
        return CurrentSession::address_bus_key(bus.address);
    case BusChoice::Kind::system:
        break;
    }
    const char* address = std::getenv("DBUS_SYSTEM_BUS_ADDRESS");
    if (address == nullptr || *address == '\0' ||
        std::string_view(address) == "unix:path=/run/dbus/system_bus_socket" ||
        std::string_view(address) == "unix:path=/var/run/dbus/system_bus_socket") {
        return "system";
    }
    return CurrentSession::address_bus_key(address);
}

std::filesystem::path runtime_dir() {
    const char* dir = std::getenv("XDG_RUNTIME_DIR");
    // A relative value is ignored, as the XDG base directory specification says.
    return dir != nullptr && dir[0] == '/' ? std::filesystem::path(dir) : std::filesystem::path();
}

} // namespace

BusClient::BusClient(const BusChoice& bus) : current_(runtime_dir(), current_session_key(bus)) {
    try {
        connection_ = std::make_unique<Connection>(open_bus(bus));
    } catch (const sdbus::Error& e) {
        throw ConnectionFailed(e.getName(), e.getMessage());
    }
}

BusClient::~BusClient() = default;

sdbus::IConnection& BusClient::connection() noexcept {
    return *connection_->bus;
}

std::map<std::string, sdbus::Variant> BusClient::call_options() const {
    std::map<std::string, sdbus::Variant> options;
    if (interactive_) {
        options.emplace("interactive", sdbus::Variant{true});
    }
    return options;
}

std::string BusClient::daemon_version() {
    return connection_->manager.Version();
}

std::string BusClient::create_session(const std::string& name, const CreateOptions& options,
                                      bool count_events) {
    std::map<std::string, sdbus::Variant> variants = call_options();
    for (const auto& [key, value] : options) {
        variants.emplace(key, std::visit([](const auto& v) { return sdbus::Variant{v}; }, value));
    }
    if (count_events) {
        variants.emplace("count-events", sdbus::Variant{true});
    }
    return connection_->manager.CreateSession(name, variants);
}

std::string BusClient::get_session(const std::string& name) {
    return connection_->manager.GetSession(name);
}

std::vector<std::string> BusClient::list_sessions() {
    const std::vector<sdbus::ObjectPath> paths = connection_->manager.ListSessions();
    return {paths.begin(), paths.end()};
}

PropertyMap BusClient::session_properties(const std::string& path) {
    return to_property_map(connection_->session(path).GetAll(session_interface));
}

std::string BusClient::session_name(const std::string& path) {
    return connection_->session(path).Name();
}

void BusClient::start(const std::string& path) {
    connection_->session(path).Start(call_options());
}

void BusClient::stop(const std::string& path) {
    connection_->session(path).Stop(call_options());
}

void BusClient::destroy(const std::string& path) {
    connection_->session(path).Destroy(call_options());
}

std::pair<std::uint64_t, std::uint64_t> BusClient::rotation_schedule(const std::string& path) {
    const sdbus::Struct<std::uint64_t, std::uint64_t> schedule =
        connection_->session(path).RotationSchedule();
    return {std::get<0>(schedule), std::get<1>(schedule)};
}

void BusClient::set_rotation_schedule(const std::string& path, std::uint64_t timer_us,
                                      std::uint64_t size_bytes) {
    std::map<std::string, sdbus::Variant> options = call_options();
    options.emplace("timer-us", sdbus::Variant(timer_us));
    options.emplace("size-bytes", sdbus::Variant(size_bytes));
    connection_->session(path).SetRotationSchedule(options);
}

std::pair<std::string, std::vector<std::string>>
BusClient::save_configuration(const std::string& path) {
    auto [document, warnings] = connection_->session(path).SaveConfiguration(call_options());
    return {std::move(document), std::move(warnings)};
}

std::pair<std::vector<std::string>, std::vector<std::string>>
BusClient::load_sessions(const std::string& document, const std::optional<std::string>& only,
                         const std::optional<std::string>& override_name,
                         const std::optional<std::string>& override_url) {
    std::map<std::string, sdbus::Variant> options = call_options();
    if (only)
        options.emplace("name", sdbus::Variant(*only));
    if (override_name)
        options.emplace("override-name", sdbus::Variant(*override_name));
    if (override_url)
        options.emplace("override-url", sdbus::Variant(*override_url));
    auto [paths, warnings] = connection_->manager.LoadSessions(document, options);
    return {std::vector<std::string>(paths.begin(), paths.end()), std::move(warnings)};
}

void BusClient::clear(const std::string& path) {
    connection_->session(path).Clear(call_options());
}

std::string BusClient::record_snapshot(const std::string& path, std::uint64_t max_size) {
    std::map<std::string, sdbus::Variant> options;
    if (max_size != 0)
        options.emplace("max-size", sdbus::Variant(max_size));
    return connection_->session(path).RecordSnapshot(options);
}

std::string BusClient::rotate(const std::string& path, bool wait,
                              const std::function<void(const std::string&)>& progress) {
    std::optional<std::string> archive;
    std::optional<std::optional<std::string>> outcome; // set once our archive is announced
    client::SessionSignals signals;
    signals.rotation_completed = [&](const std::string& p) {
        if (archive && p == *archive)
            outcome.emplace(); // completed: no failure
    };
    signals.rotation_failed = [&](const std::string& p, const std::string& reason) {
        if (archive && p == *archive)
            outcome = reason;
    };
    SessionProxy session(*connection_->bus, path, std::move(signals)); // subscribed before the call
    archive = session.Rotate(call_options());
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
        const auto poll_data = connection_->bus->getEventLoopPollData();
        if (poll_data.timeout_usec == 0)
            continue; // sd-bus holds messages already read: no need to wait
        pollfd p{poll_data.fd, static_cast<short>(poll_data.events), 0};
        ::poll(&p, 1, 200);
    }
    if (*outcome)
        throw sdbus::Error("org.tracectl.Tracing1.Error.Failed", **outcome);
    return *archive;
}

} // namespace tracectl::cli

namespace tracectl::cli {

void BusClient::enable_events(const std::string& path, const std::string& channel,
                              const std::string& pattern,
                              const std::optional<std::string>& loglevel, bool loglevel_only,
                              const std::vector<std::string>& exclusions,
                              const std::optional<std::string>& filter) {
    std::map<std::string, sdbus::Variant> options = call_options();
    if (loglevel) {
        options[loglevel_only ? "loglevel-only" : "loglevel"] = sdbus::Variant(*loglevel);
    }
    if (!exclusions.empty()) {
        options["exclusions"] = sdbus::Variant(exclusions);
    }
    if (filter) {
        options["filter"] = sdbus::Variant(*filter);
    }
    connection_->session(path).EnableEvents("ust", channel, pattern, options);
}

void BusClient::enable_kernel_events(const std::string& path, const std::string& channel,
                                     const std::string& pattern, bool syscall,
                                     const std::optional<std::string>& filter,
                                     const std::string& userspace_probe) {
    std::map<std::string, sdbus::Variant> options = call_options();
    if (syscall) {
        options["syscall"] = sdbus::Variant(true);
    }
    if (!userspace_probe.empty()) {
        options["userspace-probe"] = sdbus::Variant(userspace_probe);
    }
    if (filter) {
        options["filter"] = sdbus::Variant(*filter);
    }
    connection_->session(path).EnableEvents(domain_name(Domain::kernel), channel, pattern, options);
}

void BusClient::add_context(Domain domain, const std::string& path, const std::string& channel,
                            const std::string& type) {
    connection_->session(path).AddContext(domain_name(domain), channel, type, call_options());
}

void BusClient::disable_events(Domain domain, const std::string& path, const std::string& channel,
                               const std::string& pattern) {
    connection_->session(path).DisableEvents(domain_name(domain), channel, pattern, call_options());
}

void BusClient::disable_channel(Domain domain, const std::string& path,
                                const std::string& channel) {
    connection_->session(path).DisableChannel(domain_name(domain), channel, call_options());
}

void BusClient::change_tracker(bool track, Domain domain, const std::string& path,
                               const std::string& attribute,
                               const std::vector<std::uint32_t>& values, bool all) {
    std::map<std::string, sdbus::Variant> options = call_options();
    if (all) {
        options["all"] = sdbus::Variant(true);
    }
    if (track) {
        connection_->session(path).TrackProcessAttribute(domain_name(domain), attribute, values,
                                                         options);
    } else {
        connection_->session(path).UntrackProcessAttribute(domain_name(domain), attribute, values,
                                                           options);
    }
}

void BusClient::add_channel(Domain domain, const std::string& path, const std::string& name,
                            const std::map<std::string, std::uint64_t>& sizes, bool overwrite,
                            const std::map<std::string, std::uint32_t>& timers) {
    std::map<std::string, sdbus::Variant> options = call_options();
    for (const auto& [key, value] : sizes) {
        options[key] = sdbus::Variant(value);
    }
    for (const auto& [key, value] : timers) {
        options[key] = sdbus::Variant(value);
    }
    if (overwrite) {
        options["overwrite"] = sdbus::Variant(true);
    }
    connection_->session(path).AddChannel(domain_name(domain), name, options);
}

std::vector<KernelTracepoint> BusClient::list_kernel_tracepoints() {
    std::vector<KernelTracepoint> out;
    for (const auto& tp : connection_->manager.ListTracepoints(domain_name(Domain::kernel))) {
        KernelTracepoint& entry = out.emplace_back();
        entry.system = tp.get<0>();
        entry.event = tp.get<1>();
        for (const auto& field : tp.get<2>()) {
            entry.fields.emplace_back(field.get<0>(), field.get<1>());
        }
    }
    return out;
}

std::uint64_t BusClient::create_ip_aggregation(const std::vector<std::string>& probes,
                                               const std::vector<std::string>& fields) {
    std::map<std::string, sdbus::Variant> options{{"probes", sdbus::Variant(probes)},
                                                  {"fields", sdbus::Variant(fields)}};
    if (interactive_) {
        options.emplace("interactive", sdbus::Variant(true));
    }
    return connection_->manager.CreateIpAggregation(options);
}

BusClient::IpAggregationRows BusClient::read_ip_aggregation(std::uint64_t handle) {
    const auto [rows, dropped] = connection_->manager.ReadIpAggregation(handle);
    IpAggregationRows out;
    out.dropped = dropped;
    for (const auto& row : rows) {
        out.rows.emplace_back(row.get<0>(), row.get<1>());
    }
    return out;
}

void BusClient::close_ip_aggregation(std::uint64_t handle) {
    connection_->manager.CloseIpAggregation(handle);
}

std::vector<std::string> BusClient::list_applications() {
    const std::vector<sdbus::ObjectPath> paths = connection_->manager.ListApplications();
    return {paths.begin(), paths.end()};
}

PropertyMap BusClient::application_properties(const std::string& path) {
    ApplicationProxy app(*connection_->bus, path);
    return to_property_map(app.GetAll(org::tracectl::Tracing1::Application_proxy::INTERFACE_NAME));
}

std::vector<std::tuple<std::string, std::string, std::int32_t>>
BusClient::list_tracepoints(const std::string& path) {
    ApplicationProxy app(*connection_->bus, path);
    std::vector<std::tuple<std::string, std::string, std::int32_t>> out;
    for (const auto& tp : app.ListTracepoints()) {
        out.emplace_back(tp.get<0>(), tp.get<1>(), tp.get<2>());
    }
    return out;
}

} // namespace tracectl::cli
