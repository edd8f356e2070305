#include "application_directory.hpp"

#include "common/log.hpp"

#include <sys/epoll.h>

namespace tracectl {

void ApplicationDirectory::add(std::shared_ptr<UstApp> app) {
    const pid_t pid = app->info.pid;
    remove(pid);
    if (authority_ == nullptr || readers_ == nullptr) {
        log::warning("app pid " + std::to_string(pid) + " registered before the bus objects exist");
        return;
    }
    const int notifyFd = app->notify.get();
    Entry entry;
    entry.object = std::make_unique<ApplicationObject>(bus_, std::move(app), loop_, runner_,
                                                       *authority_, *readers_);
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
