// The org.tracectl.Tracing1.Application object of one registered app
// (/org/tracectl/Tracing1/application/<pid>).
#pragma once

#include "application_adaptor.h"
#include "apps/ust_app.hpp"
#include "auth/polkit_authority.hpp"
#include "auth/read_call_tracker.hpp"
#include "common/event_loop.hpp"

#include <functional>
#include <memory>
#include <sdbus-c++/sdbus-c++.h>

namespace tracectl {

/// Object path of an app: kManagerPath + "/application/" + pid.
std::string applicationObjectPath(pid_t pid);

class ApplicationObject final
    : public sdbus::AdaptorInterfaces<org::tracectl::Tracing1::Application_adaptor,
                                      sdbus::Properties_adaptor, sdbus::ManagedObject_adaptor> {
public:
    /// Runs a job on the app thread (UstAppThread::submit).
    using CommandRunner = std::function<void(std::function<void()>)>;

    /// Registers and announces (InterfacesAdded) the object.
    /// `loop` is the D-Bus thread's loop, where replies are sent from.
    /// Callers of another uid read it only with a cached trace-all-users
    /// grant in `authority` (as ListApplications checks it).
    ApplicationObject(sdbus::IConnection& bus, std::shared_ptr<UstApp> app, EventLoop& loop,
                      CommandRunner runner, auth::PolkitAuthority& authority,
                      const auth::ReadCallTracker& readers);
    /// Announces the removal (InterfacesRemoved) and unregisters.
    ~ApplicationObject();
    ApplicationObject(const ApplicationObject&) = delete;
    ApplicationObject& operator=(const ApplicationObject&) = delete;

    const UstAppInfo& info() const noexcept { return app_->info; }

private:
    void ListTracepoints(
        sdbus::Result<std::vector<sdbus::Struct<std::string, std::string, int32_t>>>&& result)
        override;
    uint32_t Pid() override { return checkReader(), static_cast<uint32_t>(app_->info.pid); }
    uint32_t Uid() override { return checkReader(), app_->info.uid; }
    uint32_t Gid() override { return checkReader(), app_->info.gid; }
    std::string Name() override { return checkReader(), app_->info.name; }
    uint32_t Bitness() override { return checkReader(), app_->info.bitness; }
    std::string TracerVersion() override { return checkReader(), app_->info.tracerVersion(); }
    uint64_t RegisteredAt() override { return checkReader(), registeredAtUs(); }
    uint64_t registeredAtUs() const;

    /// May `caller` see this app: root, its uid, or a cached
    /// trace-all-users grant.
    bool mayRead(const auth::Caller& caller) const;
    /// In a Properties or ObjectManager call (readers_): throws
    /// AccessDenied unless mayRead().
    void checkReader() const;

    std::shared_ptr<UstApp> app_;
    EventLoop& loop_;
    CommandRunner runner_;
    auth::PolkitAuthority& authority_;
    const auth::ReadCallTracker& readers_;
};

} // namespace tracectl
