// What the D-Bus objects ask of the kernel domain besides the session
// operations (domain_backend.hpp): whether it can be used here, and which
// tracepoints the kernel offers.
//
// Threads: the main loop; callbacks come there.
#pragma once

#include "common/error.hpp"

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tracectl {

/// One kernel tracepoint (tracefs `events/<system>/<event>`) and its fields
/// as its `format` file gives them, common_* fields left out.
struct KernelTracepointInfo {
    std::string system;
    std::string event;
    /// (name, C type as the format file spells it), in record order.
    std::vector<std::pair<std::string, std::string>> fields;
};

class KernelSupport {
public:
    virtual ~KernelSupport() = default;
    /// nullopt when the kernel domain works here (tracefs mounted, or
    /// mountable, and writable by the daemon); else why not, for
    /// Error.KernelUnavailable messages.
    virtual std::optional<std::string> unavailableReason() = 0;
    /// Every tracepoint of the running kernel, sorted by system and event;
    /// `done` (on the loop) gets them, or KernelUnavailable / Failed.
    using TracepointsDone =
        std::function<void(std::optional<Error>, std::vector<KernelTracepointInfo>)>;
    virtual void listTracepoints(TracepointsDone done) = 0;
};

} // namespace tracectl
