// The org.tracectl.Tracing1.Application object of one registered app
// (/org/tracectl/Tracing1/application/<pid>), served through the fallback
// vtable the ApplicationDirectory registers for every app.
#pragma once

#include "apps/ust_app.hpp"
#include "bus/object_vtable.hpp"
#include "common/event_loop.hpp"
#include "objects/bus_services.hpp"

#include <functional>
#include <memory>
#include <span>

namespace tracectl {

/// Object path of an app: kManagerPath + "/application/" + pid.
std::string applicationObjectPath(pid_t pid);
/// The parent of every app object: kManagerPath + "/application".
std::string applicationPathPrefix();

inline constexpr const char* kApplicationInterface = "org.tracectl.Tracing1.Application";

class ApplicationObject final {
public:
    /// Runs a round trip to app `pid` off the loop, in order with the
    /// tracer's own (UstTracer::withApp); the job posts its reply back.
    using CommandRunner = std::function<void(pid_t pid, std::function<void()> job)>;

    /// Announces (InterfacesAdded) the object to the peers that may see it.
    /// `loop` is the D-Bus thread's loop, where replies are sent from.
    ApplicationObject(bus::BusServices& services, std::shared_ptr<UstApp> app, EventLoop& loop,
                      CommandRunner runner);
    /// Announces the removal (InterfacesRemoved).
    ~ApplicationObject();
    ApplicationObject(const ApplicationObject&) = delete;
    ApplicationObject& operator=(const ApplicationObject&) = delete;

    const UstAppInfo& info() const noexcept { return app_->info; }
    std::string path() const { return applicationObjectPath(app_->info.pid); }

    /// May `caller` see this app: root, its uid, or a cached trace-all-users
    /// grant (as ListApplications checks it). Never asks polkit.
    bool visibleTo(const auth::Caller& caller) const;

    /// The methods of the Application interface (no START/END); userdata:
    /// the ApplicationObject.
    static std::span<const sd_bus_vtable> members();
    static const bus::Property<ApplicationObject> kProperties[7];

private:
    static int onListTracepoints(sd_bus_message* m, void* userdata, sd_bus_error* error);
    void listTracepoints(const std::shared_ptr<bus::MethodReply>& reply);
    /// Sends an ObjectManager signal about this object to who may see it.
    void announce(const char* member, const bus::SignalSender::Body& body);

    bus::BusServices& services_;
    std::shared_ptr<UstApp> app_;
    EventLoop& loop_;
    CommandRunner runner_;
};

} // namespace tracectl
