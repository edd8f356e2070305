#include "bus/object_lookup.hpp"

#include <cstring>

namespace tracectl::bus {

int answerLookup(sd_bus* bus, const char* path, void* object, bool visible,
                 const char* ownInterface, const char* deniedWhy, void** found,
                 sd_bus_error* error) {
    sd_bus_message* m = sd_bus_get_current_message(bus);
    const char* callPath = m != nullptr ? sd_bus_message_get_path(m) : nullptr;
    const char* callInterface = m != nullptr ? sd_bus_message_get_interface(m) : nullptr;
    // The object's interface description is no secret (it is the same for
    // every object of the kind, and tools such as gdbus read it before
    // they call); only its listing and its properties are.
    const bool own = callInterface != nullptr &&
                     (std::strcmp(callInterface, ownInterface) == 0 ||
                      std::strcmp(callInterface, "org.freedesktop.DBus.Introspectable") == 0);
    if (visible || m == nullptr || own) {
        *found = object;
        return 1;
    }
    if (callPath == nullptr || std::strcmp(callPath, path) != 0)
        return 0;
    return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, deniedWhy);
}

} // namespace tracectl::bus
