#include "objects/application_directory.hpp"

#include "common/log.hpp"

#include <charconv>
#include <sys/epoll.h>

namespace tracectl {

ApplicationDirectory::ApplicationDirectory(bus::BusServices& services, EventLoop& loop)
    : services_(services), loop_(loop),
      subtree_(
          services, applicationPathPrefix(), kApplicationInterface,
          "the application belongs to another user; reading it needs polkit's "
          "org.tracectl.Tracing1.trace-all-users",
          [this](const std::string& path) { return objectAt(path); },
          [this] {
              std::vector<const ApplicationObject*> all;
              for (const auto& [pid, e] : apps_)
                  all.push_back(e.object.get());
              return all;
          }) {}

ApplicationObject* ApplicationDirectory::objectAt(const std::string& path) const {
    const std::string prefix = applicationPathPrefix() + "/";
    if (path.rfind(prefix, 0) != 0)
        return nullptr;
    pid_t pid = 0;
    const char* first = path.data() + prefix.size();
    const char* last = path.data() + path.size();
    const auto [end, ec] = std::from_chars(first, last, pid);
    // Only the path the object was published at: no sign, no leading
    // zero, no digits beyond pid_t (which would wrap onto another pid).
    if (ec != std::errc() || end != last || path != applicationObjectPath(pid))
        return nullptr;
    const auto it = apps_.find(pid);
    return it == apps_.end() ? nullptr : it->second.object.get();
}

void ApplicationDirectory::add(std::shared_ptr<UstApp> app) {
    const pid_t pid = app->info.pid;
    remove(pid);
    const int notifyFd = app->notify.get();
    Entry entry;
    entry.object = std::make_unique<ApplicationObject>(services_, std::move(app), loop_, runner_);
    // The notify socket carries no traffic the D-Bus thread reads; only its
    // hang-up (the app exited or closed it) is watched here.
    sd_event_source* s = nullptr;
    const int r = sd_event_add_io(loop_.get(), &s, notifyFd, EPOLLRDHUP,
                                  &ApplicationDirectory::onHangup, this);
    if (r < 0) {
        log::warning("cannot watch app pid " + std::to_string(pid) + "; dropping it");
        return;
    }
    entry.hangupWatch.reset(s);
    sd_event_source_set_description(s, "app-hangup");
    apps_[pid] = std::move(entry);
}

void ApplicationDirectory::remove(pid_t pid) {
    const auto it = apps_.find(pid);
    if (it == apps_.end())
        return;
    log::info("app " + it->second.object->info().name + " (pid " + std::to_string(pid) +
              ") unregistered");
    apps_.erase(it);
}

std::vector<std::string> ApplicationDirectory::visibleTo(uid_t viewer, bool seesAll) const {
    std::vector<std::string> out;
    for (const auto& [pid, e] : apps_)
        if (seesAll || e.object->info().uid == viewer)
            out.push_back(applicationObjectPath(pid));
    return out;
}

int ApplicationDirectory::onHangup(sd_event_source* s, int, uint32_t, void* userdata) {
    auto* self = static_cast<ApplicationDirectory*>(userdata);
    for (auto& [pid, e] : self->apps_) {
        if (e.hangupWatch.get() == s) {
            // Not from inside this source's own callback: on the next iteration.
            sd_event_source_set_enabled(s, SD_EVENT_OFF);
            const pid_t gone = pid;
            self->loop_.defer([self, gone] { self->remove(gone); });
            break;
        }
    }
    return 0;
}

} // namespace tracectl
