// Manager.CreateIpAggregation, ReadIpAggregation, CloseIpAggregation: the ip
// provider's in-kernel aggregations (ip/ip_aggregations.hpp) over D-Bus. An
// aggregation belongs to the connection that created it: only that one reads
// or closes it, and it is closed when that connection leaves the bus.
#include "auth/call_options.hpp"
#include "bus/bus_call.hpp"
#include "bus/method_reply.hpp"
#include "bus/object_vtable.hpp"
#include "bus/option_reader.hpp"
#include "bus/typed_option.hpp"
#include "objects/manager_object.hpp"

#include <system_error>

namespace tracectl {
namespace {

std::uint64_t readHandle(sd_bus_message* m) {
    std::uint64_t handle = 0;
    const int r = sd_bus_message_read(m, "t", &handle);
    if (r < 0)
        throw std::system_error(-r, std::generic_category(), "read the handle (t)");
    return handle;
}

std::vector<std::string> stringsOption(const std::string& key, const sdbus::Variant& value) {
    if (!value.containsValueOfType<std::vector<std::string>>())
        throw Error(ErrorCode::InvalidArgument, "option '" + key +
                                                    "' must be a string array (as), not '" +
                                                    value.peekValueType() + "'");
    return value.get<std::vector<std::string>>();
}

/// CreateIpAggregation's options, "interactive" already taken out.
ip::IpAggregationRequest requestOf(const auth::CallOptions& options) {
    std::vector<std::string> probes, fields;
    std::string filter;
    std::uint64_t maxKeys = ip::kDefaultIpAggregationKeys;
    for (const auto& [key, value] : options) {
        if (key == "probes")
            probes = stringsOption(key, value);
        else if (key == "fields")
            fields = stringsOption(key, value);
        else if (key == "filter")
            filter = optionAs<std::string>(key, value);
        else if (key == "max-keys")
            maxKeys = optionAs<std::uint64_t>(key, value);
        else
            throw Error(ErrorCode::InvalidArgument,
                        "unknown option '" + key +
                            "' (known: probes, fields, filter, max-keys, interactive)");
    }
    return ip::ipAggregationRequest(probes, fields, filter, maxKeys);
}

} // namespace

int ManagerObject::onCreateIpAggregation(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<ManagerObject>(m, userdata, "CreateIpAggregation",
                                         [](ManagerObject& o, sd_bus_message* msg, auto reply) {
                                             o.createIpAggregation(reply, bus::readOptions(msg));
                                         });
}

void ManagerObject::createIpAggregation(const Pending& pending, auth::CallOptions options) {
    const bool interactive =
        auth::takeInteractive(options) || pending->allowsInteractiveAuthorization();
    ip::IpAggregationRequest request = requestOf(options); // refused before polkit is asked
    const auth::Caller caller = services_.peers.callerOf(pending->call());
    services_.authority.check(
        caller, auth::Action::TraceKernel, interactive,
        lifetime_.guard([this, pending, owner = caller.sender,
                         request = std::move(request)](std::optional<sdbus::Error> denied) {
            if (denied)
                return pending->returnError(*denied);
            ipAggregations_.create(owner, request,
                                   [pending](std::optional<Error> e, std::uint64_t handle) {
                                       if (e)
                                           return pending->returnError(toBusError(*e));
                                       pending->returnWith([&](sd_bus_message* m) {
                                           bus::check(sd_bus_message_append(m, "t", handle), "t");
                                       });
                                   });
        }));
}

int ManagerObject::onReadIpAggregation(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<ManagerObject>(
        m, userdata, "ReadIpAggregation", [](ManagerObject& o, sd_bus_message* msg, auto reply) {
            const std::uint64_t handle = readHandle(msg);
            const std::string owner = o.services_.peers.callerOf(reply->call()).sender;
            o.ipAggregations_.read(
                owner, handle, [reply](std::optional<Error> e, ip::IpAggregation result) {
                    if (e)
                        return reply->returnError(toBusError(*e));
                    reply->returnWith([&](sd_bus_message* out) {
                        bus::check(sd_bus_message_open_container(out, 'a', "(ayt)"), "a(ayt)");
                        for (const auto& [record, count] : result.rows) {
                            bus::check(sd_bus_message_open_container(out, 'r', "ayt"), "(ayt)");
                            bus::check(
                                sd_bus_message_append_array(out, 'y', &record, sizeof record),
                                "ay");
                            bus::check(sd_bus_message_append(out, "t", count), "t");
                            bus::check(sd_bus_message_close_container(out), "(ayt)");
                        }
                        bus::check(sd_bus_message_close_container(out), "a(ayt)");
                        bus::check(sd_bus_message_append(out, "t", result.dropped), "t");
                    });
                });
        });
}

int ManagerObject::onCloseIpAggregation(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<ManagerObject>(
        m, userdata, "CloseIpAggregation", [](ManagerObject& o, sd_bus_message* msg, auto reply) {
            const std::uint64_t handle = readHandle(msg);
            o.ipAggregations_.close(o.services_.peers.callerOf(reply->call()).sender, handle);
            reply->returnResults();
        });
}

} // namespace tracectl
