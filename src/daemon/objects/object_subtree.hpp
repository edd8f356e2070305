// Serves every object of one kind below a path prefix (sessions, apps)
// with one fallback vtable and one node enumerator
// (sd_bus_add_fallback_vtable(3), sd_bus_add_node_enumerator(3)), so that
// each caller is shown only the objects it may see (bus/object_lookup.hpp).
#pragma once

#include "bus/node_list.hpp"
#include "bus/object_lookup.hpp"
#include "bus/object_vtable.hpp"
#include "objects/bus_services.hpp"

#include <cerrno>
#include <functional>
#include <string>
#include <vector>

namespace tracectl::bus {

/// T: has `static std::span<const sd_bus_vtable> members()`,
/// `static const Property<T> kProperties[]`, `bool visibleTo(const
/// auth::Caller&) const` and `std::string path() const`.
template <class T>
class ObjectSubtree {
public:
    /// The object published at exactly `path`, or nullptr.
    using Find = std::function<T*(const std::string& path)>;
    /// Every object published now.
    using List = std::function<std::vector<const T*>()>;

    /// Registers `interface` (T's members and properties) for every path
    /// below `prefix` on services.bus. A caller that may not see an object
    /// is refused its properties with AccessDenied and `deniedWhy`.
    /// `services` must outlive this object.
    ObjectSubtree(BusServices& services, std::string prefix, const char* interface,
                  const char* deniedWhy, Find find, List list)
        : services_(services), interface_(interface), deniedWhy_(deniedWhy), find_(std::move(find)),
          list_(std::move(list)), vtable_(buildVtable<T>(T::members())) {
        sd_bus_slot* slot = nullptr;
        check(sd_bus_add_fallback_vtable(services_.bus, &slot, prefix.c_str(), interface_,
                                         vtable_.data(), &ObjectSubtree::onFind, this),
              "register a fallback vtable");
        vtableSlot_.reset(slot);
        check(sd_bus_add_node_enumerator(services_.bus, &slot, prefix.c_str(),
                                         &ObjectSubtree::onEnumerate, this),
              "register a node enumerator");
        enumeratorSlot_.reset(slot);
    }
    ObjectSubtree(const ObjectSubtree&) = delete;
    ObjectSubtree& operator=(const ObjectSubtree&) = delete;

private:
    static int onFind(sd_bus* bus, const char* path, const char*, void* userdata, void** found,
                      sd_bus_error* error) {
        auto* self = static_cast<ObjectSubtree*>(userdata);
        try {
            T* object = self->find_(path);
            if (object == nullptr)
                return 0;
            const auto caller = self->services_.peers.currentCaller();
            return answerLookup(bus, path, object, !caller || object->visibleTo(*caller),
                                self->interface_, self->deniedWhy_, found, error);
        } catch (const std::exception& e) {
            return sd_bus_error_set(error, SD_BUS_ERROR_FAILED, e.what());
        }
    }

    static int onEnumerate(sd_bus*, const char*, void* userdata, char*** nodes,
                           sd_bus_error* error) {
        auto* self = static_cast<ObjectSubtree*>(userdata);
        try {
            const auto caller = self->services_.peers.currentCaller();
            std::vector<std::string> paths;
            for (const T* object : self->list_())
                if (!caller || object->visibleTo(*caller))
                    paths.push_back(object->path());
            *nodes = toNodeList(paths);
            return *nodes != nullptr ? 0 : -ENOMEM;
        } catch (const std::exception& e) {
            return sd_bus_error_set(error, SD_BUS_ERROR_FAILED, e.what());
        }
    }

    BusServices& services_;
    const char* interface_;
    const char* deniedWhy_;
    Find find_;
    List list_;
    std::vector<sd_bus_vtable> vtable_;
    SlotPtr vtableSlot_;
    SlotPtr enumeratorSlot_;
};

} // namespace tracectl::bus
