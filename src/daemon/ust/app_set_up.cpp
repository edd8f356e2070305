#include "app_set_up.hpp"

#include <lttng/ust-abi.h>

namespace tracectl {

AppEventSpec eventSpecOf(const EventRule& rule) {
    AppEventSpec spec;
    spec.pattern = rule.pattern;
    spec.loglevelType = rule.loglevelMatch == LoglevelMatch::All ? LTTNG_UST_ABI_LOGLEVEL_ALL
                        : rule.loglevelMatch == LoglevelMatch::AtLeastAsSevere
                            ? LTTNG_UST_ABI_LOGLEVEL_RANGE
                            : LTTNG_UST_ABI_LOGLEVEL_SINGLE;
    spec.loglevel = rule.loglevelMatch == LoglevelMatch::All ? -1 : rule.loglevel;
    spec.exclusions = rule.exclusions;
    spec.filter = rule.filterBytecode;
    return spec;
}

AppSetUpResult setUpInApp(AppCommands& commands, AppSetUpRequest request, PendingRoutes& routes) {
    AppSetUpResult result;
    const Error cancelled(ErrorCode::Failed, "it left, or the session ended, meanwhile");
    // No call after a cancel: the app is gone, or no longer wanted.
    const auto goOn = [&] {
        if (routes.cancelled())
            throw cancelled;
    };
    try {
        result.sessionHandle = commands.createSession(request.app);
        if (!routes.set(result.sessionHandle, Route{request.session, request.trace, false, 0}))
            throw cancelled;
        for (auto& ch : request.channels) {
            // Ours until sent; kept (with the app's handle) for routes and events.
            UstObject& chan = result.channels[ch.name];
            chan = std::move(ch.channel);
            goOn();
            commands.sendChannel(request.app, result.sessionHandle, chan.get());
            if (!routes.set(chan->handle, Route{request.session, request.trace, true, ch.chanId}))
                throw cancelled;
            for (auto& stream : ch.streams) {
                goOn();
                commands.sendStream(request.app, chan.get(), stream.get());
                stream.reset(); // the app has its own now
            }
            for (const int type : ch.contexts) {
                goOn();
                result.objects.push_back(commands.addContext(request.app, chan->handle, type));
            }
            for (std::size_t i = 0; i < ch.events.size(); ++i) {
                goOn();
                const std::size_t index =
                    i < ch.ruleIndexes.size() ? ch.ruleIndexes[i] : result.events.size();
                result.events[index] =
                    commands.createEvent(request.app, chan->handle, ch.events[i]);
            }
            // lttng-ust creates channels enabled (its ABI answers an enable
            // of an enabled channel with an error): nothing more to do.
        }
    } catch (const Error& e) {
        result.error = e;
    }
    return result;
}

} // namespace tracectl
