#include "create_session_options.hpp"

#include "common/error.hpp"
#include "session_name.hpp"

namespace tracectl {

namespace {

std::string stringOption(const std::string& key, const sdbus::Variant& value) {
    if (!value.containsValueOfType<std::string>())
        throw Error(ErrorCode::InvalidArgument, "option '" + key + "' must be a string (s), not '" +
                                                    value.peekValueType() + "'");
    return value.get<std::string>();
}

} // namespace

SessionRequest readCreateSessionOptions(const std::string& name,
                                        const std::map<std::string, sdbus::Variant>& options) {
    SessionRequest request;
    request.name = name;
    for (const auto& [key, value] : options) {
        if (key == "output-path")
            request.outputPath = stringOption(key, value);
        else if (key == "mode")
            request.mode = stringOption(key, value);
        else if (key == "buffer-ownership")
            request.bufferOwnership = stringOption(key, value);
        else
            throw Error(ErrorCode::InvalidArgument,
                        "unknown option " + quoteForMessage(key) +
                            " (known: output-path, mode, buffer-ownership, interactive)");
    }
    return request;
}

} // namespace tracectl
