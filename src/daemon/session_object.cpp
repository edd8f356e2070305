#include "session_object.hpp"

#include "bus_call.hpp"
#include "channel_options.hpp"
#include "common/log.hpp"
#include "rotation_schedule_options.hpp"
#include "session_name.hpp"
#include "snapshot_options.hpp"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

namespace tracectl {

using SessionIface = org::tracectl::Tracing1::Session_adaptor;

namespace {

/// The primary group of `uid` (getpwuid_r(3)); the uid itself if unknown.
gid_t primaryGid(uid_t uid) {
    std::vector<char> buf(16384);
    struct passwd pw {};
    struct passwd* result = nullptr;
    if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &result) == 0 && result != nullptr)
        return pw.pw_gid;
    return static_cast<gid_t>(uid);
}

} // namespace

std::string sessionObjectPath(const SessionId& id) {
    return std::string(kManagerPath) + "/session/" + id.hex();
}

SessionObject::SessionObject(sdbus::IConnection& bus, Session& session, TracingBackend& backend,
                             DestroyHandler onDestroy)
    : AdaptorInterfaces(bus, sessionObjectPath(session.id())), session_(session), backend_(backend),
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

void SessionObject::fail(const std::string& reason) {
    session_.fail(reason);
    emitPropertiesChangedSignal(SessionIface::INTERFACE_NAME, {"State", "ErrorReason"});
    log::error("session '" + session_.config().name + "' failed: " + reason +
                   "; what was written stays in " + session_.config().outputPath,
               session_.id().uuid());
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

void SessionObject::checkIdle(const char* member) const {
    if (busy_)
        throw Error(ErrorCode::WrongState, std::string(member) + ": session '" +
                                               session_.config().name +
                                               "' is busy with another Start, Stop or Destroy");
}

void SessionObject::refuseInSnapshotMode(const char* member) const {
    // Nothing is written between snapshots: there is no chunk to rotate.
    if (session_.config().mode == SessionMode::Snapshot)
        throw Error(ErrorCode::WrongState, std::string(member) + ": session '" +
                                               session_.config().name +
                                               "' is a snapshot session; record snapshots instead");
}

SessionSnapshot SessionObject::snapshot() const {
    SessionSnapshot s;
    s.idHex = session_.id().hex();
    s.name = session_.config().name;
    s.owner = session_.config().owner;
    s.ownerGid = primaryGid(s.owner);
    s.outputPath = session_.config().outputPath;
    s.snapshotMode = session_.config().mode == SessionMode::Snapshot;
    s.perPid = session_.config().bufferOwnership == BufferOwnership::PerPid;
    s.creationTime =
        std::chrono::duration_cast<std::chrono::seconds>(session_.creationTime().time_since_epoch())
            .count();
    s.channels = session_.channels();
    s.rules = session_.eventRules();
    return s;
}

void SessionObject::Start(sdbus::Result<>&& result) {
    try {
        handleCall("Start", [&] {
            checkCaller("Start");
            checkIdle("Start");
            // As lttng-start(1): nothing could ever be recorded, and no
            // channel can be made once the session has started.
            if (session_.channels().empty())
                throw Error(ErrorCode::WrongState,
                            "session '" + session_.config().name +
                                "' has no channel: enable events first (channel0 is made then) "
                                "or add a channel");
            if (session_.state() == SessionState::Active || session_.state() == SessionState::Error)
                session_.start(); // throws WrongState
        });
    } catch (const sdbus::Error& e) {
        result.returnError(e);
        return;
    }
    busy_ = true;
    auto pending = std::make_shared<sdbus::Result<>>(std::move(result));
    backend_.start(snapshot(), [this, pending](std::optional<Error> error) {
        busy_ = false;
        if (error) {
            log::warning("session '" + session_.config().name + "' did not start: " + error->what(),
                         session_.id().uuid());
            pending->returnError(toBusError(*error));
            return;
        }
        session_.start();
        emitPropertiesChangedSignal(SessionIface::INTERFACE_NAME, {"State"});
        log::info("session '" + session_.config().name + "' started", session_.id().uuid());
        pending->returnResults();
    });
}

void SessionObject::Stop(sdbus::Result<>&& result) {
    try {
        handleCall("Stop", [&] {
            checkCaller("Stop");
            checkIdle("Stop");
            if (session_.state() != SessionState::Active)
                session_.stop(); // throws WrongState
        });
    } catch (const sdbus::Error& e) {
        result.returnError(e);
        return;
    }
    busy_ = true;
    auto pending = std::make_shared<sdbus::Result<>>(std::move(result));
    backend_.stop(session_.id().hex(), [this, pending](std::optional<Error> error) {
        busy_ = false;
        if (error) {
            pending->returnError(toBusError(*error));
            return;
        }
        session_.stop();
        emitPropertiesChangedSignal(SessionIface::INTERFACE_NAME, {"State"});
        log::info("session '" + session_.config().name + "' stopped", session_.id().uuid());
        pending->returnResults();
    });
}

void SessionObject::Destroy(sdbus::Result<>&& result) {
    try {
        handleCall("Destroy", [&] {
            checkCaller("Destroy");
            checkIdle("Destroy");
        });
    } catch (const sdbus::Error& e) {
        result.returnError(e);
        return;
    }
    busy_ = true;
    auto pending = std::make_shared<sdbus::Result<>>(std::move(result));
    backend_.destroy(session_.id().hex(), [this, pending](std::optional<Error>) {
        log::info("session '" + session_.config().name + "' destroyed", session_.id().uuid());
        onDestroy_(session_.id());
        pending->returnResults();
    });
}

void SessionObject::Rotate(sdbus::Result<std::string>&& result,
                           std::map<std::string, sdbus::Variant> options) {
    try {
        handleCall("Rotate", [&] {
            checkCaller("Rotate");
            checkIdle("Rotate");
            if (!options.empty())
                throw Error(ErrorCode::InvalidArgument,
                            "unknown option " + quoteForMessage(options.begin()->first) +
                                " (Rotate takes none yet)");
            const SessionState state = session_.state();
            if (state == SessionState::Created || state == SessionState::Error)
                throw Error(ErrorCode::WrongState, "session '" + session_.config().name + "' is " +
                                                       std::string(toString(state)) +
                                                       ": only a started session rotates");
            if (rotating_)
                throw Error(ErrorCode::WrongState,
                            "a rotation of session '" + session_.config().name + "' is under way");
            refuseInSnapshotMode("Rotate");
        });
    } catch (const sdbus::Error& e) {
        result.returnError(e);
        return;
    }
    rotating_ = true;
    emitPropertiesChangedSignal(SessionIface::INTERFACE_NAME, {"State"});
    auto pending = std::make_shared<sdbus::Result<std::string>>(std::move(result));
    backend_.rotate(
        session_.id().hex(),
        [this, pending](std::optional<Error> error, const std::string& path) {
            if (error) {
                rotating_ = false;
                emitPropertiesChangedSignal(SessionIface::INTERFACE_NAME, {"State"});
                pending->returnError(toBusError(*error));
                return;
            }
            pending->returnResults(path);
        },
        [this](std::optional<Error> error, const std::string& path) {
            rotationEnded(error, path);
        });
}

void SessionObject::RecordSnapshot(sdbus::Result<std::string>&& result,
                                   std::map<std::string, sdbus::Variant> options) {
    uint64_t maxSize = 0;
    try {
        handleCall("RecordSnapshot", [&] {
            checkCaller("RecordSnapshot");
            maxSize = readSnapshotOptions(options);
            checkIdle("RecordSnapshot");
            if (session_.config().mode != SessionMode::Snapshot)
                throw Error(ErrorCode::WrongState,
                            "session '" + session_.config().name +
                                "' is not a snapshot session (create it with mode 'snapshot')");
            const SessionState state = session_.state();
            if (state == SessionState::Created || state == SessionState::Error)
                throw Error(ErrorCode::WrongState,
                            "session '" + session_.config().name + "' is " +
                                std::string(toString(state)) +
                                ": a snapshot needs a started session (active or stopped)");
        });
    } catch (const sdbus::Error& e) {
        result.returnError(e);
        return;
    }
    // Busy like Start/Stop/Destroy: those wait for no one and are refused
    // (WrongState) meanwhile, so a Destroy can never free this object while
    // the snapshot's answer is still to come.
    busy_ = true;
    auto pending = std::make_shared<sdbus::Result<std::string>>(std::move(result));
    backend_.recordSnapshot(session_.id().hex(), maxSize,
                            [this, pending](std::optional<Error> error, const std::string& path) {
                                busy_ = false;
                                if (error) {
                                    log::warning("session '" + session_.config().name +
                                                     "': snapshot failed: " + error->what(),
                                                 session_.id().uuid());
                                    pending->returnError(toBusError(*error));
                                    return;
                                }
                                emitSnapshotRecorded(path);
                                pending->returnResults(path);
                            });
}

void SessionObject::rotationStarted() {
    rotating_ = true;
    emitPropertiesChangedSignal(SessionIface::INTERFACE_NAME, {"State"});
}

void SessionObject::rotationEnded(const std::optional<Error>& error, const std::string& path) {
    rotating_ = false;
    emitPropertiesChangedSignal(SessionIface::INTERFACE_NAME, {"State"});
    if (error) {
        log::warning("session '" + session_.config().name + "': " + error->what(),
                     session_.id().uuid());
        emitRotationFailed(path, error->what());
        return;
    }
    emitRotationCompleted(path);
}

void SessionObject::SetRotationSchedule(sdbus::Result<>&& result,
                                        std::map<std::string, sdbus::Variant> options) {
    RotationSchedule schedule;
    try {
        handleCall("SetRotationSchedule", [&] {
            checkCaller("SetRotationSchedule");
            schedule = readRotationSchedule(options);
            refuseInSnapshotMode("SetRotationSchedule");
        });
    } catch (const sdbus::Error& e) {
        result.returnError(e);
        return;
    }
    auto pending = std::make_shared<sdbus::Result<>>(std::move(result));
    backend_.setRotationSchedule(
        session_.id().hex(), schedule,
        [this](std::optional<Error>, const std::string&) { rotationStarted(); },
        [this](std::optional<Error> error, const std::string& path) { rotationEnded(error, path); },
        [this, pending, schedule](std::optional<Error> error) {
            if (error) {
                pending->returnError(toBusError(*error));
                return;
            }
            log::info("session '" + session_.config().name + "': rotation schedule " +
                          (schedule.any()
                               ? "every " + std::to_string(schedule.timerUs) + " us / " +
                                     std::to_string(schedule.sizeBytes) + " bytes (0 = not)"
                               : std::string("cleared")),
                      session_.id().uuid());
            pending->returnResults();
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

void SessionObject::EnableEvents(sdbus::Result<>&& result, std::string domain, std::string channel,
                                 std::string pattern,
                                 std::map<std::string, sdbus::Variant> options) {
    EventRule added;
    try {
        handleCall("EnableEvents", [&] {
            checkCaller("EnableEvents");
            checkDomain(domain);
            const bool madeChannel =
                session_.enableEvents(readEventOptions(channel, pattern, options));
            added = session_.eventRules().back();
            if (madeChannel)
                emitPropertiesChangedSignal(SessionIface::INTERFACE_NAME, {"Channels", "Events"});
            else
                emitPropertiesChangedSignal(SessionIface::INTERFACE_NAME, {"Events"});
            log::info("session '" + session_.config().name + "': events '" + pattern + "' enabled",
                      session_.id().uuid());
        });
    } catch (const sdbus::Error& e) {
        result.returnError(e);
        return;
    }
    // Always through the app thread, in order with Start: a Start still in
    // flight then sees the rule too. Nothing to do there before the first
    // start; the reply waits for the apps otherwise.
    auto pending = std::make_shared<sdbus::Result<>>(std::move(result));
    backend_.enableEvents(session_.id().hex(), std::move(added),
                          [pending](std::optional<Error> error) {
                              if (error)
                                  pending->returnError(toBusError(*error));
                              else
                                  pending->returnResults();
                          });
}

void SessionObject::AddContext(const std::string& domain, const std::string& channel,
                               const std::string& type) {
    handleCall("AddContext", [&] {
        checkCaller("AddContext");
        checkDomain(domain);
        if (session_.addContext(channel, type))
            emitPropertiesChangedSignal(SessionIface::INTERFACE_NAME, {"Channels", "Contexts"});
        else
            emitPropertiesChangedSignal(SessionIface::INTERFACE_NAME, {"Contexts"});
        log::info(
            "session '" + session_.config().name + "': context '" + type + "' added to " +
                (channel.empty() ? std::string("every channel") : "channel '" + channel + "'"),
            session_.id().uuid());
    });
}

std::vector<sdbus::Struct<std::string, std::string>> SessionObject::Contexts() {
    std::vector<sdbus::Struct<std::string, std::string>> out;
    for (const auto& c : session_.channels())
        for (const auto& type : c.contexts)
            out.emplace_back(c.name, type);
    return out;
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
    if (rotating_ && session_.state() != SessionState::Error)
        return "rotating";
    return std::string(toString(session_.state()));
}
std::string SessionObject::ErrorReason() {
    return session_.errorReason();
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
