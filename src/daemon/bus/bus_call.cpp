#include "bus/bus_call.hpp"

namespace tracectl {

sdbus::Error toBusError(const Error& e) {
    return sdbus::Error(std::string(errorInfo(e.code()).dbusName), e.what());
}

} // namespace tracectl
