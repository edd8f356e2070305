#include "objects/create_session_options.hpp"

#include "bus/typed_option.hpp"
#include "common/error.hpp"
#include "session/session_name.hpp"

namespace tracectl {

SessionRequest readCreateSessionOptions(const std::string& name,
                                        const std::map<std::string, sdbus::Variant>& options) {
    SessionRequest request;
    request.name = name;
    for (const auto& [key, value] : options) {
        if (key == "output-path")
            request.outputPath = optionAs<std::string>(key, value);
        else if (key == "mode")
            request.mode = optionAs<std::string>(key, value);
        else if (key == "buffer-ownership")
            request.bufferOwnership = optionAs<std::string>(key, value);
        else if (key == "url")
            request.url = optionAs<std::string>(key, value);
        else if (key == "control-url")
            request.controlUrl = optionAs<std::string>(key, value);
        else if (key == "data-url")
            request.dataUrl = optionAs<std::string>(key, value);
        else if (key == "live-timer")
            request.liveTimerUs = optionAs<uint64_t>(key, value);
        else if (key == "count-events")
            request.countEvents = optionAs<bool>(key, value);
        else
            throw Error(ErrorCode::InvalidArgument,
                        "unknown option " + quoteForMessage(key) +
                            " (known: output-path, url, control-url, data-url, mode, live-timer, "
                            "buffer-ownership, count-events, interactive)");
    }
    return request;
}

} // namespace tracectl
