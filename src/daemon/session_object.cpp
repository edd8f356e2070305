#include "session_object.hpp"

#include "bus_call.hpp"
#include "channel_options.hpp"
#include "common/log.hpp"

namespace tracectl {

using SessionIface = org::tracectl::Tracing1::Session_adaptor;

std::string sessionObjectPath(const SessionId& id) {
    return std::string(kManagerPath) + "/session/" + id.hex();
}

SessionObject::SessionObject(sdbus::IConnection& bus, Session& session, DestroyHandler onDestroy)
    : AdaptorInterfaces(bus, sessionObjectPath(session.id())), session_(session),
      onDestroy_(std::move(onDestroy)) {
    registerAdaptor();
    // Every interface of the object, as GetManagedObjects lists them.
    emitInterfacesAddedSignal();
}

SessionObject::~SessionObject() {
    try {
        retire();
    } catch (const std::exception& e) {
        log::warning(std::string("announcing a session's removal failed: ") + e.what());
    }
    unregisterAdaptor();
}

void SessionObject::retire() {
    if (retired_)
        return;
    retired_ = true;
    emitInterfacesRemovedSignal();
}

void SessionObject::checkCaller(const char* member) {
    if (retired_)
        throw sdbus::Error(kUnknownObject, std::string("the session was destroyed; ") + member +
                                               " is no longer possible");
    const uid_t caller = callerUid(getObject());
    if (caller != 0 && caller != session_.config().owner) {
        log::warning("uid " + std::to_string(caller) + " denied " + member + " on session '" +
                         session_.config().name + "'",
                     session_.id().uuid());
        throw sdbus::Error(kAccessDenied, "uid " + std::to_string(caller) +
                                              " may not control session '" +
                                              session_.config().name + "'");
    }
}

void SessionObject::Start() {
    handleCall("Start", [&] {
        checkCaller("Start");
        session_.start();
        emitPropertiesChangedSignal(SessionIface::INTERFACE_NAME, {"State"});
        log::info("session '" + session_.config().name + "' started", session_.id().uuid());
    });
}

void SessionObject::Stop() {
    handleCall("Stop", [&] {
        checkCaller("Stop");
        session_.stop();
        emitPropertiesChangedSignal(SessionIface::INTERFACE_NAME, {"State"});
        log::info("session '" + session_.config().name + "' stopped", session_.id().uuid());
    });
}

void SessionObject::Destroy() {
    handleCall("Destroy", [&] {
        checkCaller("Destroy");
        log::info("session '" + session_.config().name + "' destroyed", session_.id().uuid());
        onDestroy_(session_.id());
    });
}

void SessionObject::AddChannel(const std::string& domain, const std::string& name,
                               const std::map<std::string, sdbus::Variant>& options) {
    handleCall("AddChannel", [&] {
        checkCaller("AddChannel");
        checkDomain(domain);
        ChannelConfig defaults;
        defaults.overwrite = session_.config().mode == SessionMode::Snapshot;
        session_.addChannel(readChannelOptions(name, options, defaults));
        emitPropertiesChangedSignal(SessionIface::INTERFACE_NAME, {"Channels"});
        log::info("session '" + session_.config().name + "': channel '" + name + "' added",
                  session_.id().uuid());
    });
}

void SessionObject::EnableEvents(const std::string& domain, const std::string& channel,
                                 const std::string& pattern,
                                 const std::map<std::string, sdbus::Variant>& options) {
    handleCall("EnableEvents", [&] {
        checkCaller("EnableEvents");
        checkDomain(domain);
        const bool madeChannel = session_.enableEvents(readEventOptions(channel, pattern, options));
        if (madeChannel)
            emitPropertiesChangedSignal(SessionIface::INTERFACE_NAME, {"Channels", "Events"});
        else
            emitPropertiesChangedSignal(SessionIface::INTERFACE_NAME, {"Events"});
        log::info("session '" + session_.config().name + "': events '" + pattern + "' enabled",
                  session_.id().uuid());
    });
}

std::vector<sdbus::Struct<std::string, uint64_t, uint64_t, bool, uint32_t, uint32_t>>
SessionObject::Channels() {
    std::vector<sdbus::Struct<std::string, uint64_t, uint64_t, bool, uint32_t, uint32_t>> out;
    for (const auto& c : session_.channels())
        out.emplace_back(c.name, c.subbufSize, c.subbufCount, c.overwrite, c.switchTimerUs,
                         c.readTimerUs);
    return out;
}

std::vector<sdbus::Struct<std::string, std::string, std::string, int32_t, std::vector<std::string>>>
SessionObject::Events() {
    std::vector<
        sdbus::Struct<std::string, std::string, std::string, int32_t, std::vector<std::string>>>
        out;
    for (const auto& r : session_.eventRules()) {
        const char* match = r.loglevelMatch == LoglevelMatch::All               ? "all"
                            : r.loglevelMatch == LoglevelMatch::AtLeastAsSevere ? "at-least"
                                                                                : "exactly";
        out.emplace_back(r.channel, r.pattern, match, r.loglevel, r.exclusions);
    }
    return out;
}

std::string SessionObject::Id() {
    return session_.id().uuid();
}
std::string SessionObject::Name() {
    return session_.config().name;
}
uint32_t SessionObject::Owner() {
    return session_.config().owner;
}
std::string SessionObject::State() {
    return std::string(toString(session_.state()));
}
std::string SessionObject::Mode() {
    return std::string(toString(session_.config().mode));
}
std::string SessionObject::OutputPath() {
    return session_.config().outputPath;
}
std::string SessionObject::BufferOwnership() {
    return std::string(toString(session_.config().bufferOwnership));
}
uint64_t SessionObject::CreationTime() {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                     session_.creationTime().time_since_epoch())
                                     .count());
}

} // namespace tracectl
