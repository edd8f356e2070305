#include "notify_thread.hpp"

#include "common/log.hpp"

#include <future>

namespace tracectl {

NotifyThread::NotifyThread(MessageHandler onMessage, GoneHandler onGone)
    : onMessage_(std::move(onMessage)), onGone_(std::move(onGone)) {
    thread_ = std::thread([this] {
        try {
            loop_.run();
        } catch (const std::exception& e) {
            log::error(std::string("the notify thread failed: ") + e.what());
        }
    });
}

NotifyThread::~NotifyThread() {
    loop_.post([this] {
        watched_.clear();
        loop_.exit(0);
    });
    thread_.join();
}

void NotifyThread::watch(std::shared_ptr<UstApp> app) {
    std::promise<void> done;
    auto ready = done.get_future();
    loop_.post([this, app = std::move(app), &done]() mutable {
        const int fd = app->notify.get();
        sd_event_source* s = nullptr;
        if (sd_event_add_io(loop_.get(), &s, fd, EPOLLIN | EPOLLRDHUP, &NotifyThread::onReadable,
                            this) >= 0)
            watched_[fd] = Watched{std::move(app), EventSourcePtr(s)};
        done.set_value();
    });
    ready.wait();
}

int NotifyThread::onReadable(sd_event_source*, int fd, uint32_t revents, void* userdata) {
    auto* self = static_cast<NotifyThread*>(userdata);
    const auto it = self->watched_.find(fd);
    if (it == self->watched_.end())
        return 0;
    bool keep = (revents & EPOLLIN) != 0;
    if (keep) {
        try {
            keep = self->onMessage_(*it->second.app);
        } catch (const std::exception& e) {
            log::warning(std::string("notify message failed: ") + e.what());
            keep = false;
        }
    }
    if (!keep) {
        const pid_t pid = it->second.app->info.pid;
        // Not from inside the source's own callback.
        sd_event_source_set_enabled(it->second.source.get(), SD_EVENT_OFF);
        self->loop_.defer([self, fd, pid] {
            self->watched_.erase(fd);
            self->onGone_(pid);
        });
    }
    return 0;
}

} // namespace tracectl
