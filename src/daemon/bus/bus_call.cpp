#include "bus/bus_call.hpp"

#include "common/log.hpp"

namespace tracectl {

sdbus::Error toBusError(const Error& e) {
    if (e.code() == ErrorCode::Failed)
        log::error(std::string("internal failure: ") + e.what());
    return sdbus::Error(std::string(errorInfo(e.code()).dbusName), e.what());
}

} // namespace tracectl
