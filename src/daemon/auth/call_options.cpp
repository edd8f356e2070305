#include "auth/call_options.hpp"

#include "bus/typed_option.hpp"
#include "common/error.hpp"
#include "session/session_name.hpp"

namespace tracectl::auth {

bool takeInteractive(CallOptions& options) {
    const auto it = options.find("interactive");
    if (it == options.end())
        return false;
    const bool interactive = optionAs<bool>(it->first, it->second);
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
