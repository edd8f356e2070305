// A fake AppCommands for unit tests: every call is recorded (per app, in
// order), handles are numbered per app from 1, and a test may make a call
// of an app fail, or run a hook (hang, cancel, check routes) before it.
#pragma once

#include "apps/app_commands.hpp"
#include "common/error.hpp"

#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace tracectl::testing {

class FakeAppCommands final : public AppCommands {
public:
    /// Run before call `name` ("create_session", "send_channel",
    /// "send_stream", "add_context", "create_event", "enable", "disable",
    /// "start", "stop") of
    /// app `pid`, on the calling (executor) thread; may throw Error.
    using Hook = std::function<void(pid_t pid, const std::string& name)>;
    Hook before;

    /// The calls of app `pid` so far, in order ("create_event <pattern>").
    std::vector<std::string> calls(pid_t pid) const {
        std::lock_guard lock(mutex_);
        const auto it = calls_.find(pid);
        return it == calls_.end() ? std::vector<std::string>{} : it->second;
    }

    int createSession(const AppPeer& app) override { return call(app, "create_session"); }
    void sendChannel(const AppPeer& app, int, lttng_ust_abi_object_data* channel) override {
        channel->handle = call(app, "send_channel");
    }
    void sendStream(const AppPeer& app, lttng_ust_abi_object_data*,
                    lttng_ust_abi_object_data*) override {
        call(app, "send_stream");
    }
    UstObject addContext(const AppPeer& app, int, int) override {
        return object(call(app, "add_context"), LTTNG_UST_ABI_OBJECT_TYPE_CONTEXT);
    }
    UstObject createEvent(const AppPeer& app, int, const AppEventSpec& event) override {
        return object(call(app, "create_event", event.pattern), LTTNG_UST_ABI_OBJECT_TYPE_EVENT);
    }
    void setEnabled(const AppPeer& app, int handle, bool enabled) override {
        call(app, enabled ? "enable" : "disable", std::to_string(handle));
    }
    void startSession(const AppPeer& app, int) override { call(app, "start"); }
    void stopSession(const AppPeer& app, int) override { call(app, "stop"); }

    /// A channel object as the consumer's would be, without fds.
    static UstObject channel() { return object(-1, LTTNG_UST_ABI_OBJECT_TYPE_CHANNEL); }
    static UstObject stream() { return object(-1, LTTNG_UST_ABI_OBJECT_TYPE_STREAM); }

private:
    int call(const AppPeer& app, const std::string& name, const std::string& arg = "") {
        if (before)
            before(app.pid, name);
        std::lock_guard lock(mutex_);
        calls_[app.pid].push_back(arg.empty() ? name : name + " " + arg);
        return ++handles_[app.pid];
    }
    static UstObject object(int handle, lttng_ust_abi_object_type type) {
        auto* o = static_cast<lttng_ust_abi_object_data*>(
            std::calloc(1, sizeof(lttng_ust_abi_object_data)));
        o->type = type;
        o->handle = handle;
        if (type == LTTNG_UST_ABI_OBJECT_TYPE_CHANNEL)
            o->u.channel.wakeup_fd = -1;
        if (type == LTTNG_UST_ABI_OBJECT_TYPE_STREAM) {
            o->u.stream.shm_fd = -1;
            o->u.stream.wakeup_fd = -1;
        }
        return UstObject(o);
    }

    mutable std::mutex mutex_;
    std::map<pid_t, std::vector<std::string>> calls_;
    std::map<pid_t, int> handles_;
};

} // namespace tracectl::testing
