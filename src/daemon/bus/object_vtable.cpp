#include "bus/object_vtable.hpp"

namespace tracectl::bus {

void appendInterfacesRemoved(sd_bus_message* m, const std::string& path, const char* interface) {
    check(sd_bus_message_append(m, "o", path.c_str()), "o");
    check(sd_bus_message_open_container(m, 'a', "s"), "as");
    for (const char* standard : kStandardInterfaces)
        check(sd_bus_message_append(m, "s", standard), "s");
    check(sd_bus_message_append(m, "s", interface), "s");
    check(sd_bus_message_close_container(m), "as");
}

} // namespace tracectl::bus
