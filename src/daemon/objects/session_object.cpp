#include "objects/session_object.hpp"

#include "bus/bus_call.hpp"
#include "bus/option_reader.hpp"
#include "common/log.hpp"
#include "kernel/kernel_support.hpp"
#include "kernel/userspace_probe_target.hpp"
#include "objects/channel_options.hpp"
#include "objects/rotation_schedule_options.hpp"
#include "objects/snapshot_options.hpp"
#include "objects/statistics_properties.hpp"
#include "save_load/load_plan.hpp"
#include "save_load/session_description_of.hpp"
#include "session/session_name.hpp"
#include "session_file/session_xml.hpp"

#include <algorithm>
#include <unistd.h>

namespace tracectl {

std::string sessionPathPrefix() {
    return std::string(kManagerPath) + "/session";
}

std::string sessionObjectPath(const SessionId& id) {
    return sessionPathPrefix() + "/" + id.hex();
}

SessionObject::SessionObject(bus::BusServices& services, Session& session, DestroyHandler onDestroy)
    : services_(services), session_(session), onDestroy_(std::move(onDestroy)),
      statisticsChanged_(sd_bus_get_event(services.bus), std::chrono::seconds(1), [this] {
          if (retired_)
              return;
          try {
              propertiesChanged({"Statistics", "ChannelStatistics"});
          } catch (const std::exception& e) {
              log::warning("session '" + session_.config().name +
                           "': statistics not announced: " + e.what());
          }
      }) {
    session_.setListener(this);
    const std::string objectPath = path();
    signal("org.freedesktop.DBus.ObjectManager", "InterfacesAdded", [&](sd_bus_message* m) {
        bus::appendInterfacesAdded(m, objectPath, kSessionInterface, *this);
    });
}

SessionObject::~SessionObject() {
    session_.setListener(nullptr);
    try {
        retire();
    } catch (const std::exception& e) {
        log::warning(std::string("announcing a session's removal failed: ") + e.what());
    }
}

void SessionObject::retire() {
    if (retired_)
        return;
    retired_ = true;
    statisticsChanged_.cancel();
    const std::string objectPath = path();
    signal("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved", [&](sd_bus_message* m) {
        bus::appendInterfacesRemoved(m, objectPath, kSessionInterface);
    });
}

bool SessionObject::visibleTo(const auth::Caller& caller) const {
    if (caller.uid == 0 || caller.uid == session_.config().owner)
        return true;
    return services_.authority.cachedForReading(caller.sender, auth::Action::ManageAllSessions)
        .value_or(false);
}

void SessionObject::signal(const char* interface, const char* member,
                           const bus::SignalSender::Body& body) {
    // Objects sent from the manager's path (ObjectManager) and from the
    // session's own path (the rest) go to the same audience.
    const bool fromManager = std::string_view(interface) == "org.freedesktop.DBus.ObjectManager";
    services_.signals.send(
        fromManager ? std::string(kManagerPath) : path(), interface, member,
        [this](const auth::Caller& c) { return visibleTo(c); }, body);
}

void SessionObject::propertiesChanged(const std::vector<std::string>& names) {
    signal("org.freedesktop.DBus.Properties", "PropertiesChanged", [&](sd_bus_message* m) {
        bus::appendPropertiesChanged(m, kSessionInterface, *this, names);
    });
}

void SessionObject::changed(const std::vector<SessionChange>& what) {
    static constexpr std::pair<SessionChange, const char*> kNames[] = {
        {SessionChange::State, "State"},
        {SessionChange::ErrorReason, "ErrorReason"},
        {SessionChange::Channels, "Channels"},
        {SessionChange::KernelChannels, "KernelChannels"},
        {SessionChange::Events, "Events"},
        {SessionChange::KernelEvents, "KernelEvents"},
        {SessionChange::Contexts, "Contexts"},
        {SessionChange::KernelContexts, "KernelContexts"},
        {SessionChange::TracesAllUsers, "TracesAllUsers"},
        {SessionChange::ProcessAttributeTrackers, "ProcessAttributeTrackers"},
        {SessionChange::RingBufferSize, "RingBufferSize"},
        {SessionChange::RotationSchedule, "RotationSchedule"},
    };
    std::vector<std::string> names;
    for (const auto& [change, name] : kNames)
        if (std::find(what.begin(), what.end(), change) != what.end())
            names.emplace_back(name);
    if (!names.empty() && !retired_)
        propertiesChanged(names);
    const bool persistent = std::any_of(what.begin(), what.end(), [](SessionChange c) {
        return c != SessionChange::Statistics && c != SessionChange::RingBufferSize;
    });
    if (persistent && persist_ && !retired_)
        persist_();
    if (std::find(what.begin(), what.end(), SessionChange::Statistics) != what.end() && !retired_) {
        try {
            statisticsChanged_.changed();
        } catch (const std::exception& e) {
            log::warning("session '" + session_.config().name +
                         "': statistics not announced: " + e.what());
        }
    }
}

void SessionObject::rotationEnded(const std::optional<Error>& error, const std::string& path) {
    if (error) {
        const std::string why = error->what();
        signal(kSessionInterface, "RotationFailed", [&](sd_bus_message* m) {
            bus::check(sd_bus_message_append(m, "ss", path.c_str(), why.c_str()), "ss");
        });
        return;
    }
    signal(kSessionInterface, "RotationCompleted", [&](sd_bus_message* m) {
        bus::check(sd_bus_message_append(m, "s", path.c_str()), "s");
    });
}

void SessionObject::snapshotRecorded(const std::string& path) {
    signal(kSessionInterface, "SnapshotRecorded", [&](sd_bus_message* m) {
        bus::check(sd_bus_message_append(m, "s", path.c_str()), "s");
    });
}

void SessionObject::answerDestroyed(const Pending& pending) {
    pending->returnError(sdbus::Error(kUnknownObject, "the session was destroyed"));
}

Session::Done SessionObject::answer(const Pending& pending) {
    return lifetime_.guard(
        [pending](std::optional<Error> error) {
            if (error)
                return pending->returnError(toBusError(*error));
            pending->returnResults();
        },
        [pending] { answerDestroyed(pending); });
}

bool SessionObject::guarded(const char* member, const Pending& pending,
                            const std::function<void()>& work) {
    try {
        handleCall(member, work);
        return true;
    } catch (const sdbus::Error& e) {
        pending->returnError(e);
        return false;
    }
}

void SessionObject::authorize(const char* member, bool interactive,
                              std::optional<auth::Action> extra, const Pending& pending,
                              std::function<void(const auth::Caller&)> next) {
    auth::Caller caller;
    try {
        if (retired_)
            throw sdbus::Error(kUnknownObject, std::string("the session was destroyed; ") + member +
                                                   " is no longer possible");
        caller = services_.peers.callerOf(pending->call());
    } catch (const sdbus::Error& e) {
        pending->returnError(e);
        return;
    }
    const bool own = caller.uid == session_.config().owner;
    const auth::Action action = own ? auth::Action::TraceOwn : auth::Action::ManageAllSessions;
    const auto gone = [member, pending] {
        pending->returnError(
            sdbus::Error(kUnknownObject, std::string("the session was destroyed; ") + member +
                                             " is no longer possible"));
    };
    // Runs once every check granted; answers the call itself otherwise.
    auto then = [this, gone, member, caller,
                 pending](std::function<void()> onGranted) -> auth::PolkitAuthority::Done {
        return lifetime_.guard(
            [this, gone, member, caller, pending,
             onGranted = std::move(onGranted)](std::optional<sdbus::Error> denied) {
                if (retired_)
                    return gone();
                if (denied) {
                    log::warning("uid " + std::to_string(caller.uid) + " denied " + member +
                                     " on session '" + session_.config().name +
                                     "': " + denied->getMessage(),
                                 session_.id().uuid());
                    pending->returnError(*denied);
                    return;
                }
                guarded(member, pending, onGranted);
            },
            gone);
    };
    auto last = [caller, next = std::move(next)] { next(caller); };
    if (!extra) {
        services_.authority.check(caller, action, interactive, then(std::move(last)));
        return;
    }
    services_.authority.check(
        caller, action, interactive,
        then([this, caller, interactive, extra, then, last = std::move(last)] {
            services_.authority.check(caller, *extra, interactive, then(last));
        }));
}

void SessionObject::authorizeWithOnlyInteractive(const char* member, const Pending& pending,
                                                 const auth::CallOptions& options,
                                                 void (SessionObject::*work)(const Pending&)) {
    bool interactive = false;
    if (!guarded(member, pending, [&] {
            interactive =
                auth::readInteractiveOnly(options) || pending->allowsInteractiveAuthorization();
        }))
        return;
    authorize(member, interactive, std::nullopt, pending,
              [this, pending, work](const auth::Caller&) { (this->*work)(pending); });
}

void SessionObject::doStart(const Pending& pending) {
    session_.start(answer(pending));
}

void SessionObject::doStop(const Pending& pending) {
    session_.stop(answer(pending));
}

void SessionObject::doDestroy(const Pending& pending) {
    session_.destroy(lifetime_.guard(
        [this, pending](std::optional<Error> lost) {
            onDestroy_(session_.id()); // frees this object
            // Destroyed, but what it recorded did not all arrive: said, never
            // reported as a success.
            if (lost)
                return pending->returnError(toBusError(Error(
                    lost->code(), "the session was destroyed, but " + std::string(lost->what()))));
            pending->returnResults();
        },
        [pending] { answerDestroyed(pending); }));
}

void SessionObject::doRotate(const Pending& pending) {
    session_.rotate(lifetime_.guard(
        [pending](std::optional<Error> error, const std::string& path) {
            if (error)
                return pending->returnError(toBusError(*error));
            pending->returnResults(path);
        },
        [pending] { answerDestroyed(pending); }));
}

void SessionObject::doClear(const Pending& pending) {
    session_.clear(lifetime_.guard(
        [pending](std::optional<Error> error) {
            if (error)
                return pending->returnError(toBusError(*error));
            pending->returnResults();
        },
        [pending] { answerDestroyed(pending); }));
}

void SessionObject::doSaveConfiguration(const Pending& pending) {
    std::vector<std::string> warnings;
    const std::string document =
        session_file::writeSessionFile({describeSession(session_, warnings)});
    warnings = boundedWarnings(std::move(warnings));
    pending->returnWith([&](sd_bus_message* m) {
        bus::check(sd_bus_message_append(m, "s", document.c_str()), "s");
        bus::check(sd_bus_message_open_container(m, 'a', "s"), "as");
        for (const std::string& w : warnings)
            bus::check(sd_bus_message_append(m, "s", w.c_str()), "s");
        bus::check(sd_bus_message_close_container(m), "as");
    });
}

void SessionObject::recordSnapshot(const Pending& pending, auth::CallOptions options) {
    bool interactive = false;
    uint64_t maxSize = 0;
    if (!guarded("RecordSnapshot", pending, [&] {
            interactive =
                auth::takeInteractive(options) || pending->allowsInteractiveAuthorization();
            maxSize = readSnapshotOptions(options);
        }))
        return;
    authorize(
        "RecordSnapshot", interactive, std::nullopt, pending,
        [this, pending, maxSize](const auth::Caller&) { doRecordSnapshot(pending, maxSize); });
}

void SessionObject::doRecordSnapshot(const Pending& pending, uint64_t maxSize) {
    session_.recordSnapshot(
        maxSize, lifetime_.guard(
                     [this, pending](std::optional<Error> error, const std::string& path) {
                         // Overtaken by a Destroy: answered as calls after it are.
                         if (error && error->code() == ErrorCode::NoSuchSession)
                             return answerDestroyed(pending);
                         if (error)
                             return pending->returnError(toBusError(*error));
                         pending->returnResults(path);
                     },
                     [pending] { answerDestroyed(pending); }));
}

void SessionObject::setRotationSchedule(const Pending& pending, auth::CallOptions options) {
    bool interactive = false;
    RotationSchedule schedule;
    if (!guarded("SetRotationSchedule", pending, [&] {
            interactive =
                auth::takeInteractive(options) || pending->allowsInteractiveAuthorization();
            schedule = readRotationSchedule(options);
        }))
        return;
    authorize("SetRotationSchedule", interactive, std::nullopt, pending,
              [this, pending, schedule](const auth::Caller&) {
                  session_.setRotationSchedule(schedule, answer(pending));
              });
}

void SessionObject::addChannel(const Pending& pending, std::string domain, std::string name,
                               auth::CallOptions options) {
    bool interactive = false;
    if (!guarded("AddChannel", pending, [&] {
            interactive =
                auth::takeInteractive(options) || pending->allowsInteractiveAuthorization();
        }))
        return;
    const auto extra = domain == "kernel" ? std::optional(auth::Action::TraceKernel) : std::nullopt;
    authorize("AddChannel", interactive, extra, pending,
              [this, pending, domain = std::move(domain), name = std::move(name),
               options = std::move(options)](const auth::Caller&) {
                  const TracingDomain d = checkDomain(domain);
                  checkKernelAvailable(d);
                  ChannelConfig defaults =
                      d == TracingDomain::Kernel ? defaultKernelChannel(name) : ChannelConfig{};
                  defaults.overwrite = session_.config().mode == SessionMode::Snapshot;
                  if (const ChannelConfig* existing = session_.findChannel(d, name);
                      existing != nullptr && !existing->enabled) {
                      // lttng-enable-channel(1) of an existing, disabled
                      // channel turns it back on; attributes given must be its own.
                      std::optional<ChannelConfig> attributes;
                      if (!options.empty())
                          attributes = readChannelOptions(name, options, *existing);
                      session_.reenableChannel(d, name, attributes, answer(pending));
                      return;
                  }
                  session_.addChannel(readChannelOptions(name, options, defaults), d);
                  log::info("session '" + session_.config().name + "': channel '" + name +
                                "' added",
                            session_.id().uuid());
                  pending->returnResults();
              });
}

void SessionObject::enableEvents(const Pending& pending, std::string domain, std::string channel,
                                 std::string pattern, auth::CallOptions options) {
    bool interactive = false;
    if (!guarded("EnableEvents", pending, [&] {
            interactive =
                auth::takeInteractive(options) || pending->allowsInteractiveAuthorization();
        }))
        return;
    const auto extra = domain == "kernel" ? std::optional(auth::Action::TraceKernel) : std::nullopt;
    authorize("EnableEvents", interactive, extra, pending,
              [this, pending, domain = std::move(domain), channel = std::move(channel),
               pattern = std::move(pattern),
               options = std::move(options)](const auth::Caller& caller) mutable {
                  if (caller.uid != session_.config().owner || session_.tracesAllUsers()) {
                      doEnableEvents(pending, caller, std::move(domain), std::move(channel),
                                     std::move(pattern), std::move(options));
                      return;
                  }
                  // May the owner trace every user's apps? Asked without
                  // interaction; a "no" only keeps the session to the owner's apps.
                  services_.authority.check(
                      caller, auth::Action::TraceAllUsers, false,
                      lifetime_.guard(
                          [this, pending, caller, domain = std::move(domain),
                           channel = std::move(channel), pattern = std::move(pattern),
                           options = std::move(options)](std::optional<sdbus::Error> denied) {
                              if (retired_)
                                  return answerDestroyed(pending);
                              if (!denied)
                                  session_.traceAllUsers();
                              guarded("EnableEvents", pending, [&] {
                                  doEnableEvents(pending, caller, domain, channel, pattern,
                                                 options);
                              });
                          },
                          [pending] { answerDestroyed(pending); }));
              });
}

void SessionObject::doEnableEvents(const Pending& pending, const auth::Caller& caller,
                                   std::string domain, std::string channel, std::string pattern,
                                   auth::CallOptions options) {
    const TracingDomain d = checkDomain(domain);
    checkKernelAvailable(d);
    EventRule rule = readEventOptions(d, channel, pattern, options);
    if (rule.userspaceProbe) {
        checkNewEventRule(rule); // the name and path, before any file is opened
        // The caller's file, as the caller sees it (its mount namespace),
        // and only if the caller may read it.
        const std::optional<pid_t> pid = services_.peers.pidOf(caller.sender);
        if (!pid)
            throw Error(ErrorCode::InvalidArgument,
                        "the caller's process is unknown: its userspace probe's path cannot be "
                        "resolved");
        rule.probeTarget = kernel::openUserspaceProbeTarget(*rule.userspaceProbe, *pid, caller.uid);
    }
    // The reply waits for the domains (the apps, if the session runs).
    session_.enableEvents(std::move(rule), answer(pending));
}

void SessionObject::addContext(const Pending& pending, std::string domain, std::string channel,
                               std::string type, const auth::CallOptions& options) {
    bool interactive = false;
    if (!guarded("AddContext", pending, [&] {
            interactive =
                auth::readInteractiveOnly(options) || pending->allowsInteractiveAuthorization();
        }))
        return;
    const auto extra = domain == "kernel" ? std::optional(auth::Action::TraceKernel) : std::nullopt;
    authorize("AddContext", interactive, extra, pending,
              [this, pending, domain = std::move(domain), channel = std::move(channel),
               type = std::move(type)](const auth::Caller&) {
                  const TracingDomain d = checkDomain(domain);
                  checkKernelAvailable(d);
                  session_.addContext(d, channel, type);
                  log::info("session '" + session_.config().name + "': context '" + type +
                                "' added to " +
                                (channel.empty() ? std::string("every channel")
                                                 : "channel '" + channel + "'"),
                            session_.id().uuid());
                  pending->returnResults();
              });
}

void SessionObject::checkKernelAvailable(TracingDomain d) const {
    if (d != TracingDomain::Kernel)
        return;
    if (services_.kernel == nullptr)
        throw Error(ErrorCode::KernelUnavailable, "this daemon has no kernel domain");
    if (const auto why = services_.kernel->unavailableReason())
        throw Error(ErrorCode::KernelUnavailable, "kernel tracing is not available: " + *why);
}

namespace {

using Self = SessionObject;

void appendChannels(sd_bus_message* m, const std::vector<ChannelConfig>& channels) {
    bus::check(sd_bus_message_open_container(m, 'a', "(sttbuub)"), "a(sttbuub)");
    for (const auto& c : channels)
        bus::check(sd_bus_message_append(
                       m, "(sttbuub)", c.name.c_str(), static_cast<uint64_t>(c.subbufSize),
                       static_cast<uint64_t>(c.subbufCount), static_cast<int>(c.overwrite),
                       static_cast<uint32_t>(c.switchTimerUs), static_cast<uint32_t>(c.readTimerUs),
                       static_cast<int>(c.enabled)),
                   "(sttbuub)");
    bus::check(sd_bus_message_close_container(m), "a(sttbuub)");
}

void appendContexts(sd_bus_message* m, const std::vector<ChannelConfig>& channels) {
    bus::check(sd_bus_message_open_container(m, 'a', "(ss)"), "a(ss)");
    for (const auto& c : channels)
        for (const auto& type : c.contexts)
            bus::check(sd_bus_message_append(m, "(ss)", c.name.c_str(), type.c_str()), "(ss)");
    bus::check(sd_bus_message_close_container(m), "a(ss)");
}

void appendString(sd_bus_message* m, const std::string& s) {
    bus::check(sd_bus_message_append(m, "s", s.c_str()), "s");
}

uint64_t toMicroseconds(std::chrono::system_clock::time_point t) {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count());
}

const char* matchName(LoglevelMatch match) {
    return match == LoglevelMatch::All               ? "all"
           : match == LoglevelMatch::AtLeastAsSevere ? "at-least"
                                                     : "exactly";
}

} // namespace

