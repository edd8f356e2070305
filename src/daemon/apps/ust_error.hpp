// Text for the error codes liblttng-ust-ctl calls return.
#pragma once

#include <string>

namespace tracectl {

/// Describes `code` as returned by an lttng_ust_ctl_* call: a negative
/// LTTNG_UST_ERR_* value (ust-error.h) or a negative errno. The library's
/// own lttng_ust_strerror() lives in liblttng-ust, which a daemon must not
/// load (it would register the daemon as a traced app).
std::string ustErrorString(int code);

} // namespace tracectl
