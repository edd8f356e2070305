// What tracectld's objects share to be served with sd-bus vtables
// (sd_bus_add_object_vtable(3)): one table of properties per object type,
// read by the vtable's getter, by GetManagedObjects and by the
// InterfacesAdded/PropertiesChanged signals alike; and the method
// trampoline that turns exceptions into error replies.
#pragma once

#include "bus/bus_call.hpp"
#include "bus/method_reply.hpp"
#include "bus/sd_bus_handles.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace tracectl::bus {

/// One read-only property of object type T.
template <class T>
struct Property {
    const char* name;
    const char* signature; ///< D-Bus type of the value
    /// SD_BUS_VTABLE_PROPERTY_CONST or SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE
    /// (PropertiesChanged carries the new value).
    uint64_t flags;
    /// Appends the value (one complete `signature`); throws on sd-bus errors.
    void (*append)(const T& object, sd_bus_message* m);
};

/// The sd-bus getter of every property of T: userdata is the T (from the
/// vtable's userdata or its find callback); T::kProperties is its table.
template <class T>
int getProperty(sd_bus*, const char*, const char*, const char* property, sd_bus_message* reply,
                void* userdata, sd_bus_error* error) {
    const T& object = *static_cast<const T*>(userdata);
    for (const Property<T>& p : T::kProperties) {
        if (std::strcmp(p.name, property) != 0)
            continue;
        try {
            p.append(object, reply);
            return 1;
        } catch (const std::exception& e) {
            return sd_bus_error_set(error, SD_BUS_ERROR_FAILED, e.what());
        }
    }
    return sd_bus_error_setf(error, SD_BUS_ERROR_UNKNOWN_PROPERTY, "no property %s", property);
}

/// A complete vtable: START, `members` (methods and signals, no START or
/// END), one entry per property of T::kProperties, END. Keep it alive as
/// long as it is registered.
template <class T>
std::vector<sd_bus_vtable> buildVtable(std::span<const sd_bus_vtable> members) {
    std::vector<sd_bus_vtable> v;
    v.push_back(SD_BUS_VTABLE_START(0));
    v.insert(v.end(), members.begin(), members.end());
    for (const Property<T>& p : T::kProperties)
        v.push_back(SD_BUS_PROPERTY(p.name, p.signature, &getProperty<T>, 0, p.flags));
    v.push_back(SD_BUS_VTABLE_END);
    return v;
}

/// Appends a{sv}: the properties of `object` named in `names`, or all of
/// them if `names` is empty.
template <class T>
void appendProperties(sd_bus_message* m, const T& object, const std::vector<std::string>& names) {
    check(sd_bus_message_open_container(m, 'a', "{sv}"), "a{sv}");
    for (const Property<T>& p : T::kProperties) {
        if (!names.empty() && std::find(names.begin(), names.end(), p.name) == names.end())
            continue;
        check(sd_bus_message_open_container(m, 'e', "sv"), "{sv}");
        check(sd_bus_message_append(m, "s", p.name), "s");
        check(sd_bus_message_open_container(m, 'v', p.signature), "v");
        p.append(object, m);
        check(sd_bus_message_close_container(m), "v");
        check(sd_bus_message_close_container(m), "{sv}");
    }
    check(sd_bus_message_close_container(m), "a{sv}");
}

/// The interfaces every tracectld object has besides its own, as sd-bus
/// serves them, in the order GetManagedObjects lists them.
inline constexpr const char* kStandardInterfaces[] = {"org.freedesktop.DBus.Peer",
                                                      "org.freedesktop.DBus.Introspectable",
                                                      "org.freedesktop.DBus.Properties"};

/// The body of ObjectManager.InterfacesAdded for `object` at `path` with
/// interface `interface`: o a{sa{sv}}.
template <class T>
void appendInterfacesAdded(sd_bus_message* m, const std::string& path, const char* interface,
                           const T& object) {
    check(sd_bus_message_append(m, "o", path.c_str()), "o");
    check(sd_bus_message_open_container(m, 'a', "{sa{sv}}"), "a{sa{sv}}");
    for (const char* standard : kStandardInterfaces)
        check(sd_bus_message_append(m, "{sa{sv}}", standard, 0), "{sa{sv}}");
    check(sd_bus_message_open_container(m, 'e', "sa{sv}"), "{sa{sv}}");
    check(sd_bus_message_append(m, "s", interface), "s");
    appendProperties(m, object, {});
    check(sd_bus_message_close_container(m), "{sa{sv}}");
    check(sd_bus_message_close_container(m), "a{sa{sv}}");
}

/// The body of ObjectManager.InterfacesRemoved: o as.
void appendInterfacesRemoved(sd_bus_message* m, const std::string& path, const char* interface);

/// The body of Properties.PropertiesChanged for `names` of `object`:
/// s a{sv} as (new values given, nothing only invalidated).
template <class T>
void appendPropertiesChanged(sd_bus_message* m, const char* interface, const T& object,
                             const std::vector<std::string>& names) {
    check(sd_bus_message_append(m, "s", interface), "s");
    appendProperties(m, object, names);
    check(sd_bus_message_append(m, "as", 0), "as");
}

/// A method handler of T: `body(object, m, reply)` reads the arguments
/// from `m` and answers `reply` now or later. A tracectl::Error,
/// sdbus::Error or other exception it throws answers the call with the
/// matching error unless it was answered already.
template <class T, class Body>
int runMethod(sd_bus_message* m, void* userdata, const char* member, Body&& body) {
    auto reply = std::make_shared<MethodReply>(m);
    try {
        handleCall(member, [&] { body(*static_cast<T*>(userdata), m, reply); });
    } catch (const sdbus::Error& e) {
        reply->returnError(e);
    }
    return 1;
}

} // namespace tracectl::bus