// Types and meanings: dbus/org.tracectl.Tracing1.Session.xml.
const bus::Property<SessionObject> SessionObject::kProperties[23] = {
    {"RingBufferSize", "t", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE,
     [](const Self& o, sd_bus_message* m) {
         bus::check(sd_bus_message_append(m, "t", o.session_.ringBufferSize()), "t");
     }},
    {"Id", "s", SD_BUS_VTABLE_PROPERTY_CONST,
     [](const Self& o, sd_bus_message* m) { appendString(m, o.session_.id().uuid()); }},
    {"Name", "s", SD_BUS_VTABLE_PROPERTY_CONST,
     [](const Self& o, sd_bus_message* m) { appendString(m, o.session_.config().name); }},
    {"Owner", "u", SD_BUS_VTABLE_PROPERTY_CONST,
     [](const Self& o, sd_bus_message* m) {
         bus::check(sd_bus_message_append(m, "u", static_cast<uint32_t>(o.owner())), "u");
     }},
    {"State", "s", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE,
     [](const Self& o, sd_bus_message* m) { appendString(m, o.session_.stateName()); }},
    {"ErrorReason", "s", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE,
     [](const Self& o, sd_bus_message* m) { appendString(m, o.session_.errorReason()); }},
    {"Channels", "a(sttbuub)", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE,
     [](const Self& o, sd_bus_message* m) { appendChannels(m, o.session_.channels()); }},
    {"KernelChannels", "a(sttbuub)", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE,
     [](const Self& o, sd_bus_message* m) { appendChannels(m, o.session_.kernelChannels()); }},
    {"RotationSchedule", "(tt)", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE,
     [](const Self& o, sd_bus_message* m) {
         const RotationSchedule& r = o.session_.rotationSchedule();
         bus::check(sd_bus_message_append(m, "(tt)", r.timerUs, r.sizeBytes), "(tt)");
     }},
    {"Events", "a(sssiasbs)", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE,
     [](const Self& o, sd_bus_message* m) {
         bus::check(sd_bus_message_open_container(m, 'a', "(sssiasbs)"), "a(sssiasbs)");
         for (const auto& r : o.session_.eventRules()) {
             bus::check(sd_bus_message_open_container(m, 'r', "sssiasbs"), "(sssiasbs)");
             bus::check(sd_bus_message_append(m, "sssi", r.channel.c_str(), r.pattern.c_str(),
                                              matchName(r.loglevelMatch),
                                              static_cast<int32_t>(r.loglevel)),
                        "sssi");
             bus::check(sd_bus_message_open_container(m, 'a', "s"), "as");
             for (const auto& e : r.exclusions)
                 appendString(m, e);
             bus::check(sd_bus_message_close_container(m), "as");
             bus::check(
                 sd_bus_message_append(m, "bs", static_cast<int>(r.enabled), r.filter.c_str()),
                 "bs");
             bus::check(sd_bus_message_close_container(m), "(sssiasbs)");
         }
         bus::check(sd_bus_message_close_container(m), "a(sssiasbs)");
     }},
    {"KernelEvents", "a(ssbsb)", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE,
     [](const Self& o, sd_bus_message* m) {
         bus::check(sd_bus_message_open_container(m, 'a', "(ssbsb)"), "a(ssbsb)");
         for (const auto& r : o.session_.kernelEventRules())
             bus::check(sd_bus_message_append(m, "(ssbsb)", r.channel.c_str(), r.pattern.c_str(),
                                              static_cast<int>(r.syscall), r.filter.c_str(),
                                              static_cast<int>(r.enabled)),
                        "(ssbsb)");
         bus::check(sd_bus_message_close_container(m), "a(ssbsb)");
     }},
    {"Contexts", "a(ss)", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE,
     [](const Self& o, sd_bus_message* m) { appendContexts(m, o.session_.channels()); }},
    {"KernelContexts", "a(ss)", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE,
     [](const Self& o, sd_bus_message* m) { appendContexts(m, o.session_.kernelChannels()); }},
    {"TracesAllUsers", "b", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE,
     [](const Self& o, sd_bus_message* m) {
         bus::check(sd_bus_message_append(m, "b", static_cast<int>(o.session_.tracesAllUsers())),
                    "b");
     }},
    {"ProcessAttributeTrackers", "a(ssbau)", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE,
     [](const Self& o, sd_bus_message* m) { appendTrackers(m, o.session_.processTrackers()); }},
    {"Mode", "s", SD_BUS_VTABLE_PROPERTY_CONST,
     [](const Self& o, sd_bus_message* m) {
         appendString(m, std::string(toString(o.session_.config().mode)));
     }},
    {"OutputPath", "s", SD_BUS_VTABLE_PROPERTY_CONST,
     [](const Self& o, sd_bus_message* m) { appendString(m, o.session_.config().outputPath); }},
    {"OutputUrl", "s", SD_BUS_VTABLE_PROPERTY_CONST,
     [](const Self& o, sd_bus_message* m) {
         const auto& relay = o.session_.config().relay;
         appendString(m, relay ? relay->url() : std::string());
     }},
    {"LiveTimer", "t", SD_BUS_VTABLE_PROPERTY_CONST,
     [](const Self& o, sd_bus_message* m) {
         bus::check(sd_bus_message_append(m, "t", o.session_.config().liveTimerUs), "t");
     }},
    {"BufferOwnership", "s", SD_BUS_VTABLE_PROPERTY_CONST,
     [](const Self& o, sd_bus_message* m) {
         appendString(m, std::string(toString(o.session_.config().bufferOwnership)));
     }},
    {"CreationTime", "t", SD_BUS_VTABLE_PROPERTY_CONST,
     [](const Self& o, sd_bus_message* m) {
         bus::check(sd_bus_message_append(m, "t", toMicroseconds(o.session_.creationTime())), "t");
     }},
    {"Statistics", "a{sv}", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE,
     [](const Self& o, sd_bus_message* m) { appendStatistics(m, o.session_.statistics()); }},
    {"ChannelStatistics", "a(ssa{sv})", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE,
     [](const Self& o, sd_bus_message* m) { appendChannelStatistics(m, o.session_.statistics()); }},
};

