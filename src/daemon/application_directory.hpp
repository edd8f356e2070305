// The registered apps as the D-Bus thread sees them: one Application object
// each, removed when the app's socket hangs up.
#pragma once

#include "application_object.hpp"
#include "common/event_loop.hpp"

#include <map>
#include <memory>
#include <vector>

namespace tracectl {

class ApplicationDirectory {
public:
    ApplicationDirectory(sdbus::IConnection& bus, EventLoop& loop) : bus_(bus), loop_(loop) {}
    ApplicationDirectory(const ApplicationDirectory&) = delete;
    ApplicationDirectory& operator=(const ApplicationDirectory&) = delete;

    /// Where Application objects run their command round trips.
    void setCommandRunner(ApplicationObject::CommandRunner runner) { runner_ = std::move(runner); }
    /// Who may read the apps' objects: `authority` must outlive the apps
    /// (the ManagerObject sets it and clears the apps when it goes). Apps
    /// are not published before this is called.
    void publishThrough(auth::PolkitAuthority* authority, const auth::ReadCallTracker* readers) {
        authority_ = authority;
        readers_ = readers;
    }

    /// Publishes a newly registered app; an older app of the same pid (its
    /// hang-up not seen yet) is removed first. Call on the D-Bus thread.
    void add(std::shared_ptr<UstApp> app);
    /// Unpublishes the app of `pid`, if any.
    void remove(pid_t pid);

    /// Paths of the apps `viewer` may see, by pid: its own, or all.
    std::vector<std::string> visibleTo(uid_t viewer, bool seesAll) const;
    std::size_t size() const noexcept { return apps_.size(); }
    /// Unpublishes every app (InterfacesRemoved each).
    void clear() { apps_.clear(); }

private:
    struct Entry {
        std::unique_ptr<ApplicationObject> object;
        EventSourcePtr hangupWatch;
    };
    static int onHangup(sd_event_source* s, int fd, uint32_t revents, void* userdata);

    sdbus::IConnection& bus_;
    EventLoop& loop_;
    ApplicationObject::CommandRunner runner_;
    auth::PolkitAuthority* authority_ = nullptr;
    const auth::ReadCallTracker* readers_ = nullptr;
    std::map<pid_t, Entry> apps_;
};

} // namespace tracectl
