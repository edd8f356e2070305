// DaemonClient: the method calls on a session (Start, Stop, Destroy, Rotate, RecordSnapshot,
// EnableEvents, DisableEvents) and the Manager's ListTracepointsWithOptions and
// DefaultOutputPath. Each goes through a proxy of
// its own (PendingCall), so that its reply comes even when the session is destroyed first.
#include "daemon_client.hpp"

#include <client/bus_names.hpp>
#include <client/call_error.hpp>
#include <sdbus-c++/sdbus-c++.h>
#include <tuple>

namespace tracectl::gui {

namespace bus = client::bus;

const char* method_name(SessionAction action) noexcept {
    switch (action) {
    case SessionAction::start:
        return "Start";
    case SessionAction::stop:
        return "Stop";
    case SessionAction::destroy:
        break;
    }
    return "Destroy";
}

std::pair<std::uint64_t, sdbus::IProxy&> DaemonClient::begin_call(const std::string& path) {
    const std::uint64_t id = next_call_++;
    auto call = std::make_unique<PendingCall>();
    call->proxy = sdbus::createProxy(*connection_, bus::name, path);
    sdbus::IProxy& proxy = *call->proxy;
    calls_.emplace(id, std::move(call));
    return {id, proxy};
}

void DaemonClient::end_call(std::uint64_t id) {
    // Its proxy is still in use by sdbus-c++ until the callback returns: drop it later.
    if (auto it = calls_.find(id); it != calls_.end()) {
        finished_calls_.push_back(std::move(it->second));
        calls_.erase(it);
        schedule_collect();
    }
}

void DaemonClient::act(SessionAction action, const std::string& path, ActionReply reply) {
    auto [id, proxy] = begin_call(path);
    proxy.callMethodAsync(method_name(action))
        .onInterface(bus::session_interface)
        .withArguments(client::interactive_options())
        .uponReplyInvoke([this, id = id, reply = std::move(reply)](const sdbus::Error* error) {
            reply(error != nullptr ? std::optional(client::call_error(*error)) : std::nullopt);
            end_call(id);
        });
}

void DaemonClient::call_for_path(const std::string& path, const char* method, PathReply reply) {
    auto [id, proxy] = begin_call(path);
    proxy.callMethodAsync(method)
        .onInterface(bus::session_interface)
        .withArguments(client::interactive_options())
        .uponReplyInvoke([this, id = id, reply = std::move(reply)](const sdbus::Error* error,
                                                                   const std::string& folder) {
            if (error != nullptr) {
                reply({}, client::call_error(*error));
            } else {
                reply(folder, std::nullopt);
            }
            end_call(id);
        });
}

void DaemonClient::rotate(const std::string& path, PathReply reply) {
    call_for_path(path, "Rotate", std::move(reply));
}

void DaemonClient::record_snapshot(const std::string& path, PathReply reply) {
    call_for_path(path, "RecordSnapshot", std::move(reply));
}

void DaemonClient::enable_events(const std::string& path, const std::string& domain,
                                 const std::string& channel, const std::string& pattern,
                                 const RuleOptions& options, ActionReply reply) {
    std::map<std::string, sdbus::Variant> arguments = client::interactive_options();
    if (!options.loglevel.empty()) {
        arguments.emplace("loglevel", sdbus::Variant{options.loglevel});
    }
    if (!options.filter.empty()) {
        arguments.emplace("filter", sdbus::Variant{options.filter});
    }
    auto [id, proxy] = begin_call(path);
    proxy.callMethodAsync("EnableEvents")
        .onInterface(bus::session_interface)
        .withArguments(domain, channel, pattern, arguments)
        .uponReplyInvoke([this, id = id, reply = std::move(reply)](const sdbus::Error* error) {
            reply(error != nullptr ? std::optional(client::call_error(*error)) : std::nullopt);
            end_call(id);
        });
}

void DaemonClient::disable_events(const std::string& path, const std::string& domain,
                                  const std::string& channel, const std::string& pattern,
                                  ActionReply reply) {
    auto [id, proxy] = begin_call(path);
    proxy.callMethodAsync("DisableEvents")
        .onInterface(bus::session_interface)
        .withArguments(domain, channel, pattern, client::interactive_options())
        .uponReplyInvoke([this, id = id, reply = std::move(reply)](const sdbus::Error* error) {
            reply(error != nullptr ? std::optional(client::call_error(*error)) : std::nullopt);
            end_call(id);
        });
}

void DaemonClient::list_kernel_tracepoints(KernelTracepointsReply reply) {
    using Listed = std::vector<sdbus::Struct<std::string, std::string,
                                             std::vector<sdbus::Struct<std::string, std::string>>>>;
    auto [id, proxy] = begin_call(bus::manager_path);
    proxy.callMethodAsync("ListTracepointsWithOptions")
        .onInterface(bus::manager_interface)
        .withArguments(std::string("kernel"), client::interactive_options())
        .uponReplyInvoke([this, id = id, reply = std::move(reply)](const sdbus::Error* error,
                                                                   const Listed& listed) {
            if (error != nullptr) {
                reply({}, client::call_error(*error));
            } else {
                std::vector<KernelTracepoint> tracepoints;
                tracepoints.reserve(listed.size());
                for (const auto& entry : listed) {
                    tracepoints.push_back(KernelTracepoint{std::get<0>(entry), std::get<1>(entry)});
                }
                reply(tracepoints, std::nullopt);
            }
            end_call(id);
        });
}

void DaemonClient::default_output_path(const std::string& name, PathReply reply) {
    auto [id, proxy] = begin_call(bus::manager_path);
    proxy.callMethodAsync("DefaultOutputPath")
        .onInterface(bus::manager_interface)
        .withArguments(name)
        .uponReplyInvoke([this, id = id, reply = std::move(reply)](const sdbus::Error* error,
                                                                   const std::string& path) {
            if (error != nullptr) {
                reply({}, client::call_error(*error));
            } else {
                reply(path, std::nullopt);
            }
            end_call(id);
        });
}

} // namespace tracectl::gui
