// The liblttng-ust-ctl round trips the tracer makes to a registered app on
// its command socket (a request/response stream: one call at a time per
// app). Behind an interface so that the tracer's app logic can be tested
// with a fake; the daemon uses makeUstAppCommands().
//
// Every call blocks until the app answers, for at most the socket's own
// bound (kAppSocketTimeout, SO_RCVTIMEO/SO_SNDTIMEO) or until a watchdog
// shuts the socket down (socket_deadlines.hpp). Call them on an executor
// thread (app_strands.hpp), never on a thread that owns state.
//
// Errors: every call throws Error(Failed) with "<what> in app <pid>: <why>"
// when the app refuses or the socket fails (liblttng-ust-ctl then shuts the
// socket down: every later call fails at once).
#pragma once

#include "apps/ust_object.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

namespace tracectl {

/// One event rule as the app's ABI takes it (lttng_ust_abi_event).
struct AppEventSpec {
    std::string pattern;  ///< event name or trailing-'*' wildcard, < LTTNG_UST_ABI_SYM_NAME_LEN
    int loglevelType = 0; ///< LTTNG_UST_ABI_LOGLEVEL_ALL / _RANGE / _SINGLE
    int loglevel = -1;    ///< lttng-ust level 0..14, -1 with _ALL
    std::vector<std::string> exclusions; ///< event names left out (each < SYM_NAME_LEN)
    /// `struct lttng_ust_abi_filter_bytecode` bytes (header + data), empty
    /// for none (EventRule::filterBytecode).
    std::vector<uint8_t> filter;
};

/// The app a call goes to: its command socket and, for messages, its pid.
struct AppPeer {
    int command = -1; ///< the app's command socket (kept open by the caller)
    pid_t pid = 0;
};

class AppCommands {
public:
    virtual ~AppCommands() = default;

    /// create_session: the app's handle (>= 0) of a new tracing session.
    virtual int createSession(const AppPeer& app) = 0;
    /// send_channel_to_ust: hands `channel` (our duplicate of a consumer
    /// channel) to session `sessionHandle`; afterwards channel->handle is
    /// the app's handle of it.
    virtual void sendChannel(const AppPeer& app, int sessionHandle,
                             lttng_ust_abi_object_data* channel) = 0;
    /// send_stream_to_ust: hands `stream` (our duplicate) to `channel`
    /// (sent before). `stream` may be released once this returns.
    virtual void sendStream(const AppPeer& app, lttng_ust_abi_object_data* channel,
                            lttng_ust_abi_object_data* stream) = 0;
    /// add_context of type `contextType` (lttng_ust_abi_context_type) to
    /// the app's channel `channelHandle`; the context object (never null).
    virtual UstObject addContext(const AppPeer& app, int channelHandle, int contextType) = 0;
    /// create_event + set_filter (if any) + set_exclusion (if any) + enable
    /// (lttng-sessiond's order) on the app's channel
    /// `channelHandle`; the enabled event object (never null).
    virtual UstObject createEvent(const AppPeer& app, int channelHandle,
                                  const AppEventSpec& event) = 0;
    /// lttng_ust_ctl_enable / lttng_ust_ctl_disable of the app's event or
    /// channel `objectHandle` (valid for both: lttng-ust ust-ctl.h), then,
    /// for a disable, wait_quiescent: once it returns, the app records
    /// nothing more through that object (until enabled again). lttng-ust
    /// answers an error to an enable of an enabled object and a disable of
    /// a disabled one: the caller keeps track of the state.
    virtual void setEnabled(const AppPeer& app, int objectHandle, bool enabled) = 0;
    /// start_session of `sessionHandle`, then wait_quiescent.
    virtual void startSession(const AppPeer& app, int sessionHandle) = 0;
    /// stop_session of `sessionHandle`, then wait_quiescent: once it
    /// returns, the app writes nothing more to that session's buffers.
    virtual void stopSession(const AppPeer& app, int sessionHandle) = 0;
};

/// The real calls, over liblttng-ust-ctl (ust_app_commands.cpp). Stateless,
/// thread-safe.
std::unique_ptr<AppCommands> makeUstAppCommands();

} // namespace tracectl
