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

const char* methodName(SessionAction action) noexcept {
    switch (action) {
    case SessionAction::Start:
        return "Start";
    case SessionAction::Stop:
        return "Stop";
    case SessionAction::Destroy:
        break;
    }
    return "Destroy";
}

std::pair<std::uint64_t, sdbus::IProxy&> DaemonClient::beginCall(const std::string& path) {
    const std::uint64_t id = nextCall_++;
    auto call = std::make_unique<PendingCall>();
    call->proxy = sdbus::createProxy(*connection_, bus::kName, path);
    sdbus::IProxy& proxy = *call->proxy;
    calls_.emplace(id, std::move(call));
    return {id, proxy};
}

void DaemonClient::endCall(std::uint64_t id) {
    // Its proxy is still in use by sdbus-c++ until the callback returns: drop it later.
    if (auto it = calls_.find(id); it != calls_.end()) {
        finishedCalls_.push_back(std::move(it->second));
        calls_.erase(it);
        scheduleCollect();
    }
}

void DaemonClient::act(SessionAction action, const std::string& path, ActionReply reply) {
    auto [id, proxy] = beginCall(path);
    proxy.callMethodAsync(methodName(action))
        .onInterface(bus::kSessionInterface)
        .withArguments(client::interactiveOptions())
        .uponReplyInvoke([this, id = id, reply = std::move(reply)](const sdbus::Error* error) {
            reply(error != nullptr ? std::optional(client::callError(*error)) : std::nullopt);
            endCall(id);
        });
}

void DaemonClient::callForPath(const std::string& path, const char* method, PathReply reply) {
    auto [id, proxy] = beginCall(path);
    proxy.callMethodAsync(method)
        .onInterface(bus::kSessionInterface)
        .withArguments(client::interactiveOptions())
        .uponReplyInvoke([this, id = id, reply = std::move(reply)](const sdbus::Error* error,
                                                                   const std::string& folder) {
            if (error != nullptr) {
                reply({}, client::callError(*error));
            } else {
                reply(folder, std::nullopt);
            }
            endCall(id);
        });
}

void DaemonClient::rotate(const std::string& path, PathReply reply) {
    callForPath(path, "Rotate", std::move(reply));
}

void DaemonClient::recordSnapshot(const std::string& path, PathReply reply) {
    callForPath(path, "RecordSnapshot", std::move(reply));
}

void DaemonClient::enableEvents(const std::string& path, const std::string& domain,
                                const std::string& channel, const std::string& pattern,
                                const RuleOptions& options, ActionReply reply) {
    std::map<std::string, sdbus::Variant> arguments = client::interactiveOptions();
    if (!options.loglevel.empty()) {
        arguments.emplace("loglevel", sdbus::Variant{options.loglevel});
    }
    if (!options.filter.empty()) {
        arguments.emplace("filter", sdbus::Variant{options.filter});
    }
    auto [id, proxy] = beginCall(path);
    proxy.callMethodAsync("EnableEvents")
        .onInterface(bus::kSessionInterface)
        .withArguments(domain, channel, pattern, arguments)
        .uponReplyInvoke([this, id = id, reply = std::move(reply)](const sdbus::Error* error) {
            reply(error != nullptr ? std::optional(client::callError(*error)) : std::nullopt);
            endCall(id);
        });
}

void DaemonClient::disableEvents(const std::string& path, const std::string& domain,
                                 const std::string& channel, const std::string& pattern,
                                 ActionReply reply) {
    auto [id, proxy] = beginCall(path);
    proxy.callMethodAsync("DisableEvents")
        .onInterface(bus::kSessionInterface)
        .withArguments(domain, channel, pattern, client::interactiveOptions())
        .uponReplyInvoke([this, id = id, reply = std::move(reply)](const sdbus::Error* error) {
            reply(error != nullptr ? std::optional(client::callError(*error)) : std::nullopt);
            endCall(id);
        });
}

void DaemonClient::listKernelTracepoints(KernelTracepointsReply reply) {
    using Listed = std::vector<sdbus::Struct<std::string, std::string,
                                             std::vector<sdbus::Struct<std::string, std::string>>>>;
    auto [id, proxy] = beginCall(bus::kManagerPath);
    proxy.callMethodAsync("ListTracepointsWithOptions")
        .onInterface(bus::kManagerInterface)
        .withArguments(std::string("kernel"), client::interactiveOptions())
        .uponReplyInvoke([this, id = id, reply = std::move(reply)](const sdbus::Error* error,
                                                                   const Listed& listed) {
            if (error != nullptr) {
                reply({}, client::callError(*error));
            } else {
                std::vector<KernelTracepoint> tracepoints;
                tracepoints.reserve(listed.size());
                for (const auto& entry : listed) {
                    tracepoints.push_back(KernelTracepoint{std::get<0>(entry), std::get<1>(entry)});
                }
                reply(tracepoints, std::nullopt);
            }
            endCall(id);
        });
}

void DaemonClient::defaultOutputPath(const std::string& name, PathReply reply) {
    auto [id, proxy] = beginCall(bus::kManagerPath);
    proxy.callMethodAsync("DefaultOutputPath")
        .onInterface(bus::kManagerInterface)
        .withArguments(name)
        .uponReplyInvoke([this, id = id, reply = std::move(reply)](const sdbus::Error* error,
                                                                   const std::string& path) {
            if (error != nullptr) {
                reply({}, client::callError(*error));
            } else {
                reply(path, std::nullopt);
            }
            endCall(id);
        });
}

} // namespace tracectl::gui
