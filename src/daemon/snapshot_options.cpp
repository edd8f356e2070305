#include "snapshot_options.hpp"

#include "common/error.hpp"
#include "session_name.hpp"

namespace tracectl {

uint64_t readSnapshotOptions(const std::map<std::string, sdbus::Variant>& options) {
    uint64_t maxSize = 0;
    for (const auto& [key, value] : options) {
        if (key == "max-size") {
            if (!value.containsValueOfType<uint64_t>())
                throw Error(ErrorCode::InvalidArgument,
                            "option 'max-size' must be a uint64 (t), not '" +
                                value.peekValueType() + "'");
            maxSize = value.get<uint64_t>();
        } else if (key == "interactive") {
            if (!value.containsValueOfType<bool>())
                throw Error(ErrorCode::InvalidArgument,
                            "option 'interactive' must be a boolean (b), not '" +
                                value.peekValueType() + "'");
        } else {
            throw Error(ErrorCode::InvalidArgument, "unknown option " + quoteForMessage(key) +
                                                        " (known: max-size, interactive)");
        }
    }
    return maxSize;
}

} // namespace tracectl
