// Services the notify sockets of registered apps on a thread of its own:
// during lttng_ust_ctl_start_session an app registers its channels, events
// and enums there and blocks until they are answered, while the main loop
// waits for the app's reply to start_session (LTTNG-NOTES.md). Serving both
// from one thread would deadlock.
#pragma once

#include "apps/ust_app.hpp"
#include "common/event_loop.hpp"

#include <functional>
#include <map>
#include <memory>
#include <thread>

namespace tracectl {

class NotifyThread {
public:
    /// Called on the notify thread when the app's notify socket is readable;
    /// returns false if the app must be dropped (bad message, hang-up).
    using MessageHandler = std::function<bool(UstApp&)>;
    /// Called on the notify thread once an app was dropped.
    using GoneHandler = std::function<void(pid_t)>;

    NotifyThread(MessageHandler onMessage, GoneHandler onGone);
    ~NotifyThread();
    NotifyThread(const NotifyThread&) = delete;
    NotifyThread& operator=(const NotifyThread&) = delete;

    /// Thread-safe: starts serving `app`'s notify socket. Returns once the
    /// watch is in place, so a command sent after it is answered.
    void watch(std::shared_ptr<UstApp> app);

private:
    static int onReadable(sd_event_source* s, int fd, uint32_t revents, void* userdata);

    struct Watched {
        std::shared_ptr<UstApp> app;
        EventSourcePtr source;
    };
    EventLoop loop_;
    MessageHandler onMessage_;
    GoneHandler onGone_;
    std::map<int, Watched> watched_; // by notify fd; notify thread only
    std::thread thread_;
};

} // namespace tracectl
