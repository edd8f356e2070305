// An event rule's filter expression (session/channel_config.hpp's
// EventRule), checked for its domain: compiled into lttng-ust bytecode
// (UST) or checked to translate into tracefs' filter syntax (kernel).
// Used by EnableEvents' options, LTTng session files and restart records
// alike.
#pragma once

#include "session/channel_config.hpp"

#include <string>

namespace tracectl {

/// Sets `r.filter` to `expression` and checks it for `r.domain`: a UST
/// filter is compiled into `r.filterBytecode`, a kernel one must translate
/// into tracefs' filter syntax. Throws Error(InvalidArgument) naming the
/// place where it does not compile.
void setEventFilter(EventRule& r, std::string expression);

} // namespace tracectl
