// Setting one session up in one app, as a job for an app's strand
// (app_strands.hpp): everything it needs is in the request (our duplicates
// of the trace's channel and stream objects, the context types and event
// rules), everything it made is in the result, posted back to the app
// thread. It touches no tracer state but the routes it is given.
#pragma once

#include "apps/app_commands.hpp"
#include "common/error.hpp"
#include "pending_routes.hpp"
#include "session/channel_config.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tracectl {

/// The ABI's form of `rule` (loglevel type and value, exclusions).
AppEventSpec eventSpecOf(const EventRule& rule);

struct AppSetUpRequest {
    AppPeer app;
    /// What the routes of the app's handles lead to (Route::session/trace).
    void* session = nullptr;
    void* trace = nullptr;
    struct Channel {
        std::string name;
        uint32_t chanId = 0;              ///< its CTF stream class id (Route::chanId)
        UstObject channel;                ///< our duplicate; sent to the app
        std::vector<UstObject> streams;   ///< our duplicates, one per CPU
        std::vector<int> contexts;        ///< lttng_ust_abi_context_type values, in order
        std::vector<AppEventSpec> events; ///< the session's enabled rules of this channel
        /// Parallel to `events`: each one's index in the session's rules
        /// (AppSetUpResult::events is keyed by it).
        std::vector<std::size_t> ruleIndexes;
    };
    std::vector<Channel> channels;
};

struct AppSetUpResult {
    /// Why it failed (the app refused, left, or the routes were cancelled);
    /// what it made so far is still below, to be released.
    std::optional<Error> error;
    int sessionHandle = -1;
    std::map<std::string, UstObject> channels; ///< by name, handle = the app's
    std::vector<UstObject> objects;            ///< contexts
    /// The event objects made, by rule index (Channel::ruleIndexes).
    std::map<std::size_t, UstObject> events;
};

/// create_session, then per channel: send it (its route added at once),
/// its streams, its contexts (before events, as lttng-sessiond does: the
/// app registers the channel with its context fields on its first event),
/// its events. The session handle's route is added before the first
/// channel goes. Stops at the first failure, and makes no call once
/// `routes` is cancelled (from another thread).
/// Blocks (app round trips): call on an executor thread.
AppSetUpResult setUpInApp(AppCommands& commands, AppSetUpRequest request, PendingRoutes& routes);

} // namespace tracectl
