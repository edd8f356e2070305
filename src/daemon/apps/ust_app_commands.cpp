// AppCommands over liblttng-ust-ctl.
#include "app_commands.hpp"
#include "common/error.hpp"
#include "ust_error.hpp"

#include <cstring>
#include <lttng/ust-ctl.h>

namespace tracectl {

namespace {

void check(int r, const std::string& what, const AppPeer& app) {
    if (r < 0)
        throw Error(ErrorCode::Failed,
                    what + " in app " + std::to_string(app.pid) + ": " + ustErrorString(r));
}

/// The object data a call on an existing app object needs: its handle only
/// (liblttng-ust-ctl reads nothing else of it for these commands).
lttng_ust_abi_object_data handleOnly(int handle, lttng_ust_abi_object_type type) {
    lttng_ust_abi_object_data o{};
    o.type = type;
    o.handle = handle;
    return o;
}

class UstAppCommands final : public AppCommands {
public:
    int createSession(const AppPeer& app) override {
        const int handle = lttng_ust_ctl_create_session(app.command);
        check(handle, "create_session", app);
        return handle;
    }

    void sendChannel(const AppPeer& app, int sessionHandle,
                     lttng_ust_abi_object_data* channel) override {
        check(lttng_ust_ctl_send_channel_to_ust(app.command, sessionHandle, channel),
              "sending a channel", app);
    }

    void sendStream(const AppPeer& app, lttng_ust_abi_object_data* channel,
                    lttng_ust_abi_object_data* stream) override {
        check(lttng_ust_ctl_send_stream_to_ust(app.command, channel, stream), "sending a stream",
              app);
    }

    UstObject addContext(const AppPeer& app, int channelHandle, int contextType) override {
        lttng_ust_context_attr attr{};
        attr.ctx = static_cast<lttng_ust_abi_context_type>(contextType);
        auto chan = handleOnly(channelHandle, LTTNG_UST_ABI_OBJECT_TYPE_CHANNEL);
        lttng_ust_abi_object_data* raw = nullptr;
        check(lttng_ust_ctl_add_context(app.command, &attr, &chan, &raw), "adding a context", app);
        return UstObject(raw);
    }

    UstObject createEvent(const AppPeer& app, int channelHandle,
                          const AppEventSpec& spec) override {
        lttng_ust_abi_event ev{};
        ev.instrumentation = LTTNG_UST_ABI_TRACEPOINT;
        std::strncpy(ev.name, spec.pattern.c_str(), LTTNG_UST_ABI_SYM_NAME_LEN - 1);
        ev.loglevel_type = spec.loglevelType;
        ev.loglevel = spec.loglevel;
        auto chan = handleOnly(channelHandle, LTTNG_UST_ABI_OBJECT_TYPE_CHANNEL);
        lttng_ust_abi_object_data* raw = nullptr;
        check(lttng_ust_ctl_create_event(app.command, &ev, &chan, &raw),
              "creating event '" + spec.pattern + "'", app);
        UstObject event(raw);
        if (!spec.filter.empty()) {
            // The bytes are a whole lttng_ust_abi_filter_bytecode (header +
            // data), built by filter/filter_bytecode.cpp; copied into storage
            // aligned for the struct.
            static_assert(sizeof(lttng_ust_abi_filter_bytecode) == 48);
            std::vector<uint64_t> storage((spec.filter.size() + 7) / 8);
            std::memcpy(storage.data(), spec.filter.data(), spec.filter.size());
            auto* bytecode = reinterpret_cast<lttng_ust_abi_filter_bytecode*>(storage.data());
            check(lttng_ust_ctl_set_filter(app.command, bytecode, event.get()),
                  "setting the filter", app);
        }
        if (!spec.exclusions.empty()) {
            const std::size_t size = sizeof(lttng_ust_abi_event_exclusion) +
                                     spec.exclusions.size() * LTTNG_UST_ABI_SYM_NAME_LEN;
            std::vector<char> buf(size, '\0');
            auto* excl = reinterpret_cast<lttng_ust_abi_event_exclusion*>(buf.data());
            excl->count = static_cast<uint32_t>(spec.exclusions.size());
            char* names = buf.data() + sizeof(lttng_ust_abi_event_exclusion);
            for (std::size_t i = 0; i < spec.exclusions.size(); ++i)
                std::strncpy(names + i * LTTNG_UST_ABI_SYM_NAME_LEN, spec.exclusions[i].c_str(),
                             LTTNG_UST_ABI_SYM_NAME_LEN - 1);
            check(lttng_ust_ctl_set_exclusion(app.command, excl, event.get()), "setting exclusions",
                  app);
        }
        check(lttng_ust_ctl_enable(app.command, event.get()), "enabling an event", app);
        return event;
    }

    void startSession(const AppPeer& app, int sessionHandle) override {
        check(lttng_ust_ctl_start_session(app.command, sessionHandle), "start_session", app);
        lttng_ust_ctl_wait_quiescent(app.command);
    }

    void setEnabled(const AppPeer& app, int objectHandle, bool enabled) override {
        // Both calls send the object's handle only (lttng-ust ust-ctl.c).
        lttng_ust_abi_object_data object{};
        object.handle = objectHandle;
        if (enabled) {
            check(lttng_ust_ctl_enable(app.command, &object), "enable", app);
            return;
        }
        const int r = lttng_ust_ctl_disable(app.command, &object);
        check(r, "disable", app);
        check(lttng_ust_ctl_wait_quiescent(app.command), "wait_quiescent", app);
    }
    void stopSession(const AppPeer& app, int sessionHandle) override {
        // Like lttng-sessiond: a stop that fails (the app is leaving) is
        // still followed by wait_quiescent, whose failure says nothing more.
        const int r = lttng_ust_ctl_stop_session(app.command, sessionHandle);
        lttng_ust_ctl_wait_quiescent(app.command);
        check(r, "stop_session", app);
    }
};

} // namespace

std::unique_ptr<AppCommands> makeUstAppCommands() {
    return std::make_unique<UstAppCommands>();
}

} // namespace tracectl