int SessionObject::onStart(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<Self>(m, userdata, "Start", [](Self& o, sd_bus_message* msg, auto r) {
        o.start(r, bus::readOptions(msg));
    });
}

void SessionObject::start(const Pending& pending, const auth::CallOptions& options) {
    bool interactive = false;
    if (!guarded("Start", pending, [&] {
            interactive =
                auth::readInteractiveOnly(options) || pending->allowsInteractiveAuthorization();
        }))
        return;
    // Kernel tracing needs trace-kernel at each start, not only when its
    // channels were added: a grant since withdrawn (a session brought back
    // by a restarted daemon, a user taken out of group tracing) does not
    // start it.
    const auto extra =
        session_.kernelChannels().empty() ? std::nullopt : std::optional(auth::Action::TraceKernel);
    authorize("Start", interactive, extra, pending,
              [this, pending](const auth::Caller&) { doStart(pending); });
}

int SessionObject::onStop(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<Self>(m, userdata, "Stop", [](Self& o, sd_bus_message* msg, auto r) {
        o.authorizeWithOnlyInteractive("Stop", r, bus::readOptions(msg), &Self::doStop);
    });
}

int SessionObject::onDestroy(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<Self>(m, userdata, "Destroy", [](Self& o, sd_bus_message* msg, auto r) {
        o.authorizeWithOnlyInteractive("Destroy", r, bus::readOptions(msg), &Self::doDestroy);
    });
}

