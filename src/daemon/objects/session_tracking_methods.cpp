// SessionObject: TrackProcessAttribute, UntrackProcessAttribute and the
// ProcessAttributeTrackers property (dbus/org.tracectl.Tracing1.Session.xml).
#include "bus/bus_call.hpp"
#include "bus/option_reader.hpp"
#include "bus/typed_option.hpp"
#include "common/log.hpp"
#include "objects/channel_options.hpp"
#include "objects/session_object.hpp"
#include "session/session_name.hpp"

#include <cstring>

namespace tracectl {

namespace {

/// The `au` argument at the read position of `m`, consumed. Throws
/// Error(LimitExceeded) past kMaxTrackedValues values.
std::vector<uint32_t> readValues(sd_bus_message* m) {
    const void* data = nullptr;
    size_t bytes = 0;
    bus::check(sd_bus_message_read_array(m, 'u', &data, &bytes), "read au");
    const std::size_t count = bytes / sizeof(uint32_t);
    if (count > kMaxTrackedValues)
        throw Error(ErrorCode::LimitExceeded, "at most " + std::to_string(kMaxTrackedValues) +
                                                  " values per call (" + std::to_string(count) +
                                                  " given)");
    std::vector<uint32_t> values(count);
    if (count != 0)
        std::memcpy(values.data(), data, count * sizeof(uint32_t));
    return values;
}

/// The "all" option (false if absent); any key but "all" is refused
/// ("interactive" was taken already).
bool readAll(const auth::CallOptions& options) {
    bool all = false;
    for (const auto& [key, value] : options) {
        if (key == "all")
            all = optionAs<bool>(key, value);
        else
            throw Error(ErrorCode::InvalidArgument,
                        "unknown option " + quoteForMessage(key) + " (known: all, interactive)");
    }
    return all;
}

} // namespace

void SessionObject::appendTrackers(sd_bus_message* m, const ProcessTrackers& trackers) {
    bus::check(sd_bus_message_open_container(m, 'a', "(ssbau)"), "a(ssbau)");
    for (const ProcessTracker& t : trackers.all()) {
        bus::check(sd_bus_message_open_container(m, 'r', "ssbau"), "(ssbau)");
        const std::string domain(toString(domainOf(t.attribute)));
        const std::string attribute(toString(t.attribute));
        bus::check(sd_bus_message_append(m, "ssb", domain.c_str(), attribute.c_str(),
                                         static_cast<int>(t.all)),
                   "ssb");
        const std::vector<uint32_t> values(t.values.begin(), t.values.end());
        bus::check(
            sd_bus_message_append_array(m, 'u', values.data(), values.size() * sizeof(uint32_t)),
            "au");
        bus::check(sd_bus_message_close_container(m), "(ssbau)");
    }
    bus::check(sd_bus_message_close_container(m), "a(ssbau)");
}

void SessionObject::changeTracker(bool track, const Pending& pending, std::string domain,
                                  std::string attribute, std::vector<uint32_t> values,
                                  auth::CallOptions options) {
    const char* member = track ? "TrackProcessAttribute" : "UntrackProcessAttribute";
    bool interactive = false;
    bool all = false;
    TracingDomain d = TracingDomain::Ust;
    ProcessAttribute a = ProcessAttribute::Vpid;
    if (!guarded(member, pending, [&] {
            interactive =
                auth::takeInteractive(options) || pending->allowsInteractiveAuthorization();
            all = readAll(options);
            d = checkDomain(domain);
            const auto known = processAttributeFromName(attribute);
            if (!known)
                throw Error(ErrorCode::InvalidArgument,
                            "unknown process attribute " + quoteForMessage(attribute) +
                                " (known: vpid, vuid, vgid for ust; pid, uid, gid for kernel)");
            a = *known;
        }))
        return;
    const auto extra =
        d == TracingDomain::Kernel ? std::optional(auth::Action::TraceKernel) : std::nullopt;
    // Applied once authorized (and, for the owner, once trace-all-users
    // was asked about, as EnableEvents does).
    auto apply = lifetime_.guard(
        [this, pending, member, track, d, a, values = std::move(values), all]() {
            if (retired_)
                return answerDestroyed(pending);
            guarded(member, pending, [&] {
                checkKernelAvailable(d);
                if (track)
                    session_.trackProcessAttribute(d, a, values, all, answer(pending));
                else
                    session_.untrackProcessAttribute(d, a, values, all, answer(pending));
            });
        },
        [pending] { answerDestroyed(pending); });
    authorize(member, interactive, extra, pending,
              [this, apply = std::move(apply)](const auth::Caller& caller) {
                  if (caller.uid != session_.config().owner || session_.tracesAllUsers())
                      return apply();
                  // A "no" only keeps the session to the owner's apps: a
                  // tracked uid never widens what the owner may trace.
                  services_.authority.check(caller, auth::Action::TraceAllUsers, false,
                                            lifetime_.guard(
                                                [this, apply](std::optional<sdbus::Error> denied) {
                                                    if (!denied && !retired_)
                                                        session_.traceAllUsers();
                                                    apply();
                                                },
                                                [apply] { apply(); }));
              });
}

int SessionObject::onTrackProcessAttribute(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<SessionObject>(
        m, userdata, "TrackProcessAttribute", [](SessionObject& o, sd_bus_message* msg, auto r) {
            std::string domain = bus::readStringArgument(msg);
            std::string attribute = bus::readStringArgument(msg);
            auto values = readValues(msg);
            o.changeTracker(true, r, std::move(domain), std::move(attribute), std::move(values),
                            bus::readOptions(msg));
        });
}

int SessionObject::onUntrackProcessAttribute(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<SessionObject>(
        m, userdata, "UntrackProcessAttribute", [](SessionObject& o, sd_bus_message* msg, auto r) {
            std::string domain = bus::readStringArgument(msg);
            std::string attribute = bus::readStringArgument(msg);
            auto values = readValues(msg);
            o.changeTracker(false, r, std::move(domain), std::move(attribute), std::move(values),
                            bus::readOptions(msg));
        });
}

} // namespace tracectl
