#include "auth/access_policy.hpp"

namespace tracectl::auth {

std::string_view actionId(Action action) noexcept {
    switch (action) {
    case Action::TraceOwn:
        return "org.tracectl.Tracing1.trace-own";
    case Action::TraceAllUsers:
        return "org.tracectl.Tracing1.trace-all-users";
    case Action::TraceKernel:
        return "org.tracectl.Tracing1.trace-kernel";
    case Action::ManageAllSessions:
        return "org.tracectl.Tracing1.manage-all-sessions";
    }
    return "org.tracectl.Tracing1.invalid";
}

std::string_view actionPurpose(Action action) noexcept {
    switch (action) {
    case Action::TraceOwn:
        return "create tracing sessions and trace their own applications";
    case Action::TraceAllUsers:
        return "trace the applications of other users";
    case Action::TraceKernel:
        return "trace the kernel";
    case Action::ManageAllSessions:
        return "see and control the tracing sessions of other users";
    }
    return "do this";
}

} // namespace tracectl::auth
