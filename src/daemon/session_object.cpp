#include "session_object.hpp"

#include "bus_call.hpp"
#include "channel_options.hpp"
#include "common/log.hpp"
#include "rotation_schedule_options.hpp"
#include "session_name.hpp"
#include "snapshot_options.hpp"
#include "tracing/output_folder.hpp"

#include <unistd.h>

namespace tracectl {

using SessionIface = org::tracectl::Tracing1::Session_adaptor;

std::string sessionObjectPath(const SessionId& id) {
    return std::string(kManagerPath) + "/session/" + id.hex();
}

SessionObject::SessionObject(sdbus::IConnection& bus, Session& session, TracingBackend& backend,
                             auth::PolkitAuthority& authority, const auth::ReadCallTracker& readers,
                             DestroyHandler onDestroy)
    : AdaptorInterfaces(bus, sessionObjectPath(session.id())), session_(session), backend_(backend),
      authority_(authority), readers_(readers), onDestroy_(std::move(onDestroy)) {
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

template <typename P>
bool SessionObject::guarded(const char* member, const P& pending,
                            const std::function<void()>& work) {
    try {
        handleCall(member, work);
        return true;
    } catch (const sdbus::Error& e) {
        pending->returnError(e);
        return false;
    }
}

template <typename P>
void SessionObject::authorize(const char* member, bool interactive,
                              std::optional<auth::Action> extra, P pending,
                              std::function<void(const auth::Caller&)> next) {
    auth::Caller caller;
    try {
        if (retired_)
            throw sdbus::Error(kUnknownObject, std::string("the session was destroyed; ") + member +
                                                   " is no longer possible");
        caller = currentCaller(getObject());
    } catch (const sdbus::Error& e) {
        pending->returnError(e);
        return;
    }
    const bool own = caller.uid == session_.config().owner;
    const auth::Action action = own ? auth::Action::TraceOwn : auth::Action::ManageAllSessions;
    std::weak_ptr<bool> alive = alive_;
    // Runs once every check granted; answers the call itself otherwise.
    auto then = [this, alive, member, caller,
                 pending](std::function<void()> onGranted) -> auth::PolkitAuthority::Done {
        return [this, alive, member, caller, pending,
                onGranted = std::move(onGranted)](std::optional<sdbus::Error> denied) {
            if (alive.expired() || retired_) {
                pending->returnError(
                    sdbus::Error(kUnknownObject, std::string("the session was destroyed; ") +
                                                     member + " is no longer possible"));
                return;
            }
            if (denied) {
                log::warning("uid " + std::to_string(caller.uid) + " denied " + member +
                                 " on session '" + session_.config().name +
                                 "': " + denied->getMessage(),
                             session_.id().uuid());
                pending->returnError(*denied);
                return;
            }
            guarded(member, pending, onGranted);
        };
    };
    auto last = [caller, next = std::move(next)] { next(caller); };
    if (!extra) {
        authority_.check(caller, action, interactive, then(std::move(last)));
        return;
    }
    authority_.check(caller, action, interactive,
                     then([this, caller, interactive, extra, then, last = std::move(last)] {
                         authority_.check(caller, *extra, interactive, then(last));
                     }));
}

bool SessionObject::readableByCurrentCaller() const {
    const auto& reader = readers_.reader();
    if (!reader || reader->uid == 0 || reader->uid == session_.config().owner)
        return true;
    return authority_.cached(reader->sender, auth::Action::ManageAllSessions).value_or(false);
}

void SessionObject::checkReader() const {
    if (!readableByCurrentCaller())
        throw sdbus::Error(kAccessDenied,
                           "the session belongs to another user; reading it needs polkit's "
                           "org.tracectl.Tracing1.manage-all-sessions (call ListSessions or "
                           "GetSession first to have it checked)");
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
    s.ownerGid = primaryGidOf(s.owner);
    s.outputPath = session_.config().outputPath;
    s.snapshotMode = session_.config().mode == SessionMode::Snapshot;
    s.tracesAllUsers = session_.tracesAllUsers();
    s.perPid = session_.config().bufferOwnership == BufferOwnership::PerPid;
    s.creationTime =
        std::chrono::duration_cast<std::chrono::seconds>(session_.creationTime().time_since_epoch())
            .count();
    s.channels = session_.channels();
    s.rules = session_.eventRules();
    return s;
}

template <typename... R>
void SessionObject::authorizeWithOnlyInteractive(
    const char* member, sdbus::Result<R...>&& result, const auth::CallOptions& options,
    void (SessionObject::*work)(const std::shared_ptr<sdbus::Result<R...>>&)) {
    auto pending = std::make_shared<sdbus::Result<R...>>(std::move(result));
    bool interactive = false;
    if (!guarded(member, pending, [&] { interactive = auth::readInteractiveOnly(options); }))
        return;
    authorize(member, interactive, std::nullopt, pending,
              [this, pending, work](const auth::Caller&) { (this->*work)(pending); });
}

void SessionObject::Start(sdbus::Result<>&& result, std::map<std::string, sdbus::Variant> options) {
    authorizeWithOnlyInteractive("Start", std::move(result), options, &SessionObject::doStart);
}

void SessionObject::doStart(const Pending& pending) {
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
    busy_ = true;
    std::weak_ptr<bool> alive = alive_;
    backend_.start(snapshot(), [this, alive, pending](std::optional<Error> error) {
        if (alive.expired())
            return pending->returnError(sdbus::Error(kUnknownObject, "the session was destroyed"));
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

void SessionObject::Stop(sdbus::Result<>&& result, std::map<std::string, sdbus::Variant> options) {
    authorizeWithOnlyInteractive("Stop", std::move(result), options, &SessionObject::doStop);
}

void SessionObject::doStop(const Pending& pending) {
    checkIdle("Stop");
    if (session_.state() != SessionState::Active)
        session_.stop(); // throws WrongState
    busy_ = true;
    std::weak_ptr<bool> alive = alive_;
    backend_.stop(session_.id().hex(), [this, alive, pending](std::optional<Error> error) {
        if (alive.expired())
            return pending->returnError(sdbus::Error(kUnknownObject, "the session was destroyed"));
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

void SessionObject::Destroy(sdbus::Result<>&& result,
                            std::map<std::string, sdbus::Variant> options) {
    authorizeWithOnlyInteractive("Destroy", std::move(result), options, &SessionObject::doDestroy);
}

void SessionObject::doDestroy(const Pending& pending) {
    checkIdle("Destroy");
    busy_ = true;
    std::weak_ptr<bool> alive = alive_;
    backend_.destroy(session_.id().hex(), [this, alive, pending](std::optional<Error>) {
        if (alive.expired())
            return pending->returnError(sdbus::Error(kUnknownObject, "the session was destroyed"));
        log::info("session '" + session_.config().name + "' destroyed", session_.id().uuid());
        onDestroy_(session_.id());
        pending->returnResults();
    });
}

void SessionObject::Rotate(sdbus::Result<std::string>&& result,
                           std::map<std::string, sdbus::Variant> options) {
    authorizeWithOnlyInteractive("Rotate", std::move(result), options, &SessionObject::doRotate);
}

void SessionObject::doRotate(const std::shared_ptr<sdbus::Result<std::string>>& pending) {
    checkIdle("Rotate");
    refuseInSnapshotMode("Rotate");
    const SessionState state = session_.state();
    if (state == SessionState::Created || state == SessionState::Error)
        throw Error(ErrorCode::WrongState, "session '" + session_.config().name + "' is " +
                                               std::string(toString(state)) +
                                               ": only a started session rotates");
    if (rotating_)
        throw Error(ErrorCode::WrongState,
                    "a rotation of session '" + session_.config().name + "' is under way");
    rotating_ = true;
    emitPropertiesChangedSignal(SessionIface::INTERFACE_NAME, {"State"});
    std::weak_ptr<bool> alive = alive_;
    backend_.rotate(
        session_.id().hex(),
        [this, alive, pending](std::optional<Error> error, const std::string& path) {
            if (alive.expired())
                return pending->returnError(
                    sdbus::Error(kUnknownObject, "the session was destroyed"));
            if (error) {
                rotating_ = false;
                emitPropertiesChangedSignal(SessionIface::INTERFACE_NAME, {"State"});
                pending->returnError(toBusError(*error));
                return;
            }
            pending->returnResults(path);
        },
        [this, alive](std::optional<Error> error, const std::string& path) {
            if (!alive.expired())
                rotationEnded(error, path);
        });
}

void SessionObject::RecordSnapshot(sdbus::Result<std::string>&& result,
                                   std::map<std::string, sdbus::Variant> options) {
    auto pending = std::make_shared<sdbus::Result<std::string>>(std::move(result));
    bool interactive = false;
    uint64_t maxSize = 0;
    if (!guarded("RecordSnapshot", pending, [&] {
            interactive = auth::takeInteractive(options);
            maxSize = readSnapshotOptions(options);
        }))
        return;
    authorize(
        "RecordSnapshot", interactive, std::nullopt, pending,
        [this, pending, maxSize](const auth::Caller&) { doRecordSnapshot(pending, maxSize); });
}

void SessionObject::doRecordSnapshot(const std::shared_ptr<sdbus::Result<std::string>>& pending,
                                     uint64_t maxSize) {
    checkIdle("RecordSnapshot");
    if (session_.config().mode != SessionMode::Snapshot)
        throw Error(ErrorCode::WrongState,
                    "session '" + session_.config().name +
                        "' is not a snapshot session (create it with mode 'snapshot')");
    const SessionState state = session_.state();
    if (state == SessionState::Created || state == SessionState::Error)
        throw Error(ErrorCode::WrongState,
                    "session '" + session_.config().name + "' is " + std::string(toString(state)) +
                        ": a snapshot needs a started session (active or stopped)");
    // Busy like Start/Stop/Destroy: those wait for no one and are refused
    // (WrongState) meanwhile, so a Destroy can never free this object while
    // the snapshot's answer is still to come.
    busy_ = true;
    std::weak_ptr<bool> alive = alive_;
    backend_.recordSnapshot(
        session_.id().hex(), maxSize,
        [this, alive, pending](std::optional<Error> error, const std::string& path) {
            if (alive.expired())
                return pending->returnError(
                    sdbus::Error(kUnknownObject, "the session was destroyed"));
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
    auto pending = std::make_shared<sdbus::Result<>>(std::move(result));
    bool interactive = false;
    RotationSchedule schedule;
    if (!guarded("SetRotationSchedule", pending, [&] {
            interactive = auth::takeInteractive(options);
            schedule = readRotationSchedule(options);
        }))
        return;
    authorize("SetRotationSchedule", interactive, std::nullopt, pending,
              [this, pending, schedule](const auth::Caller&) {
                  doSetRotationSchedule(pending, schedule);
              });
}

void SessionObject::doSetRotationSchedule(const Pending& pending,
                                          const RotationSchedule& schedule) {
    refuseInSnapshotMode("SetRotationSchedule");
    std::weak_ptr<bool> alive = alive_;
    backend_.setRotationSchedule(
        session_.id().hex(), schedule,
        [this, alive](std::optional<Error>, const std::string&) {
            if (!alive.expired())
                rotationStarted();
        },
        [this, alive](std::optional<Error> error, const std::string& path) {
            if (!alive.expired())
                rotationEnded(error, path);
        },
        [this, alive, pending, schedule](std::optional<Error> error) {
            if (alive.expired())
                return pending->returnError(
                    sdbus::Error(kUnknownObject, "the session was destroyed"));
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

void SessionObject::AddChannel(sdbus::Result<>&& result, std::string domain, std::string name,
                               std::map<std::string, sdbus::Variant> options) {
    auto pending = std::make_shared<sdbus::Result<>>(std::move(result));
    bool interactive = false;
    if (!guarded("AddChannel", pending, [&] { interactive = auth::takeInteractive(options); }))
        return;
    const auto extra = domain == "kernel" ? std::optional(auth::Action::TraceKernel) : std::nullopt;
    authorize("AddChannel", interactive, extra, pending,
              [this, pending, domain = std::move(domain), name = std::move(name),
               options = std::move(options)](const auth::Caller&) {
                  checkDomain(domain);
                  ChannelConfig defaults;
                  defaults.overwrite = session_.config().mode == SessionMode::Snapshot;
                  session_.addChannel(readChannelOptions(name, options, defaults));
                  emitPropertiesChangedSignal(SessionIface::INTERFACE_NAME, {"Channels"});
                  log::info("session '" + session_.config().name + "': channel '" + name +
                                "' added",
                            session_.id().uuid());
                  pending->returnResults();
              });
}

void SessionObject::EnableEvents(sdbus::Result<>&& result, std::string domain, std::string channel,
                                 std::string pattern,
                                 std::map<std::string, sdbus::Variant> options) {
    auto pending = std::make_shared<sdbus::Result<>>(std::move(result));
    bool interactive = false;
    if (!guarded("EnableEvents", pending, [&] { interactive = auth::takeInteractive(options); }))
        return;
    const auto extra = domain == "kernel" ? std::optional(auth::Action::TraceKernel) : std::nullopt;
    authorize("EnableEvents", interactive, extra, pending,
              [this, pending, domain = std::move(domain), channel = std::move(channel),
               pattern = std::move(pattern),
               options = std::move(options)](const auth::Caller& caller) mutable {
                  if (caller.uid != session_.config().owner || session_.tracesAllUsers()) {
                      doEnableEvents(pending, std::move(domain), std::move(channel),
                                     std::move(pattern), std::move(options));
                      return;
                  }
                  // May the owner trace every user's apps? Asked without
                  // interaction; a "no" only keeps the session to the owner's apps.
                  std::weak_ptr<bool> alive = alive_;
                  authority_.check(
                      caller, auth::Action::TraceAllUsers, false,
                      [this, alive, pending, domain = std::move(domain),
                       channel = std::move(channel), pattern = std::move(pattern),
                       options = std::move(options)](std::optional<sdbus::Error> denied) {
                          if (alive.expired() || retired_)
                              return pending->returnError(
                                  sdbus::Error(kUnknownObject, "the session was destroyed"));
                          if (!denied && session_.traceAllUsers()) {
                              emitPropertiesChangedSignal(SessionIface::INTERFACE_NAME,
                                                          {"TracesAllUsers"});
                              log::info("session '" + session_.config().name +
                                            "' traces the applications of every user (its "
                                            "owner holds trace-all-users)",
                                        session_.id().uuid());
                          }
                          guarded("EnableEvents", pending, [&] {
                              doEnableEvents(pending, domain, channel, pattern, options);
                          });
                      });
              });
}

void SessionObject::doEnableEvents(const Pending& pending, std::string domain, std::string channel,
                                   std::string pattern,
                                   std::map<std::string, sdbus::Variant> options) {
    checkDomain(domain);
    const bool madeChannel = session_.enableEvents(readEventOptions(channel, pattern, options));
    EventRule added = session_.eventRules().back();
    if (madeChannel)
        emitPropertiesChangedSignal(SessionIface::INTERFACE_NAME, {"Channels", "Events"});
    else
        emitPropertiesChangedSignal(SessionIface::INTERFACE_NAME, {"Events"});
    log::info("session '" + session_.config().name + "': events '" + pattern + "' enabled",
              session_.id().uuid());
    // Always through the app thread, in order with Start: a Start still in
    // flight then sees the rule too. Nothing to do there before the first
    // start; the reply waits for the apps otherwise.
    backend_.enableEvents(session_.id().hex(), std::move(added), session_.tracesAllUsers(),
                          [pending](std::optional<Error> error) {
                              if (error)
                                  pending->returnError(toBusError(*error));
                              else
                                  pending->returnResults();
                          });
}

void SessionObject::AddContext(sdbus::Result<>&& result, std::string domain, std::string channel,
                               std::string type, std::map<std::string, sdbus::Variant> options) {
    auto pending = std::make_shared<sdbus::Result<>>(std::move(result));
    bool interactive = false;
    if (!guarded("AddContext", pending, [&] { interactive = auth::readInteractiveOnly(options); }))
        return;
    const auto extra = domain == "kernel" ? std::optional(auth::Action::TraceKernel) : std::nullopt;
    authorize(
        "AddContext", interactive, extra, pending,
        [this, pending, domain = std::move(domain), channel = std::move(channel),
         type = std::move(type)](const auth::Caller&) {
            checkDomain(domain);
            if (session_.addContext(channel, type))
                emitPropertiesChangedSignal(SessionIface::INTERFACE_NAME, {"Channels", "Contexts"});
            else
                emitPropertiesChangedSignal(SessionIface::INTERFACE_NAME, {"Contexts"});
            log::info(
                "session '" + session_.config().name + "': context '" + type + "' added to " +
                    (channel.empty() ? std::string("every channel") : "channel '" + channel + "'"),
                session_.id().uuid());
            pending->returnResults();
        });
}

std::vector<sdbus::Struct<std::string, std::string>> SessionObject::Contexts() {
    checkReader();
    std::vector<sdbus::Struct<std::string, std::string>> out;
    for (const auto& c : session_.channels())
        for (const auto& type : c.contexts)
            out.emplace_back(c.name, type);
    return out;
}

std::vector<sdbus::Struct<std::string, uint64_t, uint64_t, bool, uint32_t, uint32_t>>
SessionObject::Channels() {
    checkReader();
    std::vector<sdbus::Struct<std::string, uint64_t, uint64_t, bool, uint32_t, uint32_t>> out;
    for (const auto& c : session_.channels())
        out.emplace_back(c.name, c.subbufSize, c.subbufCount, c.overwrite, c.switchTimerUs,
                         c.readTimerUs);
    return out;
}

std::vector<sdbus::Struct<std::string, std::string, std::string, int32_t, std::vector<std::string>>>
SessionObject::Events() {
    checkReader();
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
    checkReader();
    return session_.id().uuid();
}
std::string SessionObject::Name() {
    checkReader();
    return session_.config().name;
}
uint32_t SessionObject::Owner() {
    checkReader();
    return session_.config().owner;
}
std::string SessionObject::State() {
    checkReader();
    if (rotating_ && session_.state() != SessionState::Error)
        return "rotating";
    return std::string(toString(session_.state()));
}
std::string SessionObject::ErrorReason() {
    checkReader();
    return session_.errorReason();
}
bool SessionObject::TracesAllUsers() {
    checkReader();
    return session_.tracesAllUsers();
}
std::string SessionObject::Mode() {
    checkReader();
    return std::string(toString(session_.config().mode));
}
std::string SessionObject::OutputPath() {
    checkReader();
    return session_.config().outputPath;
}
std::string SessionObject::BufferOwnership() {
    checkReader();
    return std::string(toString(session_.config().bufferOwnership));
}
uint64_t SessionObject::CreationTime() {
    checkReader();
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                     session_.creationTime().time_since_epoch())
                                     .count());
}

} // namespace tracectl
