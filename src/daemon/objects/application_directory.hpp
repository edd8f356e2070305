// The registered apps as the D-Bus thread sees them: one Application object
// each, removed when the app's socket hangs up; served to each caller as far
// as that caller may see them (a fallback vtable with a find callback and a
// node enumerator, sd_bus_add_fallback_vtable(3), sd_bus_add_node_enumerator(3)).
#pragma once

#include "common/event_loop.hpp"
#include "objects/application_object.hpp"
#include "objects/object_subtree.hpp"

#include <map>
#include <memory>
#include <vector>

namespace tracectl {

class ApplicationDirectory {
public:
    /// Serves every app object on services.bus (an ObjectSubtree); all must
    /// outlive this object.
    ApplicationDirectory(bus::BusServices& services, EventLoop& loop);
    ApplicationDirectory(const ApplicationDirectory&) = delete;
    ApplicationDirectory& operator=(const ApplicationDirectory&) = delete;

    /// Where Application objects run their command round trips.
    void setCommandRunner(ApplicationObject::CommandRunner runner) { runner_ = std::move(runner); }

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
    /// The object at `path`, if it is an app's.
    ApplicationObject* objectAt(const std::string& path) const;

    bus::BusServices& services_;
    EventLoop& loop_;
    ApplicationObject::CommandRunner runner_;
    std::map<pid_t, Entry> apps_;
    bus::ObjectSubtree<ApplicationObject> subtree_;
};

} // namespace tracectl
