#include "ust_error.hpp"

#include <cstring>
#include <lttng/ust-error.h>

namespace tracectl {

std::string ustErrorString(int code) {
    const int c = code < 0 ? -code : code;
    switch (c) {
    case LTTNG_UST_ERR:
        return "unknown LTTng-UST error";
    case LTTNG_UST_ERR_NOENT:
        return "no entry";
    case LTTNG_UST_ERR_EXIST:
        return "object exists";
    case LTTNG_UST_ERR_INVAL:
        return "invalid argument";
    case LTTNG_UST_ERR_PERM:
        return "permission denied";
    case LTTNG_UST_ERR_NOSYS:
        return "not implemented";
    case LTTNG_UST_ERR_EXITING:
        return "the process is exiting";
    case LTTNG_UST_ERR_INVAL_MAGIC:
        return "invalid magic number";
    case LTTNG_UST_ERR_INVAL_SOCKET_TYPE:
        return "invalid socket type";
    case LTTNG_UST_ERR_UNSUP_MAJOR:
        return "unsupported major version";
    case LTTNG_UST_ERR_PEERCRED:
        return "cannot get the socket's peer credentials";
    case LTTNG_UST_ERR_PEERCRED_PID:
        return "the peer is in another pid namespace";
    default:
        return c < LTTNG_UST_ERR ? std::strerror(c) : "LTTng-UST error " + std::to_string(c);
    }
}

} // namespace tracectl
