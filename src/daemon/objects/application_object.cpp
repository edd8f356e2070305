#include "objects/application_object.hpp"

#include "apps/ust_error.hpp"
#include "bus/bus_call.hpp"
#include "common/log.hpp"

#include <lttng/ust-ctl.h>
#include <lttng/ust-error.h>
#include <tuple>
#include <vector>

namespace tracectl {

/// (provider, event, loglevel) of each tracepoint: a(ssi).
using Tracepoints = std::vector<std::tuple<std::string, std::string, int32_t>>;

std::string applicationPathPrefix() {
    return std::string(kManagerPath) + "/application";
}

std::string applicationObjectPath(pid_t pid) {
    return applicationPathPrefix() + "/" + std::to_string(pid);
}

ApplicationObject::ApplicationObject(bus::BusServices& services, std::shared_ptr<UstApp> app,
                                     EventLoop& loop, CommandRunner runner)
    : services_(services), app_(std::move(app)), loop_(loop), runner_(std::move(runner)) {
    const std::string path = applicationObjectPath(app_->info.pid);
    announce("InterfacesAdded", [&](sd_bus_message* m) {
        bus::appendInterfacesAdded(m, path, kApplicationInterface, *this);
    });
}

ApplicationObject::~ApplicationObject() {
    const std::string path = applicationObjectPath(app_->info.pid);
    announce("InterfacesRemoved", [&](sd_bus_message* m) {
        bus::appendInterfacesRemoved(m, path, kApplicationInterface);
    });
}

void ApplicationObject::announce(const char* member, const bus::SignalSender::Body& body) {
    services_.signals.send(
        kManagerPath, "org.freedesktop.DBus.ObjectManager", member,
        [this](const auth::Caller& c) { return visibleTo(c); }, body);
}

bool ApplicationObject::visibleTo(const auth::Caller& caller) const {
    if (caller.uid == 0 || caller.uid == app_->info.uid)
        return true;
    return services_.authority.cachedForReading(caller.sender, auth::Action::TraceAllUsers)
        .value_or(false);
}

namespace {

/// The tracepoint list of the app behind `command` (a blocking, bounded
/// round trip; run on the app's strand). Throws Error(Failed).
Tracepoints queryTracepoints(int command) {
    const int handle = lttng_ust_ctl_tracepoint_list(command);
    if (handle < 0)
        throw Error(ErrorCode::Failed,
                    std::string("the app refused the tracepoint list: ") + ustErrorString(handle));
    Tracepoints out;
    for (;;) {
        lttng_ust_abi_tracepoint_iter iter{};
        const int r = lttng_ust_ctl_tracepoint_list_get(command, handle, &iter);
        if (r == -LTTNG_UST_ERR_NOENT)
            break;
        if (r < 0) {
            lttng_ust_ctl_release_handle(command, handle);
            throw Error(ErrorCode::Failed,
                        std::string("reading the tracepoint list failed: ") + ustErrorString(r));
        }
        iter.name[LTTNG_UST_ABI_SYM_NAME_LEN - 1] = '\0';
        const std::string full = iter.name;
        const auto colon = full.find(':');
        std::string provider = colon == std::string::npos ? std::string() : full.substr(0, colon);
        std::string event = colon == std::string::npos ? full : full.substr(colon + 1);
        const int32_t loglevel = iter.loglevel;
        out.emplace_back(std::move(provider), std::move(event), loglevel);
        if (out.size() > 100000)
            break; // a hostile app could list forever
    }
    lttng_ust_ctl_release_handle(command, handle);
    return out;
}

} // namespace

void ApplicationObject::listTracepoints(const std::shared_ptr<bus::MethodReply>& pending) {
    const auth::Caller caller = services_.peers.callerOf(pending->call());
    if (!visibleTo(caller)) {
        pending->returnError(sdbus::Error(
            kAccessDenied, "uid " + std::to_string(caller.uid) +
                               " may not query this application (it belongs to another user; "
                               "that needs polkit's org.tracectl.Tracing1.trace-all-users, "
                               "checked by ListApplications)"));
        return;
    }
    // The reply is sent from the loop once the app has answered.
    std::weak_ptr<UstApp> weak = app_;
    EventLoop& loop = loop_;
    runner_(app_->info.pid, [weak, pending, &loop] {
        std::function<void()> reply;
        if (auto app = weak.lock()) {
            try {
                auto list = queryTracepoints(app->command.get());
                reply = [pending, list = std::move(list)] {
                    pending->returnWith([&](sd_bus_message* m) {
                        bus::check(sd_bus_message_open_container(m, 'a', "(ssi)"), "a(ssi)");
                        for (const auto& [provider, event, loglevel] : list)
                            bus::check(sd_bus_message_append(m, "(ssi)", provider.c_str(),
                                                             event.c_str(), loglevel),
                                       "(ssi)");
                        bus::check(sd_bus_message_close_container(m), "a(ssi)");
                    });
                };
            } catch (const Error& e) {
                reply = [pending, e] { pending->returnError(toBusError(e)); };
            }
        } else {
            reply = [pending] {
                pending->returnError(sdbus::Error(kUnknownObject, "the application is gone"));
            };
        }
        loop.post(std::move(reply));
    });
}

int ApplicationObject::onListTracepoints(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<ApplicationObject>(
        m, userdata, "ListTracepoints",
        [](ApplicationObject& o, sd_bus_message*, auto reply) { o.listTracepoints(reply); });
}

namespace {

using Self = ApplicationObject;

void appendU(sd_bus_message* m, uint32_t v) {
    bus::check(sd_bus_message_append(m, "u", v), "u");
}
void appendS(sd_bus_message* m, const std::string& v) {
    bus::check(sd_bus_message_append(m, "s", v.c_str()), "s");
}

} // namespace

// Types and meanings: dbus/org.tracectl.Tracing1.Application.xml. All are
// fixed at registration.
const bus::Property<ApplicationObject> ApplicationObject::kProperties[7] = {
    {"Pid", "u", SD_BUS_VTABLE_PROPERTY_CONST,
     [](const Self& o, sd_bus_message* m) { appendU(m, static_cast<uint32_t>(o.app_->info.pid)); }},
    {"Uid", "u", SD_BUS_VTABLE_PROPERTY_CONST,
     [](const Self& o, sd_bus_message* m) { appendU(m, o.app_->info.uid); }},
    {"Gid", "u", SD_BUS_VTABLE_PROPERTY_CONST,
     [](const Self& o, sd_bus_message* m) { appendU(m, o.app_->info.gid); }},
    {"Name", "s", SD_BUS_VTABLE_PROPERTY_CONST,
     [](const Self& o, sd_bus_message* m) { appendS(m, o.app_->info.name); }},
    {"Bitness", "u", SD_BUS_VTABLE_PROPERTY_CONST,
     [](const Self& o, sd_bus_message* m) { appendU(m, o.app_->info.bitness); }},
    {"TracerVersion", "s", SD_BUS_VTABLE_PROPERTY_CONST,
     [](const Self& o, sd_bus_message* m) { appendS(m, o.app_->info.tracerVersion()); }},
    {"RegisteredAt", "t", SD_BUS_VTABLE_PROPERTY_CONST,
     [](const Self& o, sd_bus_message* m) {
         const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                             o.app_->info.registeredAt.time_since_epoch())
                             .count();
         bus::check(sd_bus_message_append(m, "t", static_cast<uint64_t>(us)), "t");
     }},
};

std::span<const sd_bus_vtable> ApplicationObject::members() {
    static const sd_bus_vtable table[] = {
        SD_BUS_METHOD_WITH_ARGS("ListTracepoints", SD_BUS_NO_ARGS,
                                SD_BUS_RESULT("a(ssi)", tracepoints), &Self::onListTracepoints,
                                SD_BUS_VTABLE_UNPRIVILEGED),
    };
    return table;
}

} // namespace tracectl
