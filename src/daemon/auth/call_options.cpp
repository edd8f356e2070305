#include "auth/call_options.hpp"

#include "common/error.hpp"
#include "session_name.hpp"

namespace tracectl::auth {

bool takeInteractive(CallOptions& options) {
    const auto it = options.find("interactive");
    if (it == options.end())
        return false;
    if (!it->second.containsValueOfType<bool>())
        throw Error(ErrorCode::InvalidArgument,
                    "option 'interactive' must be a boolean (b), not '" +
                        it->second.peekValueType() + "'");
    const bool interactive = it->second.get<bool>();
    options.erase(it);
    return interactive;
}

bool readInteractiveOnly(const CallOptions& options) {
    CallOptions copy = options;
    const bool interactive = takeInteractive(copy);
    if (!copy.empty())
        throw Error(ErrorCode::InvalidArgument, "unknown option " +
                                                    quoteForMessage(copy.begin()->first) +
                                                    " (known: interactive)");
    return interactive;
}

} // namespace tracectl::auth
