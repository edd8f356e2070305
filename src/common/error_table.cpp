#include "error.hpp"

#include <array>
#include <cerrno>

namespace tracectl {

namespace {

// Indexed by ErrorCode; keep in the enum's order (checked by a unit test).
constexpr std::array kTable{
    ErrorInfo{"org.tracectl.Tracing1.Error.NoSuchSession", ENOENT},
    ErrorInfo{"org.tracectl.Tracing1.Error.SessionExists", EEXIST},
    ErrorInfo{"org.tracectl.Tracing1.Error.InvalidName", EINVAL},
    ErrorInfo{"org.tracectl.Tracing1.Error.InvalidArgument", EINVAL},
    ErrorInfo{"org.tracectl.Tracing1.Error.WrongState", EBUSY},
    ErrorInfo{"org.tracectl.Tracing1.Error.LimitExceeded", ENOSPC},
    ErrorInfo{"org.tracectl.Tracing1.Error.EventRuleExists", EEXIST},
    ErrorInfo{"org.tracectl.Tracing1.Error.KernelUnavailable", ENOTSUP},
    ErrorInfo{"org.tracectl.Tracing1.Error.NoSuchEventRule", ENOENT},
    ErrorInfo{"org.tracectl.Tracing1.Error.RelayUnavailable", ECONNREFUSED},
    ErrorInfo{"org.tracectl.Tracing1.Error.Failed", EIO},
};
static_assert(kTable.size() == static_cast<std::size_t>(ErrorCode::Failed) + 1);

} // namespace

const ErrorInfo& errorInfo(ErrorCode code) noexcept {
    return kTable[static_cast<std::size_t>(code)];
}

} // namespace tracectl
