// SessionObject: Session.DisableEvents and Session.DisableChannel
// (dbus/org.tracectl.Tracing1.Session.xml), authorized as EnableEvents is
// (auth/access_policy.hpp), answered once every domain applied them.
#include "bus/bus_call.hpp"
#include "bus/option_reader.hpp"
#include "common/log.hpp"
#include "objects/channel_options.hpp"
#include "objects/session_object.hpp"

namespace tracectl {

void SessionObject::disableEvents(const Pending& pending, std::string domain, std::string channel,
                                  std::string pattern, const auth::CallOptions& options) {
    bool interactive = false;
    if (!guarded("DisableEvents", pending, [&] {
            interactive =
                auth::readInteractiveOnly(options) || pending->allowsInteractiveAuthorization();
        }))
        return;
    const auto extra = domain == "kernel" ? std::optional(auth::Action::TraceKernel) : std::nullopt;
    authorize("DisableEvents", interactive, extra, pending,
              [this, pending, domain = std::move(domain), channel = std::move(channel),
               pattern = std::move(pattern)](const auth::Caller&) {
                  const TracingDomain d = checkDomain(domain);
                  checkKernelAvailable(d);
                  session_.disableEvents(d, channel, pattern, answer(pending));
              });
}

void SessionObject::disableChannel(const Pending& pending, std::string domain, std::string channel,
                                   const auth::CallOptions& options) {
    bool interactive = false;
    if (!guarded("DisableChannel", pending, [&] {
            interactive =
                auth::readInteractiveOnly(options) || pending->allowsInteractiveAuthorization();
        }))
        return;
    const auto extra = domain == "kernel" ? std::optional(auth::Action::TraceKernel) : std::nullopt;
    authorize("DisableChannel", interactive, extra, pending,
              [this, pending, domain = std::move(domain),
               channel = std::move(channel)](const auth::Caller&) {
                  const TracingDomain d = checkDomain(domain);
                  checkKernelAvailable(d);
                  session_.disableChannel(d, channel, answer(pending));
              });
}

int SessionObject::onDisableEvents(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<SessionObject>(
        m, userdata, "DisableEvents", [](SessionObject& o, sd_bus_message* msg, auto r) {
            std::string domain = bus::readStringArgument(msg);
            std::string channel = bus::readStringArgument(msg);
            std::string pattern = bus::readStringArgument(msg);
            o.disableEvents(r, std::move(domain), std::move(channel), std::move(pattern),
                            bus::readOptions(msg));
        });
}

int SessionObject::onDisableChannel(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<SessionObject>(
        m, userdata, "DisableChannel", [](SessionObject& o, sd_bus_message* msg, auto r) {
            std::string domain = bus::readStringArgument(msg);
            std::string channel = bus::readStringArgument(msg);
            o.disableChannel(r, std::move(domain), std::move(channel), bus::readOptions(msg));
        });
}

} // namespace tracectl