int SessionObject::onRotate(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<Self>(m, userdata, "Rotate", [](Self& o, sd_bus_message* msg, auto r) {
        o.authorizeWithOnlyInteractive("Rotate", r, bus::readOptions(msg), &Self::doRotate);
    });
}

int SessionObject::onClear(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<Self>(m, userdata, "Clear", [](Self& o, sd_bus_message* msg, auto r) {
        o.authorizeWithOnlyInteractive("Clear", r, bus::readOptions(msg), &Self::doClear);
    });
}

int SessionObject::onSaveConfiguration(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<Self>(
        m, userdata, "SaveConfiguration", [](Self& o, sd_bus_message* msg, auto r) {
            o.authorizeWithOnlyInteractive("SaveConfiguration", r, bus::readOptions(msg),
                                           &Self::doSaveConfiguration);
        });
}

int SessionObject::onAddChannel(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<Self>(
        m, userdata, "AddChannel", [](Self& o, sd_bus_message* msg, auto r) {
            std::string domain = bus::readStringArgument(msg);
            std::string name = bus::readStringArgument(msg);
            o.addChannel(r, std::move(domain), std::move(name), bus::readOptions(msg));
        });
}

int SessionObject::onEnableEvents(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<Self>(m, userdata, "EnableEvents",
                                [](Self& o, sd_bus_message* msg, auto r) {
                                    std::string domain = bus::readStringArgument(msg);
                                    std::string channel = bus::readStringArgument(msg);
                                    std::string pattern = bus::readStringArgument(msg);
                                    o.enableEvents(r, std::move(domain), std::move(channel),
                                                   std::move(pattern), bus::readOptions(msg));
                                });
}

