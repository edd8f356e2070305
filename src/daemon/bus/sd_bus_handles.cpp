#include "bus/sd_bus_handles.hpp"

#include <system_error>

namespace tracectl::bus {

int check(int r, const char* what) {
    if (r < 0)
        throw std::system_error(-r, std::generic_category(), what);
    return r;
}

} // namespace tracectl::bus
