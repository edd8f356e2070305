#include "objects/snapshot_options.hpp"

#include "bus/typed_option.hpp"
#include "common/error.hpp"
#include "session/session_name.hpp"

namespace tracectl {

uint64_t readSnapshotOptions(const std::map<std::string, sdbus::Variant>& options) {
    uint64_t maxSize = 0;
    for (const auto& [key, value] : options) {
        if (key == "max-size")
            maxSize = optionAs<uint64_t>(key, value);
        else
            throw Error(ErrorCode::InvalidArgument, "unknown option " + quoteForMessage(key) +
                                                        " (known: max-size, interactive)");
    }
    return maxSize;
}

} // namespace tracectl