int SessionObject::onAddContext(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<Self>(m, userdata, "AddContext",
                                [](Self& o, sd_bus_message* msg, auto r) {
                                    std::string domain = bus::readStringArgument(msg);
                                    std::string channel = bus::readStringArgument(msg);
                                    std::string type = bus::readStringArgument(msg);
                                    o.addContext(r, std::move(domain), std::move(channel),
                                                 std::move(type), bus::readOptions(msg));
                                });
}

int SessionObject::onSetRotationSchedule(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<Self>(m, userdata, "SetRotationSchedule",
                                [](Self& o, sd_bus_message* msg, auto r) {
                                    o.setRotationSchedule(r, bus::readOptions(msg));
                                });
}

int SessionObject::onRecordSnapshot(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<Self>(
        m, userdata, "RecordSnapshot",
        [](Self& o, sd_bus_message* msg, auto r) { o.recordSnapshot(r, bus::readOptions(msg)); });
}

std::span<const sd_bus_vtable> SessionObject::members() {
    constexpr uint64_t kAnyone = SD_BUS_VTABLE_UNPRIVILEGED; // polkit decides, per call
    static const sd_bus_vtable table[] = {
        SD_BUS_METHOD_WITH_ARGS("Start", SD_BUS_ARGS("a{sv}", options), SD_BUS_NO_RESULT,
                                &Self::onStart, kAnyone),
        SD_BUS_METHOD_WITH_ARGS("Stop", SD_BUS_ARGS("a{sv}", options), SD_BUS_NO_RESULT,
                                &Self::onStop, kAnyone),
        SD_BUS_METHOD_WITH_ARGS("Destroy", SD_BUS_ARGS("a{sv}", options), SD_BUS_NO_RESULT,
                                &Self::onDestroy, kAnyone),
        SD_BUS_METHOD_WITH_ARGS("AddChannel", SD_BUS_ARGS("s", domain, "s", name, "a{sv}", options),
                                SD_BUS_NO_RESULT, &Self::onAddChannel, kAnyone),
        SD_BUS_METHOD_WITH_ARGS(
            "EnableEvents", SD_BUS_ARGS("s", domain, "s", channel, "s", pattern, "a{sv}", options),
            SD_BUS_NO_RESULT, &Self::onEnableEvents, kAnyone),
        SD_BUS_METHOD_WITH_ARGS(
            "DisableEvents", SD_BUS_ARGS("s", domain, "s", channel, "s", pattern, "a{sv}", options),
            SD_BUS_NO_RESULT, &Self::onDisableEvents, kAnyone),
        SD_BUS_METHOD_WITH_ARGS("DisableChannel",
                                SD_BUS_ARGS("s", domain, "s", channel, "a{sv}", options),
                                SD_BUS_NO_RESULT, &Self::onDisableChannel, kAnyone),
        SD_BUS_METHOD_WITH_ARGS("AddContext",
                                SD_BUS_ARGS("s", domain, "s", channel, "s", type, "a{sv}", options),
                                SD_BUS_NO_RESULT, &Self::onAddContext, kAnyone),
        SD_BUS_METHOD_WITH_ARGS(
            "TrackProcessAttribute",
            SD_BUS_ARGS("s", domain, "s", attribute, "au", values, "a{sv}", options),
            SD_BUS_NO_RESULT, &Self::onTrackProcessAttribute, kAnyone),
        SD_BUS_METHOD_WITH_ARGS(
            "UntrackProcessAttribute",
            SD_BUS_ARGS("s", domain, "s", attribute, "au", values, "a{sv}", options),
            SD_BUS_NO_RESULT, &Self::onUntrackProcessAttribute, kAnyone),
        SD_BUS_METHOD_WITH_ARGS("Rotate", SD_BUS_ARGS("a{sv}", options), SD_BUS_RESULT("s", path),
                                &Self::onRotate, kAnyone),
        SD_BUS_METHOD_WITH_ARGS("Clear", SD_BUS_ARGS("a{sv}", options), SD_BUS_NO_RESULT,
                                &Self::onClear, kAnyone),
        SD_BUS_METHOD_WITH_ARGS("SaveConfiguration", SD_BUS_ARGS("a{sv}", options),
                                SD_BUS_RESULT("s", document, "as", warnings),
                                &Self::onSaveConfiguration, kAnyone),
        SD_BUS_METHOD_WITH_ARGS("SetRotationSchedule", SD_BUS_ARGS("a{sv}", options),
                                SD_BUS_NO_RESULT, &Self::onSetRotationSchedule, kAnyone),
        SD_BUS_METHOD_WITH_ARGS("RecordSnapshot", SD_BUS_ARGS("a{sv}", options),
                                SD_BUS_RESULT("s", path), &Self::onRecordSnapshot, kAnyone),
        SD_BUS_SIGNAL_WITH_ARGS("RotationCompleted", SD_BUS_ARGS("s", path), 0),
        SD_BUS_SIGNAL_WITH_ARGS("RotationFailed", SD_BUS_ARGS("s", path, "s", reason), 0),
        SD_BUS_SIGNAL_WITH_ARGS("SnapshotRecorded", SD_BUS_ARGS("s", path), 0),
    };
    return table;
}

} // namespace tracectl
