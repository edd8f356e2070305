// The one error type of the metadata registry. An app's registration that
// the registry refuses becomes a negative errno in the notify reply
// (lttng_ust_ctl_reply_register_{channel,event,enum}(..., ret_code)), the way
// lttng-sessiond answers: the app then skips that channel/event/enum and
// keeps running.
#pragma once

#include <stdexcept>
#include <string>

namespace tracectl::metadata {

/// Thrown by every registry call that refuses its input. errnoValue() is
/// positive: EINVAL (malformed or unsupported description), ENOENT (unknown
/// channel or enum), E2BIG (a RegistryLimits bound), EOVERFLOW (an id space
/// is exhausted). The registry is left as it was before the call.
class MetadataError : public std::runtime_error {
public:
    MetadataError(int errnoValue, const std::string& message)
        : std::runtime_error(message), errno_(errnoValue) {}
    int errnoValue() const noexcept { return errno_; }

private:
    int errno_;
};

} // namespace tracectl::metadata
