#include "application_object.hpp"

#include "apps/ust_error.hpp"
#include "bus_call.hpp"
#include "common/log.hpp"

#include <lttng/ust-ctl.h>
#include <lttng/ust-error.h>

namespace tracectl {

using ApplicationIface = org::tracectl::Tracing1::Application_adaptor;
using Tracepoints = std::vector<sdbus::Struct<std::string, std::string, int32_t>>;

std::string applicationObjectPath(pid_t pid) {
    return std::string(kManagerPath) + "/application/" + std::to_string(pid);
}

ApplicationObject::ApplicationObject(sdbus::IConnection& bus, std::shared_ptr<UstApp> app,
                                     EventLoop& loop, CommandRunner runner,
                                     auth::PolkitAuthority& authority,
                                     const auth::ReadCallTracker& readers)
    : AdaptorInterfaces(bus, applicationObjectPath(app->info.pid)), app_(std::move(app)),
      loop_(loop), runner_(std::move(runner)), authority_(authority), readers_(readers) {
    registerAdaptor();
    // Every interface of the object, as GetManagedObjects lists them.
    emitInterfacesAddedSignal();
}

ApplicationObject::~ApplicationObject() {
    try {
        emitInterfacesRemovedSignal();
    } catch (const std::exception& e) {
        log::warning(std::string("announcing an app's removal failed: ") + e.what());
    }
    unregisterAdaptor();
}

bool ApplicationObject::mayRead(const auth::Caller& caller) const {
    if (caller.uid == 0 || caller.uid == app_->info.uid)
        return true;
    return authority_.cached(caller.sender, auth::Action::TraceAllUsers).value_or(false);
}

void ApplicationObject::checkReader() const {
    const auto& reader = readers_.reader();
    if (!reader || mayRead(*reader))
        return;
    throw sdbus::Error(kAccessDenied, "the application belongs to another user; reading it "
                                      "needs polkit's org.tracectl.Tracing1.trace-all-users "
                                      "(call ListApplications first to have it checked)");
}

uint64_t ApplicationObject::registeredAtUs() const {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                     app_->info.registeredAt.time_since_epoch())
                                     .count());
}

namespace {

/// The tracepoint list of the app behind `command` (a blocking, bounded
/// round trip; run on the app thread). Throws Error(Failed).
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

void ApplicationObject::ListTracepoints(sdbus::Result<Tracepoints>&& result) {
    const sdbus::Message* msg = getObject().getCurrentlyProcessedMessage();
    if (msg == nullptr || !mayRead(auth::Caller{msg->getSender(), msg->getCredsEuid()})) {
        result.returnError(sdbus::Error(
            kAccessDenied, "uid " + std::to_string(callerUid(getObject())) +
                               " may not query this application (it belongs to another user; "
                               "that needs polkit's org.tracectl.Tracing1.trace-all-users, "
                               "checked by ListApplications)"));
        return;
    }
    // The reply is sent from the D-Bus thread once the app thread has the answer.
    auto pending = std::make_shared<sdbus::Result<Tracepoints>>(std::move(result));
    std::weak_ptr<UstApp> weak = app_;
    EventLoop& loop = loop_;
    runner_([weak, pending, &loop] {
        std::function<void()> reply;
        if (auto app = weak.lock()) {
            try {
                auto list = queryTracepoints(app->command.get());
                reply = [pending, list = std::move(list)] { pending->returnResults(list); };
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

} // namespace tracectl
